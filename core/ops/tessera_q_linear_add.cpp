// TesseraQLinearAdd: the int8 unit DequantizeLinear(a), DequantizeLinear(b) -> Add -> [Relu/Clip
// ->] QuantizeLinear, numpy broadcasting; inputs and output_min/output_max as
// util/quantized_unit.hpp's binary units. Each element is computed with exactly the float
// operations of the three ops it replaces:
//   y = saturate(nearbyint((float(a - za) * sa + float(b - zb) * sb) / sy) + zy)
// so the unit gives the bytes the unfused QDQ graph gives, on every plugin.
#include <algorithm>
#include <cmath>
#include <string>

#include "op.hpp"
#include "util/broadcast.hpp"
#include "util/quantized_unit.hpp"

namespace tessera::ops {
namespace {

void infer_qadd(InferContext& ctx) {
  binary_unit_params(ctx);
  ctx.outputs.at(0) = {ctx.input(kQBinYZero).dtype,
                       broadcast_shapes(ctx.input(kQA).shape, ctx.input(kQB).shape, ctx.where)};
}

void compute_qadd(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const QBinaryParams p = binary_unit_params(ictx);
  const Tensor& a = ctx.input(kQA);
  const Tensor& b = ctx.input(kQB);
  Tensor& y = ctx.outputs[0];
  const BroadcastIndexer ai(a.shape(), y.shape()), bi(b.shape(), y.shape());
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float da = static_cast<float>(quant_element(a, ai.offset(i)) - p.za) * p.sa;
    const float db = static_cast<float>(quant_element(b, bi.offset(i)) - p.zb) * p.sb;
    store_quant(y, i, quantize_binary(da + db, p));
  }
}

}  // namespace

TESSERA_REGISTER_OP(kQLinearAddUnit, infer_qadd, compute_qadd);

}  // namespace tessera::ops
