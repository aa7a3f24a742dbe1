// The op table of the cpu plugin and helpers shared by the op files.
#include "ops/op.hpp"
#include "ops/int8_unit.hpp"

#include <cmath>

#include <algorithm>

namespace tessera::cpu {

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = {
      {"Conv", query_conv, build_conv},
      {"Gemm", query_gemm, build_gemm},
      {"MatMul", query_matmul, build_matmul},
      {"Add", query_binary, build_binary},
      {"Sub", query_binary, build_binary},
      {"Mul", query_binary, build_binary},
      {"Div", query_binary, build_binary},
      {"Min", query_binary, build_binary},
      {"Max", query_binary, build_binary},
      {"Sum", query_binary, build_binary},
      {"Mean", query_binary, build_binary},
      {"Pow", query_binary, build_binary},
      {"PRelu", query_binary, build_binary},
      {"Relu", query_unary, build_unary},
      {"Clip", query_unary, build_unary},
      {"Sigmoid", query_unary, build_unary},
      {"HardSigmoid", query_unary, build_unary},
      {"HardSwish", query_unary, build_unary},
      {"Tanh", query_unary, build_unary},
      {"Sin", query_unary, build_unary},
      {"Cos", query_unary, build_unary},
      {"Tan", query_unary, build_unary},
      {"Atan", query_unary, build_unary},
      {"Sign", query_unary, build_unary},
      {"Round", query_unary, build_unary},
      {"Softsign", query_unary, build_unary},
      {"Celu", query_unary, build_unary},
      {"ThresholdedRelu", query_unary, build_unary},
      {"Shrink", query_unary, build_unary},
      {"Erf", query_unary, build_unary},
      {"Gelu", query_unary, build_unary},
      {"Exp", query_unary, build_unary},
      {"Log", query_unary, build_unary},
      {"Sqrt", query_unary, build_unary},
      {"Reciprocal", query_unary, build_unary},
      {"Abs", query_unary, build_unary},
      {"Neg", query_unary, build_unary},
      {"Floor", query_unary, build_unary},
      {"Ceil", query_unary, build_unary},
      {"LeakyRelu", query_unary, build_unary},
      {"Elu", query_unary, build_unary},
      {"Selu", query_unary, build_unary},
      {"Softplus", query_unary, build_unary},
      {"Mish", query_unary, build_unary},
      {"ReduceMean", query_reduce, build_reduce},
      {"ReduceSum", query_reduce, build_reduce},
      {"ReduceMax", query_reduce, build_reduce},
      {"ReduceMin", query_reduce, build_reduce},
      {"ReduceL1", query_reduce, build_reduce},
      {"ReduceL2", query_reduce, build_reduce},
      {"ReduceSumSquare", query_reduce, build_reduce},
      {"ReduceLogSumExp", query_reduce, build_reduce},
      {"ReduceProd", query_reduce, build_reduce},
      {"ReduceLogSum", query_reduce, build_reduce},
      {"BatchNormalization", query_batch_norm, build_batch_norm},
      {"MaxPool", query_pool, build_pool},
      {"AveragePool", query_pool, build_pool},
      {"GlobalAveragePool", query_global_average_pool, build_global_average_pool},
      {"Softmax", query_softmax, build_softmax},
      {"LogSoftmax", query_softmax, build_softmax},
      {"LayerNormalization", query_layer_norm, build_layer_norm},
      {"Transpose", query_transpose, build_transpose},
      {"Slice", query_slice, build_slice},
      {"Split", query_split, build_split},
      {"Gather", query_gather, build_gather},
      {"GatherElements", query_gather_elements, build_gather_elements},
      {"GatherND", query_gather_nd, build_gather_nd},
      {"Trilu", query_trilu, build_trilu},
      {"CumSum", query_cum_sum, build_cum_sum},
      {"Expand", query_expand, build_expand},
      {"Pad", query_pad, build_pad},
      {"Resize", query_resize, build_resize},
      {"Upsample", query_resize, build_resize},
      {"Flatten", query_view, build_view},
      {"Reshape", query_view, build_view},
      {"Dropout", query_view, build_view},
      {"Identity", query_view, build_view},
      {"Squeeze", query_view, build_view},
      {"Cast", query_cast, build_cast},
      // core's int8 units (core/ops/util/quantized_unit.hpp)
      {"TesseraQLinearConv", query_qlinear_conv, build_qlinear_conv},
      {"TesseraQLinearMatMul", query_qlinear_matmul, build_qlinear_matmul},
      {"TesseraQLinearAdd", query_qlinear_add, build_qlinear_add},
      {"TesseraQLinearMul", query_qlinear_add, build_qlinear_add},
      {"Equal", query_compare, build_compare},
      {"Less", query_compare, build_compare},
      {"Greater", query_compare, build_compare},
      {"LessOrEqual", query_compare, build_compare},
      {"GreaterOrEqual", query_compare, build_compare},
      {"And", query_compare, build_compare},
      {"Or", query_compare, build_compare},
      {"Xor", query_compare, build_compare},
      {"Not", query_not, build_not},
      {"IsNaN", query_is_nan_inf, build_is_nan_inf},
      {"IsInf", query_is_nan_inf, build_is_nan_inf},
      {"Where", query_where, build_where},
      {"QuantizeLinear", query_quantize, build_quantize},
      {"LRN", query_lrn, build_lrn},
      {"GridSample", query_grid_sample, build_grid_sample},
      {"DequantizeLinear", query_quantize, build_quantize},
      {"Unsqueeze", query_view, build_view},
      {"Concat", query_concat, build_concat},
      {"ConvTranspose", query_conv_transpose, build_conv_transpose},
      {"DepthToSpace", query_depth_to_space, build_depth_to_space},
      {"SpaceToDepth", query_space_to_depth, build_space_to_depth},
      {"Tile", query_tile, build_tile},
      {"InstanceNormalization", query_group_norm, build_group_norm},
      {"GroupNormalization", query_group_norm, build_group_norm},
      {"GlobalMaxPool", query_global_max_pool, build_global_max_pool},
      {"ArgMax", query_arg_max, build_arg_max},
      {"ArgMin", query_arg_max, build_arg_max},
      {"TopK", query_top_k, build_top_k},
      {"ScatterND", query_scatter_nd, build_scatter_nd},
      {"LSTM", query_recurrent, build_recurrent},
      {"GRU", query_recurrent, build_recurrent},
  };
  return table;
}

const OpEntry* find_op(std::string_view op_type) {
  for (const OpEntry& e : op_table()) {
    if (op_type == e.op_type) return &e;
  }
  return nullptr;
}

bool is_f32(const tsr_tensor* t) {
  return t != nullptr && t->dtype == TSR_DTYPE_FLOAT32;
}

int64_t copy_element_bytes(const tsr_tensor* x, const tsr_tensor* y) {
  if (x == nullptr || y == nullptr || x->dtype != y->dtype) return 0;
  const int64_t bytes = static_cast<int64_t>(plugin::dtype_size(x->dtype));
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 ? bytes : 0;
}

std::vector<int64_t> dims(const tsr_tensor& t) {
  return plugin::tensor_shape(t);
}

int64_t numel(const tsr_tensor& t) {
  return plugin::tensor_numel(t);
}

void index_out_of_range(int64_t i, int64_t e, const std::string& node) {
  throw plugin::Failure(TSR_INVALID_ARGUMENT, node + ": index " + std::to_string(i) +
                                                  " out of range [" + std::to_string(-e) + ", " +
                                                  std::to_string(e) + ")");
}

const float* constant_f32(const tsr_tensor* t) {
  return is_f32(t) && t->data != nullptr ? static_cast<const float*>(t->data) : nullptr;
}

void check_conv_operands(const NodeView& node, std::initializer_list<int32_t> ranks,
                         const char* rank_message) {
  auto fail = [&](const std::string& why) {
    throw plugin::Failure(TSR_UNSUPPORTED, node.describe() + ": " + why);
  };
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(1);
  const tsr_tensor* y = node.output(0);
  if (!is_f32(x) || !is_f32(w) || !is_f32(y)) fail("only float32 is implemented");
  bool rank_ok = false;
  for (int32_t r : ranks) rank_ok = rank_ok || (x->rank == r && w->rank == r && y->rank == r);
  if (!rank_ok) fail(rank_message);
  if (w->data == nullptr) fail("weights must be a constant");
  const tsr_tensor* b = node.input(2);
  if (b != nullptr && constant_f32(b) == nullptr) fail("bias must be a float32 constant");
}

Epilogue bias_clamp(const float* bias, const Activation& act) {
  Epilogue e;
  e.row_bias = bias;
  e.lo = act.lo;
  e.hi = act.hi;
  return e;
}

void fold_batch_norm(const NodeView& bn, int64_t oc, int64_t k, float* weights, float* bias) {
  const float* gamma = constant_f32(bn.input(1));
  const float* beta = constant_f32(bn.input(2));
  const float* mean = constant_f32(bn.input(3));
  const float* var = constant_f32(bn.input(4));
  const float eps = bn.attr_float("epsilon", 1e-5f);
  for (int64_t o = 0; o < oc; ++o) {
    const float s = gamma[o] / std::sqrt(var[o] + eps);
    for (int64_t i = 0; i < k; ++i) weights[o * k + i] *= s;
    bias[o] = s * (bias[o] - mean[o]) + beta[o];
  }
}

bool constant_ints(const tsr_tensor* t, std::vector<int64_t>* out) {
  if (t == nullptr || t->data == nullptr) return false;
  const int64_t n = numel(*t);
  out->resize(static_cast<size_t>(n));
  if (t->dtype == TSR_DTYPE_INT64) {
    const int64_t* p = static_cast<const int64_t*>(t->data);
    std::copy(p, p + n, out->begin());
  } else if (t->dtype == TSR_DTYPE_INT32) {
    const int32_t* p = static_cast<const int32_t*>(t->data);
    std::copy(p, p + n, out->begin());
  } else {
    return false;
  }
  return true;
}

bool activation_of(const RegionView& region, const NodeView& node, Activation* act) {
  (void)region;
  if (node.op_type() == "Relu") {
    act->lo = 0.0f;
    act->hi = std::numeric_limits<float>::infinity();
    return true;
  }
  if (node.op_type() != "Clip") return false;
  Activation a;
  if (region.opset() < 11) {
    a.lo = node.attr_float("min", a.lo);
    a.hi = node.attr_float("max", a.hi);
  } else {
    for (int32_t i = 1; i <= 2; ++i) {
      const tsr_tensor* t = node.input(i);
      if (t == nullptr) continue;
      const float* v = constant_f32(t);
      if (v == nullptr || numel(*t) != 1) return false;
      (i == 1 ? a.lo : a.hi) = v[0];
    }
  }
  *act = a;
  return true;
}

std::shared_ptr<const UnaryFn> take_post(BuildContext& ctx) {
  if (ctx.post.is_clamp_only()) return nullptr;
  ctx.post_done = true;
  return std::make_shared<const UnaryFn>(ctx.post);
}

Config choose_config(BuildContext& ctx, const Config& heuristic, const std::string& prefix) {
  std::string why;
  const Config config = apply_node_config(ctx.config, heuristic, &why);
  const std::string name(ctx.node.name());
  if (!why.empty())
    ctx.notes->push_back(name + ": node config not applied, heuristic used: " + why);
  ctx.notes->push_back(name + ": " + prefix + config.str() +
                       (ctx.config != nullptr && why.empty() ? " (node config)" : ""));
  return config;
}

}  // namespace tessera::cpu
