// Pad (ONNX opsets 2-19): pads (or, with negative pads, crops) every axis of a tensor.
//   opset < 11: attributes pads, mode, value (float).
//   opset 11+:  pads is input 1 (a constant int64 tensor: it decides the output shape), the
//               optional input 2 holds the constant value; opset 18 adds input 3, axes.
// Modes: constant, reflect (mirror without repeating the edge: at most size - 1 on a side, as
// ONNX Runtime allows), edge, wrap (opset 19).
// Negative pads crop first and the remaining positive pads then pad the cropped tensor, as ONNX
// Runtime does; reflect/edge/wrap read only from the cropped tensor.
// Dtypes: float32, int32, int64, int8, uint8 (the constant value is converted to the dtype).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/checked.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

struct PadPlan {
  std::string mode;
  std::vector<int64_t> begin, end;  // per axis of the input, may be negative
};

// Reflect mirrors the axis once about its edge element, which is not repeated: an axis of
// `kept` elements (after cropping) gives at most kept - 1 on each side. ONNX Runtime and the cpu
// plugin refuse more, so the reference refuses it too rather than reflecting again.
void check_reflect_pads(const InferContext& ctx, const PadPlan& plan, size_t d, int64_t kept,
                        const std::vector<int64_t>& pads) {
  const int64_t most = kept - 1;
  for (const auto& [side, pad] : {std::pair<const char*, int64_t>{"before", plan.begin[d]},
                                  std::pair<const char*, int64_t>{"after", plan.end[d]}}) {
    if (pad <= most) continue;
    const bool cropped = plan.begin[d] < 0 || plan.end[d] < 0;
    ctx.fail("mode 'reflect' pads axis " + std::to_string(d) + " by " + std::to_string(pad) + " " +
             side + " it, but an axis of " + std::to_string(kept) + " element" +
             (kept == 1 ? "" : "s") + (cropped ? " (after cropping)" : "") + " reflects at most " +
             std::to_string(most) + " (pads " + shape_str(pads) + ", input shape " +
             shape_str(ctx.input(0).shape) + "); use mode 'edge' or 'constant', or smaller pads");
  }
}

PadPlan pad_plan(const InferContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  PadPlan plan;
  plan.mode = attr_string(ctx, "mode", "constant");
  if (plan.mode != "constant" && plan.mode != "reflect" && plan.mode != "edge" &&
      !(plan.mode == "wrap" && ctx.opset >= 19)) {
    ctx.fail("attribute 'mode' = '" + plan.mode + "' is not one of constant, reflect, edge" +
             std::string(ctx.opset >= 19 ? ", wrap" : " (wrap needs opset 19)"));
  }
  std::vector<int64_t> pads;
  std::vector<int64_t> axes;
  if (ctx.opset < 11) {
    if (ctx.num_inputs() != 1) ctx.fail("takes one input before opset 11 (pads is an attribute)");
    if (!ctx.node.attrs.has("pads")) ctx.fail("required attribute 'pads' is missing");
    pads = attr_ints(ctx, "pads", {});
  } else {
    const Tensor& p = ctx.constant_input(1);
    if (p.dtype() != DType::kInt64 || p.rank() > 1) {
      ctx.fail("input 1 (pads) must be a 1-D int64 tensor, got " +
               std::string(dtype_name(p.dtype())) + " " + shape_str(p.shape()));
    }
    pads = p.to_int64_vector();
    if (ctx.has_input(3)) {
      if (ctx.opset < 18) ctx.fail("input 3 (axes) needs opset 18");
      const Tensor& a = ctx.constant_input(3);
      if ((a.dtype() != DType::kInt64 && a.dtype() != DType::kInt32) || a.rank() > 1) {
        ctx.fail("input 3 (axes) must be a 1-D int32/int64 tensor");
      }
      axes = normalize_axes(a.to_int64_vector(), rank, ctx.where, "input 3 (axes)");
    }
  }
  if (axes.empty() && !ctx.has_input(3)) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  const size_t n = axes.size();
  if (pads.size() != 2 * n) {
    ctx.fail("pads has " + std::to_string(pads.size()) + " values; expected " +
             std::to_string(2 * n) + " (begin pads then end pads for each of " + std::to_string(n) +
             " axes)");
  }
  plan.begin.assign(static_cast<size_t>(rank), 0);
  plan.end.assign(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < n; ++i) {
    plan.begin[static_cast<size_t>(axes[i])] = pads[i];
    plan.end[static_cast<size_t>(axes[i])] = pads[n + i];
  }
  const Shape& x = ctx.input(0).shape;
  for (size_t d = 0; d < x.size(); ++d) {
    // Pads come from the model (any int64): the sums are checked, INT64_MIN crops included.
    const std::string what = "pads of axis " + std::to_string(d);
    const int64_t kept =
        checked_add(ctx, checked_add(ctx, x[d], std::min<int64_t>(0, plan.begin[d]), what),
                    std::min<int64_t>(0, plan.end[d]), what);
    if (kept < 0) {
      ctx.fail("axis " + std::to_string(d) + " of size " + std::to_string(x[d]) +
               " cannot be cropped by " + std::to_string(-plan.begin[d]) + " and " +
               std::to_string(-plan.end[d]));
    }
    const bool pads_axis = plan.begin[d] > 0 || plan.end[d] > 0;
    if (pads_axis && kept == 0 && plan.mode != "constant") {
      ctx.fail("axis " + std::to_string(d) + " is empty, so mode '" + plan.mode +
               "' has nothing to copy from; use mode 'constant'");
    }
    if (plan.mode == "reflect") check_reflect_pads(ctx, plan, d, kept, pads);
  }
  return plan;
}

void infer_pad(InferContext& ctx) {
  ctx.expect_inputs(1, ctx.opset >= 18 ? 4 : ctx.opset >= 11 ? 3 : 1);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt8});
  if (ctx.opset < 11) attr_float(ctx, "value", 0.0f);
  if (ctx.has_input(2)) {
    const InputInfo& v = ctx.input(2);
    if (v.dtype != ctx.input(0).dtype) {
      ctx.fail("input 2 (constant_value) has dtype " + std::string(dtype_name(v.dtype)) +
               " but the data is " + dtype_name(ctx.input(0).dtype) + "; they must match");
    }
    if (shape_numel(v.shape) != 1) {
      ctx.fail("input 2 (constant_value) must hold exactly one value, got shape " +
               shape_str(v.shape));
    }
  }
  const PadPlan plan = pad_plan(ctx);
  Shape y = ctx.input(0).shape;
  for (size_t d = 0; d < y.size(); ++d) {
    const std::string what = "output size of axis " + std::to_string(d);
    // The smaller pad first: a crop on one side and a pad on the other never overflow on the way
    // to a size that fits.
    const int64_t lo = std::min(plan.begin[d], plan.end[d]);
    const int64_t hi = std::max(plan.begin[d], plan.end[d]);
    y[d] = checked_add(ctx, checked_add(ctx, y[d], lo, what), hi, what);
  }
  ctx.outputs.at(0) = {ctx.input(0).dtype, y};
}

// Index into an axis of length n (> 0) for a position j outside [0, n).
int64_t outside_index(int64_t j, int64_t n, const std::string& mode) {
  if (mode == "edge") return j < 0 ? 0 : n - 1;
  if (mode == "wrap") return ((j % n) + n) % n;
  // reflect (n >= 2: check_reflect_pads allows at most n - 1 on a side): the sequence
  // 0, 1, .., n-1, n-2, .., 1 repeats with period 2(n-1).
  const int64_t period = 2 * (n - 1);
  int64_t r = ((j % period) + period) % period;
  return r < n ? r : period - r;
}

// How output coordinates along one axis map back to the input.
struct AxisMap {
  int64_t crop_begin = 0;  // elements cropped off the front of the input
  int64_t kept = 0;        // input elements left after cropping
  int64_t lead = 0;        // output elements padded before the kept ones
  int64_t stride = 0;      // input stride of the axis
};

template <typename T>
void pad_typed(const Tensor& xt, Tensor& yt, const PadPlan& plan, T value) {
  const Shape& x = xt.shape();
  const Shape& y = yt.shape();
  const size_t rank = x.size();
  const std::vector<int64_t> x_strides = shape_strides(x);
  std::vector<AxisMap> axes(rank);
  for (size_t d = 0; d < rank; ++d) {
    axes[d].crop_begin = std::max<int64_t>(0, -plan.begin[d]);
    axes[d].kept = x[d] + std::min<int64_t>(0, plan.begin[d]) + std::min<int64_t>(0, plan.end[d]);
    axes[d].lead = std::max<int64_t>(0, plan.begin[d]);
    axes[d].stride = x_strides[d];
  }
  const bool constant_mode = plan.mode == "constant";
  const T* xd = xt.data<T>();
  T* yd = yt.data<T>();
  std::vector<int64_t> o(rank, 0);
  for (int64_t i = 0; i < yt.numel(); ++i, next_index(o, y)) {
    int64_t offset = 0;
    bool is_constant = false;
    for (size_t d = 0; d < rank && !is_constant; ++d) {
      const AxisMap& a = axes[d];
      int64_t j = o[d] - a.lead;  // coordinate in the cropped tensor
      if (j < 0 || j >= a.kept) {
        is_constant = constant_mode;
        if (!constant_mode) j = outside_index(j, a.kept, plan.mode);
      }
      offset += (a.crop_begin + j) * a.stride;
    }
    yd[i] = is_constant ? value : xd[offset];
  }
}

void compute_pad(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  InferContext ictx(ctx.node, ctx.opset, node_where(ctx.node));
  ictx.inputs.resize(ctx.inputs.size());
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) continue;
    ictx.inputs[i] = {true, ctx.inputs[i]->dtype(), ctx.inputs[i]->shape(), ctx.inputs[i]};
  }
  const PadPlan plan = pad_plan(ictx);
  double value = 0.0;
  if (ctx.opset < 11) {
    value = ctx.node.attrs.get_float("value", 0.0f);
  } else if (ctx.has_input(2)) {
    value = ctx.input(2).scalar_as_double(0);
  }
  Tensor& yt = ctx.outputs[0];
  switch (xt.dtype()) {
    case DType::kFloat32:
      return pad_typed<float>(xt, yt, plan, static_cast<float>(value));
    case DType::kInt32:
      return pad_typed<int32_t>(xt, yt, plan, static_cast<int32_t>(value));
    case DType::kInt64:
      // Through int64 directly: a double would round values above 2^53.
      return pad_typed<int64_t>(xt, yt, plan,
                                ctx.opset >= 11 && ctx.has_input(2)
                                    ? ctx.input(2).scalar_as_int64(0)
                                    : static_cast<int64_t>(value));
    case DType::kInt8:
      return pad_typed<int8_t>(xt, yt, plan, static_cast<int8_t>(value));
    case DType::kUInt8:
      return pad_typed<uint8_t>(xt, yt, plan, static_cast<uint8_t>(value));
    default:
      throw Error(node_where(ctx.node) + ": dtype " + dtype_name(xt.dtype()) +
                  " reached the Pad kernel unchecked");
  }
}

}  // namespace

TESSERA_REGISTER_OP("Pad", infer_pad, compute_pad);

}  // namespace tessera::ops
