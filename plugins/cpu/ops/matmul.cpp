// MatMul (numpy semantics, rank >= 2 operands) on the packed SGEMM. A constant 2-D right operand
// (the weights of a linear layer) is packed once at compile time, and a left operand of any rank
// is then one [batch * M, K] matrix. Otherwise the batch dims broadcast and each product packs
// its operands at run time (attention's Q K^T and P V).
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <memory>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_matmul(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* a = node.input(0);
  const tsr_tensor* b = node.input(1);
  if (!is_f32(a) || !is_f32(b) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (a->rank < 2 || b->rank < 2) return "1-D operands are not implemented";
  if (a->dims[a->rank - 1] != b->dims[b->rank - 2]) return "inner dimensions differ";
  if (numel(*node.output(0)) == 0) return "empty output";
  if (b->rank == 2 && b->data != nullptr) return "";
  BroadcastPlan plan;
  const std::vector<int64_t> ya = dims(*a), yb = dims(*b), y = dims(*node.output(0));
  return plan_broadcast(std::vector<int64_t>(y.begin(), y.end() - 2),
                        {std::vector<int64_t>(ya.begin(), ya.end() - 2),
                         std::vector<int64_t>(yb.begin(), yb.end() - 2)},
                        &plan);
}

const float* matmul_column_bias(const NodeView& add, int32_t value) {
  if (add.op_type() != "Add" || add.num_inputs() != 2) return nullptr;
  const int32_t i = add.input_index(0) == value ? 1 : 0;
  if (add.input_index(1 - i) != value || add.input_index(i) == value) return nullptr;
  const tsr_tensor* y = add.input(1 - i);
  const tsr_tensor* b = add.input(i);
  const float* data = constant_f32(b);
  if (data == nullptr || !is_f32(y) || !is_f32(add.output(0)) || b->rank > y->rank) return nullptr;
  if (dims(*add.output(0)) != dims(*y) || b->rank == 0) return nullptr;
  for (int32_t d = 0; d + 1 < b->rank; ++d) {
    if (b->dims[d] != 1) return nullptr;
  }
  return b->dims[b->rank - 1] == y->dims[y->rank - 1] ? data : nullptr;
}

int64_t matmul_gemm_rows(const NodeView& node) {
  const tsr_tensor* a = node.input(0);
  const tsr_tensor* b = node.input(1);
  const int64_t k = a->dims[a->rank - 1];
  return b->rank == 2 && b->data != nullptr ? numel(*a) / k : a->dims[a->rank - 2];
}

Step build_matmul(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  const tsr_tensor* a = node.input(0);
  const tsr_tensor* b = node.input(1);
  const int64_t k = a->dims[a->rank - 1], n = b->dims[b->rank - 1];
  const int64_t m = a->dims[a->rank - 2];
  const bool constant_b = b->rank == 2 && b->data != nullptr;
  const int64_t rows = matmul_gemm_rows(node);
  const Config config = choose_config(ctx, default_gemm_config(rows, n, ctx.threads));
  const GemmBlocking blocking = gemm_blocking(config);
  const int64_t mr = tile_rows(config), nr = blocking.nr;
  const int32_t ia = node.input_index(0), ib = node.input_index(1), out = ctx.output;
  const Activation act = ctx.act;
  // A fused bias Add (per column) and residual Add (laid out like the output), fusion.cpp.
  const float* col_bias = ctx.col_bias;
  const int32_t res = ctx.residual;
  const std::shared_ptr<const UnaryFn> post = take_post(ctx);
  if (constant_b) {
    auto packed_b = std::make_shared<PackedMatrix>();
    pack_b(static_cast<const float*>(b->data), k, n, n, 1, packed_b.get(), nr);
    // A is packed per task, one block of mc rows at a time, into the task's thread buffer: the
    // packing runs in parallel and the GEMM reads the block while it is still in cache. Packing
    // all of A up front ran on one thread (mobilevit's mlp fc2, 1024 x 128 by 128 x 64).
    const int64_t block = std::max<int64_t>(1, (blocking.mc + mr - 1) / mr) * mr;
    const int64_t blocks = (rows + block - 1) / block;
    return [=](std::vector<float*>& v) {
      Epilogue e;
      e.lo = act.lo;
      e.hi = act.hi;
      e.post = post.get();
      e.col_bias = col_bias;
      tbb::parallel_for(int64_t{0}, blocks, [&](int64_t t) {
        // Isolated so that a thread waiting inside this block's GEMM takes no other block, which
        // would repack the buffer the GEMM is reading.
        tbb::this_task_arena::isolate([&] {
          static thread_local PackedMatrix packed_a;
          const int64_t r0 = t * block, count = std::min(block, rows - r0);
          pack_a(v[ia] + r0 * k, count, k, k, 1, &packed_a, mr);
          Epilogue block_e = e;
          if (res >= 0) block_e.residual = v[res] + r0 * n;
          sgemm_packed(packed_a, *packed_b, v[out] + r0 * n, n, block_e, blocking);
        });
      });
    };
  }
  const std::vector<int64_t> da = dims(*a), db = dims(*b), dy = dims(*node.output(0));
  BroadcastPlan plan;
  plan_broadcast(std::vector<int64_t>(dy.begin(), dy.end() - 2),
                 {std::vector<int64_t>(da.begin(), da.end() - 2),
                  std::vector<int64_t>(db.begin(), db.end() - 2)},
                 &plan);
  // Batch items as (a offset, b offset) in matrices, in output order.
  auto items = std::make_shared<std::vector<std::pair<int64_t, int64_t>>>();
  for (int64_t o = 0; o < plan.outer_count(); ++o) {
    int64_t off[8];
    plan.offsets(o, off);
    for (int64_t r = 0; r < plan.run; ++r) {
      items->emplace_back(off[0] + r * plan.step[0], off[1] + r * plan.step[1]);
    }
  }
  return [=](std::vector<float*>& v) {
    Epilogue e;
    e.lo = act.lo;
    e.hi = act.hi;
    e.post = post.get();
    e.col_bias = col_bias;
    // Batch items (attention heads: 16 products of 256 x 256 by 256 x 16 in mobilevit) are
    // parallel tasks, each packing into its thread's buffers; the GEMM inside stays parallel
    // for few large items. Isolation keeps a thread waiting inside one item's GEMM from taking
    // another item, which would repack the buffers that GEMM is reading.
    tbb::parallel_for(int64_t{0}, static_cast<int64_t>(items->size()), [&](int64_t i) {
      tbb::this_task_arena::isolate([&] {
        static thread_local PackedMatrix packed_a, packed_b;
        const auto [oa, ob] = (*items)[static_cast<size_t>(i)];
        pack_a(v[ia] + oa * m * k, m, k, k, 1, &packed_a, mr);
        pack_b(v[ib] + ob * k * n, k, n, n, 1, &packed_b, nr);
        Epilogue item_e = e;
        if (res >= 0) item_e.residual = v[res] + i * m * n;
        sgemm_packed(packed_a, packed_b, v[out] + i * m * n, n, item_e, blocking);
      });
    });
  };
}

}  // namespace tessera::cpu
