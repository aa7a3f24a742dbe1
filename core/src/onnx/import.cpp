// ONNX ModelProto -> tessera::Graph: protobuf parsing, opset and domain checks, values from
// inputs/outputs/value_info/initializers, nodes with typed attributes.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "exec/importer_library.hpp"
#include "onnx/contrib_ops.hpp"
#include "onnx/tensor_proto.hpp"
#include "tessera/file_util.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/opset.hpp"
#include "tessera/passes.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using importer::dtype_from_onnx;
using importer::TensorOrigin;

// Parses with a raised total-bytes limit: the protobuf default (64 MiB) rejects many real models.
template <typename Message>
bool parse_message(const std::string& bytes, Message& message) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  return message.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

onnx::ModelProto parse_model(const std::string& bytes, const std::string& source) {
  if (bytes.empty()) {
    throw Error(source + ": not a valid ONNX model (the file is empty, 0 bytes)");
  }
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    throw Error(source +
                ": the model is larger than protobuf's 2 GiB limit; save its weights "
                "as external data (onnx.save(..., save_as_external_data=True))");
  }
  onnx::ModelProto model;
  if (!parse_message(bytes, model)) {
    throw Error(source + ": not a valid ONNX model (protobuf parse failed)");
  }
  if (!model.has_graph()) {
    throw Error(source + ": not a valid ONNX model (it contains no graph)");
  }
  return model;
}

int64_t default_opset(const onnx::ModelProto& model, const std::string& source) {
  int64_t version = -1;
  for (const auto& entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") version = entry.version();
  }
  if (version < 0) {
    throw Error(source +
                ": the model imports no opset of the default ONNX domain; "
                "not a valid ONNX model for Tessera");
  }
  if (version < kMinOpset || version > kMaxOpset) {
    // UnsupportedError: the model may be fine, Tessera just does not implement that opset.
    throw UnsupportedError(source + ": opset " + std::to_string(version) +
                           " of the default ONNX domain is not supported (supported: " +
                           std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                           "); convert the model with onnx.version_converter.convert_version");
  }
  return version;
}

// What a ValueInfoProto declares about a tensor.
struct Declared {
  DType dtype = DType::kUndefined;
  bool has_shape = false;                    // false: rank unknown
  std::vector<std::optional<int64_t>> dims;  // nullopt for symbolic/unknown dims
};

Declared read_declared(const onnx::ValueInfoProto& info, const std::string& context) {
  Declared d;
  if (!info.has_type()) return d;
  const onnx::TypeProto& type = info.type();
  if (!type.has_tensor_type()) {
    throw UnsupportedError(context +
                           " is not a tensor (sequence, map, optional and sparse "
                           "values are not supported)");
  }
  const auto& tensor = type.tensor_type();
  if (tensor.elem_type() != 0) d.dtype = dtype_from_onnx(tensor.elem_type(), context);
  if (!tensor.has_shape()) return d;
  d.has_shape = true;
  for (const auto& dim : tensor.shape().dim()) {
    // Paddle2ONNX and some hand-edited models write an open dimension as -1 instead of a
    // dim_param; ONNX Runtime reads it as unknown, and so does Tessera.
    if (dim.has_dim_value() && dim.dim_value() != -1) {
      if (dim.dim_value() < 0) {
        throw Error(context + " has a negative dimension (" + std::to_string(dim.dim_value()) +
                    ")");
      }
      d.dims.emplace_back(dim.dim_value());
    } else {
      d.dims.emplace_back(std::nullopt);
    }
  }
  return d;
}

std::string dims_str(const Declared& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.dims.size(); ++i) {
    s += (i ? ", " : "") + (d.dims[i] ? std::to_string(*d.dims[i]) : std::string("?"));
  }
  return s + "]";
}

// Applies a fully static declared shape (and dtype) to a value; partial shapes are not recorded.
void apply_declared(const Declared& d, Value& value) {
  value.dtype = d.dtype;
  if (!d.has_shape) return;
  Shape shape;
  for (const auto& dim : d.dims) {
    if (!dim) return;
    shape.push_back(*dim);
  }
  value.shape = std::move(shape);
  value.shape_known = true;
}

// Names end up in every message (and a NUL would cut a message short), so a model whose names
// hold control characters is refused up front.
void check_names(const onnx::GraphProto& g, const std::string& source) {
  auto check = [&](const std::string& name, const std::string& what) {
    for (char c : name) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) {
        throw Error(source + ": not a valid ONNX model: " + what + " \"" + escaped(name) +
                    "\" contains a control character");
      }
    }
  };
  for (const auto& v : g.input()) check(v.name(), "graph input");
  for (const auto& v : g.output()) check(v.name(), "graph output");
  for (const auto& v : g.value_info()) check(v.name(), "value_info");
  for (const auto& t : g.initializer()) check(t.name(), "initializer");
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    const std::string what = "node " + std::to_string(i);
    check(n.name(), what + " name");
    check(n.op_type(), what + " op_type");
    check(n.domain(), what + " domain");
    for (const auto& v : n.input()) check(v, what + " input");
    for (const auto& v : n.output()) check(v, what + " output");
    for (const auto& a : n.attribute()) check(a.name(), what + " attribute");
  }
}

class ModelImporter {
 public:
  ModelImporter(const onnx::ModelProto& model, std::string source, std::string base_dir,
                const ImportOptions& options)
      : model_(model),
        source_(std::move(source)),
        base_dir_(std::move(base_dir)),
        options_(options) {}

  // A control-flow body: names it reads but does not define resolve in `parent`'s scopes.
  ModelImporter(ModelImporter& parent, std::string scope)
      : model_(parent.model_),
        source_(parent.source_),
        base_dir_(parent.base_dir_),
        options_(parent.options_),
        parent_(&parent),
        scope_(std::move(scope)),
        depth_(parent.depth_ + 1) {}

  // A body's graph: its formal inputs in `inputs`, then nothing else yet (the caller appends the
  // captures, see add_subgraphs); `captures()` lists the enclosing values it reads, by name.
  Graph run_subgraph(const onnx::GraphProto& g) {
    graph_.source = source_;
    graph_.opset = parent_->graph_.opset;
    check_names(g, source_);
    if (g.sparse_initializer_size() > 0) {
      throw UnsupportedError(scope_ + ": sparse initializer '" +
                             g.sparse_initializer(0).values().name() + "' is not supported");
    }
    for (const auto& init : g.initializer()) add_initializer(init);
    for (const auto& in : g.input()) {
      if (ids_.count(in.name()) != 0) continue;  // an initializer (IR < 4 lists them as inputs)
      const ValueId id = new_value(in.name());
      is_input_[static_cast<size_t>(id)] = true;
      apply_declared(read_declared(in, scope_ + ": input '" + in.name() + "'"), graph_.value(id));
      graph_.inputs.push_back(id);
    }
    for (int i = 0; i < g.node_size(); ++i) add_node_outputs(g.node(i), i);
    for (int i = 0; i < g.node_size(); ++i) add_node(g.node(i), i);
    for (const auto& out : g.output()) {
      if (out.name().empty()) throw Error(scope_ + ": an output has no name");
      graph_.outputs.push_back(resolve(out.name()));
    }
    return std::move(graph_);
  }

  const std::vector<std::string>& captures() const { return captures_; }

  Graph run() {
    graph_.source = source_;
    graph_.opset = default_opset(model_, source_);
    const onnx::GraphProto& g = model_.graph();
    check_names(g, source_);
    if (g.sparse_initializer_size() > 0) {
      throw UnsupportedError(source_ + ": sparse initializer '" +
                             g.sparse_initializer(0).values().name() + "' is not supported");
    }
    for (const auto& init : g.initializer()) add_initializer(init);
    add_inputs(g);
    for (int i = 0; i < g.node_size(); ++i) add_node_outputs(g.node(i), i);
    for (int i = 0; i < g.node_size(); ++i) add_node(g.node(i), i);
    for (const auto& info : g.value_info()) {
      auto it = ids_.find(info.name());
      if (it == ids_.end()) continue;  // describes a value no node uses; harmless
      Value& v = graph_.value(it->second);
      if (v.constant || is_input_[it->second]) continue;
      apply_declared(read_declared(info, source_ + ": value '" + info.name() + "'"), v);
    }
    for (const auto& out : g.output()) add_output(out);
    graph_.topological_sort();
    return std::move(graph_);
  }

 private:
  ValueId new_value(const std::string& name) {
    if (ids_.count(name) != 0) {
      throw Error(source_ + ": value '" + name +
                  "' is defined twice (as an initializer, graph "
                  "input or node output)");
    }
    Value v;
    v.name = name;
    graph_.values.push_back(std::move(v));
    const auto id = static_cast<ValueId>(graph_.values.size() - 1);
    ids_[name] = id;
    is_input_.push_back(false);
    return id;
  }

  void add_initializer(const onnx::TensorProto& init) {
    if (init.name().empty()) throw Error(source_ + ": an initializer has no name");
    TensorOrigin origin{source_, "initializer '" + init.name() + "'", base_dir_};
    auto tensor = std::make_shared<const Tensor>(importer::tensor_from_proto(init, origin));
    const ValueId id = new_value(init.name());
    Value& v = graph_.value(id);
    v.dtype = tensor->dtype();
    v.shape = tensor->shape();
    v.shape_known = true;
    v.constant = std::move(tensor);
  }

  void add_inputs(const onnx::GraphProto& g) {
    std::string names;
    for (const auto& in : g.input()) {
      auto it = ids_.find(in.name());
      const std::string context = source_ + ": input '" + in.name() + "'";
      // Inputs that are also initializers (required before IR version 4) are constants here.
      // The declaration must describe the initializer: ONNX Runtime refuses a mismatch at load,
      // and taking either side silently would run the model with a shape it does not declare.
      if (it != ids_.end() && graph_.value(it->second).constant) {
        check_shadowed_input(in, graph_.value(it->second), context);
        continue;
      }
      if (in.name().empty()) throw Error(source_ + ": a graph input has no name");
      const Declared d = read_declared(in, context);
      if (d.dtype == DType::kUndefined) throw Error(context + " declares no element type");
      const ValueId id = new_value(in.name());
      is_input_[static_cast<size_t>(id)] = true;
      Value& v = graph_.value(id);
      v.dtype = d.dtype;
      bool unsized = false;
      v.shape = input_shape(in.name(), d, context, unsized);
      v.shape_known = true;
      if (unsized) graph_.unsized_inputs.push_back(id);
      // Dims the model leaves open keep that status when --input-shape gives them a size: the
      // size is what is planned first, and a run may bring another.
      v.open_dims.assign(v.shape.size(), !d.has_shape);
      for (size_t i = 0; d.has_shape && i < d.dims.size() && i < v.shape.size(); ++i) {
        v.open_dims[i] = !d.dims[i].has_value();
      }
      if (std::none_of(v.open_dims.begin(), v.open_dims.end(), [](bool b) { return b; })) {
        v.open_dims.clear();
      }
      graph_.inputs.push_back(id);
      names += (names.empty() ? "" : ", ") + in.name();
    }
    for (const auto& [name, shape] : options_.input_shapes) {
      auto it = ids_.find(name);
      if (it == ids_.end() || !is_input_[static_cast<size_t>(it->second)]) {
        throw Error(source_ + ": an input shape was given for '" + name +
                    "', which is not an input of the model (inputs: " + names + ")");
      }
    }
  }

  // A graph input that an initializer of the same name shadows: its declared dtype and fixed
  // dims must match the initializer's (open dims match any size).
  void check_shadowed_input(const onnx::ValueInfoProto& in, const Value& init,
                            const std::string& context) {
    const Declared d = read_declared(in, context);
    const std::string init_desc = std::string(dtype_name(init.dtype)) + " " + shape_str(init.shape);
    if (d.dtype != DType::kUndefined && d.dtype != init.dtype) {
      throw Error(context + " is declared " + dtype_name(d.dtype) + " " + dims_str(d) +
                  " but the initializer of the same name is " + init_desc);
    }
    if (!d.has_shape) return;
    bool same = d.dims.size() == init.shape.size();
    for (size_t i = 0; same && i < d.dims.size(); ++i) {
      same = !d.dims[i] || *d.dims[i] == init.shape[i];
    }
    if (!same) {
      throw Error(context + " is declared with shape " + dims_str(d) +
                  " but the initializer of the same name has shape " + shape_str(init.shape) +
                  " (" + init_desc + ")");
    }
  }

  // The shape planned first for an input: the one given, else the model's. An open batch (dim 0)
  // is planned as 1 and planned again when a run brings another; any other open dim has no size
  // to plan with, so it is 1 as a placeholder and `unsized` says the graph waits for a run.
  Shape input_shape(const std::string& name, const Declared& d, const std::string& context,
                    bool& unsized) {
    auto given = options_.input_shapes.find(name);
    if (given != options_.input_shapes.end()) {
      const Shape& shape = given->second;
      if (d.has_shape && d.dims.size() != shape.size()) {
        throw Error(context + " has rank " + std::to_string(d.dims.size()) + " " + dims_str(d) +
                    " but the given input shape " + shape_str(shape) + " has rank " +
                    std::to_string(shape.size()));
      }
      for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] < 0)
          throw Error(context + ": the given shape " + shape_str(shape) +
                      " has a negative dimension");
        if (d.has_shape && d.dims[i] && *d.dims[i] != shape[i]) {
          throw Error(context + " has the fixed shape " + dims_str(d) +
                      ", which the given input shape " + shape_str(shape) + " contradicts");
        }
      }
      check_numel(shape, context);
      return shape;
    }
    if (!d.has_shape) {
      // Without a rank nothing can be checked or planned; ONNX Runtime needs one too.
      throw Error(context + " has no shape in the model (not even a rank); give it an input " +
                  "shape ('" + name + "' in the input shapes)");
    }
    Shape shape;
    for (size_t i = 0; i < d.dims.size(); ++i) {
      if (d.dims[i]) {
        shape.push_back(*d.dims[i]);
      } else {
        shape.push_back(1);
        if (i != 0) unsized = true;
      }
    }
    check_numel(shape, context);
    return shape;
  }

  static void check_numel(const Shape& shape, const std::string& context) {
    try {
      shape_numel(shape);
    } catch (const Error& e) {
      throw Error(context + ": " + e.what());
    }
  }

  std::string node_name(const onnx::NodeProto& n, int index) const {
    return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
  }

  std::string describe(const onnx::NodeProto& n, int index) const {
    return source_ + ": node '" + node_name(n, index) + "' (" + n.op_type() + ")";
  }

  void add_node_outputs(const onnx::NodeProto& n, int index) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      throw UnsupportedError(describe(n, index) + " is in domain '" + n.domain() +
                             "', which Tessera does not run (it runs the default ONNX domain, "
                             "and of com.microsoft the ops ONNX Runtime's quantizer and "
                             "optimizer write: QLinear*, QGemm, Fused*, *Gelu, Attention, "
                             "*LayerNormalization)");
    }
    if (n.op_type().empty()) throw Error(describe(n, index) + " has no op_type");
    for (const std::string& out : n.output()) {
      if (out.empty()) continue;
      if (ids_.count(out) != 0) {
        throw Error(describe(n, index) + " produces '" + out +
                    "', which is already an initializer, graph input or another node's output");
      }
      new_value(out);
    }
  }

  void add_node(const onnx::NodeProto& n, int index) {
    Node node;
    node.name = node_name(n, index);
    node.op_type = n.op_type();
    for (const std::string& in : n.input()) {
      if (in.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      node.inputs.push_back(resolve(in));
    }
    for (const std::string& out : n.output()) {
      node.outputs.push_back(out.empty() ? kNoValue : ids_.at(out));
    }
    const bool control = n.op_type() == "If" || n.op_type() == "Loop";
    for (const auto& attr : n.attribute()) {
      if (attr.type() == onnx::AttributeProto::GRAPH && control) continue;
      node.attrs.set(attr.name(), convert_attribute(attr, n, index));
    }
    if (control) add_subgraphs(n, index, node);
    graph_.nodes.push_back(std::move(node));
  }

  // The value `name` names here: defined in this scope, else read from an enclosing one (a
  // capture of this body), else a value with no producer that topological_sort reports with the
  // node that reads it.
  ValueId resolve(const std::string& name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    if (parent_ != nullptr && parent_->provides(name)) {
      const ValueId id = new_value(name);
      is_input_[static_cast<size_t>(id)] = true;
      captures_.push_back(name);
      return id;
    }
    return new_value(name);
  }

  // Whether `name` is defined in this scope or an enclosing one; a body reading it through this
  // scope makes it a capture here too.
  bool provides(const std::string& name) {
    if (ids_.count(name) != 0) return true;
    if (parent_ == nullptr || !parent_->provides(name)) return false;
    resolve(name);
    return true;
  }

  // If's branches or Loop's body: each imported in its own scope, then given the same capture
  // list (the union, in order of first use) as trailing graph inputs after its formal ones, which
  // the node reads as trailing inputs after its own, so that ordering, liveness and inlining see
  // what the bodies read.
  void add_subgraphs(const onnx::NodeProto& n, int index, Node& node) {
    const bool loop = n.op_type() == "Loop";
    const std::vector<std::string> wanted =
        loop ? std::vector<std::string>{"body"}
             : std::vector<std::string>{"then_branch", "else_branch"};
    // Nesting is bounded so that a crafted model cannot exhaust the stack.
    constexpr int kMaxDepth = 32;
    struct Body {
      std::string attribute;
      Graph graph;
      std::vector<std::string> captures;  // what this body reads from enclosing scopes
    };
    std::vector<Body> bodies;
    std::vector<std::string> captured;  // the union over the bodies, in order of first use
    for (const auto& attr : n.attribute()) {
      if (attr.type() != onnx::AttributeProto::GRAPH) continue;
      const std::string where = describe(n, index) + ": attribute '" + attr.name() + "'";
      if (std::find(wanted.begin(), wanted.end(), attr.name()) == wanted.end()) {
        throw Error(where + " is a subgraph " + n.op_type() + " does not take");
      }
      if (depth_ >= kMaxDepth) {
        throw UnsupportedError(where + ": subgraphs nest deeper than " +
                               std::to_string(kMaxDepth) + " levels");
      }
      ModelImporter body(*this, where);
      Graph graph = body.run_subgraph(attr.g());
      bodies.push_back({attr.name(), std::move(graph), body.captures()});
      for (const std::string& c : body.captures()) {
        if (std::find(captured.begin(), captured.end(), c) == captured.end()) captured.push_back(c);
      }
    }
    for (const std::string& branch : wanted) {
      const bool found = std::any_of(bodies.begin(), bodies.end(),
                                     [&](const Body& b) { return b.attribute == branch; });
      if (!found) throw Error(describe(n, index) + " has no '" + branch + "' subgraph");
    }
    if (loop) {
      // Loop's body takes the iteration number, the condition and each carried value.
      const auto formal = static_cast<size_t>(n.input_size());
      const Graph& body = bodies.front().graph;
      if (formal < 2 || body.inputs.size() != formal) {
        throw Error(describe(n, index) + ": its body takes " +
                    std::to_string(body.inputs.size()) + " inputs but the node gives " +
                    std::to_string(formal) + " (trip count, condition, then one per carried "
                    "value: the body's inputs are the iteration number, the condition and the "
                    "carried values)");
      }
      if (body.outputs.size() < formal - 1 ||
          static_cast<size_t>(n.output_size()) + 1 != body.outputs.size()) {
        throw Error(describe(n, index) + ": its body has " + std::to_string(body.outputs.size()) +
                    " outputs but the node has " + std::to_string(n.output_size()) +
                    " (the body gives the condition, the carried values, then the scan outputs)");
      }
      node.attrs.set(kLoopFormalInputs, static_cast<int64_t>(formal));
    }
    for (Body& body : bodies) {
      Graph& graph = body.graph;
      for (const std::string& c : captured) {
        ValueId id = graph.find_value(c);
        const bool own = std::find(body.captures.begin(), body.captures.end(), c) !=
                         body.captures.end();
        if (id == kNoValue) {
          Value v;  // captured by another body only: an input this one leaves unread
          v.name = c;
          id = graph.add_value(std::move(v));
        } else if (!own) {
          throw Error(describe(n, index) + ": its '" + body.attribute + "' defines '" + c +
                      "', a name an enclosing graph also defines");
        }
        graph.inputs.push_back(id);
      }
      graph.topological_sort();
      node.subgraphs[body.attribute] = std::make_shared<const Graph>(std::move(graph));
    }
    for (const std::string& c : captured) node.inputs.push_back(resolve(c));
  }

  AttributeValue convert_attribute(const onnx::AttributeProto& a, const onnx::NodeProto& n,
                                   int index) {
    const std::string where = describe(n, index) + ": attribute '" + a.name() + "'";
    using A = onnx::AttributeProto;
    A::AttributeType type = a.type();
    if (type == A::UNDEFINED) type = guess_attribute_type(a, where);
    switch (type) {
      case A::INT:
        return a.i();
      case A::FLOAT:
        return a.f();
      case A::STRING:
        return a.s();
      case A::INTS:
        return std::vector<int64_t>(a.ints().begin(), a.ints().end());
      case A::FLOATS:
        return std::vector<float>(a.floats().begin(), a.floats().end());
      case A::STRINGS:
        return std::vector<std::string>(a.strings().begin(), a.strings().end());
      case A::TENSOR: {
        TensorOrigin origin{source_,
                            "node '" + node_name(n, index) + "' (" + n.op_type() +
                                "): attribute '" + a.name() + "'",
                            base_dir_};
        return importer::tensor_from_proto(a.t(), origin);
      }
      case A::GRAPH:
      case A::GRAPHS:
        throw UnsupportedError(where + " is a subgraph; of the control-flow ops If and Loop are "
                               "supported (Scan is not)");
      case A::SPARSE_TENSOR:
      case A::SPARSE_TENSORS:
        throw UnsupportedError(where + " is a sparse tensor, which is not supported");
      case A::TENSORS:
        throw UnsupportedError(where + " is a list of tensors, which is not supported");
      case A::TYPE_PROTO:
      case A::TYPE_PROTOS:
        throw UnsupportedError(where + " is a type, which is not supported");
      default:
        break;
    }
    throw Error(where + " has unknown attribute type " + std::to_string(static_cast<int>(type)));
  }

  // IR version 1 models may leave AttributeProto.type unset; pick the field that is present.
  static onnx::AttributeProto::AttributeType guess_attribute_type(const onnx::AttributeProto& a,
                                                                  const std::string& where) {
    using A = onnx::AttributeProto;
    if (a.has_f()) return A::FLOAT;
    if (a.has_i()) return A::INT;
    if (a.has_s()) return A::STRING;
    if (a.has_t()) return A::TENSOR;
    if (a.has_g()) return A::GRAPH;
    if (a.floats_size() > 0) return A::FLOATS;
    if (a.ints_size() > 0) return A::INTS;
    if (a.strings_size() > 0) return A::STRINGS;
    throw Error(where + " has no type and no value");
  }

  void add_output(const onnx::ValueInfoProto& out) {
    auto it = ids_.find(out.name());
    if (out.name().empty() || it == ids_.end()) {
      throw Error(source_ + ": graph output '" + out.name() +
                  "' is not an input, initializer or output of any node");
    }
    const Declared d = read_declared(out, source_ + ": output '" + out.name() + "'");
    Value& v = graph_.value(it->second);
    if (v.constant || is_input_[static_cast<size_t>(it->second)]) {
      if (d.dtype != DType::kUndefined && d.dtype != v.dtype) {
        throw Error(source_ + ": output '" + out.name() + "' is declared " + dtype_name(d.dtype) +
                    " but is " + dtype_name(v.dtype));
      }
    } else {
      apply_declared(d, v);
    }
    graph_.outputs.push_back(it->second);
  }

  const onnx::ModelProto& model_;
  std::string source_;
  std::string base_dir_;
  const ImportOptions& options_;
  ModelImporter* parent_ = nullptr;  // the enclosing scope of a control-flow body
  std::string scope_;                // "model.onnx: node 'if0' (If): attribute 'then_branch'"
  int depth_ = 0;                    // subgraph nesting level
  std::vector<std::string> captures_;  // enclosing values this body reads, in order of first use
  Graph graph_;
  std::unordered_map<std::string, ValueId> ids_;
  std::vector<bool> is_input_;  // indexed by ValueId: a runtime graph input
};

// Where a model file's external data lives: its directory.
std::string model_dir(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? "." : dir.string();
}

Graph import_model(const std::string& bytes, const std::string& source, const std::string& base_dir,
                   const ImportOptions& options) {
  try {
    onnx::ModelProto model = parse_model(bytes, source);
    importer::lower_contrib_ops(*model.mutable_graph(), source);
    Graph graph = ModelImporter(model, source, base_dir, options).run();
    if (options.prepare) prepare_graph(graph);
    return graph;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    // Anything else (allocation failure, a library error) still names the model.
    throw Error(source + ": import failed: " + e.what());
  }
}

}  // namespace

Graph import_onnx_file(const std::string& path, const ImportOptions& options) {
  const std::string bytes = read_file(path, "ONNX model", kMaxModelFileBytes);
  return import_model(bytes, path, model_dir(path), options);
}

Graph import_onnx_bytes(const std::string& bytes, const std::string& source,
                        const std::string& base_dir, const ImportOptions& options) {
  return import_model(bytes, source.empty() ? std::string("<memory>") : source, base_dir, options);
}

namespace {

// Moves every tensor of `graph` (initializers, tensor attributes, subgraphs) that lives in an
// external data file into raw_data, read and checked as the importer reads it. Returns whether
// any did.
bool inline_external_data(onnx::GraphProto& graph, const TensorOrigin& where) {
  bool changed = false;
  auto inline_tensor = [&](onnx::TensorProto& t, const std::string& what) {
    if (t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) return;
    const Tensor data =
        importer::tensor_from_proto(t, TensorOrigin{where.model, what, where.base_dir});
    t.set_raw_data(data.raw(), static_cast<size_t>(data.nbytes()));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto_DataLocation_DEFAULT);
    changed = true;
  };
  for (onnx::TensorProto& t : *graph.mutable_initializer()) {
    inline_tensor(t, "initializer '" + t.name() + "'");
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
      const std::string what = "node '" + node.name() + "' attribute '" + a.name() + "'";
      if (a.has_t()) inline_tensor(*a.mutable_t(), what);
      for (onnx::TensorProto& t : *a.mutable_tensors()) inline_tensor(t, what);
      if (a.has_g()) changed = inline_external_data(*a.mutable_g(), where) || changed;
      for (onnx::GraphProto& g : *a.mutable_graphs()) {
        changed = inline_external_data(g, where) || changed;
      }
    }
  }
  return changed;
}

}  // namespace

std::string self_contained_onnx(const std::string& path) {
  std::string bytes = read_file(path, "ONNX model", kMaxModelFileBytes);
  onnx::ModelProto model = parse_model(bytes, path);
  if (!inline_external_data(*model.mutable_graph(), TensorOrigin{path, "", model_dir(path)})) {
    return bytes;  // unchanged, byte for byte
  }
  std::string out;
  if (!model.SerializeToString(&out)) {
    throw Error(path +
                ": the model with its external data inlined cannot be serialised (over "
                "protobuf's 2 GB limit?)");
  }
  return out;
}

Tensor read_onnx_tensor_file(const std::string& path) {
  const std::string bytes = read_file(path, "TensorProto file", kMaxModelFileBytes);
  onnx::TensorProto proto;
  if (!parse_message(bytes, proto)) {
    throw Error(path + ": not a valid ONNX TensorProto (protobuf parse failed)");
  }
  const std::string what = proto.name().empty() ? "tensor" : "tensor '" + proto.name() + "'";
  return importer::tensor_from_proto(proto, TensorOrigin{path, what, ""});
}

namespace {

// libtessera's static initialisation: the C API (in libtessera-runtime) opens ONNX models too.
const bool kImporterRegistered = (
    detail::importer_hooks().import_model =
        [](const std::string& path) { return import_onnx_file(path); },
    true);

}  // namespace

}  // namespace tessera
