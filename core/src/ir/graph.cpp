// Attribute access, value bookkeeping and topological ordering of the graph IR.
#include "tessera/graph.hpp"

#include <algorithm>
#include <unordered_map>

namespace tessera {
namespace {

const char* attribute_kind_name(const AttributeValue& v) {
  switch (v.index()) {
    case 0: return "int";
    case 1: return "float";
    case 2: return "string";
    case 3: return "ints";
    case 4: return "floats";
    case 5: return "strings";
    case 6: return "tensor";
  }
  return "?";
}

template <typename T>
const T& get_as(const AttributeValue& v, const std::string& name, const char* wanted) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw Error("attribute '" + name + "' is a " + attribute_kind_name(v) + ", expected " + wanted);
}

}  // namespace

const AttributeValue& Attributes::require(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error("required attribute '" + name + "' is missing");
  return it->second;
}

int64_t Attributes::get_int(const std::string& name) const {
  return get_as<int64_t>(require(name), name, "int");
}
int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
  return has(name) ? get_int(name) : fallback;
}
float Attributes::get_float(const std::string& name) const {
  const AttributeValue& v = require(name);
  // ONNX producers sometimes write integral literals for float attributes; accept them.
  if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<float>(*i);
  return get_as<float>(v, name, "float");
}
float Attributes::get_float(const std::string& name, float fallback) const {
  return has(name) ? get_float(name) : fallback;
}
std::string Attributes::get_string(const std::string& name) const {
  return get_as<std::string>(require(name), name, "string");
}
std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  return has(name) ? get_string(name) : fallback;
}
std::vector<int64_t> Attributes::get_ints(const std::string& name) const {
  return get_as<std::vector<int64_t>>(require(name), name, "ints");
}
std::vector<int64_t> Attributes::get_ints(const std::string& name,
                                          const std::vector<int64_t>& fallback) const {
  return has(name) ? get_ints(name) : fallback;
}
std::vector<float> Attributes::get_floats(const std::string& name) const {
  return get_as<std::vector<float>>(require(name), name, "floats");
}
std::vector<float> Attributes::get_floats(const std::string& name,
                                          const std::vector<float>& fallback) const {
  return has(name) ? get_floats(name) : fallback;
}
std::vector<std::string> Attributes::get_strings(const std::string& name) const {
  return get_as<std::vector<std::string>>(require(name), name, "strings");
}
const Tensor& Attributes::get_tensor(const std::string& name) const {
  return get_as<Tensor>(require(name), name, "tensor");
}

ValueId Graph::add_value(Value value) {
  if (find_value(value.name) != kNoValue) {
    throw Error((source.empty() ? "graph" : source) + ": value '" + value.name +
                "' is defined twice");
  }
  values.push_back(std::move(value));
  return static_cast<ValueId>(values.size() - 1);
}

ValueId Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].name == name) return static_cast<ValueId>(i);
  }
  return kNoValue;
}

std::string Graph::input_names() const {
  std::string out;
  for (ValueId id : inputs) out += (out.empty() ? "'" : ", '") + value(id).name + "'";
  return out.empty() ? "none" : out;
}

std::string Graph::describe(const Node& node) const {
  return "node '" + node.name + "' (" + node.op_type + ")" +
         (source.empty() ? "" : " in " + source);
}

std::vector<int> Graph::producers() const {
  std::vector<int> producer(values.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId out : nodes[n].outputs) {
      if (out != kNoValue) producer[static_cast<size_t>(out)] = static_cast<int>(n);
    }
  }
  return producer;
}

void Graph::topological_sort() {
  const std::string where = source.empty() ? "graph" : source;
  std::vector<int> producer(values.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId out : nodes[n].outputs) {
      if (out == kNoValue) continue;
      if (out < 0 || static_cast<size_t>(out) >= values.size()) {
        throw Error(where + ": " + describe(nodes[n]) + " has an output id out of range");
      }
      if (producer[static_cast<size_t>(out)] != -1 || values[static_cast<size_t>(out)].constant) {
        throw Error(where + ": value '" + values[static_cast<size_t>(out)].name +
                    "' is produced more than once (again by " + describe(nodes[n]) + ")");
      }
      producer[static_cast<size_t>(out)] = static_cast<int>(n);
    }
  }
  std::vector<bool> is_graph_input(values.size(), false);
  for (ValueId in : inputs) is_graph_input[static_cast<size_t>(in)] = true;

  // Kahn's algorithm; ties keep the original order so the result is stable.
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<int>> consumers(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId in : nodes[n].inputs) {
      if (in == kNoValue) continue;
      if (in < 0 || static_cast<size_t>(in) >= values.size()) {
        throw Error(where + ": " + describe(nodes[n]) + " has an input id out of range");
      }
      const int p = producer[static_cast<size_t>(in)];
      if (p == -1) {
        const Value& v = values[static_cast<size_t>(in)];
        if (!v.constant && !is_graph_input[static_cast<size_t>(in)]) {
          throw Error(where + ": " + describe(nodes[n]) + " reads '" + v.name +
                      "', which is not a graph input, an initializer or any node's output");
        }
        continue;
      }
      ++pending[n];
      consumers[static_cast<size_t>(p)].push_back(static_cast<int>(n));
    }
  }
  std::vector<int> ready;
  for (size_t n = nodes.size(); n-- > 0;) {
    if (pending[n] == 0) ready.push_back(static_cast<int>(n));
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  std::vector<bool> done(nodes.size(), false);
  while (!ready.empty()) {
    // Pick the smallest original index among ready nodes.
    auto it = std::min_element(ready.begin(), ready.end());
    const int n = *it;
    ready.erase(it);
    done[static_cast<size_t>(n)] = true;
    sorted.push_back(nodes[static_cast<size_t>(n)]);
    for (int c : consumers[static_cast<size_t>(n)]) {
      if (--pending[static_cast<size_t>(c)] == 0) ready.push_back(c);
    }
  }
  if (sorted.size() != nodes.size()) {
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (!done[n]) {
        throw Error(where + ": the graph has a cycle through " + describe(nodes[n]));
      }
    }
  }
  nodes = std::move(sorted);
  for (ValueId out : outputs) {
    if (out == kNoValue || static_cast<size_t>(out) >= values.size()) {
      throw Error(where + ": a graph output refers to no value");
    }
  }
}

void Graph::remove_dead_nodes() {
  std::vector<bool> needed(values.size(), false);
  for (ValueId out : outputs) needed[static_cast<size_t>(out)] = true;
  std::vector<bool> keep(nodes.size(), false);
  for (size_t n = nodes.size(); n-- > 0;) {
    for (ValueId out : nodes[n].outputs) {
      if (out != kNoValue && needed[static_cast<size_t>(out)]) keep[n] = true;
    }
    if (!keep[n]) continue;
    for (ValueId in : nodes[n].inputs) {
      if (in != kNoValue) needed[static_cast<size_t>(in)] = true;
    }
  }
  std::vector<Node> kept;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (keep[n]) kept.push_back(std::move(nodes[n]));
  }
  nodes = std::move(kept);
}

}  // namespace tessera
