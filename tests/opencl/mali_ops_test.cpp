// Differential tests of the mali plugin against the reference kernels (tessera::ops): each case
// builds a one-node (or small chain) region, runs it through the plugin's C table on an OpenCL
// device selected with "any" (PoCL in CI) and compares with ops::compute_node, rel. tol 1e-4.
// Kernel binaries are cached under the build tree so reruns skip PoCL's slow compiles.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "opencl_plugin_test_util.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

using opencl_test::attrs;
using opencl_test::Case;
using opencl_test::In;
using opencl_test::Ints;
using opencl_test::make_node;
using opencl_test::random_tensor;
using opencl_test::TinyRegion;

const tsr_plugin* load_mali() {
  static const tsr_plugin* table = opencl_test::load_plugin("libtessera-plugin-mali.so");
  return table;
}

class MaliOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plugin_ = load_mali();
    ASSERT_NE(plugin_, nullptr) << "libtessera-plugin-mali.so did not load: " << dlerror();
    instance_ = &opencl_test::raw_instance(plugin_);
    ASSERT_EQ(instance_->error, "");
    device_ = instance_->device();
    if (device_.empty()) {
      TESSERA_SKIP_WITHOUT("an OpenCL device") << instance_->unusable;
    }
    cache_dir_ = std::string(TESSERA_BINARY_DIR) + "/tests/opencl/kernel-cache";
  }

  // Runs `nodes` (ops on values 0..) on mali and the reference; compares every region output.
  // Values: the case inputs first, then each node's single output, in order.
  void check_chain(const std::vector<In>& inputs, std::vector<Node> nodes, int64_t opset = 13,
                   float rtol = 1e-4f) {
    Case c(inputs, std::move(nodes), opset);
    Tensor result;
    ASSERT_TRUE(opencl_test::run_case(plugin_, device_, c, cache_dir_, nullptr, &result));

    const Tensor& expected = c.values.back();
    ASSERT_EQ(result.numel(), expected.numel());
    const float* got = result.data<float>();
    const float* want = expected.data<float>();
    int bad = 0;
    for (int64_t i = 0; i < expected.numel() && bad < 5; ++i) {
      const float tol = rtol * std::max(1.0f, std::fabs(want[i]));
      if (!(std::fabs(got[i] - want[i]) <= tol)) {
        ADD_FAILURE() << c.nodes.back().op_type << " element " << i << ": mali " << got[i]
                      << " vs reference " << want[i];
        ++bad;
      }
    }
  }

  void check_node(const std::string& op, const std::vector<In>& inputs, Attributes attrs = {},
                  int64_t opset = 13) {
    SCOPED_TRACE(op);
    check_chain(inputs, {opencl_test::make_node_over_inputs(op, inputs.size(), std::move(attrs))},
                opset);
  }

  const tsr_plugin* plugin_ = nullptr;
  opencl_test::RawInstance* instance_ = nullptr;
  std::string device_;  // id of the first usable device
  std::string cache_dir_;
};

TEST_F(MaliOpsTest, ConvDirect3x3PadBias) {
  check_node("Conv",
             {{random_tensor({2, 3, 9, 10}, 1)},
              {random_tensor({4, 3, 3, 3}, 2), true},
              {random_tensor({4}, 3), true}},
             attrs({{"pads", Ints{1, 1, 1, 1}}}));
}

TEST_F(MaliOpsTest, ConvGroupsStridesDilationsAsymmetricPads) {
  check_node("Conv", {{random_tensor({1, 4, 11, 12}, 4)}, {random_tensor({6, 2, 3, 2}, 5), true}},
             attrs({{"group", int64_t{2}},
                    {"strides", Ints{2, 1}},
                    {"dilations", Ints{2, 2}},
                    {"pads", Ints{1, 0, 2, 1}}}));
}

TEST_F(MaliOpsTest, ConvPointwise1x1) {
  check_node("Conv", {{random_tensor({1, 8, 5, 7}, 6)},
                      {random_tensor({5, 8, 1, 1}, 7), true},
                      {random_tensor({5}, 8), true}});
}

TEST_F(MaliOpsTest, ConvDepthwiseSameUpperStride2) {
  check_node("Conv",
             {{random_tensor({1, 6, 9, 9}, 9)},
              {random_tensor({6, 1, 3, 3}, 10), true},
              {random_tensor({6}, 11), true}},
             attrs({{"group", int64_t{6}},
                    {"strides", Ints{2, 2}},
                    {"auto_pad", std::string("SAME_UPPER")}}));
}

TEST_F(MaliOpsTest, ConvNarrowOutputUsesOneOutputPerItem) {
  check_node("Conv", {{random_tensor({1, 2, 5, 3}, 12)}, {random_tensor({3, 2, 3, 3}, 13), true}},
             attrs({{"pads", Ints{1, 1, 1, 1}}}));
}

TEST_F(MaliOpsTest, BatchNormalization) {
  check_node("BatchNormalization",
             {{random_tensor({2, 3, 4, 5}, 14)},
              {random_tensor({3}, 15), true},
              {random_tensor({3}, 16), true},
              {random_tensor({3}, 17), true},
              {random_tensor({3}, 18, 0.5f, 2.0f), true}},
             attrs({{"epsilon", 1e-3f}}));
}

TEST_F(MaliOpsTest, Activations) {
  const Tensor x = random_tensor({2, 3, 4, 5}, 19, -8.0f, 8.0f);
  check_node("Relu", {{x}});
  check_node("Sigmoid", {{x}});
  check_node("HardSwish", {{x}});
  check_node("HardSigmoid", {{x}});
  check_node("HardSigmoid", {{x}}, attrs({{"alpha", 0.25f}, {"beta", 0.4f}}));
  check_node("Erf", {{x}});
  check_node("LeakyRelu", {{x}}, attrs({{"alpha", 0.2f}}));
  check_node("Clip", {{x},
                      {Tensor::from_vector<float>({}, {-1.5f}), true},
                      {Tensor::from_vector<float>({}, {2.0f}), true}});
  check_node("Clip", {{x}}, attrs({{"min", 0.0f}, {"max", 6.0f}}), /*opset=*/6);
}

TEST_F(MaliOpsTest, AddMulBroadcasting) {
  const Tensor x = random_tensor({2, 3, 4, 5}, 20);
  check_node("Add", {{x}, {random_tensor({2, 3, 4, 5}, 21)}});
  check_node("Add", {{x}, {random_tensor({1, 3, 1, 1}, 22), true}});
  check_node("Mul", {{x}, {random_tensor({3, 1, 1}, 23)}});
  check_node("Mul", {{random_tensor({4, 1}, 24)}, {random_tensor({1, 6}, 25)}});
  check_node("Add", {{x}, {Tensor::from_vector<float>({}, {0.75f}), true}});
  check_node("Sub", {{x}, {random_tensor({2, 3, 4, 5}, 26)}});
  check_node("Sub", {{random_tensor({1, 3, 1, 1}, 27), true}, {x}});
  // Divisors kept away from zero: the reference and the kernel round a / b alike only there.
  check_node("Div", {{x}, {random_tensor({2, 3, 4, 5}, 28, 0.5f, 2.0f)}});
  check_node("Div", {{x}, {Tensor::from_vector<float>({}, {1.4142135f}), true}});
}

// Transpose: channel shuffles and the NCHW <-> NHWC moves of channels-last blocks, the default
// (reversed) permutation, rank 2 to 6 (shufflenet's channel shuffle is a rank-5 transpose);
// rank 7 is refused.
TEST_F(MaliOpsTest, TransposeEveryPermutationShape) {
  const Tensor x = random_tensor({2, 3, 4, 5}, 80);
  check_node("Transpose", {{x}}, attrs({{"perm", Ints{0, 2, 3, 1}}}));
  check_node("Transpose", {{x}}, attrs({{"perm", Ints{0, 3, 1, 2}}}));
  check_node("Transpose", {{x}}, attrs({{"perm", Ints{1, 0, 3, 2}}}));
  check_node("Transpose", {{x}});
  check_node("Transpose", {{random_tensor({3, 7, 5}, 81)}}, attrs({{"perm", Ints{0, 2, 1}}}));
  check_node("Transpose", {{random_tensor({6, 9}, 82)}});
  check_node("Transpose", {{random_tensor({2, 2, 3, 4, 5}, 84)}},
             attrs({{"perm", Ints{0, 2, 1, 3, 4}}}));
  check_node("Transpose", {{random_tensor({2, 3, 1, 2, 4, 3}, 85)}},
             attrs({{"perm", Ints{5, 0, 3, 1, 4, 2}}}));
  Case big({{random_tensor({1, 2, 2, 2, 2, 1, 2}, 83)}},
           {opencl_test::make_node_over_inputs("Transpose", 1, {})}, 13);
  tsr_support support{};
  support.struct_size = sizeof(support);
  ASSERT_EQ(plugin_->query_node(instance_->handle, device_.c_str(), &big.region, 0, &support),
            TSR_OK);
  EXPECT_EQ(support.supported, 0);
  EXPECT_NE(std::string(support.reason).find("1 to 6 is implemented"), std::string::npos)
      << support.reason;
}

// Slice with constant starts/ends/axes/steps: positive and negative steps, negative and
// out-of-range bounds (clamped), omitted axes, and the opset-1 attribute form.
TEST_F(MaliOpsTest, SliceStartsEndsAxesSteps) {
  const Tensor x = random_tensor({2, 6, 5, 7}, 90);
  const auto ints = [](std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return In{Tensor::from_vector<int64_t>({n}, std::move(v)), true};
  };
  check_node("Slice", {{x}, ints({1}), ints({4}), ints({1})});
  check_node("Slice", {{x}, ints({0, 1}), ints({3, 100}), ints({1, 3}), ints({1, 2})});
  check_node("Slice", {{x}, ints({-1}), ints({-100}), ints({-1}), ints({-2})});
  check_node("Slice", {{x}, ints({0, 0, 2}), ints({1, 6, -1})});
  check_node("Slice", {{random_tensor({9, 4}, 91)}},
             attrs({{"starts", Ints{2}}, {"ends", Ints{8}}, {"axes", Ints{0}}}), 9);
}

// LayerNormalization over the last axis (with bias, channels-last as ConvNeXt writes it) and
// over the last two (axis 1 of a rank-3 input, no bias).
TEST_F(MaliOpsTest, LayerNormalizationRows) {
  check_node("LayerNormalization",
             {{random_tensor({2, 5, 6, 8}, 84)},
              {random_tensor({8}, 85), true},
              {random_tensor({8}, 86), true}},
             attrs({{"epsilon", 1e-6f}}), 17);
  check_node("LayerNormalization",
             {{random_tensor({3, 4, 7}, 87)}, {random_tensor({4, 7}, 88), true}},
             attrs({{"axis", int64_t{1}}}), 17);
}

// GELU as exporters write it, after a Conv (whose output is NCHW4c under the default layout):
// Div by sqrt(2) (NCHW), Erf, Add 1, Mul by x, Mul 0.5; the values match the reference, so the
// NCHW4c padding never turned into NaN.
TEST_F(MaliOpsTest, GeluAfterConv) {
  std::vector<In> inputs = {{random_tensor({1, 6, 7, 7}, 70)},
                            {random_tensor({6, 6, 1, 1}, 71), true},
                            {Tensor::from_vector<float>({}, {1.4142135f}), true},
                            {Tensor::from_vector<float>({}, {1.0f}), true},
                            {Tensor::from_vector<float>({}, {0.5f}), true}};
  const auto node = [](const std::string& op, std::vector<ValueId> in) {
    return opencl_test::make_node(op, std::move(in));
  };
  // Values: 0 x, 1 w, 2 sqrt2, 3 one, 4 half, then 5 conv, 6 div, 7 erf, 8 add, 9 mul, 10 mul.
  check_chain(inputs, {node("Conv", {0, 1}), node("Div", {5, 2}), node("Erf", {6}),
                       node("Add", {7, 3}), node("Mul", {5, 8}), node("Mul", {9, 4})});
}

TEST_F(MaliOpsTest, Pools) {
  const Tensor x = random_tensor({1, 3, 9, 8}, 26);
  check_node(
      "MaxPool", {{x}},
      attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
  check_node(
      "MaxPool", {{x}},
      attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}));
  check_node(
      "AveragePool", {{x}},
      attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
  check_node("AveragePool", {{x}},
             attrs({{"kernel_shape", Ints{3, 2}},
                    {"strides", Ints{2, 2}},
                    {"pads", Ints{1, 0, 1, 1}},
                    {"count_include_pad", int64_t{1}}}));
  check_node("GlobalAveragePool", {{x}});
}

TEST_F(MaliOpsTest, GemmAndMatMul) {
  check_node("Gemm",
             {{random_tensor({3, 7}, 27)},
              {random_tensor({5, 7}, 28), true},
              {random_tensor({5}, 29), true}},
             attrs({{"transB", int64_t{1}}}));
  check_node(
      "Gemm",
      {{random_tensor({7, 3}, 30)}, {random_tensor({7, 4}, 31)}, {random_tensor({3, 4}, 32)}},
      attrs({{"transA", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}));
  check_node("MatMul", {{random_tensor({6, 9}, 33)}, {random_tensor({9, 2}, 34), true}});
}

TEST_F(MaliOpsTest, SoftmaxConcatAndAliases) {
  check_node("Softmax", {{random_tensor({2, 3, 10}, 35, -5.0f, 5.0f)}});
  check_node("Softmax", {{random_tensor({2, 3, 4}, 36, -5.0f, 5.0f)}},
             attrs({{"axis", int64_t{1}}}),
             /*opset=*/11);
  check_node("Concat",
             {{random_tensor({2, 3, 4}, 37)},
              {random_tensor({2, 1, 4}, 38)},
              {random_tensor({2, 2, 4}, 39), true}},
             attrs({{"axis", int64_t{1}}}));
  check_node("Flatten", {{random_tensor({2, 3, 4}, 40)}}, attrs({{"axis", int64_t{1}}}));
  check_node("Reshape",
             {{random_tensor({2, 3, 4}, 41)}, {Tensor::from_vector<int64_t>({2}, {4, 6}), true}});
}

// ReduceMean over every spatial axis runs as a global average pool: axes from the attribute
// (opset 13) or a constant input (opset 18), negative or positive, keepdims 1 and 0. Other axes
// are refused with the reason.
TEST_F(MaliOpsTest, ReduceMeanOverSpatialAxes) {
  const Tensor x = random_tensor({2, 6, 5, 7}, 60);
  check_node("ReduceMean", {{x}}, attrs({{"axes", Ints{2, 3}}}));
  check_node("ReduceMean", {{x}}, attrs({{"axes", Ints{-1, -2}}, {"keepdims", int64_t{0}}}));
  check_node("ReduceMean", {{x}, {Tensor::from_vector<int64_t>({2}, {2, 3}), true}}, {}, 18);
  check_node("ReduceMean", {{x}, {Tensor::from_vector<int64_t>({2}, {-2, -1}), true}},
             attrs({{"keepdims", int64_t{0}}}), 18);
  check_node("ReduceMean", {{random_tensor({1, 3, 10}, 61)}}, attrs({{"axes", Ints{2}}}));

  // A mean over channels (LeViT) runs the shared any-axis reduction.
  check_node("ReduceMean", {{x}}, attrs({{"axes", Ints{1}}}));
}

TEST_F(MaliOpsTest, ChainConvReluPoolFlattenGemm) {
  std::vector<In> inputs = {{random_tensor({1, 3, 8, 8}, 42)},
                            {random_tensor({4, 3, 3, 3}, 43), true},
                            {random_tensor({4}, 44), true},
                            {random_tensor({5, 4}, 45), true},
                            {random_tensor({5}, 46), true}};
  auto node = [](const char* op, std::vector<ValueId> in, Attributes a = {}) {
    Node n;
    n.name = std::string(op) + "_" + std::to_string(in[0]);
    n.op_type = op;
    n.inputs = std::move(in);
    n.attrs = std::move(a);
    return n;
  };
  check_chain(inputs, {node("Conv", {0, 1, 2}, attrs({{"pads", Ints{1, 1, 1, 1}}})),
                       node("Relu", {5}), node("GlobalAveragePool", {6}), node("Flatten", {7}),
                       node("Gemm", {8, 3, 4}, attrs({{"transB", int64_t{1}}}))});
}

TEST_F(MaliOpsTest, UnknownOpIsUnsupportedWithReason) {
  TinyRegion t("t", "Hardmax");
  tsr_tensor* values = t.values;
  tsr_node& node = t.node;
  tsr_region& region = t.region;
  tsr_support support{};
  support.struct_size = sizeof(support);
  ASSERT_EQ(plugin_->query_node(instance_->handle, device_.c_str(), &region, 0, &support), TSR_OK);
  EXPECT_EQ(support.supported, 0);
  EXPECT_NE(std::string(support.reason).find("Hardmax"), std::string::npos) << support.reason;
  // A float64-free but int32 Relu is refused too, with the dtype named.
  values[0].dtype = values[1].dtype = TSR_DTYPE_INT32;
  node.op_type = "Relu";
  ASSERT_EQ(plugin_->query_node(instance_->handle, device_.c_str(), &region, 0, &support), TSR_OK);
  EXPECT_EQ(support.supported, 0);
  EXPECT_NE(std::string(support.reason).find("float32"), std::string::npos) << support.reason;
}

TEST_F(MaliOpsTest, KernelBuildFailureIsCompileFailedNamingDevice) {
  // Redefining the shared activation helper's name breaks every kernel: a real compiler error
  // with a build log. The target option build_options carries it, as a deployment would.
  opencl_test::RawInstance& broken =
      opencl_test::raw_instance(plugin_, {{"build_options", "-Dtsr_activate=)"}});
  ASSERT_EQ(broken.error, "");
  ASSERT_FALSE(broken.device().empty());
  char text[8192] = "";
  TinyRegion t("relu0", "Relu");
  tsr_region& region = t.region;
  tsr_region_handle handle = nullptr;
  tsr_compile_options options{};
  options.struct_size = sizeof(options);
  const tsr_status st = plugin_->compile_region(broken.handle, broken.device().c_str(), &region,
                                                &options, &handle, {text, sizeof(text)});
  EXPECT_EQ(st, TSR_COMPILE_FAILED) << text;
  EXPECT_EQ(handle, nullptr);
  const std::string msg = text;
  EXPECT_NE(msg.find("relu0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("elementwise.cl"), std::string::npos) << msg;
  EXPECT_NE(msg.find("build log"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessera
