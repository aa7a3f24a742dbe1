// The node-by-node reference interpreter (the test oracle).
#include "tessera/reference_runner.hpp"

#include "../../ops/op.hpp"
#include "tessera/passes.hpp"

namespace tessera {
namespace {

// Whether `graph` must be prepared again for these inputs: it needs input values, or an input's
// shape differs from the planned one in a dimension the model leaves open.
bool needs_preparation(const Graph& graph, const std::map<std::string, Tensor>& inputs) {
  if (planned_at_first_run(graph)) return true;
  if (graph.unprepared == nullptr) return false;
  for (ValueId id : graph.inputs) {
    const Value& v = graph.value(id);
    auto it = inputs.find(v.name);
    if (it != inputs.end() && it->second.shape() != v.shape && !v.open_dims.empty()) return true;
  }
  return false;
}

}  // namespace

std::vector<Tensor> run_reference(const Graph& given, const std::map<std::string, Tensor>& inputs) {
  Graph prepared;
  const bool again = needs_preparation(given, inputs);
  if (again) {
    try {
      prepared = prepare_for_inputs(given, inputs);
    } catch (const ValueNeededAtRun&) {
      // Shapes follow from values computed at run time (NonZero, an If on activations): every
      // node folded in order is the reference kernels run node by node.
      return evaluate_by_folding(given, inputs);
    }
  }
  const Graph& graph = again ? prepared : given;
  const std::string where = graph.source.empty() ? "graph" : graph.source;
  std::vector<Tensor> slots(graph.values.size());
  for (size_t i = 0; i < graph.values.size(); ++i) {
    if (graph.values[i].constant) slots[i] = *graph.values[i].constant;
  }
  for (ValueId id : graph.inputs) {
    const Value& v = graph.value(id);
    auto it = inputs.find(v.name);
    if (it == inputs.end()) throw Error(where + ": no tensor given for input '" + v.name + "'");
    if (it->second.dtype() != v.dtype || it->second.shape() != v.shape) {
      throw Error(where + ": input '" + v.name + "' expects " + dtype_name(v.dtype) + " " +
                  shape_str(v.shape) + ", got " + dtype_name(it->second.dtype()) + " " +
                  shape_str(it->second.shape()));
    }
    slots[static_cast<size_t>(id)] = it->second;
  }
  for (const auto& [name, tensor] : inputs) {
    bool known = false;
    for (ValueId id : given.inputs) known = known || given.value(id).name == name;
    if (!known) {
      throw Error(where + ": '" + name + "' is not an input of the model (its inputs: " +
                  given.input_names() + ")");
    }
  }
  for (const Node& node : graph.nodes) {
    std::vector<const Tensor*> args;
    for (ValueId in : node.inputs) {
      args.push_back(in == kNoValue ? nullptr : &slots[static_cast<size_t>(in)]);
    }
    const std::vector<Tensor> results = run_reference_node(graph, node, args);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != kNoValue) slots[static_cast<size_t>(node.outputs[i])] = results[i];
    }
  }
  std::vector<Tensor> outputs;
  for (ValueId id : graph.outputs) outputs.push_back(slots[static_cast<size_t>(id)]);
  return outputs;
}

std::vector<Tensor> run_reference_node(const Graph& graph, const Node& node,
                                       const std::vector<const Tensor*>& inputs) {
  std::vector<ops::OutputInfo> infos;
  for (ValueId out : node.outputs) {
    ops::OutputInfo info;
    if (out != kNoValue) {
      info.dtype = graph.value(out).dtype;
      info.shape = graph.value(out).shape;
    }
    infos.push_back(info);
  }
  try {
    return ops::compute_node(node, graph.opset, inputs, infos);
  } catch (const Error& e) {
    throw Error(graph.describe(node) + ": " + e.what());
  }
}

}  // namespace tessera
