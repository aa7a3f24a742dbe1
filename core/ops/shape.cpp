// Shape: the input's dims as a 1-D int64 tensor; from opset 15 only dims [start, end), both
// clamped to [0, rank] after adding rank to negative values. Any input dtype.
#include <algorithm>

#include "op.hpp"

namespace tessera::ops {
namespace {

// [first, last) of the dims to report.
std::pair<int64_t, int64_t> shape_range(const Node& node, int64_t opset, int64_t rank) {
  if (opset < 15) return {0, rank};
  int64_t start = node.attrs.get_int("start", 0);
  int64_t end = node.attrs.get_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  return {start, std::max(start, end)};
}

void infer_shape(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  const auto [start, end] =
      shape_range(ctx.node, ctx.opset, static_cast<int64_t>(ctx.input(0).shape.size()));
  ctx.outputs[0] = {DType::kInt64, {end - start}};
}

void compute_shape(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto [start, end] = shape_range(ctx.node, ctx.opset, x.rank());
  int64_t* out = ctx.outputs[0].data<int64_t>();
  for (int64_t d = start; d < end; ++d) out[d - start] = x.shape()[static_cast<size_t>(d)];
}

}  // namespace

TESSERA_REGISTER_OP("Shape", infer_shape, compute_shape);

}  // namespace tessera::ops
