// EyeLike (opset 9): a 2-D tensor shaped like the input with ones on diagonal k (default 0) and
// zeros elsewhere, of attribute dtype's type (default: the input's). Input values are not read.
#include <algorithm>
#include <cstring>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

DType output_dtype(const InferContext& ctx) {
  if (!ctx.node.attrs.has("dtype")) return ctx.input(0).dtype;
  const int64_t t = ctx.node.attrs.get_int("dtype");
  if (!dtype_is_known(static_cast<int32_t>(t))) {
    ctx.unsupported("attribute 'dtype' = " + std::to_string(t) + " is not a supported dtype");
  }
  return static_cast<DType>(t);
}

void infer_eye_like(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  if (ctx.input(0).shape.size() != 2) ctx.fail("the input must be 2-D");
  ctx.outputs[0] = {output_dtype(ctx), ctx.input(0).shape};
}

void compute_eye_like(ComputeContext& ctx) {
  Tensor& y = ctx.outputs[0];
  const int64_t rows = y.shape()[0], cols = y.shape()[1];
  const int64_t k = ctx.node.attrs.get_int("k", 0);
  std::memset(y.raw(), 0, y.nbytes());
  dispatch_dtype(y.dtype(), node_where(ctx.node), [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data<T>();
    // k may be anywhere in int64: rows whose diagonal element exists are [max(0, -k), cols - k).
    if (k >= cols || k <= -rows) return;
    for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i) {
      out[i * cols + i + k] = from_compute<T>(static_cast<ComputeType<T>>(1));
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("EyeLike", infer_eye_like, compute_eye_like);

}  // namespace tessera::ops
