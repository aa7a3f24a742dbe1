// Equal: elementwise a == b with numpy broadcasting; the output is bool. Both inputs share one
// dtype (float32, float16 compared as floats, int32, int64, int8, uint8, bool).
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_equal(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64, DType::kInt8,
                       DType::kUInt8, DType::kBool});
  const InputInfo& a = ctx.input(0);
  const InputInfo& b = ctx.input(1);
  if (a.dtype != b.dtype) {
    ctx.fail(std::string("inputs have different dtypes (") + dtype_name(a.dtype) + " and " +
             dtype_name(b.dtype) + "); insert a Cast so they match");
  }
  ctx.outputs[0] = {DType::kBool, broadcast_shapes(a.shape, b.shape, ctx.where)};
}

void compute_equal(ComputeContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& out = ctx.outputs[0];
  if (a.dtype() == DType::kFloat16) {
    // Compare values, not bits: +0 == -0 and NaN != NaN.
    broadcast_binary<uint16_t, bool>(
        a, b, out, [](uint16_t x, uint16_t y) { return half_to_float(x) == half_to_float(y); });
    return;
  }
  dispatch_dtype(a.dtype(), "node '" + ctx.node.name + "' (Equal)", [&](auto tag) {
    using T = decltype(tag);
    broadcast_binary<T, bool>(a, b, out, [](T x, T y) { return x == y; });
  });
}

}  // namespace

TESSERA_REGISTER_OP("Equal", infer_equal, compute_equal);

}  // namespace tessera::ops
