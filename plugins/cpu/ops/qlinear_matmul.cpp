// TesseraQLinearMatMul (core's int8 MatMul/Gemm unit): y[r, :] = x[r, :] . w, with x [..., K]
// int8/uint8 and w a constant int8 [K, N], on the int8 GEMM of kernels/int8.hpp as
// y^T = w^T . x^T: the weight's columns are the GEMM's rows (packed once, at compile), 32 rows of
// x at a time its columns, written back transposed by the requantization. A few rows (a
// classifier at batch 1) run as one-row products over the weights packed by column instead.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "ops/int8_unit.hpp"

namespace tessera::cpu {
namespace {

// Fewer rows than this run as one-row products (int8_gemv): a GEMM tile would compute 32.
constexpr int64_t kGemvBelowRows = 4;

struct QMatMul {
  int64_t rows = 1, k = 0, n = 0;
  Int8UnitParams p;
  Int8PackedA a;           // rows >= kGemvBelowRows
  Int8PackedGemv gemv;     // rows < kGemvBelowRows
  std::vector<int32_t> offset;
};

// Each row of x as a one-row product.
void run_gemv(const QMatMul& m, const uint8_t* x, uint8_t* y) {
  Int8Requant rq = m.p.rq;
  rq.multiplier = m.p.multiplier.data();
  rq.offset = m.offset.data();
  std::vector<uint8_t> row(static_cast<size_t>(m.k));
  const uint8_t flip = m.p.x_signed ? 0x80 : 0;
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t kk = 0; kk < m.k; ++kk) row[static_cast<size_t>(kk)] = x[r * m.k + kk] ^ flip;
    int8_gemv(m.gemv, row.data(), rq, y + r * m.n);
  }
}

struct PanelTag {};

// Rows r0 .. r0 + count of x as one packed B panel: column j's group g holds x[r0 + j][4g .. 4g+3]
// as unsigned bytes.
void pack_rows(const QMatMul& q, const uint8_t* x, int64_t r0, int64_t count, uint8_t* panel) {
  const uint8_t flip = q.p.x_signed ? 0x80 : 0;
  std::memset(panel, 0, static_cast<size_t>(int8_b_panel_bytes(q.a.k4)));
  for (int64_t j = 0; j < count; ++j) {
    const uint8_t* src = x + (r0 + j) * q.k;
    for (int64_t kk = 0; kk < q.k; ++kk) {
      panel[(kk / 4) * kI8NR * 4 + j * 4 + kk % 4] = static_cast<uint8_t>(src[kk] ^ flip);
    }
  }
}

}  // namespace

std::string query_qlinear_matmul(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(3);
  const tsr_tensor* y = node.output(0);
  if (x == nullptr || w == nullptr || y == nullptr || x->rank < 1 || w->rank != 2) {
    return "x must be [..., K] and w [K, N]";
  }
  if (numel(*y) == 0) return "empty output";
  return query_int8_unit(node, w->dims[1]);
}

Step build_qlinear_matmul(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  auto q = std::make_shared<QMatMul>();
  const tsr_tensor* w = node.input(3);
  q->k = w->dims[0];
  q->n = w->dims[1];
  q->rows = numel(*node.input(0)) / q->k;
  q->p = int8_unit_params(node, q->n);
  const bool gemv = q->rows < kGemvBelowRows;
  const auto* wd = static_cast<const int8_t*>(w->data);
  if (gemv) {
    pack_int8_gemv(wd, q->k, q->n, &q->gemv);
  } else {
    pack_int8_a(wd, q->n, q->k, 1, q->n, &q->a);
  }
  const std::vector<int32_t>& sums = gemv ? q->gemv.column_sums : q->a.row_sums;
  for (int64_t j = 0; j < q->n; ++j) {
    q->offset.push_back(q->p.bias[static_cast<size_t>(j)] -
                        q->p.x_zero_unsigned * sums[static_cast<size_t>(j)]);
  }
  ctx.notes->push_back(std::string(node.name()) + (gemv ? ": int8 GEMV (" : ": int8 GEMM (") +
                       int8_kernel_name() + ")");
  const int32_t in = node.input_index(0), out = ctx.output;
  std::shared_ptr<const QMatMul> plan = q;
  return [plan, in, out](std::vector<float*>& v) {
    const QMatMul& m = *plan;
    const auto* x = reinterpret_cast<const uint8_t*>(v[in]);
    auto* y = reinterpret_cast<uint8_t*>(v[out]);
    if (m.rows < kGemvBelowRows) {
      run_gemv(m, x, y);
      return;
    }
    const int64_t panels = (m.rows + kI8NR - 1) / kI8NR;
    const int64_t row_blocks = (m.n + kI8MR - 1) / kI8MR;
    tbb::parallel_for(int64_t{0}, panels, [&](int64_t p) {
      const int64_t r0 = p * kI8NR, count = std::min(kI8NR, m.rows - r0);
      auto* panel =
          reinterpret_cast<uint8_t*>(thread_scratch<PanelTag>(int8_b_panel_bytes(m.a.k4) / 4));
      pack_rows(m, x, r0, count, panel);
      Int8Requant rq = m.p.rq;
      rq.multiplier = m.p.multiplier.data();
      rq.offset = m.offset.data();
      for (int64_t b = 0; b < row_blocks; ++b) {
        const int64_t m0 = b * kI8MR;
        int8_gemm_tile(m.a, m0, std::min(m0 + kI8MR, m.n), panel, count, rq, y + r0 * m.n, 1, m.n);
      }
    });
  };
}

}  // namespace tessera::cpu
