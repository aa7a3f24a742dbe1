// SpaceToDepth as a strided copy: the output (N, b*b*C, H/b, W/b) walked as (N, b, b, C, H/b,
// W/b) reading the input (N, C, H, W) with H and W split into (H/b, b) and (W/b, b)
// (any dtype kept on the device).
#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const int64_t b = node.attr_int("blocksize", 0);
  if (x.rank != 4 || b <= 0 || x.dims[2] % b != 0 || x.dims[3] % b != 0) {
    return "needs NCHW with H and W divisible by the block size";
  }
  return check_movable(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  const std::vector<int64_t> x = shape_of(*node.input(0));
  const int64_t b = node.attr_int("blocksize", 1);
  const std::vector<int64_t> dims = {x[0], b, b, x[1], x[2] / b, x[3] / b};
  strided_copy(lowering, node, lowering.buffer(node.input_index(0)),
               lowering.buffer(node.output_index(0)), dims,
               {x[1] * x[2] * x[3], x[3], 1, x[2] * x[3], b * x[3], b}, 0, dense_strides(dims), 0);
}

}  // namespace

TESSERA_VULKAN_OP(SpaceToDepth, check, lower);

}  // namespace tessera::vulkan
