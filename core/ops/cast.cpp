// Cast: converts between float32, float16, int64, int32, int8, uint8 and bool ('to' is an ONNX
// TensorProto data type). Float to integer truncates toward zero; values out of the target's
// range saturate and NaN becomes 0 (ONNX leaves both undefined; C++ would be undefined too).
// Integer narrowing wraps like numpy. Anything to bool is "!= 0".
#include <cmath>
#include <limits>

#include "op.hpp"
#include "util/cast.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

DType target_dtype(const Node& node, const std::string& where) {
  const int64_t to = node.attrs.get_int("to");
  if (!dtype_is_known(static_cast<int32_t>(to)) || to != static_cast<int32_t>(to)) {
    throw UnsupportedError(where + ": attribute 'to' = " + std::to_string(to) +
                           " is not a supported dtype (float32, float16, int64, int32, int8, "
                           "uint8, bool)");
  }
  return static_cast<DType>(to);
}

void infer_cast(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt32, DType::kInt8,
                       DType::kUInt8, DType::kBool});
  ctx.outputs[0] = {target_dtype(ctx.node, ctx.where), ctx.input(0).shape};
}

void compute_cast(ComputeContext& ctx) {
  cast_values(ctx.input(0), ctx.outputs[0], "node '" + ctx.node.name + "' (Cast)");
}

}  // namespace

TESSERA_REGISTER_OP("Cast", infer_cast, compute_cast);

}  // namespace tessera::ops
