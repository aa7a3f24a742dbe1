// Softmax and LogSoftmax (ONNX opsets 1-13) on float32.
//
// Before opset 13 the input is viewed as 2-D, [prod(dims before axis), prod(dims from axis)],
// and each row is normalized (axis defaults to 1). From opset 13 the normalization runs along
// the single dim `axis` (default -1). Both are "outer x axis x inner" loops: the old form is the
// new one with the axis block being every dim from `axis` on.
#include <cmath>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

struct SoftmaxLayout {
  int64_t outer = 1;  // independent groups before the normalized block
  int64_t axis = 1;   // length of the normalized block
  int64_t inner = 1;  // stride between elements of one normalized group
};

SoftmaxLayout softmax_layout(const Shape& x, int64_t opset, int64_t axis_attr) {
  const int64_t rank = static_cast<int64_t>(x.size());
  // Rank 0 cannot be checked by normalize_axis; treat a scalar as one element.
  const int64_t axis = rank == 0 ? 0 : axis_attr < 0 ? axis_attr + rank : axis_attr;
  SoftmaxLayout l;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) {
      l.outer *= x[d];
    } else if (d == axis || opset < 13) {
      l.axis *= x[d];
    } else {
      l.inner *= x[d];
    }
  }
  return l;
}

void infer_softmax(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = attr_int(ctx, "axis", ctx.opset >= 13 ? -1 : 1);
  if (rank == 0) ctx.fail("input 0 is a scalar; " + ctx.node.op_type + " needs rank >= 1");
  normalize_axis(axis, rank, ctx.where);
  ctx.outputs.at(0) = {DType::kFloat32, x};
}

template <bool kLog>
void compute_softmax_impl(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const int64_t axis_attr = ctx.node.attrs.get_int("axis", ctx.opset >= 13 ? -1 : 1);
  const SoftmaxLayout l = softmax_layout(xt.shape(), ctx.opset, axis_attr);
  const float* x = xt.data<float>();
  float* y = ctx.outputs[0].data<float>();
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      const int64_t base = o * l.axis * l.inner + i;
      // Subtracting the maximum keeps exp() finite; it cancels out mathematically.
      double max_v = -INFINITY;
      for (int64_t a = 0; a < l.axis; ++a) max_v = std::fmax(max_v, x[base + a * l.inner]);
      double sum = 0.0;
      for (int64_t a = 0; a < l.axis; ++a) sum += std::exp(x[base + a * l.inner] - max_v);
      for (int64_t a = 0; a < l.axis; ++a) {
        const double shifted = x[base + a * l.inner] - max_v;
        y[base + a * l.inner] =
            static_cast<float>(kLog ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("Softmax", infer_softmax, compute_softmax_impl<false>);
TESSERA_REGISTER_OP("LogSoftmax", infer_softmax, compute_softmax_impl<true>);

}  // namespace tessera::ops
