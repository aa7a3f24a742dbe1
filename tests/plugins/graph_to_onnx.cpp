// Graph -> ONNX ModelProto for the differential suite's ONNX Runtime oracle (see
// graph_to_onnx.hpp).
#include "graph_to_onnx.hpp"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <type_traits>
#include <variant>

#include "tessera/error.hpp"

namespace tessera::test {
namespace {

// DType's numbering is ONNX's TensorProto.DataType (see tessera/tensor.hpp).
int32_t onnx_elem_type(DType dtype) {
  return static_cast<int32_t>(dtype);
}

void fill_tensor(const Tensor& t, const std::string& name, onnx::TensorProto* proto) {
  proto->set_name(name);
  proto->set_data_type(onnx_elem_type(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  proto->set_raw_data(t.raw(), t.nbytes());
}

void fill_value_info(const Value& v, onnx::ValueInfoProto* info) {
  info->set_name(v.name);
  onnx::TypeProto_Tensor* type = info->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx_elem_type(v.dtype));
  onnx::TensorShapeProto* shape = type->mutable_shape();
  for (int64_t d : v.shape) shape->add_dim()->set_dim_value(d);
}

void fill_attribute(const std::string& name, const AttributeValue& value, onnx::AttributeProto* a) {
  a->set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          a->set_type(onnx::AttributeProto::INT);
          a->set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          a->set_type(onnx::AttributeProto::FLOAT);
          a->set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          a->set_type(onnx::AttributeProto::STRING);
          a->set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          a->set_type(onnx::AttributeProto::INTS);
          for (int64_t x : v) a->add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          a->set_type(onnx::AttributeProto::FLOATS);
          for (float x : v) a->add_floats(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          a->set_type(onnx::AttributeProto::STRINGS);
          for (const std::string& x : v) a->add_strings(x);
        } else {
          static_assert(std::is_same_v<T, Tensor>);
          a->set_type(onnx::AttributeProto::TENSOR);
          fill_tensor(v, name, a->mutable_t());
        }
      },
      value);
}

}  // namespace

void write_graph_as_onnx(const Graph& graph, const std::string& path) {
  onnx::ModelProto model;
  // IR 8 goes with opsets 17 and 18 and reads every older opset too.
  model.set_ir_version(8);
  model.set_producer_name("tessera differential suite");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(graph.opset);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("differential_case");

  const std::vector<int> producer = graph.producers();
  for (ValueId id : graph.inputs) fill_value_info(graph.value(id), g->add_input());
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const Value& v = graph.values[id];
    // A folded value still has its node; only true initializers are written as such.
    if (v.constant && producer[id] < 0) fill_tensor(*v.constant, v.name, g->add_initializer());
  }
  for (const Node& n : graph.nodes) {
    onnx::NodeProto* node = g->add_node();
    node->set_name(n.name);
    node->set_op_type(n.op_type);
    for (ValueId in : n.inputs) node->add_input(in == kNoValue ? "" : graph.value(in).name);
    for (ValueId out : n.outputs) node->add_output(out == kNoValue ? "" : graph.value(out).name);
    for (const auto& [name, value] : n.attrs.all())
      fill_attribute(name, value, node->add_attribute());
  }
  for (ValueId id : graph.outputs) {
    const Value& v = graph.value(id);
    if (!v.shape_known || v.dtype == DType::kUndefined) {
      throw Error("write_graph_as_onnx: output '" + v.name +
                  "' has no inferred dtype/shape; run infer_shapes on the graph first");
    }
    fill_value_info(v, g->add_output());
  }

  std::ofstream out(path, std::ios::binary);
  if (!out || !model.SerializeToOstream(&out)) {
    throw Error("write_graph_as_onnx: cannot write '" + path + "'");
  }
}

}  // namespace tessera::test
