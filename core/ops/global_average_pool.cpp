// GlobalAveragePool (ONNX opsets 1-18): the mean over all spatial dims of an NC<spatial> float32
// tensor; the output keeps the spatial dims as 1s.
#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

void compute_global_average_pool(ComputeContext& ctx) {
  compute_global_pool(ctx, [](const float* plane, int64_t size) {
    double acc = 0.0;
    for (int64_t i = 0; i < size; ++i) acc += plane[i];
    return static_cast<float>(acc / static_cast<double>(size));
  });
}

}  // namespace

TESSERA_REGISTER_OP("GlobalAveragePool", infer_global_pool, compute_global_average_pool);

}  // namespace tessera::ops
