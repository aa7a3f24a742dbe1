// MatMul of an activation (M, K) by a constant (K, N) on CLML's fully connected op (the
// constant transposed to CLML's N x K weights on the host).
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

std::string check(const NodeView& node, const Device& device) {
  std::string r = check_fc_operands(node, device);
  if (!r.empty()) return r;
  if (node.input(1).rank != 2) return "B must be 2-D";
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int64_t k = node.input(1).dims[0];
  const int64_t n = node.input(1).dims[1];
  const float* b = constant_floats(node, 1);
  std::vector<float> weights(static_cast<size_t>(n * k));
  for (int64_t o = 0; o < n; ++o) {
    for (int64_t i = 0; i < k; ++i) weights[o * k + i] = b[i * n + o];
  }
  lower_fully_connected(lw, node, index, std::move(weights),
                        std::vector<float>(static_cast<size_t>(n), 0.0f));
}

}  // namespace
TESSERA_CLML_OP("MatMul", check, lower);
}  // namespace tessera::clml
