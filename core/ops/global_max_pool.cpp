// GlobalMaxPool (ONNX opsets 1-18): the maximum over all spatial dims of an NC<spatial> float32
// tensor; the output keeps the spatial dims as 1s.
#include <algorithm>
#include <limits>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

void infer_global_max_pool(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  nchw_spatial(ctx);
  Shape y = ctx.input(0).shape;
  std::fill(y.begin() + 2, y.end(), 1);
  ctx.outputs.at(0) = {DType::kFloat32, y};
}

void compute_global_max_pool(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const int64_t planes = x[0] * x[1];
  const int64_t size = planes == 0 ? 0 : xt.numel() / planes;
  const float* xd = xt.data<float>();
  float* yd = ctx.outputs[0].data<float>();
  for (int64_t p = 0; p < planes; ++p) {
    double acc = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < size; ++i) {
      const double v = xd[p * size + i];
      if (i == 0 || v > acc) acc = v;
    }
    yd[p] = static_cast<float>(acc);
  }
}

}  // namespace

TESSERA_REGISTER_OP("GlobalMaxPool", infer_global_max_pool, compute_global_max_pool);

}  // namespace tessera::ops
