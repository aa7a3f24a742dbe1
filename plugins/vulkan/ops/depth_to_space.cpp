// DepthToSpace (DCR and CRD) as a strided copy: the output (N, C', H*b, W*b) walked as
// (N, C', H, b, W, b) reading the input's channel as (b, b, C') for DCR or (C', b, b) for CRD
// (any dtype kept on the device).
#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string f = check_movable(node);
  if (!f.empty()) return f;
  const int64_t b = node.attr_int("blocksize", 0);
  const tsr_tensor& x = *node.input(0);
  if (x.rank != 4 || b <= 0 || x.dims[1] % (b * b) != 0) return "needs NCHW and C divisible by b*b";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const std::vector<int64_t> x = shape_of(*node.input(0));
  const int64_t b = node.attr_int("blocksize", 1);
  const int64_t c = x[1] / (b * b), hw = x[2] * x[3];
  const bool crd = node.attr_string("mode", "DCR") == "CRD";
  // Input strides of the channel's parts: c', the row's b, the column's b.
  const int64_t sc = crd ? b * b * hw : hw, sb1 = crd ? b * hw : b * c * hw,
                sb2 = crd ? hw : c * hw;
  const std::vector<int64_t> dims = {x[0], c, x[2], b, x[3], b};
  strided_copy(lowering, node, lowering.buffer(node.input_index(0)),
               lowering.buffer(node.output_index(0)), dims, {x[1] * hw, sc, x[3], sb1, 1, sb2}, 0,
               dense_strides(dims), 0);
}

}  // namespace

TESSERA_VULKAN_OP(DepthToSpace, check, lower);

}  // namespace tessera::vulkan
