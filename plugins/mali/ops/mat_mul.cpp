// MatMul (2-D x 2-D) on the mali plugin, through the Gemm kernel.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank != 2 || node.input(1).rank != 2) return "only 2-D x 2-D is implemented";
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_gemm(lw, node, index, node.input_id(0), node.input_id(1), -1, false, false, 1.0f, 0.0f);
}

}  // namespace
TESSERA_MALI_OP("MatMul", check, lower);
}  // namespace tessera::mali
