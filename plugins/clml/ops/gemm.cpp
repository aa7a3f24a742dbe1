// Gemm on CLML's fully connected op: Y = alpha * A B' + beta * C with A (M, K) an activation, B
// a constant (transposed on the host when transB = 0) and C a constant per output column or a
// scalar; alpha and beta are folded into the weights and bias.
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

std::string check(const NodeView& node, const Device& device) {
  std::string r = check_fc_operands(node, device);
  if (!r.empty()) return r;
  if (node.attr_int("transA", 0) != 0) return "transA = 1 is not supported";
  if (node.has_input(2)) {
    r = check_constant(node, 2, "C");
    if (!r.empty()) return r;
    // ONNX broadcasts C to (M, N): a scalar, [N] or [1, N] is one value per column; [M, 1] or
    // [M, N] vary per row, which the fully connected op's bias cannot hold.
    const tsr_tensor& c = node.input(2);
    const int64_t n = node.output(0).dims[1];
    const bool per_column = plugin::tensor_numel(c) == 1 || (c.rank == 1 && c.dims[0] == n) ||
                            (c.rank == 2 && c.dims[0] == 1 && c.dims[1] == n);
    if (!per_column) return "C must be a scalar or one value per output column ([N] or [1, N])";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& b = node.input(1);
  const bool trans_b = node.attr_int("transB", 0) != 0;
  const int64_t k = node.input(0).dims[1];
  const int64_t n = node.output(0).dims[1];
  const float alpha = node.attr_float("alpha", 1.0f);
  const float beta = node.attr_float("beta", 1.0f);
  const float* bw = constant_floats(node, 1);
  std::vector<float> weights(static_cast<size_t>(n * k));
  for (int64_t o = 0; o < n; ++o) {
    for (int64_t i = 0; i < k; ++i) {
      weights[o * k + i] = alpha * (trans_b ? bw[o * b.dims[1] + i] : bw[i * b.dims[1] + o]);
    }
  }
  std::vector<float> bias(static_cast<size_t>(n), 0.0f);
  if (node.has_input(2)) {
    const float* c = constant_floats(node, 2);
    const bool scalar = plugin::tensor_numel(node.input(2)) == 1;
    for (int64_t o = 0; o < n; ++o) bias[o] = beta * c[scalar ? 0 : o];
  }
  lower_fully_connected(lw, node, index, std::move(weights), std::move(bias));
}

}  // namespace
TESSERA_CLML_OP("Gemm", check, lower);
}  // namespace tessera::clml
