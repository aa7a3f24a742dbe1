// The op table of the cpu plugin and helpers shared by the op files.
#include "ops/op.hpp"

namespace tessera::cpu {

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = {
      {"Conv", query_conv, build_conv},
      {"Gemm", query_gemm, build_gemm},
      {"MatMul", query_matmul, build_matmul},
      {"Add", query_add, build_add},
      {"Relu", query_activation, build_activation},
      {"Clip", query_activation, build_activation},
      {"BatchNormalization", query_batch_norm, build_batch_norm},
      {"MaxPool", query_pool, build_pool},
      {"AveragePool", query_pool, build_pool},
      {"GlobalAveragePool", query_global_average_pool, build_global_average_pool},
      {"Softmax", query_softmax, build_softmax},
      {"Flatten", query_view, build_view},
      {"Reshape", query_view, build_view},
      {"Dropout", query_view, build_view},
      {"Identity", query_view, build_view},
      {"Concat", query_concat, build_concat},
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

std::vector<int64_t> dims(const tsr_tensor& t) {
  return plugin::tensor_shape(t);
}

int64_t numel(const tsr_tensor& t) {
  return plugin::tensor_numel(t);
}

const float* constant_f32(const tsr_tensor* t) {
  return is_f32(t) && t->data != nullptr ? static_cast<const float*>(t->data) : nullptr;
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
