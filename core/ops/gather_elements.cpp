// GatherElements (opset 11+): output[i] = data[i with its 'axis' coordinate replaced by
// indices[i]], the output shaped like the int32/int64 indices (same rank as data, no larger than
// data off the axis). Negative indices count from the end; one out of range is an error naming
// the node. Any data dtype (elements copied as bytes).
#include <cstring>

#include "op.hpp"
#include "util/axes.hpp"

namespace tessera::ops {
namespace {

void infer_gather_elements(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(1, {DType::kInt64, DType::kInt32});
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  if (data.empty() || indices.size() != data.size()) {
    ctx.fail("data and indices must have the same rank >= 1, got " + shape_str(data) + " and " +
             shape_str(indices));
  }
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0),
                                      static_cast<int64_t>(data.size()), ctx.where);
  for (size_t d = 0; d < data.size(); ++d) {
    if (static_cast<int64_t>(d) != axis && indices[d] > data[d]) {
      ctx.fail("indices " + shape_str(indices) + " are larger than data " + shape_str(data) +
               " on axis " + std::to_string(d));
    }
  }
  ctx.outputs[0] = {ctx.input(0).dtype, indices};
}

void compute_gather_elements(ComputeContext& ctx) {
  const Tensor& data = ctx.input(0);
  const std::vector<int64_t> indices = ctx.input(1).to_int64_vector();
  const std::string where = node_where(ctx.node);
  const int64_t rank = data.rank();
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), rank, where);
  const Shape& ds = data.shape();
  const Shape& is = ctx.input(1).shape();
  std::vector<int64_t> stride(static_cast<size_t>(rank), 1);
  for (int64_t d = rank - 1; d > 0; --d) {
    stride[static_cast<size_t>(d - 1)] =
        stride[static_cast<size_t>(d)] * ds[static_cast<size_t>(d)];
  }
  const int64_t dim = ds[static_cast<size_t>(axis)];
  const size_t bytes = dtype_size(data.dtype());
  const auto* src = static_cast<const std::byte*>(data.raw());
  auto* dst = static_cast<std::byte*>(ctx.outputs[0].raw());
  std::vector<int64_t> at(static_cast<size_t>(rank), 0);  // odometer over the indices' shape
  for (size_t i = 0; i < indices.size(); ++i) {
    int64_t index = indices[i];
    if (index < -dim || index >= dim) {
      throw Error(where + ": index " + std::to_string(index) + " is out of range [" +
                  std::to_string(-dim) + ", " + std::to_string(dim - 1) + "] for axis " +
                  std::to_string(axis) + " of data " + shape_str(ds));
    }
    if (index < 0) index += dim;
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      offset += (d == axis ? index : at[static_cast<size_t>(d)]) * stride[static_cast<size_t>(d)];
    }
    std::memcpy(dst + i * bytes, src + static_cast<size_t>(offset) * bytes, bytes);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++at[static_cast<size_t>(d)] < is[static_cast<size_t>(d)]) break;
      at[static_cast<size_t>(d)] = 0;
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("GatherElements", infer_gather_elements, compute_gather_elements);

}  // namespace tessera::ops
