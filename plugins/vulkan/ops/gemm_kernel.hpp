// The batched matrix product both MatMul and Gemm lower to (shaders/matmul.comp).
#pragma once

#include "ops/op.hpp"

namespace tessera::vulkan {

// Operand addressing of one product: y[b1][b2] = alpha * A[b1][b2] x B[b1][b2] + beta * C.
struct GemmShape {
  int64_t m = 1, n = 1, k = 1;
  int64_t b1 = 1, b2 = 1;                        // batch levels (outer, inner)
  int64_t a_b1 = 0, a_b2 = 0, a_m = 0, a_k = 1;  // A strides
  int64_t b_b1 = 0, b_b2 = 0, b_k = 0, b_n = 1;  // B strides
  bool has_c = false;
  int64_t c_m = 0, c_n = 0;  // C strides
  float alpha = 1.0f, beta = 1.0f;
};

// Dispatches the product of `a` and `b` (and `c` when shape.has_c) into value `out`, with the
// activation fused from the node's sole reader when it is one.
void dispatch_gemm(Lowering& lowering, const NodeView& node, const GemmShape& shape,
                   const Buffer& a, const Buffer& b, const Buffer* c);

}  // namespace tessera::vulkan
