// Builds small ONNX models with the protobuf API for the importer tests, and a scratch directory
// per test to write them to.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tessera::test {

// A fresh directory under the gtest temp dir, named after the running test.
inline std::filesystem::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "tessera_import" /
                              (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("tessera-tests");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& proto() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  // dims: -1 means a symbolic dimension (dim_param "N<index>").
  onnx::ValueInfoProto* input(const std::string& name, int32_t elem_type,
                              const std::vector<int64_t>& dims) {
    auto* v = graph().add_input();
    fill(v, name, elem_type, dims);
    return v;
  }
  onnx::ValueInfoProto* output(const std::string& name, int32_t elem_type,
                               const std::vector<int64_t>& dims) {
    auto* v = graph().add_output();
    fill(v, name, elem_type, dims);
    return v;
  }
  // Output with a type but no shape.
  onnx::ValueInfoProto* output(const std::string& name, int32_t elem_type) {
    auto* v = graph().add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
    return v;
  }

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }

  // Initializers written as raw_data.
  onnx::TensorProto* raw_float(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<float>& values) {
    return raw(name, onnx::TensorProto::FLOAT, dims, values.data(), values.size() * 4);
  }
  onnx::TensorProto* raw_int64(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& values) {
    return raw(name, onnx::TensorProto::INT64, dims, values.data(), values.size() * 8);
  }
  onnx::TensorProto* raw(const std::string& name, int32_t elem_type,
                         const std::vector<int64_t>& dims, const void* data, size_t nbytes) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(elem_type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(static_cast<const char*>(data), nbytes));
    return t;
  }
  // Initializer written with the typed float_data field.
  onnx::TensorProto* typed_float(const std::string& name, const std::vector<int64_t>& dims,
                                 const std::vector<float>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return t;
  }

  std::string bytes() const { return model_.SerializeAsString(); }

  std::string save(const std::filesystem::path& path) const {
    write_file(path, bytes());
    return path.string();
  }

  // A subgraph attribute (If's then_branch / else_branch): `body`'s graph, copied.
  static void add_graph_attr(onnx::NodeProto* n, const std::string& name,
                             const ModelBuilder& body) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = body.model_.graph();
  }

  static void add_int_attr(onnx::NodeProto* n, const std::string& name, int64_t value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void add_ints_attr(onnx::NodeProto* n, const std::string& name,
                            const std::vector<int64_t>& values) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }

 private:
  static void fill(onnx::ValueInfoProto* v, const std::string& name, int32_t elem_type,
                   const std::vector<int64_t>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    auto* shape = t->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] == -1) {
        d->set_dim_param("N" + std::to_string(i));
      } else {
        d->set_dim_value(dims[i]);
      }
    }
  }

  onnx::ModelProto model_;
};

}  // namespace tessera::test
