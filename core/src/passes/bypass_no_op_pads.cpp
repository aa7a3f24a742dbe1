// Pads that pad nothing: PyTorch's exporter writes a Pad with all-zero pads in front of some
// AveragePools (densenet's transitions), which every plugin would otherwise copy (150-340 us per
// node on the cpu plugin at densenet's sizes, with nothing to show for it).
#include <algorithm>

#include "tessera/passes.hpp"

namespace tessera {
namespace {

// The node's pads when they are known now (the attribute before opset 11, a constant input 1
// after), or an empty vector.
std::vector<int64_t> known_pads(const Graph& graph, const Node& node) {
  if (graph.opset < 11) return node.attrs.get_ints("pads", {});
  if (node.inputs.size() < 2 || node.inputs[1] == kNoValue) return {};
  const Value& pads = graph.value(node.inputs[1]);
  if (!pads.constant || pads.constant->dtype() != DType::kInt64) return {};
  return pads.constant->to_int64_vector();
}

}  // namespace

void bypass_no_op_pads(Graph& graph) {
  std::vector<bool> is_output(graph.values.size(), false);
  for (ValueId id : graph.outputs) is_output[static_cast<size_t>(id)] = true;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (node.op_type != "Pad" || node.inputs.empty() || node.outputs.empty()) continue;
    const ValueId in = node.inputs[0], out = node.outputs[0];
    if (in == kNoValue || out == kNoValue || is_output[static_cast<size_t>(out)]) continue;
    const std::vector<int64_t> pads = known_pads(graph, node);
    if (pads.empty() || std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
      continue;
    const Value& x = graph.value(in);
    const Value& y = graph.value(out);
    if (!x.shape_known || !y.shape_known || x.shape != y.shape || x.dtype != y.dtype) continue;
    for (Node& reader : graph.nodes) {
      std::replace(reader.inputs.begin(), reader.inputs.end(), out, in);
    }
  }
  graph.remove_dead_nodes();
}

}  // namespace tessera
