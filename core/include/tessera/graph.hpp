// Graph IR: values (typed, shaped, optionally constant), nodes with typed attributes, and the
// graph that owns them in topological order.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tessera/tensor.hpp"

namespace tessera {

using ValueId = int32_t;
// Marks an omitted optional input (ONNX writes it as the empty name "").
constexpr ValueId kNoValue = -1;

// One node attribute. The alternatives mirror ONNX AttributeProto's kinds we accept.
using AttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                                    std::vector<float>, std::vector<std::string>, Tensor>;

// Typed attribute access. Getters with a default return it when the attribute is absent and
// throw tessera::Error naming the attribute when it is present with the wrong kind.
class Attributes {
 public:
  void set(const std::string& name, AttributeValue value) { values_[name] = std::move(value); }
  void erase(const std::string& name) { values_.erase(name); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const std::map<std::string, AttributeValue>& all() const { return values_; }

  int64_t get_int(const std::string& name) const;
  int64_t get_int(const std::string& name, int64_t fallback) const;
  float get_float(const std::string& name) const;
  float get_float(const std::string& name, float fallback) const;
  std::string get_string(const std::string& name) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> get_ints(const std::string& name) const;
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& fallback) const;
  std::vector<float> get_floats(const std::string& name) const;
  std::vector<float> get_floats(const std::string& name, const std::vector<float>& fallback) const;
  std::vector<std::string> get_strings(const std::string& name) const;
  const Tensor& get_tensor(const std::string& name) const;

 private:
  const AttributeValue& require(const std::string& name) const;
  std::map<std::string, AttributeValue> values_;
};

struct Value {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  bool shape_known = false;
  // Set for initializers and for values folded to constants; shape/dtype then match it.
  std::shared_ptr<const Tensor> constant;
  // Graph inputs only: per dimension, true where the model leaves it open (a dim_param such as
  // "batch", or no value). `shape` holds the size planned first; a Session plans again when a run
  // brings another size there. Empty = every dimension fixed.
  std::vector<bool> open_dims;
};

class Graph;

struct Node {
  std::string name;     // never empty after import (generated as "<op_type>_<index>" if needed)
  std::string op_type;  // e.g. "Conv"
  std::vector<ValueId> inputs;   // kNoValue for omitted optional inputs
  std::vector<ValueId> outputs;  // kNoValue for omitted optional outputs
  Attributes attrs;
  // Control-flow bodies by attribute name (If's then_branch / else_branch, Loop's body). A body's
  // `inputs` are its formal inputs (none for If; Loop's iteration number, condition and carried
  // values), then the values of enclosing scopes it reads, by name. Bodies stay out of the
  // attributes so that plugins, packages and attribute readers never meet them: preparation
  // inlines them (tessera/passes.hpp), or the graph is refused naming the node.
  std::map<std::string, std::shared_ptr<const Graph>> subgraphs;
};

class Graph {
 public:
  std::string source;       // file the graph came from, for error messages ("" if built in memory)
  int64_t opset = 0;        // default-domain opset version
  std::vector<Value> values;
  std::vector<Node> nodes;  // kept in topological order by topological_sort()
  std::vector<ValueId> inputs;   // runtime inputs (initializers excluded)
  std::vector<ValueId> outputs;

  // Set by prepare_graph once every shape is inferred and shape computations are folded.
  bool prepared = false;
  // Set by prepare_graph: the graph as it was before preparation folded the input shapes into
  // constants (Shape -> Gather -> Reshape chains). A Session prepares it again for inputs of
  // other sizes in open dims or, with value_inputs, other values.
  std::shared_ptr<const Graph> unprepared;
  // Graph inputs whose values decide shapes (a Reshape's shape, Slice's starts or Resize's sizes
  // fed at run time): a graph with any cannot be prepared before those values are known; a
  // Session prepares and plans it per set of values (see prepare_for_inputs).
  std::vector<ValueId> value_inputs;
  // Graph inputs with open dimensions that have no size yet (a height and width the model leaves
  // open, -1 or symbolic, with no input shape given): `shape` holds 1 there as a placeholder only.
  // Such a graph is not prepared before a run gives those sizes; a Session plans it at the first
  // run and again per input signature.
  std::vector<ValueId> unsized_inputs;
  // Set by prepare_graph when a shape depends on a value the model computes (NonZero's input,
  // NonMaxSuppression's scores, an If condition on activations): that value's name. The graph
  // stays unprepared; a Session runs it in stages, the nodes that value depends on first.
  std::string value_needed_at_run;

  // Adds a value; throws if the name is already taken.
  ValueId add_value(Value value);
  // kNoValue if absent.
  ValueId find_value(const std::string& name) const;
  Value& value(ValueId id) { return values.at(static_cast<size_t>(id)); }
  const Value& value(ValueId id) const { return values.at(static_cast<size_t>(id)); }

  // Reorders nodes so every input is produced before use. Throws naming a node on a cycle, on a
  // value produced twice, or on an input that is neither a graph input, initializer nor produced.
  void topological_sort();
  // Index of the node producing each value (-1 for inputs/constants); size == values.size().
  std::vector<int> producers() const;
  // Drops nodes whose outputs are not needed for graph outputs, then unused values keep ids.
  void remove_dead_nodes();
  // "node 'conv1' (Conv)" for messages.
  std::string describe(const Node& node) const;
  // "'data', 'mask'": the graph's input names, for messages about an input that is not one.
  std::string input_names() const;
};

}  // namespace tessera
