// ArgMin: the int64 index of the smallest element along an axis (float32, int64, int32
// input; keepdims, select_last_index; shaders/arg_reduce.comp via ops/typed.cpp).
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_arg_reduce(lowering, node, false);
}

}  // namespace

TESSERA_VULKAN_OP(ArgMin, check_arg_reduce, lower);

}  // namespace tessera::vulkan
