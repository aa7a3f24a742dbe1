// CastLike (opset 15): Cast to the element type of input 1 (whose values are not read). Newer
// PyTorch exporters write it for dtype-following constants. Prepared graphs carry it as a Cast
// (lower_cast_like), so plugins that run Cast run it.
#include "op.hpp"
#include "util/cast.hpp"

namespace tessera::ops {
namespace {

void infer_cast_like(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  const std::initializer_list<DType> types = {DType::kFloat32, DType::kFloat16, DType::kInt64,
                                              DType::kInt32,   DType::kInt8,    DType::kUInt8,
                                              DType::kBool};
  ctx.expect_dtype(0, types);
  ctx.expect_dtype(1, types);
  ctx.outputs[0] = {ctx.input(1).dtype, ctx.input(0).shape};
}

void compute_cast_like(ComputeContext& ctx) {
  cast_values(ctx.input(0), ctx.outputs[0], "node '" + ctx.node.name + "' (CastLike)");
}

}  // namespace

TESSERA_REGISTER_OP("CastLike", infer_cast_like, compute_cast_like);

}  // namespace tessera::ops
