// The clml plugin end to end on the CLML emulator (emulator/clml_emulator.h: a test-only OpenCL
// layer in front of PoCL that adds cl_qcom_ml_ops and computes CLML's ops with host loops).
// Every network runs through a real Session and is compared with tessera::run_reference (the
// oracle): each op the plugin maps onto CLML, fusion of BatchNormalization and Relu/Relu6 into a
// convolution, fp16, the split clml -> adreno -> clml without host copies, fallback with the
// reason for nodes CLML cannot take, failing CLML calls at compile and run time (named, nothing
// leaked), the tuning cache, and the JSON dump of each CLML subgraph.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../plugins/graph_builder.hpp"
#include "api/clml_api.h"  // CLML status codes
#include "emulator/clml_emulator.h"
#include "fifo_watchdog.hpp"
#include "opencl_plugin_test_util.hpp"
#include "tessera/error.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

// The ICD loader reads OPENCL_LAYERS once, at its first call.
const bool kLayerRequested = [] {
  setenv("OPENCL_LAYERS", CLML_EMULATOR_PATH, 1);
  return true;
}();

using opencl_test::attrs;
using opencl_test::Ints;
using opencl_test::random_tensor;

constexpr const char* kSuite = "clml";

std::shared_ptr<const PluginHost> host() {
  return opencl_test::build_tree_host();
}

class Clml : public ::testing::Test {
 protected:
  void SetUp() override {
    clml_emu_reset();
    const auto loaded = host()->find("clml");
    ASSERT_TRUE(loaded) << "no clml plugin in the build tree's plugins/lib";
    std::string reasons;
    bool usable = false;
    for (const PluginDeviceInfo& d : loaded->probe("")) {
      usable |= d.score > 0;
      reasons += d.name + ": " + d.unusable_reason + "\n";
    }
    if (!usable) TESSERA_SKIP_WITHOUT("an OpenCL device (PoCL) under the CLML emulator") << reasons;
    ASSERT_EQ(clml_emu_active(), 1) << "the ICD loader did not load the emulator layer";
  }
  void TearDown() override { clml_emu_reset(); }

  static SessionOptions options(std::vector<std::string> targets = {"clml"}) {
    SessionOptions o = opencl_test::session_options(std::move(targets), kSuite);
    o.pack_mode = PackMode::kNone;
    return o;
  }

  // Runs `g` on `targets`, expects every node on clml (unless `all_on_clml` is false) and the
  // outputs within rtol of the reference kernels.
  void expect_runs(const Graph& g, const std::map<std::string, Tensor>& inputs,
                   SessionOptions o = options(), float rtol = 1e-4f, bool all_on_clml = true) {
    const std::vector<Tensor> want = run_reference(g, inputs);
    Session s(g, o, host());
    if (all_on_clml) {
      for (const NodePlacement& p : s.plan().nodes) {
        EXPECT_EQ(p.plugin, "clml") << p.node << ": " << p.reason;
      }
    }
    const std::vector<Tensor> got = s.run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].shape(), want[i].shape());
      opencl_test::expect_all_near(got[i], want[i], rtol);
    }
  }
};

Graph conv_bn_relu6_network() {
  const Attributes pad = attrs({{"pads", Ints{1, 1, 1, 1}}});
  Tensor scale = random_tensor({8}, 21, 0.5f, 1.5f), bias = random_tensor({8}, 22);
  Tensor mean = random_tensor({8}, 23), var = random_tensor({8}, 24, 0.5f, 2.0f);
  return test::GraphBuilder()
      .input("x", {1, 4, 10, 10})
      .constant("w1", random_tensor({8, 4, 3, 3}, 11, -0.4f, 0.4f))
      .constant("b1", random_tensor({8}, 12))
      .constant("scale", scale)
      .constant("bias", bias)
      .constant("mean", mean)
      .constant("var", var)
      .constant("dw", random_tensor({8, 1, 3, 3}, 13, -0.4f, 0.4f))
      .constant("gw", random_tensor({8, 8, 1, 1}, 14, -0.4f, 0.4f))
      .constant("lo", Tensor::from_vector({}, std::vector<float>{0.0f}))
      .constant("hi", Tensor::from_vector({}, std::vector<float>{6.0f}))
      .node("Conv", {"x", "w1", "b1"}, {"c1"}, pad, "conv1")
      .node("BatchNormalization", {"c1", "scale", "bias", "mean", "var"}, {"n1"}, {}, "bn1")
      .node("Relu", {"n1"}, {"r1"}, {}, "relu1")
      .node("Conv", {"r1", "dw"}, {"c2"},
            attrs({{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{8}}}), "depthwise")
      .node("Clip", {"c2", "lo", "hi"}, {"r2"}, {}, "relu6")
      .node("Conv", {"r2", "gw"}, {"c3"}, attrs({{"strides", Ints{2, 2}}}), "pointwise")
      .node("BatchNormalization", {"c3", "scale", "bias", "mean", "var"}, {"y"}, {}, "bn_alone")
      .output("y")
      .build();
}

TEST_F(Clml, ConvolutionsWithFusedBatchNormAndActivations) {
  expect_runs(conv_bn_relu6_network(), {{"x", random_tensor({1, 4, 10, 10}, 7)}});
}

TEST_F(Clml, PoolingActivationsAndClassifierHead) {
  const Attributes pool =
      attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  Graph g = test::GraphBuilder()
                .input("x", {2, 6, 9, 9})
                .constant("fc", random_tensor({10, 6}, 31))
                .constant("fcb", random_tensor({10}, 32))
                .constant("mm", random_tensor({10, 5}, 33))
                .constant("lo", Tensor::from_vector({}, std::vector<float>{-0.5f}))
                .constant("hi", Tensor::from_vector({}, std::vector<float>{0.7f}))
                .node("MaxPool", {"x"}, {"p1"}, pool, "maxpool")
                .node("AveragePool", {"p1"}, {"p2"},
                      attrs({{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
                      "avgpool_exclude")
                .node("AveragePool", {"p2"}, {"p3"},
                      attrs({{"kernel_shape", Ints{2, 2}},
                             {"pads", Ints{0, 0, 1, 1}},
                             {"count_include_pad", int64_t{1}}}),
                      "avgpool_include")
                .node("Sigmoid", {"p3"}, {"s"}, {}, "sigmoid")
                .node("Tanh", {"s"}, {"t"}, {}, "tanh")
                .node("Clip", {"t", "lo", "hi"}, {"c"}, {}, "clip")
                .node("GlobalAveragePool", {"c"}, {"g"}, {}, "gap")
                .node("Flatten", {"g"}, {"f"}, {}, "flatten")
                .node("Gemm", {"f", "fc", "fcb"}, {"h"},
                      attrs({{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}), "gemm")
                .node("MatMul", {"h", "mm"}, {"m"}, {}, "matmul")
                .node("Softmax", {"m"}, {"y"}, attrs({{"axis", int64_t{1}}}), "softmax")
                .output("y")
                .build();
  expect_runs(g, {{"x", random_tensor({2, 6, 9, 9}, 8)}});
}

TEST_F(Clml, ElementwiseConcatPadResizeAndReshape) {
  Graph g =
      test::GraphBuilder(13)
          .input("a", {1, 3, 5, 6})
          .input("b", {1, 3, 5, 6})
          .constant("pads", Tensor::from_vector({8}, std::vector<int64_t>{0, 0, 1, 2, 0, 0, 2, 1}))
          .constant("roi", Tensor::from_vector({0}, std::vector<float>{}))
          .constant("scales", Tensor::from_vector({4}, std::vector<float>{1, 1, 2, 2}))
          .constant("shape", Tensor::from_vector({2}, std::vector<int64_t>{1, -1}))
          .node("Add", {"a", "b"}, {"s1"}, {}, "add")
          .node("Sub", {"s1", "b"}, {"s2"}, {}, "sub")
          .node("Mul", {"s2", "a"}, {"s3"}, {}, "mul")
          .node("Max", {"s3", "b"}, {"s4"}, {}, "max")
          .node("Min", {"s4", "a"}, {"s5"}, {}, "min")
          .node("Concat", {"s5", "a", "b"}, {"cat"}, attrs({{"axis", int64_t{1}}}), "concat")
          .node("Pad", {"cat", "pads"}, {"p"}, {}, "pad")
          .node("Resize", {"p", "roi", "scales"}, {"r"},
                attrs({{"mode", std::string("linear")},
                       {"coordinate_transformation_mode", std::string("half_pixel")}}),
                "resize")
          .node("Reshape", {"r", "shape"}, {"y"}, {}, "reshape")
          .output("y")
          .build();
  expect_runs(g, {{"a", random_tensor({1, 3, 5, 6}, 1)}, {"b", random_tensor({1, 3, 5, 6}, 2)}});
}

TEST_F(Clml, Fp16RunsHalfTensorsWithinHalfPrecision) {
  for (const char* precision : {"fp16", "fp16-acc32"}) {
    SCOPED_TRACE(precision);
    SessionOptions o = options();
    o.precision = precision;
    expect_runs(conv_bn_relu6_network(), {{"x", random_tensor({1, 4, 10, 10}, 7)}}, o, 2e-2f);
  }
}

// A node CLML cannot take goes to the next target with the reason: ceil_mode pooling to adreno,
// the values between the three regions stay in the device's one OpenCL context.
TEST_F(Clml, SplitWithAdrenoHandsValuesOverOnTheDevice) {
  const Attributes pad = attrs({{"pads", Ints{1, 1, 1, 1}}});
  Graph g = test::GraphBuilder()
                .input("x", {1, 8, 11, 11})
                .constant("w1", random_tensor({8, 8, 3, 3}, 1, -0.3f, 0.3f))
                .constant("w2", random_tensor({8, 8, 3, 3}, 2, -0.3f, 0.3f))
                .node("Conv", {"x", "w1"}, {"c1"}, pad, "conv1")
                .node("MaxPool", {"c1"}, {"p"},
                      attrs({{"kernel_shape", Ints{2, 2}},
                             {"strides", Ints{2, 2}},
                             {"ceil_mode", int64_t{1}}}),
                      "pool_ceil")
                .node("Conv", {"p", "w2"}, {"y"}, pad, "conv2")
                .output("y")
                .build();
  const Tensor x = random_tensor({1, 8, 11, 11}, 3);
  const std::vector<Tensor> want = run_reference(g, {{"x", x}});
  Session s(g, options({"clml", "adreno:any"}), host());
  std::map<std::string, std::string> placed;
  std::string reasons;
  for (const NodePlacement& p : s.plan().nodes) {
    placed[p.node] = p.plugin;
    reasons += p.node + ": " + p.plugin + " " + p.reason + "\n";
  }
  ASSERT_EQ(placed["conv1"], "clml") << reasons;
  ASSERT_EQ(placed["pool_ceil"], "adreno") << reasons;
  ASSERT_EQ(placed["conv2"], "clml") << reasons;
  EXPECT_NE(reasons.find("ceil_mode"), std::string::npos) << reasons;
  EXPECT_EQ(s.plan().device_values, 2) << "both values between the regions stay on the device";
  clml_emu_reset();  // count the run's calls only (compiling writes the weights)
  const std::vector<Tensor> got = s.run({{"x", x}});
  opencl_test::expect_all_near(got[0], want[0], 1e-4f);
  EXPECT_EQ(s.last_run_stats().host_device_bytes,
            static_cast<int64_t>(x.nbytes() + want[0].nbytes()))
      << "only the graph's input and output cross the host";
  EXPECT_GT(clml_emu_calls("clEnqueueCopyMLTensorDataQCOM"), 0)
      << "boundary values move with CLML's device-side copy";
  EXPECT_EQ(clml_emu_calls("clEnqueueWriteMLTensorDataQCOM"), 1) << "the graph's input only";
  EXPECT_EQ(clml_emu_calls("clEnqueueReadMLTensorDataQCOM"), 1) << "the graph's output only";
}

// CLML's convolution is driven as TVM drives it (group 1, or depthwise mode): a convolution of 2
// groups goes to the next target with the reason.
TEST_F(Clml, GroupedConvolutionFallsBackWithTheReason) {
  Graph g = test::GraphBuilder()
                .input("x", {1, 4, 6, 6})
                .constant("w", random_tensor({8, 2, 1, 1}, 15))
                .node("Conv", {"x", "w"}, {"y"}, attrs({{"group", int64_t{2}}}), "grouped")
                .output("y")
                .build();
  SessionOptions o = options({"clml", "reference"});
  Session s(g, o, host());
  ASSERT_EQ(s.plan().nodes.size(), 1u);
  EXPECT_EQ(s.plan().nodes[0].plugin, "reference");
  EXPECT_NE(s.plan().nodes[0].reason.find("grouped convolutions other than depthwise"),
            std::string::npos)
      << s.plan().nodes[0].reason;
  expect_runs(g, {{"x", random_tensor({1, 4, 6, 6}, 16)}}, o, 1e-4f, /*all_on_clml=*/false);
}

TEST_F(Clml, BroadcastFallsBackWithTheReason) {
  Graph g = test::GraphBuilder()
                .input("x", {1, 4, 6, 6})
                .constant("s", random_tensor({1, 4, 1, 1}, 5))
                .node("Relu", {"x"}, {"r"}, {}, "relu")
                .node("Mul", {"r", "s"}, {"y"}, {}, "se_scale")
                .output("y")
                .build();
  SessionOptions o = options({"clml", "reference"});
  Session s(g, o, host());
  for (const NodePlacement& p : s.plan().nodes) {
    if (p.node == "se_scale") {
      EXPECT_EQ(p.plugin, "reference");
      EXPECT_NE(p.reason.find("broadcasting"), std::string::npos) << p.reason;
    }
  }
  expect_runs(g, {{"x", random_tensor({1, 4, 6, 6}, 6)}}, o, 1e-4f, /*all_on_clml=*/false);
}

// A failing CLML call while compiling: with fallback the region moves to the next target with a
// warning naming the call and the status; without, the session fails with that message. While
// running: run() fails naming the node, the call and the status. Nothing CLML created is left.
TEST_F(Clml, FailingCallsAreNamedAndReleaseEverything) {
  const Graph g = conv_bn_relu6_network();
  const std::map<std::string, Tensor> in = {{"x", random_tensor({1, 4, 10, 10}, 7)}};
  clml_emu_fail("clCreateMLOpConvolutionForwardQCOM", 0, -1, CL_ML_OP_NOT_ACCELERATED_QCOM);
  {
    SessionOptions o = options({"clml", "reference"});
    o.allow_fallback = true;
    Session s(g, o, host());
    std::string warnings;
    for (const std::string& w : s.plan().warnings) warnings += w + "\n";
    EXPECT_NE(warnings.find("clCreateMLOpConvolutionForwardQCOM"), std::string::npos) << warnings;
    EXPECT_NE(warnings.find("CL_ML_OP_NOT_ACCELERATED_QCOM"), std::string::npos) << warnings;
    opencl_test::expect_all_near(s.run(in)[0], run_reference(g, in)[0], 1e-4f);
  }
  try {
    Session s(g, options(), host());
    ADD_FAILURE() << "a CLML op that fails to build must fail the session without fallback";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CL_ML_OP_NOT_ACCELERATED_QCOM"), std::string::npos)
        << e.what();
  }
  clml_emu_reset();
  EXPECT_EQ(clml_emu_live("op"), 0);
  EXPECT_EQ(clml_emu_live("tensor"), 0);

  Session s(g, options(), host());
  clml_emu_fail("clEnqueueMLOpQCOM", 2, 1, CL_OUT_OF_RESOURCES);
  try {
    s.run(in);
    ADD_FAILURE() << "a failing clEnqueueMLOpQCOM must fail the run";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("clEnqueueMLOpQCOM"), std::string::npos) << m;
    EXPECT_NE(m.find("CL_OUT_OF_RESOURCES"), std::string::npos) << m;
    EXPECT_NE(m.find("node '"), std::string::npos) << m;
  }
  clml_emu_reset();
  opencl_test::expect_all_near(s.run(in)[0], run_reference(g, in)[0], 1e-4f);
}

TEST_F(Clml, TuningCacheIsBuiltStoredAndFoundAgain) {
  const Graph g = conv_bn_relu6_network();
  const std::map<std::string, Tensor> in = {{"x", random_tensor({1, 4, 10, 10}, 7)}};
  SessionOptions o = options();
  o.target_settings["clml"].options = {{"tuning", "build"}};
  o.cache_dir = std::string(TESSERA_BINARY_DIR) + "/tests/clml/tuning-cache";
  std::filesystem::remove_all(o.cache_dir);
  {
    Session s(g, o, host());
    opencl_test::expect_all_near(s.run(in)[0], run_reference(g, in)[0], 1e-4f);
  }
  EXPECT_GT(clml_emu_calls("clTuneMLOpQCOM"), 0);
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(o.cache_dir)) {
    files += e.path().extension() == ".clmltune";
  }
  EXPECT_EQ(files, 1u) << "one tuning cache for the one CLML region";
  clml_emu_reset();
  o.target_settings.clear();  // tuning: use
  {
    Session s(g, o, host());
    EXPECT_GT(clml_emu_tuning_hits(), 0) << "ops created with the stored cache find their results";
    EXPECT_EQ(clml_emu_calls("clTuneMLOpQCOM"), 0);
    opencl_test::expect_all_near(s.run(in)[0], run_reference(g, in)[0], 1e-4f);
  }
  // A corrupt cache file costs the tuning only.
  std::string cache_file;
  for (const auto& e : std::filesystem::recursive_directory_iterator(o.cache_dir)) {
    if (e.path().extension() == ".clmltune") cache_file = e.path().string();
  }
  ASSERT_FALSE(cache_file.empty());
  std::ofstream(cache_file) << "garbage";
  clml_emu_reset();
  {
    Session s(g, o, host());
    EXPECT_EQ(clml_emu_tuning_hits(), 0);
    opencl_test::expect_all_near(s.run(in)[0], run_reference(g, in)[0], 1e-4f);
  }
  // So does a FIFO in the cache's place, which is never opened: reading it would block the
  // compile until some writer came.
  std::filesystem::remove(cache_file);
  ASSERT_EQ(::mkfifo(cache_file.c_str(), 0600), 0);
  clml_emu_reset();
  tessera_test::FifoReadWatchdog watchdog(cache_file);
  Session s(g, o, host());
  EXPECT_FALSE(watchdog.stop()) << "the compile opened the FIFO at " << cache_file << " to read it";
  EXPECT_EQ(clml_emu_calls("clLoadMLTuningCacheQCOM"), 0);
  EXPECT_EQ(clml_emu_tuning_hits(), 0);
  opencl_test::expect_all_near(s.run(in)[0], run_reference(g, in)[0], 1e-4f);
}

TEST_F(Clml, DumpWritesOneJsonFilePerSubgraph) {
  const std::string dir = std::string(TESSERA_BINARY_DIR) + "/tests/clml/dump";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  SessionOptions o = options();
  o.dump_kernels_dir = dir;
  Session s(conv_bn_relu6_network(), o, host());
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  std::ifstream f(files[0]);
  std::stringstream text;
  text << f.rdbuf();
  const std::string json = text.str();
  for (const char* want : {"\"ops\"", "clCreateMLOpFusedConvolutionActivationForwardQCOM",
                           "\"folded_batch_norm\": \"bn1\"", "\"node\": \"depthwise\"",
                           "\"region_inputs\"", "\"clml_dims\": [1, 4, 10, 10]"}) {
    EXPECT_NE(json.find(want), std::string::npos) << want << " in\n" << json;
  }
}

}  // namespace
}  // namespace tessera
