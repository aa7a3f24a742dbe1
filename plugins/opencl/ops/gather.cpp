// Gather along an axis, on NCHW. One constant index (how exporters pick q, k and v out of one
// tensor) is the shared strided copy. An index tensor of any shape, constant (dynamo's
// as_strided) or computed at run time (token ids into an embedding table), is gather_indexed
// (plugins/opencl/kernels/common/gather.cl), any dtype: constant indices are checked here, run-time
// ones by the kernel through a check flag, which fails the run naming the node.
#include <climits>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kGatherIndexed{"gather.indexed", "gather.cl", "gather_indexed", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kGatherIndexed);

bool constant_indices(const NodeView& node) {
  return node.input(1).data != nullptr;
}

std::string check_indexed(const NodeView& node) {
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
  const int64_t dim = x.dims[axis];
  if (dim == 0) return "an empty axis has nothing to gather";
  if (!constant_indices(node)) return "";
  for (int64_t i = 0; i < plugin::tensor_numel(idx); ++i) {
    const int64_t v = idx.dtype == TSR_DTYPE_INT64 ? static_cast<const int64_t*>(idx.data)[i]
                                                   : static_cast<const int32_t*>(idx.data)[i];
    if (v < -dim || v >= dim) return "index " + std::to_string(v) + " out of range";
  }
  return "";
}

// One constant index: the strided copy.
bool strided(const NodeView& node) {
  return constant_indices(node) && support::gather_one_index(node);
}

std::string check(const NodeView& node, const Device&) {
  if (node.num_inputs() != 2 || !node.has_input(0) || !node.has_input(1)) {
    return "expects data and indices";
  }
  return strided(node) ? support::check_gather(node) : check_indexed(node);
}

void lower_indexed(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t axis = support::split_axis(node);
  const auto [outer, inner] = outer_inner(x, axis);
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for(kGatherIndexed.id, n);
  Kernel k = lw.kernel(config, element_defines(x) + " -DTSR_IDX=" +
                                   opencl_c_type(node.input(1).dtype));
  const std::string dim = std::to_string(x.dims[axis]);
  // Constant indices were checked above, so their flag could never be set: scratch memory
  // takes the kernel's writes and the run reads nothing back.
  const cl_mem bad =
      constant_indices(node)
          ? lw.scratch_buffer(1)
          : lw.check_flag(index, "an index is outside [-" + dim + ", " + dim + ") (axis " +
                                     std::to_string(axis) + " of input 0 has " + dim + " entries)");
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.input_index(1)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(outer, node))
      .i32(to_i32(x.dims[axis], node))
      .i32(to_i32(inner, node))
      .i32(to_i32(plugin::tensor_numel(node.input(1)), node))
      .buffer(bad);
  lw.add_1d_step(index, std::move(k), n, config);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  if (strided(node)) {
    lower_strided_copy(lw, node, index, support::gather_copy(node));
    return;
  }
  lower_indexed(lw, node, index);
}

}  // namespace
TESSERA_OPENCL_OP("Gather", check, lower);
}  // namespace tessera::opencl
