// If with a condition known at preparation: the chosen branch's nodes take the If's place.
//
// Exporters write If where the model branches on something fixed per deployment: a sample rate
// input (voice-activity detectors), a shape test (`if x.shape[2] > 32`), an export-time flag. Once
// the condition is a constant (folded from shapes, or from an input the session binds per value,
// see Graph::value_inputs), the branch is ordinary graph: inlining it lets partitioning place
// every node of it on plugins, as ONNX Runtime's and OpenVINO's If folding does. A condition
// computed from activations cannot be decided before the run, and is refused naming the node.
#include <set>
#include <unordered_map>

#include "passes/infer_and_fold.hpp"

namespace tessera::passes {
namespace {

// A name not yet taken in `graph`: "<if node>/<name>", with a number after it when needed.
std::string fresh_name(const Graph& graph, const std::string& prefix, const std::string& name) {
  std::string candidate = prefix + "/" + name;
  for (int k = 2; graph.find_value(candidate) != kNoValue; ++k) {
    candidate = prefix + "/" + name + "#" + std::to_string(k);
  }
  return candidate;
}

}  // namespace

std::vector<Node> inline_if_branch(Graph& graph, const Node& node, bool condition) {
  const std::string branch_name = condition ? "then_branch" : "else_branch";
  auto found = node.subgraphs.find(branch_name);
  if (found == node.subgraphs.end() || found->second == nullptr) {
    throw Error(graph.describe(node) + " has no '" + branch_name + "' subgraph");
  }
  const Graph& branch = *found->second;
  // The node reads its condition, then the branches' captures in the branches' input order.
  if (node.inputs.size() != branch.inputs.size() + 1) {
    throw Error(graph.describe(node) + ": its '" + branch_name + "' reads " +
                std::to_string(branch.inputs.size()) + " enclosing values but the node passes " +
                std::to_string(node.inputs.size() - 1));
  }
  if (branch.outputs.size() != node.outputs.size()) {
    throw Error(graph.describe(node) + ": its '" + branch_name + "' has " +
                std::to_string(branch.outputs.size()) + " outputs but the node has " +
                std::to_string(node.outputs.size()) +
                " (both branches must produce every output of the If)");
  }
  std::unordered_map<ValueId, ValueId> to_outer;
  for (size_t i = 0; i < branch.inputs.size(); ++i) to_outer[branch.inputs[i]] = node.inputs[i + 1];
  // Outputs computed by a branch node are written straight into the If's output values; an
  // output that is a capture, a constant, or the same value twice is copied by an Identity.
  std::set<ValueId> direct;
  std::vector<size_t> copied;
  for (size_t o = 0; o < branch.outputs.size(); ++o) {
    const ValueId b = branch.outputs[o];
    if (node.outputs[o] == kNoValue) continue;
    const bool produced = to_outer.count(b) == 0 && branch.value(b).constant == nullptr;
    if (produced && direct.insert(b).second) {
      to_outer[b] = node.outputs[o];
    } else {
      copied.push_back(o);
    }
  }
  const auto outer = [&](ValueId b) {
    if (b == kNoValue) return kNoValue;
    auto it = to_outer.find(b);
    if (it != to_outer.end()) return it->second;
    const Value& v = branch.value(b);
    Value copy = v;
    copy.name = fresh_name(graph, node.name, v.name);
    copy.open_dims.clear();
    const ValueId id = graph.add_value(std::move(copy));
    to_outer[b] = id;
    return id;
  };
  std::vector<Node> nodes;
  for (const Node& n : branch.nodes) {
    Node m = n;
    m.name = node.name + "/" + n.name;
    for (ValueId& in : m.inputs) in = outer(in);
    for (ValueId& out : m.outputs) out = outer(out);
    nodes.push_back(std::move(m));
  }
  for (size_t o : copied) {
    Node identity;
    identity.name = node.name + "/output_" + std::to_string(o);
    identity.op_type = "Identity";
    identity.inputs = {outer(branch.outputs[o])};
    identity.outputs = {node.outputs[o]};
    nodes.push_back(std::move(identity));
  }
  return nodes;
}

}  // namespace tessera::passes
