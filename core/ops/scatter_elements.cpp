// ScatterElements (opset 11+; Scatter, its opset 9 name, is not registered): a copy of `data` in
// which element i of `updates` lands at i with its 'axis' coordinate replaced by indices[i]
// (int32 / int64, shaped like updates, same rank as data, no larger than data off the axis;
// negative indices count from the end). `reduction` (opset 16+: add, mul; 18+: max, min) combines
// instead of replacing; repeated indices apply in order. An index out of range is an error naming
// the node, raised before anything is written.
#include <cstring>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/scatter.hpp"

namespace tessera::ops {
namespace {

void infer_scatter_elements(InferContext& ctx) {
  check_scatter_inputs(ctx, {DType::kInt64, DType::kInt32});
  const InputInfo& data = ctx.input(0);
  const Shape& indices = ctx.input(1).shape;
  const InputInfo& updates = ctx.input(2);
  if (updates.shape != indices) {
    ctx.fail("'updates' " + shape_str(updates.shape) + " must be shaped like 'indices' " +
             shape_str(indices));
  }
  if (data.shape.empty() || indices.size() != data.shape.size()) {
    ctx.fail("'data' " + shape_str(data.shape) + " and 'indices' " + shape_str(indices) +
             " must have the same rank >= 1");
  }
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0),
                                      static_cast<int64_t>(indices.size()), ctx.where);
  for (size_t d = 0; d < indices.size(); ++d) {
    if (static_cast<int64_t>(d) != axis && indices[d] > data.shape[d]) {
      ctx.fail("'indices' " + shape_str(indices) + " is larger than 'data' " +
               shape_str(data.shape) + " on axis " + std::to_string(d));
    }
  }
  ctx.outputs[0] = {data.dtype, data.shape};
}

void compute_scatter_elements(ComputeContext& ctx) {
  const std::string where = node_where(ctx.node);
  const std::string reduction = ctx.node.attrs.get_string("reduction", "none");  // checked
  const Tensor& data = ctx.input(0);
  const std::vector<int64_t> idx = ctx.input(1).to_int64_vector();
  const Tensor& updates = ctx.input(2);
  Tensor& out = ctx.outputs[0];
  const Shape& ds = data.shape();
  const Shape& is = updates.shape();
  const int64_t rank = data.rank();
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 0), rank, where);
  const std::vector<int64_t> strides = shape_strides(ds);
  const int64_t dim = ds[static_cast<size_t>(axis)];
  // Destination of each update, checked before anything is written.
  std::vector<int64_t> dest(idx.size());
  std::vector<int64_t> at(static_cast<size_t>(rank), 0);  // odometer over the updates' shape
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t v = idx[i];
    if (v < -dim || v >= dim) {
      throw Error(where + ": index " + std::to_string(v) + " at position " + std::to_string(i) +
                  " of 'indices' is out of range [" + std::to_string(-dim) + ", " +
                  std::to_string(dim - 1) + "] for axis " + std::to_string(axis) + " of 'data' " +
                  shape_str(ds));
    }
    if (v < 0) v += dim;
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      offset += (d == axis ? v : at[static_cast<size_t>(d)]) * strides[static_cast<size_t>(d)];
    }
    dest[i] = offset;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++at[static_cast<size_t>(d)] < is[static_cast<size_t>(d)]) break;
      at[static_cast<size_t>(d)] = 0;
    }
  }
  const size_t esize = dtype_size(data.dtype());
  std::memcpy(out.raw(), data.raw(), static_cast<size_t>(data.numel()) * esize);
  if (reduction == "none") {
    auto* dst = static_cast<std::byte*>(out.raw());
    const auto* src = static_cast<const std::byte*>(updates.raw());
    for (size_t i = 0; i < dest.size(); ++i) {
      std::memcpy(dst + static_cast<size_t>(dest[i]) * esize, src + i * esize, esize);
    }
    return;
  }
  dispatch_numeric(data.dtype(), where, [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data<T>();
    const T* src = updates.data<T>();
    for (size_t i = 0; i < dest.size(); ++i) {
      dst[dest[i]] = scatter_combine(reduction, dst[dest[i]], src[i]);
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("ScatterElements", infer_scatter_elements, compute_scatter_elements);

}  // namespace tessera::ops
