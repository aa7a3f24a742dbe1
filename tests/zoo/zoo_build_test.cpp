// The zoo builders: every network passes the ONNX checker, has the promised interface, uses only
// the agreed op set, is byte-identical for a seed and differs across seeds.
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "tessera/error.hpp"
#include "zoo.hpp"

namespace {

using tessera::zoo::build_zoo_model;
using tessera::zoo::ZooOptions;

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

std::vector<int64_t> dims_of(const onnx::ValueInfoProto& info) {
  std::vector<int64_t> dims;
  for (const auto& d : info.type().tensor_type().shape().dim()) dims.push_back(d.dim_value());
  return dims;
}

class ZooNetwork : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooNetwork, PassesCheckerWithPromisedInterfaceAndOps) {
  const std::string name = GetParam();
  const onnx::ModelProto model = parse(build_zoo_model(name, ZooOptions{2, 7}));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).version(), 13);

  const onnx::GraphProto& graph = model.graph();
  ASSERT_EQ(graph.input_size(), 1);
  const int64_t side = name == "inception_v3" ? 299 : 224;
  EXPECT_EQ(graph.input(0).name(), "data");
  EXPECT_EQ(dims_of(graph.input(0)), (std::vector<int64_t>{2, 3, side, side}));
  ASSERT_EQ(graph.output_size(), 2);
  EXPECT_EQ(graph.output(0).name(), "output");
  EXPECT_EQ(dims_of(graph.output(0)), (std::vector<int64_t>{2, 1000}));
  EXPECT_EQ(graph.output(1).name(), "logits");
  EXPECT_EQ(dims_of(graph.output(1)), (std::vector<int64_t>{2, 1000}));

  const std::set<std::string> allowed = {"Conv",        "BatchNormalization",
                                         "Relu",        "Clip",
                                         "Add",         "MaxPool",
                                         "AveragePool", "GlobalAveragePool",
                                         "Gemm",        "Flatten",
                                         "Reshape",     "Concat",
                                         "Softmax",     "Dropout"};
  for (const auto& node : graph.node()) {
    EXPECT_TRUE(allowed.count(node.op_type())) << node.name() << " is " << node.op_type();
  }
  // The last node turns the logits into probabilities.
  const auto& last = graph.node(graph.node_size() - 1);
  EXPECT_EQ(last.op_type(), "Softmax");
  EXPECT_EQ(last.input(0), "logits");
  EXPECT_EQ(last.output(0), "output");
}

TEST_P(ZooNetwork, SameSeedSameBytesOtherSeedOtherBytes) {
  const std::string name = GetParam();
  // Hashes rather than two live copies: vgg-16 is 550 MB per copy.
  const std::string first = build_zoo_model(name, ZooOptions{1, 42});
  const size_t first_hash = std::hash<std::string>{}(first);
  const size_t first_size = first.size();
  {
    const std::string again = build_zoo_model(name, ZooOptions{1, 42});
    EXPECT_EQ(again.size(), first_size);
    EXPECT_EQ(std::hash<std::string>{}(again), first_hash);
    EXPECT_TRUE(again == first);
  }
  const std::string other = build_zoo_model(name, ZooOptions{1, 43});
  EXPECT_EQ(other.size(), first_size);  // same architecture
  EXPECT_FALSE(other == first);
}

// Batch-norm statistics must be non-trivial (not the identity 1/0/0/1) and in the agreed ranges.
TEST_P(ZooNetwork, BatchNormStatisticsAreNonTrivial) {
  const onnx::ModelProto model = parse(build_zoo_model(GetParam(), ZooOptions{1, 3}));
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : model.graph().initializer()) inits[t.name()] = &t;
  auto values = [&](const std::string& name) {
    const onnx::TensorProto* t = inits.at(name);
    // Initializers written as float_data have no raw_data; memcpy must not get the empty
    // vector's null data() even for 0 bytes.
    if (t->raw_data().empty())
      return std::vector<float>(t->float_data().begin(), t->float_data().end());
    std::vector<float> v(static_cast<size_t>(t->raw_data().size() / sizeof(float)));
    std::memcpy(v.data(), t->raw_data().data(), v.size() * sizeof(float));
    return v;
  };
  int batch_norms = 0;
  for (const auto& node : model.graph().node()) {
    if (node.op_type() != "BatchNormalization") continue;
    ++batch_norms;
    const std::vector<float> gamma = values(node.input(1));
    const std::vector<float> beta = values(node.input(2));
    const std::vector<float> mean = values(node.input(3));
    const std::vector<float> var = values(node.input(4));
    for (float g : gamma) EXPECT_TRUE(g >= 0.5f && g <= 1.5f) << node.name();
    for (float b : beta) EXPECT_TRUE(b >= -0.2f && b <= 0.2f) << node.name();
    for (float m : mean) EXPECT_TRUE(m >= -0.1f && m <= 0.1f) << node.name();
    for (float v : var) EXPECT_TRUE(v >= 0.5f && v <= 1.5f) << node.name();
    EXPECT_NE(beta.front(), beta.back()) << node.name();
    EXPECT_NE(var.front(), 1.0f) << node.name();
  }
  if (GetParam() != "squeezenet_v1.1") {
    EXPECT_GT(batch_norms, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(AllNetworks, ZooNetwork, ::testing::ValuesIn(tessera::zoo::zoo_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id;
                           for (char c : info.param) id += std::isalnum(c) ? c : '_';
                           return id;
                         });

TEST(Zoo, ListsTheTuningGuideNetworks) {
  EXPECT_EQ(
      tessera::zoo::zoo_names(),
      (std::vector<std::string>{"resnet-18", "resnet-34", "resnet-50", "mobilenet", "mobilenet_v2",
                                "squeezenet_v1.1", "vgg-16", "inception_v3"}));
}

TEST(Zoo, UnknownNameListsValidOnes) {
  try {
    build_zoo_model("resnet-101", ZooOptions{});
    FAIL() << "expected tessera::Error";
  } catch (const tessera::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("resnet-101"), std::string::npos) << message;
    EXPECT_NE(message.find("squeezenet_v1.1"), std::string::npos) << message;
    EXPECT_NE(message.find("inception_v3"), std::string::npos) << message;
  }
}

TEST(Zoo, RejectsZeroBatch) {
  EXPECT_THROW(build_zoo_model("mobilenet", ZooOptions{0, 0}), tessera::Error);
}

TEST(Zoo, WriteRefusesToOverwriteUnlessAsked) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tessera_zoo_write_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "model.onnx").string();
  { std::ofstream(path) << "precious"; }
  EXPECT_THROW(tessera::zoo::write_zoo_model("squeezenet_v1.1", ZooOptions{}, path, false),
               tessera::Error);
  std::ifstream kept(path);
  std::string content((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "precious");

  tessera::zoo::write_zoo_model("squeezenet_v1.1", ZooOptions{}, path, true);
  std::ifstream written(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes, build_zoo_model("squeezenet_v1.1", ZooOptions{}));
  // No temporary file is left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

}  // namespace
