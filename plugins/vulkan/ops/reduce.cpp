// Reductions as [OUTER, LEN, INNER] (axes from the attribute, or input 1 from opset 18).
#include "ops/reduce.hpp"

namespace tessera::vulkan {

using plugin::Failure;

namespace {
struct Split3 {
  int64_t outer = 1, len = 1, inner = 1;
  bool ok = true;
};

std::vector<int64_t> axes_of(const NodeView& node) {
  std::vector<int64_t> axes = node.attr_ints("axes", {});
  if (axes.empty() && node.input(1) != nullptr) axes = constant_ints(node, 1, {});
  return axes;
}

Split3 split(const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  std::vector<int64_t> axes = axes_of(node);
  std::vector<bool> reduced(static_cast<size_t>(x.rank), axes.empty());
  if (axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0) {
    reduced.assign(reduced.size(), false);
  }
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + x.rank : a)] = true;
  Split3 s;
  int phase = 0;  // 0 outer, 1 reduced, 2 inner
  for (int32_t i = 0; i < x.rank; ++i) {
    const int64_t d = x.dims[i];
    if (d == 1) continue;
    if (reduced[static_cast<size_t>(i)]) {
      if (phase == 2) s.ok = false;
      phase = 1;
      s.len *= d;
    } else {
      if (phase == 1) phase = 2;
      (phase == 0 ? s.outer : s.inner) *= d;
    }
  }
  return s;
}
}  // namespace

std::string check_reduce(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  try {
    if (!split(node).ok) return "reduced axes that are not adjacent";
  } catch (const Failure& e) {
    return e.what();
  }
  return "";
}

void dispatch_reduce(Lowering& lowering, const NodeView& node, ReduceOp op, int64_t outer,
                     int64_t len, int64_t inner) {
  Kernel k = linear_kernel("reduce", outer * inner, 1,
                           {static_cast<int32_t>(op), narrow(outer, node, "outer size"),
                            narrow(len, node, "reduced size"), narrow(inner, node, "inner size")});
  lowering.dispatch(node, k, {&lowering.buffer(node.input_index(0))},
                    {&lowering.buffer(node.output_index(0))});
}

void lower_reduce(Lowering& lowering, const NodeView& node, ReduceOp op) {
  const Split3 s = split(node);
  dispatch_reduce(lowering, node, op, s.outer, s.len, s.inner);
}

}  // namespace tessera::vulkan
