// MaxPool on int8 / uint8 (2-D, NCHW; ONNX adds these types in opset 12): strides, pads,
// dilations and ceil_mode (the output extent core inferred decides it), planes in parallel. For
// each output row, the window's input rows are combined with a running max over unit-stride runs
// of the row, which the compiler vectorises for 8-bit lanes.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

template <typename T>
void max_pool_plane(const T* x, const ConvGeometry& p, T* y) {
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    T* row = y + oy * p.ow;
    // A window entirely in padding has no element: the type's lowest value, as core's kernel.
    std::fill(row, row + p.ow, std::numeric_limits<T>::lowest());
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      const int64_t iy = oy * p.sh - p.pt + ky * p.dil_h;
      if (iy < 0 || iy >= p.h) continue;
      const T* src = x + iy * p.w;
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        // Output columns whose tap kx reads inside the row: ix = ox * sw - pl + kx * dil_w.
        const int64_t tap = kx * p.dil_w - p.pl;
        const int64_t ox0 = tap >= 0 ? 0 : (-tap + p.sw - 1) / p.sw;
        const int64_t last = p.w - 1 - tap;
        const int64_t ox1 = last < 0 ? 0 : std::min(p.ow, last / p.sw + 1);
        if (p.sw == 1) {
          const T* s = src + tap;
          for (int64_t ox = ox0; ox < ox1; ++ox) row[ox] = std::max(row[ox], s[ox]);
        } else {
          for (int64_t ox = ox0; ox < ox1; ++ox) row[ox] = std::max(row[ox], src[ox * p.sw + tap]);
        }
      }
    }
  }
}

template <typename T>
Step int8_pool_step(const ConvGeometry& p, int32_t in, int32_t out) {
  return [=](std::vector<float*>& v) {
    const T* x = reinterpret_cast<const T*>(v[in]);
    T* y = reinterpret_cast<T*>(v[out]);
    tbb::parallel_for(int64_t{0}, p.c, [&](int64_t c) {
      max_pool_plane<T>(x + c * p.h * p.w, p, y + c * p.oh * p.ow);
    });
  };
}

}  // namespace

bool is_int8_pool(const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  return node.op_type() == "MaxPool" && x != nullptr &&
         (x->dtype == TSR_DTYPE_INT8 || x->dtype == TSR_DTYPE_UINT8);
}

std::string query_pool_int8(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (node.output(0)->dtype != x->dtype) return "int8/uint8: the output must share the input's dtype";
  if (x->rank != 4) return "only 2-D pooling (rank 4) is implemented";
  if (node.num_outputs() > 1 && node.output_index(1) >= 0)
    return "MaxPool Indices output is not implemented";
  if (node.attr_ints("kernel_shape", {}).size() != 2) return "kernel_shape must have 2 values";
  if (node.attr_int("storage_order", 0) != 0) return "storage_order 1 is not implemented";
  if (numel(*node.output(0)) == 0) return "empty output";
  return "";
}

Step build_pool_int8(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  const tsr_tensor* x = node.input(0);
  // pool_geometry's window, with the dilations only MaxPool has here.
  ConvGeometry p = pool_geometry(node);
  const std::vector<int64_t> d = node.attr_ints("dilations", {1, 1});
  p.dil_h = d[0];
  p.dil_w = d[1];
  const int32_t in = node.input_index(0), out = ctx.output;
  if (x->dtype == TSR_DTYPE_INT8) return int8_pool_step<int8_t>(p, in, out);
  return int8_pool_step<uint8_t>(p, in, out);
}

}  // namespace tessera::cpu
