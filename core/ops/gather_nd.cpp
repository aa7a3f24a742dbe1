// GatherND (opset 11+, batch_dims from 12): the int64 indices' last dimension (k) addresses the
// data's dims [b, b + k) after the b = batch_dims leading dims, which data and indices share;
// output shape: indices.shape[:-1] + data.shape[b + k:]. Negative indices count from the end; one
// out of range is an error naming the node. Any data dtype (slices copied as bytes).
#include <algorithm>
#include <cstring>

#include "op.hpp"

namespace tessera::ops {
namespace {

struct NdShape {
  int64_t b = 0, k = 0;
};

NdShape check(const InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  NdShape s;
  s.b = ctx.node.attrs.get_int("batch_dims", 0);
  if (ctx.opset < 12 && s.b != 0) ctx.fail("attribute 'batch_dims' exists from opset 12 on");
  if (data.empty() || indices.empty()) ctx.fail("data and indices must have rank >= 1");
  if (s.b < 0 || s.b >= static_cast<int64_t>(std::min(data.size(), indices.size()))) {
    ctx.fail("batch_dims = " + std::to_string(s.b) + " must be below both ranks");
  }
  for (int64_t d = 0; d < s.b; ++d) {
    if (data[static_cast<size_t>(d)] != indices[static_cast<size_t>(d)]) {
      ctx.fail("the batch dims of data " + shape_str(data) + " and indices " + shape_str(indices) +
               " differ");
    }
  }
  s.k = indices.back();
  if (s.k < 1 || s.b + s.k > static_cast<int64_t>(data.size())) {
    ctx.fail("indices' last dim " + std::to_string(s.k) + " must be in [1, " +
             std::to_string(data.size() - static_cast<size_t>(s.b)) + "]");
  }
  return s;
}

void infer_gather_nd(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(1, {DType::kInt64});
  const NdShape s = check(ctx);
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), data.begin() + s.b + s.k, data.end());
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

void compute_gather_nd(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const NdShape s = check(ictx);
  const Tensor& data = ctx.input(0);
  const std::vector<int64_t> indices = ctx.input(1).to_int64_vector();
  const Shape& ds = data.shape();
  // data as [batch, d_b, ..., d_{b+k-1}, slice]; indices as [batch, tuples, k].
  int64_t batch = 1, slice = 1;
  for (int64_t d = 0; d < s.b; ++d) batch *= ds[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(s.b + s.k); d < ds.size(); ++d) slice *= ds[d];
  int64_t addressed = 1;
  for (int64_t d = s.b; d < s.b + s.k; ++d) addressed *= ds[static_cast<size_t>(d)];
  if (batch == 0 || indices.empty()) return;  // nothing to gather (zero boxes found)
  const int64_t tuples = static_cast<int64_t>(indices.size()) / s.k / batch;
  const size_t bytes = dtype_size(data.dtype()) * static_cast<size_t>(slice);
  const auto* src = static_cast<const std::byte*>(data.raw());
  auto* dst = static_cast<std::byte*>(ctx.outputs[0].raw());
  for (int64_t g = 0; g < batch; ++g) {
    for (int64_t t = 0; t < tuples; ++t) {
      const int64_t* tuple = indices.data() + (g * tuples + t) * s.k;
      int64_t offset = 0;
      for (int64_t j = 0; j < s.k; ++j) {
        const int64_t dim = ds[static_cast<size_t>(s.b + j)];
        int64_t index = tuple[j];
        if (index < -dim || index >= dim) {
          throw Error(ictx.where + ": index " + std::to_string(index) + " is out of range [" +
                      std::to_string(-dim) + ", " + std::to_string(dim - 1) + "] for dim " +
                      std::to_string(s.b + j) + " of data " + shape_str(ds));
        }
        offset = offset * dim + (index < 0 ? index + dim : index);
      }
      std::memcpy(dst + static_cast<size_t>(g * tuples + t) * bytes,
                  src + static_cast<size_t>(g * addressed + offset) * bytes, bytes);
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("GatherND", infer_gather_nd, compute_gather_nd);

}  // namespace tessera::ops
