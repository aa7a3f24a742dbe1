// FLOP counts of multiply-add nodes (see tessera/flops.hpp). Part of the runtime, not the tuner:
// the partitioner's cost model prices every node's compute with them.
#include "tessera/flops.hpp"

#include <cstdint>

namespace tessera {
namespace {

// The product of a known shape's dims from `first` on; 0 when unknown or empty.
double product(const Value& v, size_t first) {
  if (!v.shape_known || v.shape.size() < first) return 0;
  double n = 1;
  for (size_t i = first; i < v.shape.size(); ++i) {
    if (v.shape[i] < 0) return 0;  // symbolic
    n *= static_cast<double>(v.shape[i]);
  }
  return n;
}

const Value* input(const Graph& graph, const Node& node, size_t i) {
  if (node.inputs.size() <= i || node.inputs[i] == kNoValue) return nullptr;
  return &graph.value(node.inputs[i]);
}

}  // namespace

double node_flops(const Graph& graph, const Node& node) {
  if (node.outputs.empty() || node.outputs[0] == kNoValue) return 0;
  const Value& out = graph.value(node.outputs[0]);
  const double outputs = product(out, 0);
  if (node.op_type == "Conv") {
    // Each output element is a dot product over W's C/group x KH x KW (weights [M, C/group, ...]).
    const Value* w = input(graph, node, 1);
    if (!w || w->shape.size() < 2) return 0;
    return 2 * outputs * product(*w, 1);
  }
  if (node.op_type == "ConvTranspose") {
    // Each input element is scattered into W's M/group x KH x KW outputs (weights [C, M/group,
    // ...]).
    const Value* x = input(graph, node, 0);
    const Value* w = input(graph, node, 1);
    if (!x || !w || w->shape.size() < 2) return 0;
    return 2 * product(*x, 0) * product(*w, 1);
  }
  if (node.op_type == "Gemm" || node.op_type == "MatMul") {
    const Value* a = input(graph, node, 0);
    if (!a || !a->shape_known || a->shape.empty()) return 0;
    size_t k_axis = a->shape.size() - 1;
    if (node.op_type == "Gemm" && node.attrs.get_int("transA", 0) != 0) k_axis = 0;
    const int64_t k = a->shape[k_axis];
    return k < 0 ? 0 : 2 * outputs * static_cast<double>(k);
  }
  return 0;
}

}  // namespace tessera
