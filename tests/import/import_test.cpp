// Importer tests on well-formed models: values, initializer encodings, attributes, names,
// input shapes, external data, and a small model run end to end with the reference kernels.
#include <gtest/gtest.h>

#include "model_builder.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/reference_runner.hpp"

namespace tessera {
namespace {

using test::ModelBuilder;
using test::scratch_dir;

const Value& value_named(const Graph& g, const std::string& name) {
  const ValueId id = g.find_value(name);
  EXPECT_NE(id, kNoValue) << name;
  return g.value(id);
}

TEST(OnnxImport, SmallModelRunsWithHandComputedResult) {
  // Y = Relu(X * W + B), W as raw_data, B as float_data.
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2, 3});
  m.raw_float("W", {2, 3}, {1, -1, 2, 0.5f, 3, -2});
  m.typed_float("B", {3}, {0.5f, 1, -1});
  m.node("Mul", {"X", "W"}, {"XW"});
  m.node("Add", {"XW", "B"}, {"S"});
  m.node("Relu", {"S"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {2, 3});
  const std::string path = m.save(scratch_dir() / "small.onnx");

  const Graph g = import_onnx_file(path);
  EXPECT_EQ(g.source, path);
  EXPECT_EQ(g.opset, 13);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.value(g.inputs[0]).name, "X");
  ASSERT_EQ(g.nodes.size(), 3u);

  const Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const std::vector<Tensor> out = run_reference(g, {{"X", x}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  // X*W = [1,-2,6, 2,15,-12]; +B = [1.5,-1,5, 2.5,16,-13]; relu.
  const std::vector<float> expected = {1.5f, 0, 5, 2.5f, 16, 0};
  EXPECT_EQ(out[0].to_float_vector(), expected);
}

TEST(OnnxImport, TypedFieldsForEveryElementType) {
  ModelBuilder m;
  auto add = [&](const std::string& name, int32_t type, std::vector<int32_t> values) {
    auto* t = m.graph().add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int32_t v : values) t->add_int32_data(v);
  };
  add("i32", onnx::TensorProto::INT32, {-7, 8});
  add("i8", onnx::TensorProto::INT8, {-128, 127});
  add("u8", onnx::TensorProto::UINT8, {0, 255});
  add("b", onnx::TensorProto::BOOL, {1, 0});
  add("h", onnx::TensorProto::FLOAT16, {0x3c00, 0xc000});  // 1.0, -2.0
  auto* t = m.graph().add_initializer();
  t->set_name("i64");
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(2);
  t->add_int64_data(int64_t{1} << 40);
  t->add_int64_data(-3);
  m.input("X", onnx::TensorProto::FLOAT, {1});
  m.node("Identity", {"X"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {1});
  ImportOptions opts;
  opts.prepare = false;
  const Graph g = import_onnx_bytes(m.bytes(), "typed.onnx", "", opts);

  EXPECT_EQ(value_named(g, "i32").constant->to_int64_vector(), (std::vector<int64_t>{-7, 8}));
  EXPECT_EQ(value_named(g, "i8").constant->to_int64_vector(), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(value_named(g, "u8").constant->to_int64_vector(), (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(value_named(g, "b").constant->to_int64_vector(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(value_named(g, "b").dtype, DType::kBool);
  EXPECT_EQ(value_named(g, "h").constant->to_float_vector(), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(value_named(g, "i64").constant->to_int64_vector(),
            (std::vector<int64_t>{int64_t{1} << 40, -3}));
}

TEST(OnnxImport, InitializerListedAsInputIsAConstantNotARuntimeInput) {
  ModelBuilder m(9);
  m.input("X", onnx::TensorProto::FLOAT, {2});
  m.input("W", onnx::TensorProto::FLOAT, {2});  // IR < 4 style: initializers repeated as inputs
  m.raw_float("W", {2}, {10, 20});
  m.node("Add", {"X", "W"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {2});
  const Graph g = import_onnx_bytes(m.bytes(), "init_as_input.onnx", "");
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.value(g.inputs[0]).name, "X");
  const auto out = run_reference(g, {{"X", Tensor::from_vector<float>({2}, {1, 2})}});
  EXPECT_EQ(out[0].to_float_vector(), (std::vector<float>{11, 22}));
}

TEST(OnnxImport, NamesAttributesAndOmittedInputs) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {4});
  auto* n = m.node("Clip", {"X", "", "hi"}, {"Y"});
  m.raw_float("hi", {}, {2.5f});
  auto* a = n->add_attribute();  // attributes of every kind, ignored by Clip at opset 13
  a->set_name("f");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(0.25f);
  a = n->add_attribute();
  a->set_name("s");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("text");
  a = n->add_attribute();
  a->set_name("fs");
  a->set_type(onnx::AttributeProto::FLOATS);
  a->add_floats(1.5f);
  a->add_floats(-2);
  a = n->add_attribute();
  a->set_name("ss");
  a->set_type(onnx::AttributeProto::STRINGS);
  a->add_strings("a");
  a->add_strings("b");
  a = n->add_attribute();
  a->set_name("t");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(3);
  for (int64_t v : {4, 5, 6}) a->mutable_t()->add_int64_data(v);
  ModelBuilder::add_int_attr(n, "i", -9);
  ModelBuilder::add_ints_attr(n, "is", {1, 2, 3});
  m.output("Y", onnx::TensorProto::FLOAT, {4});
  ImportOptions opts;
  opts.prepare = false;
  const Graph g = import_onnx_bytes(m.bytes(), "attrs.onnx", "", opts);

  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& node = g.nodes[0];
  EXPECT_EQ(node.name, "Clip_0");
  ASSERT_EQ(node.inputs.size(), 3u);
  EXPECT_EQ(node.inputs[1], kNoValue);
  EXPECT_EQ(node.attrs.get_float("f"), 0.25f);
  EXPECT_EQ(node.attrs.get_string("s"), "text");
  EXPECT_EQ(node.attrs.get_floats("fs"), (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(node.attrs.get_strings("ss"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(node.attrs.get_tensor("t").to_int64_vector(), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(node.attrs.get_int("i"), -9);
  EXPECT_EQ(node.attrs.get_ints("is"), (std::vector<int64_t>{1, 2, 3}));
}

TEST(OnnxImport, SymbolicBatchBecomesOneAndInputShapesOverride) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {-1, 3});
  m.node("Relu", {"X"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {-1, 3});
  Graph g = import_onnx_bytes(m.bytes(), "batch.onnx", "");
  EXPECT_EQ(g.value(g.inputs[0]).shape, (Shape{1, 3}));
  EXPECT_EQ(value_named(g, "Y").shape, (Shape{1, 3}));

  ImportOptions opts;
  opts.input_shapes["X"] = {4, 3};
  g = import_onnx_bytes(m.bytes(), "batch.onnx", "", opts);
  EXPECT_EQ(g.value(g.inputs[0]).shape, (Shape{4, 3}));
  EXPECT_EQ(value_named(g, "Y").shape, (Shape{4, 3}));
}

TEST(OnnxImport, SymbolicInnerDimWaitsForARunOrAnInputShape) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {1, -1});
  m.node("Relu", {"X"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT);
  // Without a size the graph stays unprepared until a run gives one (a Session plans then).
  const Graph open = import_onnx_bytes(m.bytes(), "inner.onnx", "");
  EXPECT_FALSE(open.prepared);
  ASSERT_EQ(open.unsized_inputs.size(), 1u);
  EXPECT_EQ(open.value(open.unsized_inputs[0]).name, "X");
  EXPECT_EQ(open.value(open.unsized_inputs[0]).open_dims, (std::vector<bool>{false, true}));
  ImportOptions opts;
  opts.input_shapes["X"] = {1, 5};
  const Graph g = import_onnx_bytes(m.bytes(), "inner.onnx", "", opts);
  EXPECT_EQ(value_named(g, "Y").shape, (Shape{1, 5}));
  // A shape for a name that is not an input is refused, naming it.
  opts.input_shapes["nope"] = {1};
  try {
    import_onnx_bytes(m.bytes(), "inner.onnx", "", opts);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, ExternalDataInsideModelDirectory) {
  const auto dir = scratch_dir();
  std::filesystem::create_directories(dir / "weights");
  const std::vector<float> w = {3, 4, 5};
  std::string blob(8, 'x');  // 8 bytes of padding before the tensor, to exercise offset
  blob.append(reinterpret_cast<const char*>(w.data()), w.size() * 4);
  test::write_file(dir / "weights" / "w.bin", blob);

  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {3});
  auto* t = m.graph().add_initializer();
  t->set_name("W");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(3);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("weights/../weights/w.bin");  // ".." that stays inside is fine
  kv = t->add_external_data();
  kv->set_key("offset");
  kv->set_value("8");
  kv = t->add_external_data();
  kv->set_key("length");
  kv->set_value("12");
  m.node("Mul", {"X", "W"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {3});
  const std::string path = m.save(dir / "ext.onnx");
  const Graph g = import_onnx_file(path);
  const auto out = run_reference(g, {{"X", Tensor::from_vector<float>({3}, {1, 2, 3})}});
  EXPECT_EQ(out[0].to_float_vector(), (std::vector<float>{3, 8, 15}));
  // Self-contained (what the tuning farm ships): the weights travel inside, so the bytes import
  // where external data is refused (base_dir ""), with the same result.
  const std::string inlined = self_contained_onnx(path);
  const Graph h = import_onnx_bytes(inlined, "inlined.onnx", "");
  EXPECT_EQ(
      run_reference(h, {{"X", Tensor::from_vector<float>({3}, {1, 2, 3})}})[0].to_float_vector(),
      (std::vector<float>{3, 8, 15}));
  // A model without external data comes back byte for byte.
  test::write_file(dir / "inlined.onnx", inlined);
  EXPECT_EQ(self_contained_onnx((dir / "inlined.onnx").string()), inlined);
}

TEST(OnnxImport, ModelLargerThanProtobufDefaultLimitParses) {
  // 17 Mi floats = 68 MiB of raw_data, past protobuf's 64 MiB default total-bytes limit.
  const int64_t n = int64_t{17} << 20;
  std::vector<float> w(static_cast<size_t>(n), 0.0f);
  w.front() = 1.5f;
  w.back() = -2.5f;
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {1});
  m.raw_float("W", {n}, w);
  m.node("Add", {"W", "X"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {n});
  const std::string bytes = m.bytes();
  ASSERT_GT(bytes.size(), size_t{64} << 20);
  m = ModelBuilder();  // release the builder's copy
  w = {};
  ImportOptions opts;
  opts.prepare = false;
  const Graph g = import_onnx_bytes(bytes, "large.onnx", "", opts);
  const Tensor& weights = *value_named(g, "W").constant;
  ASSERT_EQ(weights.numel(), n);
  EXPECT_EQ(weights.data<float>()[0], 1.5f);
  EXPECT_EQ(weights.data<float>()[n - 1], -2.5f);
}

TEST(OnnxImport, ReadsTensorProtoFiles) {
  onnx::TensorProto t;
  t.set_name("x");
  t.set_data_type(onnx::TensorProto::INT32);
  t.add_dims(2);
  t.add_dims(1);
  t.add_int32_data(5);
  t.add_int32_data(-6);
  const auto path = scratch_dir() / "input_0.pb";
  test::write_file(path, t.SerializeAsString());
  const Tensor x = read_onnx_tensor_file(path.string());
  EXPECT_EQ(x.dtype(), DType::kInt32);
  EXPECT_EQ(x.shape(), (Shape{2, 1}));
  EXPECT_EQ(x.to_int64_vector(), (std::vector<int64_t>{5, -6}));
}

}  // namespace
}  // namespace tessera
