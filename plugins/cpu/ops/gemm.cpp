// Gemm on the packed SGEMM. A constant right operand (the usual weights) is packed
// once at compile time, with Gemm's alpha folded in; beta * C becomes the column-bias epilogue.
#include <memory>
#include <optional>

#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_gemm(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* a = node.input(0);
  const tsr_tensor* b = node.input(1);
  const tsr_tensor* c = node.input(2);
  if (!is_f32(a) || !is_f32(b) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (a->rank != 2 || b->rank != 2) return "only 2-D operands are implemented";
  if (b->data == nullptr) return "B must be a constant (weights)";
  if (c != nullptr) {
    const int64_t n = node.output(0)->dims[1];
    if (constant_f32(c) == nullptr) return "C must be a float32 constant";
    const bool row =
        (c->rank == 1 && c->dims[0] == n) || (c->rank == 2 && c->dims[0] == 1 && c->dims[1] == n);
    if (!row && numel(*c) != 1)
      return "only C broadcast along rows ([N], [1,N] or scalar) is implemented";
  }
  return "";
}

std::optional<Config> tunable_gemm(const RegionView& region, const NodeView& node,
                                   int64_t threads) {
  const bool gemm = node.op_type() == "Gemm";
  const std::string why = gemm ? query_gemm(region, node) : query_matmul(region, node);
  if (!why.empty()) return std::nullopt;
  const tsr_tensor* y = node.output(0);
  const int64_t rows = gemm ? y->dims[0] : matmul_gemm_rows(node);
  return default_gemm_config(rows, y->dims[y->rank - 1], threads);
}

Step build_gemm(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  const tsr_tensor* a = node.input(0);
  const tsr_tensor* b = node.input(1);
  const tsr_tensor* c = node.input(2);
  const bool trans_a = node.attr_int("transA", 0) != 0;
  const bool trans_b = node.attr_int("transB", 0) != 0;
  const float alpha = node.attr_float("alpha", 1.0f);
  const float beta = node.attr_float("beta", 1.0f);
  const int64_t m = node.output(0)->dims[0], n = node.output(0)->dims[1];
  const int64_t k = trans_a ? a->dims[0] : a->dims[1];
  const int64_t lda = a->dims[1];

  std::vector<float> scaled(static_cast<const float*>(b->data),
                            static_cast<const float*>(b->data) + numel(*b));
  for (float& x : scaled) x *= alpha;
  const Config config = choose_config(ctx, default_gemm_config(m, n, ctx.threads));
  const GemmBlocking blocking = gemm_blocking(config);
  const int64_t mr = tile_rows(config), nr = blocking.nr;
  auto packed_b = std::make_shared<PackedMatrix>();
  const int64_t ldb = b->dims[1];
  if (trans_b) {
    pack_b(scaled.data(), k, n, 1, ldb, packed_b.get(), nr);
  } else {
    pack_b(scaled.data(), k, n, ldb, 1, packed_b.get(), nr);
  }
  auto bias = std::make_shared<std::vector<float>>();
  if (const float* cv = constant_f32(c)) {
    bias->resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
      (*bias)[static_cast<size_t>(j)] = beta * cv[numel(*c) == 1 ? 0 : j];
  }
  auto packed_a = std::make_shared<PackedMatrix>();
  const int32_t in = node.input_index(0), out = ctx.output;
  const Activation act = ctx.act;
  const std::shared_ptr<const UnaryFn> post = take_post(ctx);
  return [=](std::vector<float*>& v) {
    if (trans_a) {
      pack_a(v[in], m, k, 1, lda, packed_a.get(), mr);
    } else {
      pack_a(v[in], m, k, lda, 1, packed_a.get(), mr);
    }
    Epilogue e;
    e.col_bias = bias->empty() ? nullptr : bias->data();
    e.lo = act.lo;
    e.hi = act.hi;
    e.post = post.get();
    sgemm_packed(*packed_a, *packed_b, v[out], n, e, blocking);
  };
}

}  // namespace tessera::cpu
