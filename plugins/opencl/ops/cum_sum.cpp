// CumSum along a constant axis of a float32, int64 or int32 tensor (position ids from an
// attention mask, as transformers exports them: cumsum(mask) * mask), one work-item per column
// (kernels/common/arg_reduce.cl cum_sum), for every OpenCL plugin.
#include <optional>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kCumSum{"cum_sum", "arg_reduce.cl", "cum_sum", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kCumSum);

// The axis from the constant input 1 (one int32 / int64 value), non-negative; nullopt when out of
// range.
std::optional<int64_t> cum_sum_axis(const NodeView& node) {
  const tsr_tensor& t = node.input(1);
  if (plugin::tensor_numel(t) != 1) return std::nullopt;
  const int64_t a = t.dtype == TSR_DTYPE_INT64 ? *static_cast<const int64_t*>(t.data)
                                               : *static_cast<const int32_t*>(t.data);
  const int64_t rank = node.input(0).rank;
  if (a < -rank || a >= rank) return std::nullopt;
  return a < 0 ? a + rank : a;
}

std::string check(const NodeView& node, const Device&) {
  if (node.num_inputs() != 2 || !node.has_input(0) || node.num_outputs() != 1 ||
      node.output_index(0) < 0) {
    return "expects x, axis and one output";
  }
  const tsr_tensor& x = node.input(0);
  const std::string r = support::check_data_tensor(x, "input 0");
  if (!r.empty()) return r;
  if (x.dtype != TSR_DTYPE_FLOAT32 && x.dtype != TSR_DTYPE_INT64 && x.dtype != TSR_DTYPE_INT32) {
    return "input 0 is not float32, int64 or int32";
  }
  const tsr_tensor& a = node.input(1);
  if (!a.data || (a.dtype != TSR_DTYPE_INT64 && a.dtype != TSR_DTYPE_INT32)) {
    return "axis (input 1) must be a constant int32 or int64";
  }
  return cum_sum_axis(node) ? "" : "axis out of range";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t axis = *cum_sum_axis(node);
  const auto [outer, inner] = outer_inner(x, axis);
  const Config config = lw.config_for(kCumSum.id, outer * inner);
  Kernel k = lw.kernel(config, std::string("-DTSR_T=") + opencl_c_type(x.dtype));
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(outer, node))
      .i32(to_i32(x.dims[axis], node))
      .i32(to_i32(inner, node))
      .i32(node.attr_int("exclusive", 0) != 0 ? 1 : 0)
      .i32(node.attr_int("reverse", 0) != 0 ? 1 : 0);
  lw.add_1d_step(index, std::move(k), outer * inner, config);
}

}  // namespace
TESSERA_OPENCL_OP("CumSum", check, lower);
}  // namespace tessera::opencl
