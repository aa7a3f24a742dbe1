// If and Loop whose conditions and trip counts are known at preparation, as plain nodes.
//
// Exporters write If where the model branches on something fixed per deployment or per input
// size (a sample rate input, `if x.shape[2] > 32`, an export-time flag), and Loop where a
// scripted `for` runs a known number of times. Once the condition or the trip count is a
// constant (folded from shapes, or from an input bound per value, see Graph::value_inputs), the
// body is ordinary graph: inlined, every node of it is placed on plugins like any other, as
// ONNX Runtime's and OpenVINO's If folding and loop unrolling do. A condition computed from
// activations makes the graph run in stages (ValueNeededAtRun).
#include <unordered_map>

#include "passes/infer_and_fold.hpp"
#include "tessera/passes.hpp"

namespace tessera::passes {
namespace {

// A name not yet taken in `graph`: "<prefix>/<name>", with a number after it when needed.
std::string fresh_name(const Graph& graph, const std::string& prefix, const std::string& name) {
  std::string candidate = prefix + "/" + name;
  for (int k = 2; graph.find_value(candidate) != kNoValue; ++k) {
    candidate = prefix + "/" + name + "#" + std::to_string(k);
  }
  return candidate;
}

// The outer values a body's outputs became, and the nodes that compute them.
struct Inlined {
  std::vector<Node> nodes;
  std::vector<ValueId> outputs;
};

// Copies `body` into `graph` under `prefix`: body input i reads outer value `inputs[i]`; body
// output o is written into `targets[o]` where that is not kNoValue (through an Identity when the
// output is not computed by a body node, or is one computed twice), else into a new value.
Inlined inline_body(Graph& graph, const Graph& body, const std::vector<ValueId>& inputs,
                    const std::vector<ValueId>& targets, const std::string& prefix) {
  std::unordered_map<ValueId, ValueId> to_outer;
  for (size_t i = 0; i < body.inputs.size() && i < inputs.size(); ++i) {
    to_outer[body.inputs[i]] = inputs[i];
  }
  std::vector<size_t> copied;
  for (size_t o = 0; o < body.outputs.size(); ++o) {
    const ValueId b = body.outputs[o];
    if (targets[o] == kNoValue) continue;
    const bool produced = to_outer.count(b) == 0 && body.value(b).constant == nullptr;
    if (produced) {
      to_outer[b] = targets[o];
    } else {
      copied.push_back(o);
    }
  }
  const auto outer = [&](ValueId b) {
    if (b == kNoValue) return kNoValue;
    auto it = to_outer.find(b);
    if (it != to_outer.end()) return it->second;
    Value copy = body.value(b);
    copy.name = fresh_name(graph, prefix, copy.name);
    copy.open_dims.clear();
    const ValueId id = graph.add_value(std::move(copy));
    to_outer[b] = id;
    return id;
  };
  Inlined result;
  for (const Node& n : body.nodes) {
    Node m = n;
    m.name = prefix + "/" + n.name;
    for (ValueId& in : m.inputs) in = outer(in);
    for (ValueId& out : m.outputs) out = outer(out);
    result.nodes.push_back(std::move(m));
  }
  for (size_t o : copied) {
    Node identity;
    identity.name = prefix + "/output_" + std::to_string(o);
    identity.op_type = "Identity";
    identity.inputs = {outer(body.outputs[o])};
    identity.outputs = {targets[o]};
    result.nodes.push_back(std::move(identity));
  }
  for (ValueId b : body.outputs) result.outputs.push_back(outer(b));
  for (size_t o = 0; o < targets.size(); ++o) {
    if (targets[o] != kNoValue) result.outputs[o] = targets[o];
  }
  return result;
}

const Graph& body_of(const Graph& graph, const Node& node, const std::string& name) {
  auto found = node.subgraphs.find(name);
  if (found == node.subgraphs.end() || found->second == nullptr) {
    throw Error(graph.describe(node) + " has no '" + name + "' subgraph");
  }
  return *found->second;
}

ValueId scalar_constant(Graph& graph, const std::string& prefix, const std::string& name,
                        Tensor value) {
  Value v;
  v.name = fresh_name(graph, prefix, name);
  v.dtype = value.dtype();
  v.shape = value.shape();
  v.shape_known = true;
  v.constant = std::make_shared<const Tensor>(std::move(value));
  return graph.add_value(std::move(v));
}

}  // namespace

std::vector<Node> inline_if_branch(Graph& graph, const Node& node, bool condition) {
  const std::string branch_name = condition ? "then_branch" : "else_branch";
  const Graph& branch = body_of(graph, node, branch_name);
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
  const std::vector<ValueId> captures(node.inputs.begin() + 1, node.inputs.end());
  return inline_body(graph, branch, captures, node.outputs, node.name).nodes;
}

std::vector<Node> unroll_loop_step(Graph& graph, const Node& node, int64_t trip_count,
                                   bool condition) {
  const Graph& body = body_of(graph, node, "body");
  const int64_t formal = node.attrs.get_int(kLoopFormalInputs);
  const int64_t done = node.attrs.get_int(kLoopIterationsDone, 0);
  const auto carried = static_cast<size_t>(formal - 2);
  const size_t scans = node.outputs.size() - carried;
  const size_t captures = body.inputs.size() - static_cast<size_t>(formal);
  if (formal < 2 || body.outputs.size() != 1 + carried + scans ||
      node.inputs.size() < static_cast<size_t>(formal) + captures) {
    throw Error(graph.describe(node) + ": its body has " + std::to_string(body.inputs.size()) +
                " inputs and " + std::to_string(body.outputs.size()) +
                " outputs, which do not match the node's " + std::to_string(formal) +
                " inputs and " + std::to_string(node.outputs.size()) + " outputs");
  }
  const auto first_capture = node.inputs.begin() + formal;
  const auto first_scanned = first_capture + static_cast<std::ptrdiff_t>(captures);
  const std::string prefix = node.name + "/" + std::to_string(done);
  std::vector<Node> nodes;
  if (done >= trip_count || !condition) {
    // Finished: the carried values are the outputs, each scan output the per-iteration values
    // stacked along a new first axis.
    for (size_t i = 0; i < carried; ++i) {
      Node copy;
      copy.name = node.name + "/final_" + std::to_string(i);
      copy.op_type = "Identity";
      copy.inputs = {node.inputs[2 + i]};
      copy.outputs = {node.outputs[i]};
      nodes.push_back(std::move(copy));
    }
    if (scans > 0 && done == 0) {
      throw UnsupportedError(graph.describe(node) + ": it runs no iteration, so its scan outputs "
                             "have no shape Tessera can give");
    }
    const ValueId axis0 =
        scalar_constant(graph, node.name, "axis0", Tensor::from_vector<int64_t>({1}, {0}));
    for (size_t k = 0; k < scans; ++k) {
      Node concat;
      concat.name = node.name + "/scan_" + std::to_string(k);
      concat.op_type = "Concat";
      concat.attrs.set("axis", int64_t{0});
      for (int64_t it = 0; it < done; ++it) {
        const ValueId slice = *(first_scanned + static_cast<std::ptrdiff_t>(it * scans + k));
        Value stacked;
        stacked.name = fresh_name(graph, node.name, "stacked");
        const ValueId one = graph.add_value(std::move(stacked));
        Node unsqueeze;
        unsqueeze.name = concat.name + "/" + std::to_string(it);
        unsqueeze.op_type = "Unsqueeze";
        unsqueeze.inputs = {slice};
        if (graph.opset >= 13) {
          unsqueeze.inputs.push_back(axis0);
        } else {
          unsqueeze.attrs.set("axes", std::vector<int64_t>{0});
        }
        unsqueeze.outputs = {one};
        nodes.push_back(std::move(unsqueeze));
        concat.inputs.push_back(one);
      }
      concat.outputs = {node.outputs[carried + k]};
      nodes.push_back(std::move(concat));
    }
    return nodes;
  }
  // One iteration: the body reads the iteration number, the condition, the carried values and
  // the captures; then the loop, one iteration further on, reads what the body produced.
  std::vector<ValueId> inputs;
  inputs.push_back(
      scalar_constant(graph, prefix, "iteration", Tensor::from_vector<int64_t>({}, {done})));
  if (node.inputs[1] != kNoValue) {
    inputs.push_back(node.inputs[1]);
  } else {
    Tensor yes(DType::kBool, {});
    *static_cast<bool*>(yes.raw()) = true;
    inputs.push_back(scalar_constant(graph, prefix, "cond", std::move(yes)));
  }
  inputs.insert(inputs.end(), node.inputs.begin() + 2, first_capture);
  inputs.insert(inputs.end(), first_capture, first_scanned);
  Inlined step = inline_body(graph, body, inputs,
                             std::vector<ValueId>(body.outputs.size(), kNoValue), prefix);
  nodes = std::move(step.nodes);
  Node next = node;
  next.attrs.set(kLoopIterationsDone, done + 1);
  next.inputs.assign(node.inputs.begin(), node.inputs.begin() + 1);  // the trip count
  next.inputs.push_back(step.outputs[0]);                             // the new condition
  next.inputs.insert(next.inputs.end(), step.outputs.begin() + 1,
                     step.outputs.begin() + 1 + static_cast<std::ptrdiff_t>(carried));
  next.inputs.insert(next.inputs.end(), first_capture, node.inputs.end());
  next.inputs.insert(next.inputs.end(),
                     step.outputs.begin() + 1 + static_cast<std::ptrdiff_t>(carried),
                     step.outputs.end());
  nodes.push_back(std::move(next));
  return nodes;
}

}  // namespace tessera::passes
