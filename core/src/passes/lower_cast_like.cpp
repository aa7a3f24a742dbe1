// CastLike(x, like) is Cast(x) to like's element type, known once shapes are inferred: rewriting
// it lets every plugin that runs Cast take it (no plugin implements CastLike).
#include "tessera/passes.hpp"

namespace tessera {

void lower_cast_like(Graph& graph) {
  for (Node& node : graph.nodes) {
    if (node.op_type != "CastLike" || node.inputs.size() != 2 || node.inputs[1] == kNoValue) {
      continue;
    }
    const DType to = graph.value(node.inputs[1]).dtype;
    if (to == DType::kUndefined) continue;
    node.op_type = "Cast";
    node.inputs.resize(1);
    node.attrs = Attributes();
    node.attrs.set("to", static_cast<int64_t>(to));
  }
}

}  // namespace tessera
