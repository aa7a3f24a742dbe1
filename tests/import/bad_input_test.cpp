// Malformed or unsupported models: every case must raise tessera::Error (UnsupportedError where
// the model is valid but uses something Tessera does not implement) whose message names the file
// and, where one is involved, the node, value or attribute. Nothing may crash.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "model_builder.hpp"
#include "tessera/onnx_import.hpp"

namespace tessera {
namespace {

using test::ModelBuilder;
using test::scratch_dir;

enum class Kind { kError, kUnsupported };

// Imports `path` and checks the error kind and that the message holds the path and `needles`.
void expect_import_error(const std::string& path, Kind kind,
                         const std::vector<std::string>& needles) {
  try {
    import_onnx_file(path);
    ADD_FAILURE() << "importing " << path << " did not fail";
  } catch (const UnsupportedError& e) {
    std::cout << "  unsupported: " << e.what() << "\n";
    EXPECT_EQ(kind, Kind::kUnsupported) << "unexpected UnsupportedError: " << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    for (const auto& n : needles) {
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << n << "' not in: " << e.what();
    }
  } catch (const Error& e) {
    std::cout << "  error: " << e.what() << "\n";
    EXPECT_EQ(kind, Kind::kError) << "expected UnsupportedError, got: " << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    for (const auto& n : needles) {
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << n << "' not in: " << e.what();
    }
  }
}

// A valid model: Y = Relu(X + W), W a 256-float initializer.
ModelBuilder valid_model(int64_t opset = 13) {
  ModelBuilder m(opset);
  m.input("X", onnx::TensorProto::FLOAT, {256});
  m.raw_float("W", {256}, std::vector<float>(256, 1.0f));
  m.node("Add", {"X", "W"}, {"S"}, "add");
  m.node("Relu", {"S"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::FLOAT, {256});
  return m;
}

// A model with one external-data initializer W (3 floats) at `location`.
ModelBuilder external_model(const std::string& location, const std::string& length = "12") {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {3});
  auto* t = m.graph().add_initializer();
  t->set_name("W");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(3);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  kv = t->add_external_data();
  kv->set_key("length");
  kv->set_value(length);
  m.node("Mul", {"X", "W"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {3});
  return m;
}

TEST(BadInput, MissingFile) {
  const std::string path = (scratch_dir() / "absent.onnx").string();
  expect_import_error(path, Kind::kError, {"cannot open"});
  const std::string dir = (scratch_dir() / "a_directory.onnx").string();
  std::filesystem::create_directories(dir);
  expect_import_error(dir, Kind::kError, {"is a directory"});
}

TEST(BadInput, EmptyFile) {
  const auto path = scratch_dir() / "empty.onnx";
  test::write_file(path, "");
  expect_import_error(path.string(), Kind::kError, {"not a valid ONNX model", "empty"});
}

TEST(BadInput, TruncatedFile) {
  const std::string bytes = valid_model().bytes();
  const auto dir = scratch_dir();
  // Cuts inside the initializer's raw_data, and just before the end.
  for (size_t keep : {bytes.size() / 2, bytes.size() - 3}) {
    const auto path = dir / ("truncated_" + std::to_string(keep) + ".onnx");
    test::write_file(path, bytes.substr(0, keep));
    expect_import_error(path.string(), Kind::kError, {"not a valid ONNX model"});
  }
}

TEST(BadInput, RandomBytes) {
  std::mt19937 rng(1234);
  const auto dir = scratch_dir();
  for (int i = 0; i < 20; ++i) {
    std::string bytes(static_cast<size_t>(1 + rng() % 4096), '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    const auto path = dir / ("random_" + std::to_string(i) + ".onnx");
    test::write_file(path, bytes);
    expect_import_error(path.string(), Kind::kError, {"not a valid ONNX model"});
  }
}

// A model with attributes, a Constant tensor attribute and a foldable shape chain.
ModelBuilder attribute_model() {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2, 3, 4});
  auto* c = m.node("Constant", {}, {"minus1"}, "const");
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(-1);
  m.node("Shape", {"X"}, {"S"}, "shape");
  m.raw_int64("idx", {1}, {0});
  m.node("Gather", {"S", "idx"}, {"B"}, "gather");
  ModelBuilder::add_int_attr(m.node("Concat", {"B", "minus1"}, {"NS"}, "concat"), "axis", 0);
  m.node("Reshape", {"X", "NS"}, {"R"}, "reshape");
  ModelBuilder::add_ints_attr(m.node("Transpose", {"R"}, {"Y"}, "transpose"), "perm", {1, 0});
  m.output("Y", onnx::TensorProto::FLOAT, {12, 2});
  return m;
}

TEST(BadInput, CorruptedBytesNeverCrash) {
  // Overwrites bytes all over valid models: each import must succeed or throw tessera::Error
  // naming the model; anything else (a crash, a foreign exception, a giant allocation) fails.
  std::mt19937 rng(99);
  for (const std::string& good : {valid_model().bytes(), attribute_model().bytes()}) {
    ASSERT_NO_THROW(import_onnx_bytes(good, "good.onnx", ""));
    int errors = 0;
    for (int i = 0; i < 500; ++i) {
      std::string bytes = good;
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
        bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
      }
      try {
        import_onnx_bytes(bytes, "corrupt.onnx", "");
      } catch (const Error& e) {
        ++errors;
        EXPECT_NE(std::string(e.what()).find("corrupt.onnx"), std::string::npos) << e.what();
      }
    }
    EXPECT_GT(errors, 0);
  }
}

TEST(BadInput, Cycle) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2});
  m.node("Add", {"X", "B"}, {"A"}, "first");
  m.node("Relu", {"A"}, {"B"}, "second");
  m.output("B", onnx::TensorProto::FLOAT, {2});
  expect_import_error(m.save(scratch_dir() / "cycle.onnx"), Kind::kError, {"cycle"});
}

TEST(BadInput, UndefinedInputName) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2});
  m.node("Add", {"X", "ghost"}, {"Y"}, "adder");
  m.output("Y", onnx::TensorProto::FLOAT, {2});
  expect_import_error(m.save(scratch_dir() / "undefined.onnx"), Kind::kError,
                      {"'adder'", "'ghost'"});
}

TEST(BadInput, ValueProducedTwice) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2});
  m.node("Relu", {"X"}, {"Y"}, "one");
  m.node("Relu", {"X"}, {"Y"}, "two");
  m.output("Y", onnx::TensorProto::FLOAT, {2});
  expect_import_error(m.save(scratch_dir() / "twice.onnx"), Kind::kError, {"'two'", "'Y'"});
}

TEST(BadInput, NegativeDims) {
  const auto dir = scratch_dir();
  ModelBuilder init = valid_model();
  init.graph().mutable_initializer(0)->set_dims(0, -256);
  expect_import_error(init.save(dir / "neg_init.onnx"), Kind::kError, {"'W'", "negative"});

  ModelBuilder input = valid_model();
  input.graph()
      .mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(-4);
  expect_import_error(input.save(dir / "neg_input.onnx"), Kind::kError, {"'X'", "negative"});
}

TEST(BadInput, OverflowingDims) {
  const auto dir = scratch_dir();
  ModelBuilder init = valid_model();
  auto* w = init.graph().mutable_initializer(0);
  w->clear_dims();
  for (int i = 0; i < 3; ++i) w->add_dims(int64_t{1} << 30);
  expect_import_error(init.save(dir / "overflow_init.onnx"), Kind::kError, {"'W'", "overflow"});

  ModelBuilder input = valid_model();
  auto* shape =
      input.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_value(int64_t{1} << 40);
  shape->add_dim()->set_dim_value(int64_t{1} << 40);
  expect_import_error(input.save(dir / "overflow_input.onnx"), Kind::kError, {"'X'", "overflow"});
}

// An initializer that repeats a graph input's name (IR < 4 style) must match the input's
// declaration: ONNX Runtime refuses a mismatch at load ("Shape of initializer W does not match").
// The error names the value and both shapes; open dims match any size.
TEST(BadInput, InitializerShadowingAnInputWithAnotherShapeOrType) {
  const auto dir = scratch_dir();
  const auto shadowed = [](int32_t declared_type, const std::vector<int64_t>& declared) {
    ModelBuilder m(9);
    m.input("X", onnx::TensorProto::FLOAT, {2, 2});
    m.input("W", declared_type, declared);
    m.raw_float("W", {2, 2}, {1, 2, 3, 4});
    m.node("Add", {"X", "W"}, {"Y"}, "add");
    m.output("Y", onnx::TensorProto::FLOAT, {2, 2});
    return m;
  };
  expect_import_error(shadowed(onnx::TensorProto::FLOAT, {1, 3}).save(dir / "shape.onnx"),
                      Kind::kError,
                      {"input 'W' is declared with shape [1, 3]",
                       "the initializer of the same name has shape [2, 2]"});
  expect_import_error(shadowed(onnx::TensorProto::FLOAT, {4}).save(dir / "rank.onnx"), Kind::kError,
                      {"input 'W'", "[4]", "[2, 2]"});
  expect_import_error(
      shadowed(onnx::TensorProto::INT64, {2, 2}).save(dir / "dtype.onnx"), Kind::kError,
      {"input 'W' is declared int64 [2, 2]", "the initializer of the same name is float32 [2, 2]"});
  // Matching declarations, with and without an open dim, import; W stays a constant.
  for (const std::vector<int64_t>& declared : {std::vector<int64_t>{2, 2}, {-1, 2}}) {
    const std::string path = shadowed(onnx::TensorProto::FLOAT, declared).save(dir / "ok.onnx");
    const Graph g = import_onnx_file(path);
    ASSERT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(g.value(g.inputs[0]).name, "X");
  }
}

TEST(BadInput, RawDataSizeDisagreesWithDims) {
  ModelBuilder m = valid_model();
  m.graph().mutable_initializer(0)->set_dims(0, 300);
  expect_import_error(m.save(scratch_dir() / "raw_size.onnx"), Kind::kError,
                      {"'W'", "raw_data holds 1024 bytes", "1200"});
}

TEST(BadInput, TypedDataCountDisagreesWithDims) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {3});
  m.typed_float("W", {3}, {1, 2});
  m.node("Mul", {"X", "W"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {3});
  expect_import_error(m.save(scratch_dir() / "typed_count.onnx"), Kind::kError,
                      {"'W'", "2 elements"});
}

TEST(BadInput, UnknownOp) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2});
  m.node("FrobnicateHarder", {"X"}, {"Y"}, "frob");
  m.output("Y", onnx::TensorProto::FLOAT, {2});
  expect_import_error(m.save(scratch_dir() / "unknown_op.onnx"), Kind::kUnsupported,
                      {"'frob'", "FrobnicateHarder"});
}

TEST(BadInput, NodeInAnotherDomain) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2});
  m.node("Gelu", {"X"}, {"Y"}, "gelu")->set_domain("com.example");
  m.output("Y", onnx::TensorProto::FLOAT, {2});
  expect_import_error(m.save(scratch_dir() / "domain.onnx"), Kind::kUnsupported,
                      {"'gelu'", "com.example"});
  // Of com.microsoft, an op ONNX Runtime's tools write that Tessera does not lower is refused
  // the same way.
  ModelBuilder ms;
  ms.input("X", onnx::TensorProto::FLOAT, {2});
  ms.node("EmbedLayerNormalization", {"X"}, {"Y"}, "attn")->set_domain("com.microsoft");
  ms.output("Y", onnx::TensorProto::FLOAT, {2});
  expect_import_error(ms.save(scratch_dir() / "ms_domain.onnx"), Kind::kUnsupported,
                      {"'attn'", "com.microsoft"});
}

TEST(BadInput, MalformedContribOpsNameTheNode) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::UINT8, {2});
  // QLinearAdd without its B input and scales.
  m.node("QLinearAdd", {"X"}, {"Y"}, "qadd")->set_domain("com.microsoft");
  m.output("Y", onnx::TensorProto::UINT8, {2});
  expect_import_error(m.save(scratch_dir() / "qadd.onnx"), Kind::kError,
                      {"'qadd'", "com.microsoft:QLinearAdd", "required input 1 is missing"});
  ModelBuilder f;
  f.input("X", onnx::TensorProto::FLOAT, {1, 1, 3, 3});
  f.input("W", onnx::TensorProto::FLOAT, {1, 1, 1, 1});
  auto* n = f.node("FusedConv", {"X", "W"}, {"Y"}, "fconv");
  n->set_domain("com.microsoft");
  auto* a = n->add_attribute();
  a->set_name("activation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("Swoosh");
  f.output("Y", onnx::TensorProto::FLOAT);
  expect_import_error(f.save(scratch_dir() / "fconv.onnx"), Kind::kError,
                      {"'fconv'", "activation 'Swoosh'"});
}

TEST(BadInput, SubgraphAttribute) {
  // Scan's body is a subgraph Tessera does not run (If's branches and Loop's body it does).
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2, 3});
  auto* n = m.node("Scan", {"X"}, {"Y"}, "scan");
  auto* a = n->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("body");
  m.output("Y", onnx::TensorProto::FLOAT);
  expect_import_error(m.save(scratch_dir() / "subgraph.onnx"), Kind::kUnsupported,
                      {"'scan'", "'body'", "Scan is not"});
  // A Loop whose body does not take what the node gives is an error naming both counts.
  ModelBuilder l;
  l.input("M", onnx::TensorProto::INT64, {});
  l.input("C", onnx::TensorProto::BOOL, {});
  auto* loop = l.node("Loop", {"M", "C"}, {"Y"}, "loop");
  auto* body = loop->add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  body->mutable_g()->set_name("body");
  l.output("Y", onnx::TensorProto::FLOAT);
  expect_import_error(l.save(scratch_dir() / "loop.onnx"), Kind::kError,
                      {"'loop'", "body takes 0 inputs but the node gives 2"});
}

TEST(BadInput, IfWithoutAnElseBranch) {
  ModelBuilder m;
  m.input("C", onnx::TensorProto::BOOL, {});
  auto* n = m.node("If", {"C"}, {"Y"}, "branch");
  auto* a = n->add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("then");
  m.output("Y", onnx::TensorProto::FLOAT);
  expect_import_error(m.save(scratch_dir() / "if_no_else.onnx"), Kind::kError,
                      {"'branch'", "'else_branch'"});
}

TEST(BadInput, UnsupportedElementTypes) {
  const auto dir = scratch_dir();
  ModelBuilder init;
  init.input("X", onnx::TensorProto::FLOAT, {1});
  const double d = 1.0;
  init.raw("Wd", onnx::TensorProto::DOUBLE, {1}, &d, sizeof d);
  init.node("Relu", {"X"}, {"Y"});
  init.output("Y", onnx::TensorProto::FLOAT, {1});
  expect_import_error(init.save(dir / "double_init.onnx"), Kind::kUnsupported, {"'Wd'", "DOUBLE"});

  ModelBuilder input;
  input.input("Xs", onnx::TensorProto::STRING, {1});
  input.node("Identity", {"Xs"}, {"Y"});
  input.output("Y", onnx::TensorProto::STRING, {1});
  expect_import_error(input.save(dir / "string_input.onnx"), Kind::kUnsupported,
                      {"'Xs'", "STRING"});

  ModelBuilder bf16;
  bf16.input("Xb", onnx::TensorProto::BFLOAT16, {1});
  bf16.node("Identity", {"Xb"}, {"Y"});
  bf16.output("Y", onnx::TensorProto::BFLOAT16, {1});
  expect_import_error(bf16.save(dir / "bf16_input.onnx"), Kind::kUnsupported, {"'Xb'", "BFLOAT16"});
}

TEST(BadInput, SequenceInput) {
  ModelBuilder m;
  auto* in = m.graph().add_input();
  in->set_name("seq");
  in->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::FLOAT);
  m.node("Identity", {"seq"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {1});
  expect_import_error(m.save(scratch_dir() / "sequence.onnx"), Kind::kUnsupported,
                      {"'seq'", "not a tensor"});
}

TEST(BadInput, OpsetOutOfRange) {
  const auto dir = scratch_dir();
  expect_import_error(valid_model(6).save(dir / "opset6.onnx"), Kind::kUnsupported,
                      {"opset 6", "7 to 21"});
  expect_import_error(valid_model(22).save(dir / "opset22.onnx"), Kind::kUnsupported,
                      {"opset 22", "7 to 21"});
  ModelBuilder none = valid_model();
  none.proto().clear_opset_import();
  expect_import_error(none.save(dir / "no_opset.onnx"), Kind::kError, {"no opset"});
}

TEST(BadInput, ExternalPathWithDotDotEscapes) {
  const auto root = scratch_dir();
  const auto dir = root / "model";
  std::filesystem::create_directories(dir);
  test::write_file(root / "outside.bin", std::string(12, '\0'));
  expect_import_error(external_model("../outside.bin").save(dir / "dotdot.onnx"), Kind::kError,
                      {"'W'", "../outside.bin", "outside the model's directory"});
}

TEST(BadInput, ExternalAbsolutePath) {
  const auto dir = scratch_dir();
  test::write_file(dir / "w.bin", std::string(12, '\0'));
  const std::string absolute = std::filesystem::absolute(dir / "w.bin").string();
  expect_import_error(external_model(absolute).save(dir / "absolute.onnx"), Kind::kError,
                      {"'W'", absolute, "absolute"});
}

TEST(BadInput, ExternalSymlinkOutOfDirectory) {
  const auto root = scratch_dir();
  const auto dir = root / "model";
  std::filesystem::create_directories(dir);
  test::write_file(root / "secret.bin", std::string(12, '\0'));
  std::filesystem::create_symlink(root / "secret.bin", dir / "link.bin");
  expect_import_error(external_model("link.bin").save(dir / "symlink.onnx"), Kind::kError,
                      {"'W'", "link.bin", "outside the model's directory"});
}

// A NUL inside `location` would end the file name there: "w.bin\0junk" would read w.bin. It is
// refused naming the tensor and the model, with the NUL shown escaped.
TEST(BadInput, ExternalLocationWithNulByte) {
  const auto dir = scratch_dir();
  const float w[3] = {1.5f, -2.0f, 4.25f};
  test::write_file(dir / "w.bin", std::string(reinterpret_cast<const char*>(w), sizeof(w)));
  const std::string location("w.bin\0junk", 10);
  expect_import_error(external_model(location).save(dir / "nul.onnx"), Kind::kError,
                      {"nul.onnx: initializer 'W': external data location 'w.bin\\x00junk' holds "
                       "a NUL byte at offset 5; a file name cannot contain one"});
  // The same file named without the NUL loads: the refusal is about the name alone.
  const Graph g = import_onnx_file(external_model("w.bin").save(dir / "plain.onnx"));
  const Value& weights = g.value(g.find_value("W"));
  ASSERT_NE(weights.constant, nullptr);
  EXPECT_EQ(weights.constant->to_float_vector(), (std::vector<float>{1.5f, -2.0f, 4.25f}));
}

TEST(BadInput, ExternalRangePastEndOfFile) {
  const auto dir = scratch_dir();
  test::write_file(dir / "short.bin", std::string(4, '\0'));
  expect_import_error(external_model("short.bin").save(dir / "short.onnx"), Kind::kError,
                      {"'W'", "short.bin", "past the end"});
  expect_import_error(external_model("missing.bin").save(dir / "missing.onnx"), Kind::kError,
                      {"'W'", "missing.bin", "does not exist"});
  expect_import_error(external_model("short.bin", "8").save(dir / "length.onnx"), Kind::kError,
                      {"'W'", "need 12"});
}

TEST(BadInput, ExternalDataFromBytesIsRefused) {
  try {
    import_onnx_bytes(external_model("w.bin").bytes(), "membuf.onnx", "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("membuf.onnx"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'W'"), std::string::npos) << e.what();
  }
}

TEST(BadInput, BadTensorProtoFile) {
  const auto path = scratch_dir() / "input_0.pb";
  test::write_file(path, std::string("\xff\xff\xff\xff\x0f", 5));
  try {
    read_onnx_tensor_file(path.string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera
