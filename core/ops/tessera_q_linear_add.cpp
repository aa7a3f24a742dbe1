// TesseraQLinearAdd: the int8 unit DequantizeLinear(a), DequantizeLinear(b) -> Add -> [Relu/Clip
// ->] QuantizeLinear, numpy broadcasting. Inputs a, a_scale, a_zero_point, b, b_scale,
// b_zero_point, y_scale, y_zero_point (one element each); output_min/output_max clamp as in the
// conv unit (util/quantized_unit.hpp). Each element is computed with exactly the float
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

enum : size_t { kA = 0, kAScale, kAZero, kB, kBScale, kBZero, kYScale, kYZero, kAddInputs };

struct AddParams {
  float sa = 1, sb = 1, sy = 1;
  int32_t za = 0, zb = 0, zy = 0;
  int32_t lo = 0, hi = 255;  // output_min, output_max
};

AddParams add_params(const InferContext& ctx) {
  ctx.expect_inputs(kAddInputs, kAddInputs);
  for (size_t i : {kA, kB, kAZero, kBZero, kYZero}) {
    ctx.expect_dtype(i, {DType::kUInt8, DType::kInt8});
  }
  for (size_t i : {kAScale, kBScale, kYScale}) ctx.expect_dtype(i, {DType::kFloat32});
  if (ctx.input(kAZero).dtype != ctx.input(kA).dtype ||
      ctx.input(kBZero).dtype != ctx.input(kB).dtype) {
    ctx.fail("a zero point's dtype must be its input's");
  }
  AddParams p;
  float* scales[] = {&p.sa, &p.sb, &p.sy};
  const size_t scale_inputs[] = {kAScale, kBScale, kYScale};
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& s = ctx.constant_input(scale_inputs[i]);
    if (s.numel() != 1) ctx.fail("scales must have one element");
    const std::string why = bad_scale(s);
    if (!why.empty()) ctx.fail(why);
    *scales[i] = s.data<float>()[0];
  }
  int32_t* zeros[] = {&p.za, &p.zb, &p.zy};
  const size_t zero_inputs[] = {kAZero, kBZero, kYZero};
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& z = ctx.constant_input(zero_inputs[i]);
    if (z.numel() != 1) ctx.fail("zero points must have one element");
    *zeros[i] = quant_element(z, 0);
  }
  const DType y = ctx.input(kYZero).dtype;
  p.lo = static_cast<int32_t>(ctx.node.attrs.get_int("output_min", qtype_min(y)));
  p.hi = static_cast<int32_t>(ctx.node.attrs.get_int("output_max", qtype_max(y)));
  if (p.lo < qtype_min(y) || p.hi > qtype_max(y) || p.lo > p.hi) {
    ctx.fail("output_min/output_max must be an ordered range of " + std::string(dtype_name(y)));
  }
  return p;
}

void infer_qadd(InferContext& ctx) {
  add_params(ctx);
  ctx.outputs.at(0) = {ctx.input(kYZero).dtype,
                       broadcast_shapes(ctx.input(kA).shape, ctx.input(kB).shape, ctx.where)};
}

void compute_qadd(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const AddParams p = add_params(ictx);
  const Tensor& a = ctx.input(kA);
  const Tensor& b = ctx.input(kB);
  Tensor& y = ctx.outputs[0];
  const BroadcastIndexer ai(a.shape(), y.shape()), bi(b.shape(), y.shape());
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float da = static_cast<float>(quant_element(a, ai.offset(i)) - p.za) * p.sa;
    const float db = static_cast<float>(quant_element(b, bi.offset(i)) - p.zb) * p.sb;
    const float q = std::nearbyint((da + db) / p.sy) + static_cast<float>(p.zy);
    store_quant(y, i, static_cast<int32_t>(std::min(std::max(q, static_cast<float>(p.lo)),
                                                    static_cast<float>(p.hi))));
  }
}

}  // namespace

TESSERA_REGISTER_OP(kQLinearAddUnit, infer_qadd, compute_qadd);

}  // namespace tessera::ops
