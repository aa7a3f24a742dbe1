// Training-mode Dropout with ratio 0 is the identity, as inference Dropout is (the op file's
// shape inference accepts it); clearing the flag, and the mask output when nothing reads it, lets
// every plugin take it without a rule of its own. Runs after constant folding, when the ratio and
// the flag are constants if they ever are.
#include "tessera/passes.hpp"

namespace tessera {
namespace {

// The value of a constant scalar input, or nullptr.
const Tensor* constant_scalar(const Graph& graph, const Node& node, size_t i) {
  if (node.inputs.size() <= i || node.inputs[i] == kNoValue) return nullptr;
  const Value& v = graph.value(node.inputs[i]);
  if (!v.constant || v.constant->numel() != 1) return nullptr;
  return v.constant.get();
}

bool is_zero_ratio(const Tensor& ratio) {
  if (ratio.dtype() == DType::kFloat32) return ratio.data<float>()[0] == 0.0f;
  if (ratio.dtype() == DType::kFloat16) return half_to_float(ratio.data<uint16_t>()[0]) == 0.0f;
  return false;
}

}  // namespace

void normalise_dropout(Graph& graph) {
  // Values something reads (a node or the graph's outputs): a mask nobody reads is dropped, as a
  // plugin would otherwise have to produce it (or refuse the node for it).
  std::vector<bool> read(graph.values.size(), false);
  for (ValueId id : graph.outputs) read[static_cast<size_t>(id)] = true;
  for (const Node& node : graph.nodes) {
    for (ValueId id : node.inputs) {
      if (id != kNoValue) read[static_cast<size_t>(id)] = true;
    }
  }
  for (Node& node : graph.nodes) {
    if (node.op_type != "Dropout") continue;
    if (node.outputs.size() > 1 && node.outputs[1] != kNoValue &&
        !read[static_cast<size_t>(node.outputs[1])]) {
      node.outputs.resize(1);
    }
    const Tensor* training = constant_scalar(graph, node, 2);
    const Tensor* ratio = constant_scalar(graph, node, 1);
    if (training == nullptr || training->dtype() != DType::kBool || !training->data<bool>()[0] ||
        ratio == nullptr || !is_zero_ratio(*ratio)) {
      continue;
    }
    node.inputs[2] = kNoValue;
  }
}

}  // namespace tessera
