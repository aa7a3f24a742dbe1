// TopK with a constant k along one axis of a float32, int64 or int32 tensor: values and int64
// indices, sorted (ties in index order, a NaN above every number, as core's), one work-item per
// input element ranking it within its column (kernels/common/arg_reduce.cl top_k_rank), for every
// OpenCL plugin: the score selection of detection heads and beam/greedy decoders.
#include <string>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

// Each element compares itself with up to n others; beyond this the quadratic work outgrows a
// sort on the host.
constexpr int64_t kMaxCandidates = 16384;

const Schedule kTopK{"top_k.rank", "arg_reduce.cl", "top_k_rank", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kTopK);

int64_t top_k_axis(const NodeView& node) {
  const int64_t axis = node.attr_int("axis", -1);
  return axis < 0 ? axis + node.input(0).rank : axis;
}

int64_t top_k_k(const NodeView& node) {
  if (node.opset() < 10) return node.attr_int("k", 0);
  return *static_cast<const int64_t*>(node.input(1).data);
}

std::string check(const NodeView& node, const Device&) {
  if (!node.has_input(0) || node.num_outputs() != 2) return "expects values and indices outputs";
  const tsr_tensor& x = node.input(0);
  std::string r = support::check_data_tensor(x, "input 0");
  if (!r.empty()) return r;
  if (x.dtype != TSR_DTYPE_FLOAT32 && x.dtype != TSR_DTYPE_INT64 && x.dtype != TSR_DTYPE_INT32) {
    return "input 0 is not float32, int64 or int32";
  }
  if (node.opset() >= 10) {
    r = check_constant(node, 1, "K");
    if (!r.empty()) return r;
    if (node.input(1).dtype != TSR_DTYPE_INT64 || plugin::tensor_numel(node.input(1)) != 1) {
      return "K is not one int64";
    }
  }
  const int64_t axis = top_k_axis(node);
  if (x.rank < 1 || axis < 0 || axis >= x.rank) return "axis out of range";
  const int64_t k = top_k_k(node);
  if (k < 0 || k > x.dims[axis]) return "k out of range";
  if (x.dims[axis] > kMaxCandidates) {
    return "more than " + std::to_string(kMaxCandidates) + " candidates along the axis";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t axis = top_k_axis(node), k = top_k_k(node);
  const auto [outer, inner] = outer_inner(x, axis);
  const int64_t n = plugin::tensor_numel(x);
  const int64_t out_elems = outer * k * inner;
  // An output the graph does not read still has a place to go.
  const auto output_or_scratch = [&](int32_t i, int64_t bytes_per_element) {
    return node.output_index(i) >= 0
               ? lw.buffer(node.output_index(i))
               : lw.scratch_buffer((out_elems * bytes_per_element + 3) / 4);
  };
  const Config config = lw.config_for(kTopK.id, n);
  Kernel kern = lw.kernel(config, std::string("-DTSR_T=") + opencl_c_type(x.dtype));
  kern.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(output_or_scratch(0, static_cast<int64_t>(plugin::dtype_size(x.dtype))))
      .buffer(output_or_scratch(1, 8))
      .i32(to_i32(outer, node))
      .i32(to_i32(x.dims[axis], node))
      .i32(to_i32(inner, node))
      .i32(to_i32(k, node))
      .i32(node.attr_int("largest", 1) != 0 ? 1 : 0);
  lw.add_1d_step(index, std::move(kern), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("TopK", check, lower);
}  // namespace tessera::opencl
