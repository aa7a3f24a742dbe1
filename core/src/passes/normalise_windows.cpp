// Sliding-window attributes in one explicit form: core resolves auto_pad, defaulted strides and
// dilations, Conv's kernel from its weight and ConvTranspose's output_shape once, so no plugin
// carries its own copy of those rules (the op files' shape inference stays the one definition).
#include <optional>
#include <string>
#include <vector>

#include "op.hpp"
#include "tessera/passes.hpp"
#include "util/axes.hpp"
#include "util/pooling.hpp"
#include "util/quantized_unit.hpp"

namespace tessera {
namespace {

// The explicit window of a Conv, MaxPool or AveragePool node with input shape `x` (and weight
// shape `w` for Conv), through the same resolve_window the op's shape inference uses.
ops::ExplicitWindow sliding_window(const Node& node, int64_t opset, const Shape& x,
                                   const Shape* w) {
  const std::vector<int64_t> kernel =
      w ? std::vector<int64_t>(w->begin() + 2, w->end()) : node.attrs.get_ints("kernel_shape");
  const ops::Window win = ops::window_for_compute(node, opset, x, kernel,
                                                  /*allow_ceil_mode=*/node.op_type != "Conv" &&
                                                      node.op_type != ops::kQLinearConvUnit);
  ops::ExplicitWindow e;
  e.kernel = win.kernel;
  e.strides = win.strides;
  e.dilations = win.dilations;
  e.pads = win.pads_begin;
  e.pads.insert(e.pads.end(), win.pads_end.begin(), win.pads_end.end());
  return e;
}

}  // namespace

void normalise_window_attributes(Node& node, int64_t opset, const std::vector<Shape>& inputs) {
  const std::string& op = node.op_type;
  // The int8 conv unit (util/quantized_unit.hpp) has its weight at input 3.
  const bool qconv = op == ops::kQLinearConvUnit;
  const bool conv = op == "Conv" || qconv, transpose = op == "ConvTranspose";
  if (!conv && !transpose && op != "MaxPool" && op != "AveragePool") return;
  const size_t weight = qconv ? static_cast<size_t>(ops::kQW) : 1;
  if (inputs.empty() || inputs[0].size() < 3 || ((conv || transpose) && inputs.size() <= weight)) {
    return;
  }
  std::optional<ops::ExplicitWindow> e;
  if (transpose) {
    e = ops::conv_transpose_explicit_window(node, opset, inputs[0], inputs[1]);
    if (!e) return;
    node.attrs.erase("output_shape");
  } else {
    e = sliding_window(node, opset, inputs[0], conv ? &inputs[weight] : nullptr);
  }
  const std::string auto_pad = node.attrs.get_string("auto_pad", "NOTSET");
  // SAME's output is ceil(in / stride) whatever ceil_mode says; with its pads written out,
  // floor division gives that size, so ceil_mode must not round up once more.
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") node.attrs.erase("ceil_mode");
  node.attrs.erase("auto_pad");
  node.attrs.set("kernel_shape", e->kernel);
  node.attrs.set("strides", e->strides);
  // Pools of opsets before dilations existed (MaxPool < 10, AveragePool < 19) keep them
  // implicit (all 1), so the node stays a valid one of its opset.
  const bool has_dilations =
      (op != "MaxPool" || opset >= 10) && (op != "AveragePool" || opset >= 19);
  if (has_dilations) node.attrs.set("dilations", e->dilations);
  node.attrs.set("pads", e->pads);
}

}  // namespace tessera
