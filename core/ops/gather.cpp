// Gather: picks slices of 'data' along 'axis' (default 0) at int32/int64 'indices'; negative
// indices count from the end. Output shape: data[:axis] + indices + data[axis+1:]. Any data
// dtype. An index out of range is an error naming the node (found at run time).
#include <cstring>

#include "op.hpp"
#include "util/axes.hpp"

namespace tessera::ops {
namespace {

void infer_gather(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(1, {DType::kInt64, DType::kInt32});
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0),
                                      static_cast<int64_t>(data.size()), ctx.where);
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

void compute_gather(ComputeContext& ctx) {
  const Tensor& data = ctx.input(0);
  const std::vector<int64_t> indices = ctx.input(1).to_int64_vector();
  const std::string where = node_where(ctx.node);
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), data.rank(), where);
  // data viewed as [outer, dim, inner]; output as [outer, n_indices, inner].
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < data.rank(); ++d) {
    if (d < axis) outer *= data.shape()[static_cast<size_t>(d)];
    if (d > axis) inner *= data.shape()[static_cast<size_t>(d)];
  }
  const int64_t dim = data.shape()[static_cast<size_t>(axis)];
  const size_t block = static_cast<size_t>(inner) * dtype_size(data.dtype());
  const auto* src = static_cast<const std::byte*>(data.raw());
  auto* dst = static_cast<std::byte*>(ctx.outputs[0].raw());
  const int64_t n = static_cast<int64_t>(indices.size());
  for (int64_t j = 0; j < n; ++j) {
    int64_t index = indices[static_cast<size_t>(j)];
    if (index < -dim || index >= dim) {
      throw Error(where + ": index " + std::to_string(index) + " is out of range [" +
                  std::to_string(-dim) + ", " + std::to_string(dim - 1) + "] for axis " +
                  std::to_string(axis) + " of data " + shape_str(data.shape()));
    }
    if (index < 0) index += dim;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + static_cast<size_t>(o * n + j) * block,
                  src + static_cast<size_t>(o * dim + index) * block, block);
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("Gather", infer_gather, compute_gather);

}  // namespace tessera::ops
