// MatMul of two 2-D operands on the mali plugin, through its Gemm kernels (ops/shared.hpp); the
// batched products (attention's Q K^T and A V, Linear layers over [B, N, C]) run the shared op
// (plugins/opencl/ops/mat_mul.cpp).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank != 2 || node.input(1).rank != 2) {
    return "operands are not both 2-D (the batched kernel takes them)";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_gemm(lw, node, index, node.input_index(0), node.input_index(1), -1, false, false, 1.0f,
             0.0f);
}

}  // namespace
TESSERA_MALI_OP("MatMul", check, lower);
TESSERA_MALI_TUNABLE("MatMul", gemm_options);
}  // namespace tessera::mali
