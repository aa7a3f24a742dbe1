// Gather along an axis, on NCHW. Constant indices: one index (how exporters pick q, k and v out
// of one tensor) is the shared strided copy; index tensors of any shape (dynamo's as_strided)
// use gather_f32. Indices computed at run time (token ids into an embedding table) use
// gather_indexed, any dtype, which reports an index out of range through a check flag
// (plugins/opencl/kernels/common/gather.cl).
#include <climits>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kGatherIndexed{"gather.indexed", "gather.cl", "gather_indexed", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kGatherIndexed);

bool runtime_indices(const NodeView& node) {
  return node.num_inputs() == 2 && node.has_input(1) && node.input(1).data == nullptr;
}

std::string check_runtime_indices(const NodeView& node) {
  if (node.num_outputs() != 1 || node.output_index(0) < 0) return "output 0 missing";
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& idx = node.input(1);
  std::string r = support::check_data_tensor(x, "input 0");
  if (!r.empty()) return r;
  r = support::check_data_tensor(node.output(0), "output 0");
  if (!r.empty()) return r;
  if (idx.dtype != TSR_DTYPE_INT64 && idx.dtype != TSR_DTYPE_INT32) {
    return "indices must be int32 or int64";
  }
  r = support::check_data_tensor(idx, "indices");
  if (!r.empty()) return r;
  const int64_t axis = support::split_axis(node);
  if (x.rank < 1 || axis < 0 || axis >= x.rank) return "axis out of range";
  if (x.dims[axis] == 0) return "an empty axis has nothing to gather";
  return "";
}

std::string check(const NodeView& node, const Device&) {
  if (!node.has_input(0)) return "input 0 missing";
  return runtime_indices(node) ? check_runtime_indices(node) : support::check_gather_any(node);
}

void lower_runtime_indices(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t axis = support::split_axis(node);
  const auto [outer, inner] = outer_inner(x, axis);
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for(kGatherIndexed.id, n);
  Kernel k = lw.kernel(config, element_defines(x) + " -DTSR_IDX=" +
                                   opencl_c_type(node.input(1).dtype));
  const std::string dim = std::to_string(x.dims[axis]);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.input_index(1)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(outer, node))
      .i32(to_i32(x.dims[axis], node))
      .i32(to_i32(inner, node))
      .i32(to_i32(plugin::tensor_numel(node.input(1)), node))
      .buffer(lw.check_flag(index, "an index is outside [-" + dim + ", " + dim + ") (axis " +
                                       std::to_string(axis) + " of input 0 has " + dim +
                                       " entries)"));
  lw.add_1d_step(index, std::move(k), n, config);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  if (runtime_indices(node)) {
    lower_runtime_indices(lw, node, index);
    return;
  }
  if (support::gather_one_index(node)) {
    lower_strided_copy(lw, node, index, support::gather_copy(node));
    return;
  }
  const support::GatherRows g = support::gather_rows(node);
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for("gather.rows", n);
  Kernel k = lw.kernel(config);
  support::bind_gather(k, lw.buffer(node.input_index(0)), lw.constant_buffer(g.indices),
                       lw.buffer(node.output_index(0)), g);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("Gather", check, lower);
}  // namespace tessera::opencl
