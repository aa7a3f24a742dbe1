// MatMul with numpy semantics: 1-D operands promoted, batch dimensions broadcast. The output's
// batch dimensions are merged where both operands allow it, to at most the two batch levels
// shaders/matmul.comp walks.
#include "ops/elementwise.hpp"
#include "ops/gemm_kernel.hpp"

namespace tessera::vulkan {
namespace {

struct Batches {
  std::vector<int64_t> dims, a, b;  // output batch dims and each operand's strides along them
};

// Batch dims of the output with the operands' strides, adjacent dims merged where both operands
// step through them contiguously (or both broadcast).
Batches batches(const NodeView& node) {
  const tsr_tensor& a = *node.input(0);
  const tsr_tensor& b = *node.input(1);
  const tsr_tensor& y = *node.output(0);
  Batches out;
  const int32_t rank = y.rank - 2;
  if (rank <= 0 || a.rank < 2 || b.rank < 2) return out;
  std::vector<int64_t> dims(y.dims, y.dims + rank);
  const std::vector<int64_t> ab(a.dims, a.dims + a.rank - 2);
  const std::vector<int64_t> bb(b.dims, b.dims + b.rank - 2);
  std::vector<int64_t> sa = broadcast_strides(ab, dims);
  std::vector<int64_t> sb = broadcast_strides(bb, dims);
  const int64_t a_mat = a.dims[a.rank - 2] * a.dims[a.rank - 1];
  const int64_t b_mat = b.dims[b.rank - 2] * b.dims[b.rank - 1];
  for (int64_t& v : sa) v *= a_mat;
  for (int64_t& v : sb) v *= b_mat;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!out.dims.empty() && out.a.back() == sa[i] * dims[i] && out.b.back() == sb[i] * dims[i]) {
      out.dims.back() *= dims[i];
      out.a.back() = sa[i];
      out.b.back() = sb[i];
      continue;
    }
    out.dims.push_back(dims[i]);
    out.a.push_back(sa[i]);
    out.b.push_back(sb[i]);
  }
  return out;
}

std::string check(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  if (node.input(1) == nullptr || node.input(1)->dtype != TSR_DTYPE_FLOAT32) return "B not float32";
  if (node.input(0)->rank < 2 || node.input(1)->rank < 2) return "1-D operands";
  if (batches(node).dims.size() > 2) return "batch broadcasting beyond two levels";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& a = *node.input(0);
  const tsr_tensor& b = *node.input(1);
  GemmShape s;
  s.m = a.dims[a.rank - 2];
  s.k = a.dims[a.rank - 1];
  s.n = b.dims[b.rank - 1];
  s.a_m = s.k;
  s.a_k = 1;
  s.b_k = s.n;
  s.b_n = 1;
  const Batches bt = batches(node);
  if (bt.dims.size() == 2) {
    s.b1 = bt.dims[0];
    s.a_b1 = bt.a[0];
    s.b_b1 = bt.b[0];
  }
  if (!bt.dims.empty()) {
    s.b2 = bt.dims.back();
    s.a_b2 = bt.a.back();
    s.b_b2 = bt.b.back();
  }
  dispatch_gemm(lowering, node, s, lowering.buffer(node.input_index(0)),
                lowering.buffer(node.input_index(1)), nullptr);
}

}  // namespace

TESSERA_VULKAN_OP(MatMul, check, lower);

}  // namespace tessera::vulkan
