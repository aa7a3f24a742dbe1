// Pointwise activations and math (Relu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Gelu,
// Exp, Log, Sqrt, Reciprocal, Abs, Neg, Floor, Ceil, LeakyRelu, Elu, Selu, Softplus, Mish, Sin,
// Cos, Tan, Atan, Sign, Round, Softsign, Celu, ThresholdedRelu, Shrink): one
// table maps each op and its attributes to a UnaryFn, which runs alone here or fused after its
// producer (fusion.cpp). A Sigmoid whose only reader multiplies it with the Sigmoid's own input
// is SiLU and runs as one pass.
#include "kernels/elementwise.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

bool unary_fn_of(const RegionView& region, const NodeView& node, UnaryFn* fn) {
  const std::string_view op = node.op_type();
  UnaryFn f;
  Activation clamp;
  if (activation_of(region, node, &clamp)) {
    f.lo = clamp.lo;
    f.hi = clamp.hi;
    *fn = f;
    return true;
  }
  struct Entry {
    const char* op;
    UnaryOp fn;
  };
  static const Entry table[] = {
      {"Sigmoid", UnaryOp::kSigmoid},
      {"HardSigmoid", UnaryOp::kHardSigmoid},
      {"HardSwish", UnaryOp::kHardSwish},
      {"Tanh", UnaryOp::kTanh},
      {"Erf", UnaryOp::kErf},
      {"Gelu", UnaryOp::kGelu},
      {"Exp", UnaryOp::kExp},
      {"Log", UnaryOp::kLog},
      {"Sqrt", UnaryOp::kSqrt},
      {"Reciprocal", UnaryOp::kReciprocal},
      {"Abs", UnaryOp::kAbs},
      {"Neg", UnaryOp::kNeg},
      {"Floor", UnaryOp::kFloor},
      {"Ceil", UnaryOp::kCeil},
      {"LeakyRelu", UnaryOp::kLeakyRelu},
      {"Elu", UnaryOp::kElu},
      {"Selu", UnaryOp::kSelu},
      {"Softplus", UnaryOp::kSoftplus},
      {"Mish", UnaryOp::kMish},
      {"Sin", UnaryOp::kSin},
      {"Cos", UnaryOp::kCos},
      {"Tan", UnaryOp::kTan},
      {"Atan", UnaryOp::kAtan},
      {"Sign", UnaryOp::kSign},
      {"Round", UnaryOp::kRound},
      {"Softsign", UnaryOp::kSoftsign},
      {"Celu", UnaryOp::kCelu},
      {"ThresholdedRelu", UnaryOp::kThresholdedRelu},
      {"Shrink", UnaryOp::kShrink},
  };
  const Entry* e = nullptr;
  for (const Entry& t : table) {
    if (op == t.op) e = &t;
  }
  if (e == nullptr) return false;
  f.op = e->fn;
  switch (f.op) {
    case UnaryOp::kHardSigmoid:
      f.alpha = node.attr_float("alpha", 0.2f);
      f.beta = node.attr_float("beta", 0.5f);
      break;
    case UnaryOp::kLeakyRelu:
      f.alpha = node.attr_float("alpha", 0.01f);
      break;
    case UnaryOp::kElu:
      f.alpha = node.attr_float("alpha", 1.0f);
      break;
    case UnaryOp::kSelu:
      f.alpha = node.attr_float("alpha", 1.67326319217681884765625f);
      f.gamma = node.attr_float("gamma", 1.05070102214813232421875f);
      break;
    case UnaryOp::kCelu:
      f.alpha = node.attr_float("alpha", 1.0f);
      if (f.alpha == 0.0f) return false;  // core refuses it at import
      break;
    case UnaryOp::kThresholdedRelu:
      f.alpha = node.attr_float("alpha", 1.0f);
      break;
    case UnaryOp::kShrink:
      f.alpha = node.attr_float("lambd", 0.5f);
      f.beta = node.attr_float("bias", 0.0f);
      break;
    case UnaryOp::kGelu: {
      const std::string approximate = node.attr_string("approximate", "none");
      if (approximate == "tanh") {
        f.op = UnaryOp::kGeluTanh;
      } else if (approximate != "none") {
        return false;
      }
      break;
    }
    default:
      break;
  }
  *fn = f;
  return true;
}

std::string query_unary(const RegionView& region, const NodeView& node) {
  if (!is_f32(node.input(0)) || !is_f32(node.output(0))) return "only float32 is implemented";
  UnaryFn fn;
  if (!unary_fn_of(region, node, &fn)) {
    return node.op_type() == "Clip" ? "Clip bounds must be float32 scalar constants"
                                    : "attributes not implemented";
  }
  return "";
}

Step build_unary(BuildContext& ctx) {
  UnaryFn fn;
  unary_fn_of(ctx.region, ctx.node, &fn);
  if (ctx.silu) fn.op = UnaryOp::kSilu;
  // A Relu/Clip fused after the op clamps its result.
  fn.lo = std::max(fn.lo, ctx.act.lo);
  fn.hi = std::min(fn.hi, ctx.act.hi);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t n = numel(*ctx.node.output(0));
  return [=](std::vector<float*>& v) { unary_parallel(fn, v[in], v[out], n); };
}

}  // namespace tessera::cpu
