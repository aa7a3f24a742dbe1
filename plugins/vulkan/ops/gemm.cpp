// Gemm: alpha * op(A) op(B) + beta * C, transposes read in place through strides.
#include "ops/elementwise.hpp"
#include "ops/gemm_kernel.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  if (node.input(0) == nullptr || node.input(1) == nullptr || node.input(0)->rank != 2 ||
      node.input(1)->rank != 2) {
    return "A and B must be matrices";
  }
  if (node.input(2) != nullptr && node.input(2)->rank > 2) return "C of rank above 2";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& a = *node.input(0);
  const tsr_tensor& b = *node.input(1);
  const bool ta = node.attr_int("transA", 0) != 0;
  const bool tb = node.attr_int("transB", 0) != 0;
  GemmShape s;
  s.m = ta ? a.dims[1] : a.dims[0];
  s.k = ta ? a.dims[0] : a.dims[1];
  s.n = tb ? b.dims[0] : b.dims[1];
  s.a_m = ta ? 1 : a.dims[1];
  s.a_k = ta ? a.dims[1] : 1;
  s.b_k = tb ? 1 : b.dims[1];
  s.b_n = tb ? b.dims[1] : 1;
  s.alpha = node.attr_float("alpha", 1.0f);
  s.beta = node.attr_float("beta", 1.0f);
  const tsr_tensor* c = node.input(2);
  if (c != nullptr) {
    s.has_c = true;
    const std::vector<int64_t> strides = broadcast_strides(shape_of(*c), {s.m, s.n});
    s.c_m = strides[0];
    s.c_n = strides[1];
  }
  dispatch_gemm(lowering, node, s, lowering.buffer(node.input_index(0)),
                lowering.buffer(node.input_index(1)),
                c != nullptr ? &lowering.buffer(node.input_index(2)) : nullptr);
}

}  // namespace

TESSERA_VULKAN_OP(Gemm, check, lower);

}  // namespace tessera::vulkan
