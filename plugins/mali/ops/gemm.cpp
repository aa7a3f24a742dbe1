// Gemm on the mali plugin: alpha * op(A) * op(B) + beta * C with transA/transB and C broadcast.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank != 2 || node.input(1).rank != 2) return "A and B must be 2-D";
  if (node.num_inputs() > 2 && node.has_input(2) && node.input(2).rank > 2) {
    return "C must have rank <= 2";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const bool has_c = node.num_inputs() > 2 && node.has_input(2);
  lower_gemm(lw, node, index, node.input_index(0), node.input_index(1),
             has_c ? node.input_index(2) : -1, node.attr_int("transA", 0) != 0,
             node.attr_int("transB", 0) != 0, node.attr_float("alpha", 1.0f),
             node.attr_float("beta", 1.0f));
}

}  // namespace
TESSERA_MALI_OP("Gemm", check, lower);
TESSERA_MALI_TUNABLE("Gemm", gemm_options);
}  // namespace tessera::mali
