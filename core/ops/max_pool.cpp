// MaxPool (ONNX opsets 1-18): N-D max pooling over NC<spatial> tensors (float32; int8 and uint8
// from opset 12, as the spec adds them) with strides,
// dilations, explicit pads or auto_pad, ceil_mode, and the optional Indices output (int64 flat
// indices into the input, row-major or, with storage_order = 1, column-major spatial order).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

void infer_max_pool(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  const std::vector<int64_t> spatial =
      ctx.opset >= 12 ? nchw_spatial(ctx, {DType::kFloat32, DType::kInt8, DType::kUInt8})
                      : nchw_spatial(ctx);
  const int64_t storage_order = attr_int(ctx, "storage_order", 0);
  if (storage_order != 0 && storage_order != 1) {
    ctx.fail("attribute 'storage_order' = " + std::to_string(storage_order) +
             " must be 0 (row major) or 1 (column major)");
  }
  const Window win = resolve_window(ctx, spatial, required_kernel_shape(ctx),
                                    /*allow_ceil_mode=*/ctx.opset >= 10,
                                    /*allow_dilations=*/ctx.opset >= 10);
  const Shape& x = ctx.input(0).shape;
  Shape y = {x[0], x[1]};
  y.insert(y.end(), win.output.begin(), win.output.end());
  ctx.outputs.at(0) = {ctx.input(0).dtype, y};
  if (ctx.outputs.size() > 2)
    ctx.fail("has " + std::to_string(ctx.outputs.size()) +
             " outputs; MaxPool has at most 2 (Y, Indices)");
  if (ctx.outputs.size() == 2) ctx.outputs[1] = {DType::kInt64, y};
}

// Integers start from their lowest value where floats start from -inf, so a window entirely in
// padding yields the type's lowest value.
template <typename T>
void max_pool_typed(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const std::vector<int64_t> kernel = ctx.node.attrs.get_ints("kernel_shape");
  const Window win = window_for_compute(ctx.node, ctx.opset, x, kernel, ctx.opset >= 10);
  const bool column_major = ctx.node.attrs.get_int("storage_order", 0) == 1;
  const size_t nsp = win.rank();
  const std::vector<int64_t> in_spatial(x.begin() + 2, x.end());
  const PlaneSizes sizes = plane_sizes(in_spatial, win, kernel);
  const int64_t in_size = sizes.in, out_size = sizes.out, k_size = sizes.kernel;
  const bool want_indices = ctx.outputs.size() == 2 && ctx.node.outputs[1] != kNoValue;
  const T* xd = xt.data<T>();
  T* yd = ctx.outputs[0].data<T>();
  int64_t* id = want_indices ? ctx.outputs[1].data<int64_t>() : nullptr;

  std::vector<int64_t> o(nsp), k(nsp), pos(nsp);
  for (int64_t plane = 0; plane < x[0] * x[1]; ++plane) {
    const T* x_plane = xd + plane * in_size;
    std::fill(o.begin(), o.end(), 0);
    for (int64_t oi = 0; oi < out_size; ++oi, next_index(o, win.output)) {
      T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                     : std::numeric_limits<T>::lowest();
      int64_t best_index = -1;
      std::fill(k.begin(), k.end(), 0);
      for (int64_t ki = 0; ki < k_size; ++ki, next_index(k, kernel)) {
        int64_t offset = 0;
        bool inside = true;
        for (size_t d = 0; d < nsp; ++d) {
          pos[d] = o[d] * win.strides[d] - win.pads_begin[d] + k[d] * win.dilations[d];
          if (pos[d] < 0 || pos[d] >= in_spatial[d]) {
            inside = false;
            break;
          }
          offset = offset * in_spatial[d] + pos[d];
        }
        // Strictly greater: the first maximum in window order wins, as in ONNX Runtime.
        if (inside && (best_index < 0 || x_plane[offset] > best)) {
          best = x_plane[offset];
          if (column_major) {
            offset = 0;
            for (size_t d = nsp; d-- > 0;) offset = offset * in_spatial[d] + pos[d];
          }
          best_index = offset;
        }
      }
      // A window entirely in padding (possible only with huge pads) has no element: ONNX
      // Runtime yields -inf there too, with index -1 marking "none".
      yd[plane * out_size + oi] = best;
      if (id) id[plane * out_size + oi] = best_index < 0 ? -1 : plane * in_size + best_index;
    }
  }
}

void compute_max_pool(ComputeContext& ctx) {
  switch (ctx.input(0).dtype()) {
    case DType::kInt8:
      max_pool_typed<int8_t>(ctx);
      break;
    case DType::kUInt8:
      max_pool_typed<uint8_t>(ctx);
      break;
    default:
      max_pool_typed<float>(ctx);
      break;
  }
}

}  // namespace

TESSERA_REGISTER_OP("MaxPool", infer_max_pool, compute_max_pool);

}  // namespace tessera::ops
