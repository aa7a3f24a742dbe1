// GatherElements: each output element reads the input at its own coordinates with the `axis`
// one taken from the indices (computed at run time or constant), rank <= 6, any dtype device
// memory holds (kernels/common/gather.cl gather_elements), for every OpenCL plugin: the picks
// after a TopK in detection and decoding heads. An index out of range fails the run naming the
// node (a check flag), as core's kernel does.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kGatherElements{"gather.elements", "gather.cl", "gather_elements", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kGatherElements);

std::string check(const NodeView& node, const Device&) {
  if (node.num_inputs() != 2 || !node.has_input(0) || !node.has_input(1) ||
      node.num_outputs() != 1 || node.output_index(0) < 0) {
    return "expects data, indices and one output";
  }
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& idx = node.input(1);
  std::string r = support::check_data_tensor(x, "input 0");
  if (!r.empty()) return r;
  r = support::check_data_tensor(idx, "indices");
  if (!r.empty()) return r;
  if (idx.dtype != TSR_DTYPE_INT64 && idx.dtype != TSR_DTYPE_INT32) {
    return "indices must be int32 or int64";
  }
  if (x.rank < 1 || x.rank > support::kMaxStridedRank || idx.rank != x.rank) {
    return "rank 1 to 6, the indices' equal to the data's";
  }
  const int64_t axis = support::split_axis(node);
  if (axis < 0 || axis >= x.rank) return "axis out of range";
  if (x.dims[axis] == 0) return "an empty axis has nothing to gather";
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& idx = node.input(1);
  const int64_t axis = support::split_axis(node);
  const int64_t n = plugin::tensor_numel(idx);
  // The output's (= the indices') dims and the input's strides, right-aligned in 6 slots.
  const auto strides = support::row_major_strides(x);
  support::StridedCopy walk;
  const int32_t shift = support::kMaxStridedRank - x.rank;
  for (int32_t d = 0; d < x.rank; ++d) {
    walk.dims[static_cast<size_t>(shift + d)] = to_i32(idx.dims[d], node);
    walk.strides[static_cast<size_t>(shift + d)] = to_i32(strides[static_cast<size_t>(d)], node);
  }
  const Config config = lw.config_for(kGatherElements.id, n);
  Kernel k = lw.kernel(config, element_defines(x) + " -DTSR_IDX=" + opencl_c_type(idx.dtype));
  const std::string dim = std::to_string(x.dims[axis]);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.input_index(1)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32x8(walk.dims)
      .i32x8(walk.strides)
      .i32(to_i32(shift + axis, node))
      .i32(to_i32(x.dims[axis], node))
      .buffer(lw.check_flag(index, "an index is outside [-" + dim + ", " + dim + ") (axis " +
                                       std::to_string(axis) + " of input 0 has " + dim +
                                       " entries)"));
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("GatherElements", check, lower);
}  // namespace tessera::opencl
