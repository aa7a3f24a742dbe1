// The standard preparation run after import, and its re-run for the inputs of one run.
#include <algorithm>
#include <set>

#include "passes/infer_and_fold.hpp"
#include "passes/quantized_units.hpp"
#include "tessera/passes.hpp"

namespace tessera {
std::string open_shape_str(const Value& input) {
  std::string s = "[";
  for (size_t i = 0; i < input.shape.size(); ++i) {
    const bool open = i < input.open_dims.size() && input.open_dims[i];
    s += (i ? ", " : "") + (open ? std::string("?") : std::to_string(input.shape[i]));
  }
  return s + "]";
}

namespace {

// Sets each input's shape from its tensor; a value input becomes a constant with a private copy
// of the values (the caller may reuse its tensors after the run).
void bind_inputs(Graph& g, const std::map<std::string, Tensor>& inputs,
                 const std::set<ValueId>& value_inputs) {
  const std::string where = g.source.empty() ? "graph" : g.source;
  for (ValueId id : g.inputs) {
    Value& v = g.value(id);
    auto it = inputs.find(v.name);
    if (it == inputs.end()) throw Error(where + ": no tensor given for input '" + v.name + "'");
    const Tensor& t = it->second;
    if (!input_accepts(v, t.dtype(), t.shape())) {
      throw Error(where + ": input '" + v.name + "' expects " + dtype_name(v.dtype) + " " +
                  open_shape_str(v) + " ('?' = a dimension the model leaves open), got " +
                  dtype_name(t.dtype()) + " " + shape_str(t.shape()));
    }
    v.shape = t.shape();
    if (value_inputs.count(id)) v.constant = std::make_shared<const Tensor>(t.clone());
  }
  g.inputs.erase(std::remove_if(g.inputs.begin(), g.inputs.end(),
                                [&](ValueId id) { return value_inputs.count(id) != 0; }),
                 g.inputs.end());
}

}  // namespace

bool input_accepts(const Value& input, DType dtype, const Shape& shape) {
  if (dtype != input.dtype || shape.size() != input.shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool open = i < input.open_dims.size() && input.open_dims[i];
    if (!open && shape[i] != input.shape[i]) return false;
  }
  return true;
}

void prepare_graph(Graph& graph) {
  graph.topological_sort();
  // Inputs without sizes in open dims: any shape inferred now would be the placeholder's.
  if (!graph.unsized_inputs.empty()) return;
  auto before = std::make_shared<Graph>(graph);
  before->unprepared.reset();
  before->prepared = false;
  try {
    fuse_quantized_units(graph);  // before folding, which would make int8 weights float
    fold_constants(graph);  // infers every shape as it goes
  } catch (const InputValuesNeeded& e) {
    graph = std::move(*before);
    for (ValueId id : e.inputs) {
      if (std::find(graph.value_inputs.begin(), graph.value_inputs.end(), id) ==
          graph.value_inputs.end()) {
        graph.value_inputs.push_back(id);
      }
    }
    return;
  } catch (const ValueNeededAtRun& e) {
    graph = std::move(*before);  // runs in stages; a Session splits it at the first run
    graph.value_needed_at_run = e.name;
    return;
  }
  normalise_dropout(graph);
  lower_einsum(graph);
  lower_cast_like(graph);
  bypass_no_op_pads(graph);  // also removes dead nodes
  graph.prepared = true;
  graph.unprepared = std::move(before);
}

bool can_prepare_again(const Graph& graph) {
  return !graph.prepared || graph.unprepared != nullptr;
}

bool planned_at_first_run(const Graph& graph) {
  return !graph.value_inputs.empty() || !graph.unsized_inputs.empty() ||
         !graph.value_needed_at_run.empty();
}

Graph prepare_for_inputs(const Graph& graph, const std::map<std::string, Tensor>& inputs) {
  std::shared_ptr<const Graph> origin = graph.prepared ? graph.unprepared : nullptr;
  if (graph.prepared && origin == nullptr) {
    throw Error((graph.source.empty() ? std::string("graph") : graph.source) +
                ": cannot be prepared for other inputs (its unprepared form was not kept)");
  }
  if (origin == nullptr) {
    auto copy = std::make_shared<Graph>(graph);
    copy->topological_sort();
    origin = std::move(copy);
  }
  std::set<ValueId> value_inputs(graph.value_inputs.begin(), graph.value_inputs.end());
  value_inputs.insert(origin->value_inputs.begin(), origin->value_inputs.end());
  // Each pass either succeeds or freezes at least one more input, so this ends.
  for (;;) {
    Graph g = *origin;
    g.unprepared.reset();
    bind_inputs(g, inputs, value_inputs);
    try {
      fuse_quantized_units(g);
      fold_constants(g);
    } catch (const InputValuesNeeded& e) {
      const size_t before = value_inputs.size();
      value_inputs.insert(e.inputs.begin(), e.inputs.end());
      if (value_inputs.size() == before) throw UnsupportedError(e.what());
      continue;
    }
    normalise_dropout(g);
    lower_einsum(g);
    lower_cast_like(g);
    bypass_no_op_pads(g);  // also removes dead nodes
    g.prepared = true;
    g.unprepared = origin;
    g.unsized_inputs.clear();  // bound to the run's sizes
    g.value_needed_at_run.clear();
    g.value_inputs.assign(value_inputs.begin(), value_inputs.end());
    return g;
  }
}

std::vector<Tensor> evaluate_by_folding(const Graph& graph,
                                        const std::map<std::string, Tensor>& inputs) {
  std::shared_ptr<const Graph> origin = graph.prepared ? graph.unprepared : nullptr;
  Graph g = origin ? *origin : graph;
  g.unprepared.reset();
  g.topological_sort();
  std::set<ValueId> all(g.inputs.begin(), g.inputs.end());
  bind_inputs(g, inputs, all);
  passes::infer_and_fold(g, true, INT64_MAX);
  std::vector<Tensor> outputs;
  for (ValueId id : g.outputs) {
    const Value& v = g.value(id);
    if (!v.constant) {
      throw Error((g.source.empty() ? std::string("graph") : g.source) + ": output '" + v.name +
                  "' could not be evaluated by folding (it comes from a nondeterministic op)");
    }
    outputs.push_back(v.constant->clone());
  }
  return outputs;
}

}  // namespace tessera
