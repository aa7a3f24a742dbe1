// Softmax and LogSoftmax on float32. Opset 13+ normalises along one axis; before 13 the input is
// coerced to 2-D at `axis` and each row of the trailing axes is normalised. Rows that are
// contiguous (the usual last-axis case) run the SIMD row kernel; an inner axis is gathered into
// a row per (outer, inner) pair.
#include <tbb/parallel_for.h>

#include <algorithm>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

struct SoftmaxShape {
  int64_t outer = 1, axis = 1, inner = 1;
};

SoftmaxShape softmax_shape(const RegionView& region, const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  const int64_t a = normalize_axis(node.attr_int("axis", region.opset() >= 13 ? -1 : 1), x->rank);
  SoftmaxShape s;
  for (int64_t d = 0; d < a; ++d) s.outer *= x->dims[d];
  if (region.opset() < 13) {
    for (int64_t d = a; d < x->rank; ++d) s.axis *= x->dims[d];
  } else {
    s.axis = x->dims[a];
    for (int64_t d = a + 1; d < x->rank; ++d) s.inner *= x->dims[d];
  }
  return s;
}

}  // namespace

std::string query_softmax(const RegionView& region, const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank < 1) return "scalar input";
  const int64_t opset_default = region.opset() >= 13 ? -1 : 1;
  if (normalize_axis(node.attr_int("axis", opset_default), x->rank) < 0) return "axis out of range";
  if (numel(*x) == 0) return "empty input";
  return "";
}

Step build_softmax(BuildContext& ctx) {
  const SoftmaxShape s = softmax_shape(ctx.region, ctx.node);
  const bool log = ctx.node.op_type() == "LogSoftmax";
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    if (s.inner == 1) {
      tbb::parallel_for(int64_t{0}, s.outer, [&](int64_t r) {
        softmax_run(v[in] + r * s.axis, v[out] + r * s.axis, s.axis, log);
      });
      return;
    }
    tbb::parallel_for(int64_t{0}, s.outer * s.inner, [&](int64_t item) {
      const int64_t o = item / s.inner, i = item % s.inner;
      float* row = thread_scratch<struct SoftmaxRow>(s.axis * 2);
      const float* src = v[in] + o * s.axis * s.inner + i;
      for (int64_t k = 0; k < s.axis; ++k) row[k] = src[k * s.inner];
      softmax_run(row, row + s.axis, s.axis, log);
      float* dst = v[out] + o * s.axis * s.inner + i;
      for (int64_t k = 0; k < s.axis; ++k) dst[k * s.inner] = row[s.axis + k];
    });
  };
}

}  // namespace tessera::cpu
