// ScatterND (opset 11+): a copy of `data` with slices replaced by `updates` at the positions in
// `indices` (int64, last axis k <= rank(data) indexes data's first k axes; negative indices
// count from the end). `reduction` (opset 16+: add, mul; 18+: max, min) combines an update with
// what is there instead of replacing it. An index out of range is an error naming the node.
#include <cstring>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"
#include "util/pooling.hpp"
#include "util/scatter.hpp"

namespace tessera::ops {
namespace {

void infer_scatter_nd(InferContext& ctx) {
  const std::string reduction = check_scatter_inputs(ctx, {DType::kInt64});
  const InputInfo& data = ctx.input(0);
  const Shape& indices = ctx.input(1).shape;
  const InputInfo& updates = ctx.input(2);
  if (indices.empty()) ctx.fail("input 'indices' is a scalar; it needs rank >= 1");
  const int64_t k = indices.back();
  if (k < 1 || k > static_cast<int64_t>(data.shape.size())) {
    ctx.fail("the last axis of 'indices' " + shape_str(indices) + " is " + std::to_string(k) +
             "; it must be in [1, rank of 'data' = " + std::to_string(data.shape.size()) + "]");
  }
  Shape expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + k, data.shape.end());
  if (updates.shape != expected) {
    ctx.fail("input 'updates' has shape " + shape_str(updates.shape) + "; 'data' " +
             shape_str(data.shape) + " and 'indices' " + shape_str(indices) + " need " +
             shape_str(expected));
  }
  ctx.outputs[0] = {data.dtype, data.shape};
}

void compute_scatter_nd(ComputeContext& ctx) {
  const std::string where = node_where(ctx.node);
  const std::string reduction = ctx.node.attrs.get_string("reduction", "none");  // checked
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  Tensor& out = ctx.outputs[0];
  const Shape& shape = data.shape();
  const int64_t k = indices.shape().back();
  const int64_t slice = shape_numel(Shape(shape.begin() + k, shape.end()));
  const int64_t count = k == 0 ? 0 : indices.numel() / k;
  const size_t esize = dtype_size(data.dtype());
  std::memcpy(out.raw(), data.raw(), static_cast<size_t>(data.numel()) * esize);
  const int64_t* idx = indices.data<int64_t>();
  // Offset (in slices) of each update, checked before anything is written.
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t dim = shape[static_cast<size_t>(j)];
      int64_t v = idx[n * k + j];
      if (v < -dim || v >= dim) {
        throw Error(where + ": index " + std::to_string(v) + " at position " +
                    std::to_string(n * k + j) + " of 'indices' is out of range [" +
                    std::to_string(-dim) + ", " + std::to_string(dim - 1) + "] for axis " +
                    std::to_string(j) + " of 'data' " + shape_str(shape));
      }
      if (v < 0) v += dim;
      offset = offset * dim + v;
    }
    offsets[static_cast<size_t>(n)] = offset;
  }
  if (reduction == "none") {
    auto* dst = static_cast<std::byte*>(out.raw());
    const auto* src = static_cast<const std::byte*>(updates.raw());
    const size_t bytes = static_cast<size_t>(slice) * esize;
    for (int64_t n = 0; n < count; ++n) {
      std::memcpy(dst + static_cast<size_t>(offsets[static_cast<size_t>(n)]) * bytes,
                  src + static_cast<size_t>(n) * bytes, bytes);
    }
    return;
  }
  dispatch_numeric(data.dtype(), where, [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data<T>();
    const T* src = updates.data<T>();
    for (int64_t n = 0; n < count; ++n) {
      T* d = dst + offsets[static_cast<size_t>(n)] * slice;
      const T* s = src + n * slice;
      for (int64_t e = 0; e < slice; ++e) d[e] = scatter_combine(reduction, d[e], s[e]);
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("ScatterND", infer_scatter_nd, compute_scatter_nd);

}  // namespace tessera::ops
