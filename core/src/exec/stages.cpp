// Two-stage split of a graph at a value computed at run time (see stages.hpp).
#include "exec/stages.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "tessera/error.hpp"
#include "tessera/passes.hpp"

namespace tessera::detail {
namespace {

bool contains(const std::vector<ValueId>& ids, ValueId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Copies values and nodes of `from` into `to`, each value once, by id.
class Copier {
 public:
  Copier(const Graph& from, Graph& to) : from_(from), to_(to) {}

  ValueId get(ValueId id) {
    if (id == kNoValue) return kNoValue;
    auto it = ids_.find(id);
    if (it != ids_.end()) return it->second;
    return put(id, from_.value(id));
  }
  ValueId put(ValueId id, Value value) {
    const ValueId copy = to_.add_value(std::move(value));
    ids_[id] = copy;
    return copy;
  }
  bool has(ValueId id) const { return ids_.count(id) != 0; }
  void node(const Node& n) {
    Node m = n;
    for (ValueId& in : m.inputs) in = get(in);
    for (ValueId& out : m.outputs) out = get(out);
    to_.nodes.push_back(std::move(m));
  }

 private:
  const Graph& from_;
  Graph& to_;
  std::unordered_map<ValueId, ValueId> ids_;
};

// Adds the graph input `id` of `from` to `to`, with its open, unsized and value-input marks.
void copy_input(const Graph& from, Graph& to, Copier& copier, ValueId id) {
  const ValueId copy = copier.get(id);
  to.inputs.push_back(copy);
  if (contains(from.unsized_inputs, id)) to.unsized_inputs.push_back(copy);
  if (contains(from.value_inputs, id)) to.value_inputs.push_back(copy);
}

std::vector<char> reads(const Graph& g, const std::vector<char>& nodes) {
  std::vector<char> read(g.values.size(), 0);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!nodes[n]) continue;
    for (ValueId in : g.nodes[n].inputs) {
      if (in != kNoValue) read[static_cast<size_t>(in)] = 1;
    }
  }
  return read;
}

}  // namespace

namespace {

ValueId find_needed(const Graph& graph, const std::string& needed) {
  const ValueId target = graph.find_value(needed);
  if (target == kNoValue) {
    throw Error((graph.source.empty() ? std::string("graph") : graph.source) + ": value '" +
                needed + "', needed to plan the rest, is not in the graph as imported");
  }
  return target;
}

StageSplit make_split(const Graph& graph, const std::vector<char>& in_first, ValueId target,
                      const std::string& needed);

}  // namespace

StageSplit split_stages(const Graph& graph, const std::string& needed) {
  const ValueId target = find_needed(graph, needed);
  const std::vector<int> producer = graph.producers();
  std::vector<char> in_first(graph.nodes.size(), 0);
  std::vector<char> seen(graph.values.size(), 0);
  std::vector<ValueId> stack{target};
  while (!stack.empty()) {
    const ValueId v = stack.back();
    stack.pop_back();
    if (v == kNoValue || seen[static_cast<size_t>(v)]) continue;
    seen[static_cast<size_t>(v)] = 1;
    const int p = producer[static_cast<size_t>(v)];
    if (p < 0 || in_first[static_cast<size_t>(p)]) continue;
    in_first[static_cast<size_t>(p)] = 1;
    for (ValueId in : graph.nodes[static_cast<size_t>(p)].inputs) stack.push_back(in);
  }
  return make_split(graph, in_first, target, needed);
}

StageSplit split_static(const Graph& graph, const std::vector<char>& dynamic,
                        const std::string& needed) {
  std::vector<char> in_first(graph.nodes.size(), 0);
  for (size_t n = 0; n < graph.nodes.size() && n < dynamic.size(); ++n) in_first[n] = !dynamic[n];
  return make_split(graph, in_first, find_needed(graph, needed), needed);
}

namespace {

StageSplit make_split(const Graph& graph, const std::vector<char>& in_first, ValueId target,
                      const std::string& needed) {
  StageSplit s;
  s.needed = needed;
  s.origin = graph;
  s.origin.unprepared.reset();
  s.origin.value_needed_at_run.clear();
  const std::vector<int> producer = graph.producers();
  s.in_rest.resize(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) s.in_rest[n] = !in_first[n];
  s.has_first = std::any_of(in_first.begin(), in_first.end(), [](char c) { return c != 0; });
  for (ValueId id : graph.outputs) s.outputs.push_back(graph.value(id).name);
  if (!s.has_first) return s;

  // The first stage returns `needed`, what the second stage reads of it, and graph outputs.
  const auto made_first = [&](ValueId id) {
    return id != kNoValue && producer[static_cast<size_t>(id)] >= 0 &&
           in_first[static_cast<size_t>(producer[static_cast<size_t>(id)])];
  };
  std::vector<ValueId> results;
  const auto add_result = [&](ValueId id) {
    if (made_first(id) && !contains(results, id)) results.push_back(id);
  };
  add_result(target);
  const std::vector<char> rest_reads = reads(graph, s.in_rest);
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (rest_reads[v]) add_result(static_cast<ValueId>(v));
  }
  for (ValueId id : graph.outputs) add_result(id);

  Graph& f = s.first;
  f.source = graph.source;
  f.opset = graph.opset;
  Copier copier(graph, f);
  const std::vector<char> first_reads = reads(graph, in_first);
  for (ValueId id : graph.inputs) {
    if (first_reads[static_cast<size_t>(id)]) copy_input(graph, f, copier, id);
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (in_first[n]) copier.node(graph.nodes[n]);
  }
  for (ValueId id : results) f.outputs.push_back(copier.get(id));
  prepare_graph(f);
  return s;
}

}  // namespace

Graph rest_stage(const StageSplit& split, const std::map<std::string, Tensor>& first_results) {
  const Graph& g = split.origin;
  Graph r;
  r.source = g.source;
  r.opset = g.opset;
  Copier copier(g, r);
  const std::vector<char> rest_reads = reads(g, split.in_rest);
  const ValueId needed = g.find_value(split.needed);
  for (ValueId id : g.inputs) {
    if (!rest_reads[static_cast<size_t>(id)]) continue;
    copy_input(g, r, copier, id);
    if (id == needed && !contains(r.value_inputs, r.inputs.back())) {
      r.value_inputs.push_back(r.inputs.back());
    }
  }
  for (size_t v = 0; v < g.values.size(); ++v) {
    auto it = first_results.find(g.values[v].name);
    if (!rest_reads[v] || copier.has(static_cast<ValueId>(v)) || it == first_results.end()) {
      continue;
    }
    // A first-stage result: its dtype and rank are fixed, every size may change per run.
    Value in;
    in.name = g.values[v].name;
    in.dtype = it->second.dtype();
    in.shape = it->second.shape();
    in.shape_known = true;
    if (!in.shape.empty()) in.open_dims.assign(in.shape.size(), true);
    const ValueId id = copier.put(static_cast<ValueId>(v), std::move(in));
    r.inputs.push_back(id);
    r.unsized_inputs.push_back(id);
    if (static_cast<ValueId>(v) == needed) r.value_inputs.push_back(id);
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (split.in_rest[n]) copier.node(g.nodes[n]);
  }
  for (ValueId id : g.outputs) {
    if (first_results.count(g.value(id).name) == 0) r.outputs.push_back(copier.get(id));
  }
  r.topological_sort();
  prepare_graph(r);
  return r;
}

}  // namespace tessera::detail
