// TesseraQLinearAdd: the int8 unit DequantizeLinear(a), DequantizeLinear(b) -> Add -> [Relu/Clip
// ->] QuantizeLinear, numpy broadcasting; inputs and output_min/output_max as
// util/quantized_unit.hpp's binary units. Each element is computed with exactly the float
// operations of the three ops it replaces:
//   y = saturate(nearbyint((float(a - za) * sa + float(b - zb) * sb) / sy) + zy)
// so the unit gives the bytes the unfused QDQ graph gives, on every plugin.
#include "op.hpp"
#include "util/quantized_unit.hpp"

namespace tessera::ops {
namespace {

void compute_qadd(ComputeContext& ctx) {
  compute_binary_unit(ctx, [](float da, float db) { return da + db; });
}

}  // namespace

TESSERA_REGISTER_OP(kQLinearAddUnit, infer_binary_unit, compute_qadd);

}  // namespace tessera::ops
