// See tessera/mixed_precision.hpp.
#include "tessera/mixed_precision.hpp"

namespace tessera {
namespace {

const std::map<std::string, MixedPrecisionClass>& default_lists() {
  using C = MixedPrecisionClass;
  static const std::map<std::string, MixedPrecisionClass> lists = [] {
    std::map<std::string, MixedPrecisionClass> m;
    for (const char* op : {"Conv", "ConvTranspose", "Gemm", "MatMul"}) m[op] = C::kAlways;
    for (const char* op : {"Add",
                           "Sub",
                           "Mul",
                           "Div",
                           "Max",
                           "Min",
                           "Relu",
                           "Clip",
                           "LeakyRelu",
                           "PRelu",
                           "HardSigmoid",
                           "HardSwish",
                           "Sigmoid",
                           "Tanh",
                           "Neg",
                           "Abs",
                           "MaxPool",
                           "AveragePool",
                           "GlobalAveragePool",
                           "GlobalMaxPool",
                           "BatchNormalization",
                           "Concat",
                           "Reshape",
                           "Flatten",
                           "Transpose",
                           "Slice",
                           "Split",
                           "Squeeze",
                           "Unsqueeze",
                           "Identity",
                           "Dropout",
                           "Pad",
                           "Resize",
                           "Gather",
                           "Expand",
                           "Cast",
                           "Upsample",
                           "DepthToSpace",
                           "SpaceToDepth",
                           "Shape"}) {
      m[op] = C::kFollow;
    }
    for (const char* op : {"Softmax",
                           "LogSoftmax",
                           "LayerNormalization",
                           "InstanceNormalization",
                           "GroupNormalization",
                           "ReduceMean",
                           "ReduceSum",
                           "ReduceL2",
                           "ReduceMax",
                           "ReduceMin",
                           "ReduceProd",
                           "ReduceSumSquare",
                           "ReduceLogSumExp",
                           "Exp",
                           "Log",
                           "Pow",
                           "Sqrt",
                           "Reciprocal",
                           "Erf",
                           "Gelu",
                           "Softplus",
                           "Mish",
                           "Einsum"}) {
      m[op] = C::kNever;
    }
    return m;
  }();
  return lists;
}

}  // namespace

const char* mixed_precision_class_name(MixedPrecisionClass c) {
  switch (c) {
    case MixedPrecisionClass::kAlways:
      return "always";
    case MixedPrecisionClass::kFollow:
      return "follow";
    case MixedPrecisionClass::kNever:
      return "never";
  }
  return "?";
}

MixedPrecisionClass mixed_precision_class(const std::string& op_type,
                                          const MixedPrecisionSettings& settings, bool* listed) {
  if (listed) *listed = true;
  const auto o = settings.overrides.find(op_type);
  if (o != settings.overrides.end()) return o->second;
  const auto d = default_lists().find(op_type);
  if (d != default_lists().end()) return d->second;
  if (listed) *listed = false;
  return MixedPrecisionClass::kNever;
}

std::vector<bool> assign_reduced_precision(const Graph& graph,
                                           const MixedPrecisionSettings& settings) {
  const size_t num_nodes = graph.nodes.size();
  std::vector<bool> reduced(num_nodes, false);
  const std::vector<int> producers = graph.producers();
  // graph.nodes is kept in topological order (Graph::topological_sort).
  for (size_t n = 0; n < num_nodes; ++n) {
    const Node& node = graph.nodes[n];
    switch (mixed_precision_class(node.op_type, settings)) {
      case MixedPrecisionClass::kAlways:
        reduced[n] = true;
        break;
      case MixedPrecisionClass::kNever:
        break;
      case MixedPrecisionClass::kFollow: {
        bool any_producer = false, all_reduced = true;
        for (ValueId in : node.inputs) {
          if (in == kNoValue) continue;
          const int p = producers[static_cast<size_t>(in)];
          if (p < 0) continue;  // a graph input or a constant
          any_producer = true;
          all_reduced = all_reduced && reduced[static_cast<size_t>(p)];
        }
        reduced[n] = any_producer && all_reduced;
        break;
      }
    }
  }
  return reduced;
}

}  // namespace tessera
