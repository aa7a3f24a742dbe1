// GlobalMaxPool: the maximum of every (n, c) plane of a float tensor of rank >= 3, as the
// any-axis reduction (kernels/reduce.cl) over the spatial axes, for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  const int32_t rank = node.input(0).rank;
  return rank >= 3 && rank <= 8 ? "" : "rank " + std::to_string(rank) + " (3 to 8 here)";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < node.input(0).rank; ++d) axes.push_back(d);
  lower_reduce_over(lw, node, index, ReduceCode::kMax, axes);
}

}  // namespace
TESSERA_OPENCL_OP("GlobalMaxPool", check, lower);
}  // namespace tessera::opencl
