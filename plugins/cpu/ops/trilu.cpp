// Trilu over any 1-, 2-, 4- or 8-byte element type with a constant k: the upper (j - i >= k) or
// lower (j - i <= k) triangle of every [M, N] matrix of the last two dims is kept, the rest set to
// zero (all bits clear: 0 for every such type). A causal attention mask over scores whose length
// is known only when the session plans. Each row is one copy of its kept run and one clear.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_trilu(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (copy_element_bytes(x, node.output(0)) == 0) return "input and output dtypes differ";
  if (x->rank < 2) return "input rank must be at least 2";
  if (node.num_inputs() > 1 && node.input_index(1) >= 0) {
    std::vector<int64_t> k;
    if (!constant_ints(node.input(1), &k) || k.size() != 1) return "k must be a constant scalar";
  }
  return "";
}

Step build_trilu(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  int64_t k = 0;
  if (ctx.node.num_inputs() > 1 && ctx.node.input_index(1) >= 0) {
    std::vector<int64_t> kv;
    constant_ints(ctx.node.input(1), &kv);
    k = kv[0];
  }
  const bool upper = ctx.node.attr_int("upper", 1) != 0;
  const int64_t m = x->dims[x->rank - 2], n = x->dims[x->rank - 1];
  const int64_t rows = m == 0 || n == 0 ? 0 : numel(*x) / n;
  const int64_t bytes = copy_element_bytes(x, ctx.node.output(0));
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    const auto* src = reinterpret_cast<const unsigned char*>(v[in]);
    auto* dst = reinterpret_cast<unsigned char*>(v[out]);
    tbb::parallel_for(int64_t{0}, rows, [&](int64_t r) {
      const int64_t i = r % m;
      // Kept columns [lo, hi): upper keeps j >= i + k, lower keeps j <= i + k. Clamped in
      // int64 without overflow for any k (|i| and n are far below the limits).
      const int64_t edge = std::clamp<int64_t>(k, -n - m, n + m) + i;
      const int64_t lo = upper ? std::clamp<int64_t>(edge, 0, n) : 0;
      const int64_t hi = upper ? n : std::clamp<int64_t>(edge + 1, 0, n);
      const int64_t row = r * n * bytes;
      std::memset(dst + row, 0, static_cast<size_t>(lo * bytes));
      std::memcpy(dst + row + lo * bytes, src + row + lo * bytes,
                  static_cast<size_t>((hi - lo) * bytes));
      std::memset(dst + row + hi * bytes, 0, static_cast<size_t>((n - hi) * bytes));
    });
  };
}

}  // namespace tessera::cpu
