// GlobalMaxPool (ONNX opsets 1-18): the maximum over all spatial dims of an NC<spatial> float32
// tensor; the output keeps the spatial dims as 1s.
#include <limits>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

void compute_global_max_pool(ComputeContext& ctx) {
  compute_global_pool(ctx, [](const float* plane, int64_t size) {
    double acc = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < size; ++i) {
      const double v = plane[i];
      if (i == 0 || v > acc) acc = v;
    }
    return static_cast<float>(acc);
  });
}

}  // namespace

TESSERA_REGISTER_OP("GlobalMaxPool", infer_global_pool, compute_global_max_pool);

}  // namespace tessera::ops
