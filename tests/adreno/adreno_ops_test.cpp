// Differential tests of the adreno plugin against the reference kernels (tessera::ops): each case
// builds a one-node (or small chain) region, runs it through the plugin's C table on an OpenCL
// device with images selected with "any" (PoCL in CI) and compares with ops::compute_node,
// rel. tol 1e-4 in fp32. Also: device claim, the image-too-large fallback answer, fp16 storage.
// Kernel binaries are cached under the build tree so reruns skip PoCL's slow compiles.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "knob_grid.hpp"
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

const tsr_plugin* load_adreno() {
  static const tsr_plugin* table = opencl_test::load_plugin("libtessera-plugin-adreno.so");
  return table;
}

class AdrenoOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plugin_ = load_adreno();
    ASSERT_NE(plugin_, nullptr) << "libtessera-plugin-adreno.so did not load: " << dlerror();
    instance_ = &opencl_test::raw_instance(plugin_);
    ASSERT_EQ(instance_->error, "");
    device_ = instance_->device();
    if (device_.empty()) {
      TESSERA_SKIP_WITHOUT("an OpenCL device with image support") << instance_->unusable;
    }
    cache_dir_ = std::string(TESSERA_BINARY_DIR) + "/tests/adreno/kernel-cache";
  }

  // Runs the case on adreno with `precision`; returns the output (empty tensor on failure).
  Tensor run(Case& c, const char* precision = "fp32") {
    Tensor result;
    return opencl_test::run_case(plugin_, device_, c, cache_dir_, precision, &result,
                                 target_options_)
               ? result
               : Tensor();
  }

  // Largest |got - want| / max(1, |want|).
  static double max_rel_error(const Tensor& got, const Tensor& want) {
    double worst = 0.0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double w = want.data<float>()[i];
      const double g = got.data<float>()[i];
      const double e = std::isnan(g) ? 1e30 : std::fabs(g - w) / std::max(1.0, std::fabs(w));
      worst = std::max(worst, e);
    }
    return worst;
  }

  void check_chain(const std::vector<In>& inputs, std::vector<Node> nodes, int64_t opset = 13) {
    Case c(inputs, std::move(nodes), opset);
    const Tensor got = run(c);
    ASSERT_EQ(got.numel(), c.values.back().numel());
    EXPECT_LE(max_rel_error(got, c.values.back()), 1e-4) << c.nodes.back().op_type;
  }

  void check_node(const std::string& op, const std::vector<In>& inputs, Attributes a = {},
                  int64_t opset = 13) {
    SCOPED_TRACE(op);
    check_chain(inputs, {opencl_test::make_node_over_inputs(op, inputs.size(), std::move(a))},
                opset);
  }

  // Every config of the knob grid (a sample in CI) of `schedule` for one-`op` cases, asked for as
  // the compile's node config, gives the reference values, and `kernel` is the one that ran.
  void check_every_config(const std::string& op, const std::string& schedule,
                          const std::string& kernel,
                          const std::vector<std::pair<std::vector<In>, Attributes>>& cases) {
    const std::string dump = std::string(TESSERA_BINARY_DIR) + "/tests/adreno/dump-" + schedule;
    // One directory per schedule: ctest runs this file's tests as parallel processes.
    for (const auto& [inputs, a] : cases) {
      Case c(inputs, {opencl_test::make_node_over_inputs(op, inputs.size(), a)}, 13);
      tsr_node_tuning tuning{};
      tuning.struct_size = sizeof(tuning);
      char text[512] = "";
      ASSERT_EQ(plugin_->describe_node(instance_->handle, device_.c_str(), &c.region, 0, &tuning,
                                       {text, sizeof(text)}),
                TSR_OK)
          << text;
      std::vector<std::string> names;
      std::vector<std::vector<int64_t>> values;
      for (int32_t s = 0; s < tuning.num_schedules; ++s) {
        const tsr_schedule_desc& d = tuning.schedules[s];
        if (d.name != schedule) continue;
        for (int32_t k = 0; k < d.num_knobs; ++k) {
          names.push_back(d.knobs[k].name);
          values.emplace_back(d.knobs[k].values, d.knobs[k].values + d.knobs[k].num_values);
        }
      }
      ASSERT_FALSE(names.empty()) << "describe_node lists no " << schedule;
      for (const std::vector<int64_t>& point :
           tessera_test::knob_grid("schedule " + schedule, values)) {
        std::vector<tsr_knob> knobs;
        std::string label;
        for (size_t k = 0; k < names.size(); ++k) {
          knobs.push_back({names[k].c_str(), point[k]});
          label += " " + names[k] + "=" + std::to_string(point[k]);
        }
        SCOPED_TRACE(schedule + label);
        tsr_node_config config{};
        config.struct_size = sizeof(config);
        config.node = 0;
        config.schedule = schedule.c_str();
        config.num_knobs = static_cast<int32_t>(knobs.size());
        config.knobs = knobs.data();
        std::filesystem::remove_all(dump);
        std::filesystem::create_directories(dump);
        Tensor got;
        ASSERT_TRUE(opencl_test::run_case(plugin_, device_, c, cache_dir_, "fp32", &got, {},
                                          {config}, dump));
        EXPECT_TRUE(std::filesystem::exists(dump + "/" + kernel + ".cl"))
            << kernel << " did not run";
        EXPECT_LE(max_rel_error(got, c.values.back()), 1e-4);
      }
    }
  }

  const tsr_plugin* plugin_ = nullptr;
  opencl_test::RawInstance* instance_ = nullptr;
  std::string device_;  // id of the first usable device
  std::string cache_dir_;
  // The target options every run passes (a deployment target's `options:`).
  std::vector<std::pair<std::string, std::string>> target_options_;
};

TEST_F(AdrenoOpsTest, ConvDirect3x3PadBiasOddChannels) {
  check_node("Conv",
             {{random_tensor({2, 5, 9, 10}, 1)},
              {random_tensor({6, 5, 3, 3}, 2), true},
              {random_tensor({6}, 3), true}},
             attrs({{"pads", Ints{1, 1, 1, 1}}}));
}

TEST_F(AdrenoOpsTest, ConvGroupsStridesDilationsAsymmetricPads) {
  check_node("Conv", {{random_tensor({1, 6, 11, 12}, 4)}, {random_tensor({9, 2, 3, 2}, 5), true}},
             attrs({{"group", int64_t{3}},
                    {"strides", Ints{2, 1}},
                    {"dilations", Ints{2, 2}},
                    {"pads", Ints{1, 0, 2, 1}}}));
}

TEST_F(AdrenoOpsTest, ConvPointwise1x1) {
  check_node("Conv", {{random_tensor({1, 7, 6, 13}, 6)},
                      {random_tensor({10, 7, 1, 1}, 7), true},
                      {random_tensor({10}, 8), true}});
}

TEST_F(AdrenoOpsTest, ConvDepthwiseSameUpperStride2) {
  check_node("Conv",
             {{random_tensor({2, 6, 10, 9}, 9)},
              {random_tensor({6, 1, 3, 3}, 10), true},
              {random_tensor({6}, 11), true}},
             attrs({{"group", int64_t{6}},
                    {"strides", Ints{2, 2}},
                    {"auto_pad", std::string("SAME_UPPER")}}));
}

TEST_F(AdrenoOpsTest, ConvStridedDirectNarrowOutput) {
  check_node("Conv", {{random_tensor({1, 3, 7, 5}, 12)}, {random_tensor({4, 3, 2, 2}, 13), true}},
             attrs({{"strides", Ints{2, 2}}}));
}

// The conv knobs describe_node lists (work-group shape, outputs per work-item) give the reference
// values at every config checked, forced through the target options `knob.<name>`: in CI a sample
// in which every candidate of every knob appears, in the slow set the whole grid (knob_grid.hpp).
// Odd output widths leave partial OPW strips.
TEST_F(AdrenoOpsTest, ConvKnobSweep) {
  Case described(
      {{random_tensor({1, 5, 7, 11}, 50)},
       {random_tensor({6, 5, 3, 3}, 51), true},
       {random_tensor({6}, 52), true}},
      {opencl_test::make_node_over_inputs("Conv", 3, attrs({{"pads", Ints{1, 1, 1, 1}}}))}, 13);
  tsr_node_tuning tuning{};
  tuning.struct_size = sizeof(tuning);
  char described_text[512] = "";
  ASSERT_EQ(plugin_->describe_node(instance_->handle, device_.c_str(), &described.region, 0,
                                   &tuning, {described_text, sizeof(described_text)}),
            TSR_OK)
      << described_text;
  ASSERT_GT(tuning.num_schedules, 0) << "describe_node lists no conv schedule";
  // Copied out: the next describe_node call would overwrite the plugin's storage.
  const tsr_schedule_desc& d = tuning.schedules[tuning.default_schedule];
  const std::string schedule = d.name;
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> values;
  for (int32_t k = 0; k < d.num_knobs; ++k) {
    names.push_back(d.knobs[k].name);
    values.emplace_back(d.knobs[k].values, d.knobs[k].values + d.knobs[k].num_values);
  }
  for (const std::vector<int64_t>& point :
       tessera_test::knob_grid("schedule " + schedule, values)) {
    std::string knobs;
    target_options_.clear();
    for (size_t k = 0; k < names.size(); ++k) {
      knobs += (k ? "," : "") + names[k] + "=" + std::to_string(point[k]);
      target_options_.emplace_back("knob." + names[k], std::to_string(point[k]));
    }
    SCOPED_TRACE(knobs);
    check_node("Conv",
               {{random_tensor({1, 5, 7, 11}, 50)},
                {random_tensor({6, 5, 3, 3}, 51), true},
                {random_tensor({6}, 52), true}},
               attrs({{"pads", Ints{1, 1, 1, 1}}}));
    check_node("Conv", {{random_tensor({1, 6, 6, 9}, 53)}, {random_tensor({6, 1, 3, 3}, 54), true}},
               attrs({{"group", int64_t{6}}, {"pads", Ints{1, 1, 1, 1}}}));
    check_node("Conv", {{random_tensor({1, 6, 5, 7}, 55)}, {random_tensor({9, 2, 1, 3}, 56), true}},
               attrs({{"group", int64_t{3}}}));
    check_node("Conv",
               {{random_tensor({1, 6, 5, 7}, 57)}, {random_tensor({5, 6, 1, 1}, 58), true}});
  }
  target_options_.clear();
}

// The gemm schedule (group-1 convolutions; first on a GPU, after the shape's own schedule
// elsewhere): strides, pads, dilations, odd channel counts and planes that leave partial pixel
// strips and output texel groups, with the reduction split up to 32 ways.
TEST_F(AdrenoOpsTest, ConvGemmEveryConfig) {
  check_every_config(
      "Conv", "conv2d.image.gemm", "conv2d_gemm_image",
      {{{{random_tensor({1, 9, 7, 11}, 60)},
         {random_tensor({6, 9, 3, 3}, 61), true},
         {random_tensor({6}, 62), true}},
        attrs({{"pads", Ints{1, 0, 2, 1}}, {"strides", Ints{2, 1}}})},
       {{{random_tensor({2, 13, 5, 6}, 63)}, {random_tensor({11, 13, 2, 3}, 64), true}},
        attrs({{"dilations", Ints{2, 1}}, {"pads", Ints{1, 1, 1, 1}}})},
       {{{random_tensor({1, 36, 3, 3}, 65)}, {random_tensor({20, 36, 1, 1}, 66), true}}, {}}});
}

// Gemm with the reduction split (classifier heads): transposes, a broadcast C, K not a multiple
// of the split, N narrower than a work-group.
TEST_F(AdrenoOpsTest, GemmSplitEveryConfig) {
  check_every_config("Gemm", "gemm.split", "gemm_split_f32",
                     {{{{random_tensor({1, 75}, 70)},
                        {random_tensor({13, 75}, 71), true},
                        {random_tensor({13}, 72), true}},
                       attrs({{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}})},
                      {{{random_tensor({37, 3}, 73)}, {random_tensor({37, 5}, 74), true}},
                       attrs({{"transA", int64_t{1}}})}});
}

// Batched MatMul's output tiles: attention-style batched operands and a shared 2-D B, with M and
// N that leave partial tiles.
TEST_F(AdrenoOpsTest, MatMulTilesEveryConfig) {
  check_every_config("MatMul", "matmul.batched", "gemm_batched_f32",
                     {{{{random_tensor({2, 3, 7, 5}, 80)}, {random_tensor({2, 3, 5, 9}, 81)}}, {}},
                      {{{random_tensor({1, 10, 6}, 82)}, {random_tensor({6, 11}, 83), true}}, {}}});
}

// LayerNormalization with a group of work-items per row at every threads_per_row and
// rows_per_group: rows shorter and longer than the group, a row count no group size divides,
// with and without bias.
TEST_F(AdrenoOpsTest, LayerNormGroupEveryConfig) {
  check_every_config("LayerNormalization", "layer_norm.group", "layer_norm_group_f32",
                     {{{{random_tensor({1, 13, 5}, 90)},
                        {random_tensor({5}, 91), true},
                        {random_tensor({5}, 92), true}},
                       attrs({{"axis", int64_t{-1}}})},
                      {{{random_tensor({2, 3, 97}, 93)}, {random_tensor({3, 97}, 94), true}},
                       attrs({{"axis", int64_t{1}}, {"epsilon", 1e-3f}})}});
}

// InstanceNormalization with a work-group per (n, c) plane at every threads_per_group: planes
// shorter and longer than the group, rank 3 and 4, a batch of 2.
TEST_F(AdrenoOpsTest, InstanceNormSplitEveryConfig) {
  check_every_config("InstanceNormalization", "norm.group.split", "group_norm_split_f32",
                     {{{{random_tensor({1, 3, 5, 7}, 95)},
                        {random_tensor({3}, 96), true},
                        {random_tensor({3}, 97), true}},
                       {}},
                      {{{random_tensor({2, 4, 301}, 98)},
                        {random_tensor({4}, 99), true},
                        {random_tensor({4}, 100), true}},
                       attrs({{"epsilon", 1e-3f}})}});
}

// InstanceNormalization with each plane split into `parts` chunks (their statistics combined in
// a second step) at every threads_per_group and parts: planes shorter than the chunks, planes no
// chunk count divides, a batch of 2.
TEST_F(AdrenoOpsTest, InstanceNormChunkedEveryConfig) {
  check_every_config("InstanceNormalization", "norm.group.parts", "group_norm_partial_f32",
                     {{{{random_tensor({1, 2, 5, 7}, 101)},
                        {random_tensor({2}, 102), true},
                        {random_tensor({2}, 103), true}},
                       {}},
                      {{{random_tensor({2, 3, 1001}, 104)},
                        {random_tensor({3}, 105), true},
                        {random_tensor({3}, 106), true}},
                       attrs({{"epsilon", 1e-3f}})}});
}

// Reductions with a work-group per output at every thread count: a long innermost axis no count
// divides (ReduceSum, axes as an input), outer and inner axes at once (ReduceMax), fewer
// elements than threads (ReduceLogSumExp) and a product.
TEST_F(AdrenoOpsTest, ReduceAxesGroupEveryConfig) {
  check_every_config("ReduceSum", "reduce.axes.group", "reduce_axes_group_f32",
                     {{{{random_tensor({2, 3, 1001}, 111)},
                        {Tensor::from_vector<int64_t>({1}, {-1}), true}},
                       {}}});
  check_every_config("ReduceMax", "reduce.axes.group", "reduce_axes_group_f32",
                     {{{{random_tensor({3, 5, 7, 2}, 112)}},
                       attrs({{"axes", std::vector<int64_t>{0, 2}}})}});
  check_every_config("ReduceLogSumExp", "reduce.axes.group", "reduce_axes_group_f32",
                     {{{{random_tensor({4, 9}, 113)}},
                       attrs({{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}})}});
  std::vector<float> near_one(80);  // a product of 40 that stays far from 0 and overflow
  for (size_t i = 0; i < near_one.size(); ++i) {
    near_one[i] = 0.9f + 0.006f * static_cast<float>(i % 37);
  }
  check_every_config("ReduceProd", "reduce.axes.group", "reduce_axes_group_f32",
                     {{{{Tensor::from_vector<float>({2, 40}, near_one)}},
                       attrs({{"axes", std::vector<int64_t>{1}}})}});
}

// The __local-tiled MatMul at every group side, per-item tile and k_tile, over partial tiles
// and a K that no k_tile divides.
TEST_F(AdrenoOpsTest, MatMulLocalTilesEveryConfig) {
  check_every_config("MatMul", "matmul.tiled", "gemm_tiled_f32",
                     {{{{random_tensor({2, 37, 19}, 84)}, {random_tensor({2, 19, 41}, 85)}}, {}},
                      {{{random_tensor({1, 10, 6}, 82)}, {random_tensor({6, 11}, 83), true}}, {}}});
}

// Knob options are checked before anything compiles: an unknown knob, a value no schedule has
// and a non-integer are refused naming the option; anything else is refused as unknown.
TEST_F(AdrenoOpsTest, KnobOptionsAreCheckedNamingTheOption) {
  const auto refusal = [&](const char* name, const char* value) {
    return opencl_test::option_refusal(plugin_, name, value);
  };
  EXPECT_EQ(refusal("knob.opw", "2"), "ok");
  EXPECT_EQ(refusal("knob.wg_x", "8"), "ok");
  EXPECT_EQ(refusal("knob.opw", "3"),
            "adreno: option 'knob.opw' = 3 is not a candidate of any schedule with that knob "
            "(candidates: 1, 2, 4)");
  EXPECT_EQ(refusal("knob.opw", "two"), "adreno: option 'knob.opw' = 'two' is not an integer");
  EXPECT_EQ(refusal("knob.tile", "2"),
            "adreno: option 'knob.tile': no adreno schedule has a knob "
            "'tile'");
  EXPECT_NE(refusal("layout", "nchw").find("unknown option 'layout'"), std::string::npos);
}

TEST_F(AdrenoOpsTest, BatchNormalization) {
  check_node("BatchNormalization", {{random_tensor({2, 5, 4, 3}, 14)},
                                    {random_tensor({5}, 15), true},
                                    {random_tensor({5}, 16), true},
                                    {random_tensor({5}, 17), true},
                                    {random_tensor({5}, 18, 0.5f, 2.0f), true}});
}

TEST_F(AdrenoOpsTest, ReluClipAdd) {
  check_node("Relu", {{random_tensor({2, 3, 4, 5}, 19)}});
  check_node("Clip", {{random_tensor({1, 6, 3, 3}, 20)},
                      {Tensor::from_vector({}, std::vector<float>{-0.3f}), true},
                      {Tensor::from_vector({}, std::vector<float>{0.4f}), true}});
  check_node("Clip", {{random_tensor({1, 6, 3, 3}, 21)}}, attrs({{"min", -0.2f}, {"max", 0.5f}}),
             6);
  check_node("Add", {{random_tensor({2, 5, 3, 4}, 22)}, {random_tensor({2, 5, 3, 4}, 23)}});
}

// Lower-rank element-wise values use the texture layout of their 4-D view (dims left-padded).
TEST_F(AdrenoOpsTest, LowerRankElementwiseUsesThe4DView) {
  check_node("Add", {{random_tensor({2, 3, 9}, 44)}, {random_tensor({2, 3, 9}, 45), true}});
  check_node("Clip", {{random_tensor({3, 8}, 46)},
                      {Tensor::from_vector({}, std::vector<float>{0.0f}), true},
                      {Tensor::from_vector({}, std::vector<float>{0.5f}), true}});
  check_chain({{random_tensor({7}, 47)}, {random_tensor({7}, 48)}},
              {make_node("Add", {0, 1}), make_node("Relu", {2})});
}

TEST_F(AdrenoOpsTest, Pools) {
  check_node(
      "MaxPool", {{random_tensor({1, 5, 9, 8}, 24)}},
      attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
  check_node(
      "MaxPool", {{random_tensor({1, 3, 8, 8}, 25)}},
      attrs({{"kernel_shape", Ints{2, 2}}, {"ceil_mode", int64_t{1}}, {"strides", Ints{3, 3}}}));
  check_node("AveragePool", {{random_tensor({2, 6, 7, 7}, 26)}},
             attrs({{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}));
  check_node("AveragePool", {{random_tensor({1, 4, 7, 7}, 27)}},
             attrs({{"kernel_shape", Ints{3, 2}},
                    {"pads", Ints{1, 0, 1, 1}},
                    {"count_include_pad", int64_t{1}}}));
  check_node("GlobalAveragePool", {{random_tensor({2, 7, 5, 6}, 28)}});
}

TEST_F(AdrenoOpsTest, FlattenReshapeGemmConvertToBuffers) {
  check_node("Flatten", {{random_tensor({2, 3, 4, 5}, 29)}});
  check_node("Gemm",
             {{random_tensor({3, 8}, 30)},
              {random_tensor({5, 8}, 31), true},
              {random_tensor({5}, 32), true}},
             attrs({{"transB", int64_t{1}}, {"alpha", 0.5f}}));
}

// Texture -> buffer -> texture: Conv, Relu, MaxPool, Flatten (image converted to a buffer), Gemm,
// and Reshape back to 4-D feeding a Relu (buffer converted to an image).
TEST_F(AdrenoOpsTest, ChainCrossesLayouts) {
  std::vector<In> in = {{random_tensor({1, 3, 8, 8}, 33)},
                        {random_tensor({8, 3, 3, 3}, 34), true},
                        {random_tensor({8}, 35), true},
                        {random_tensor({6, 128}, 36), true},
                        {Tensor::from_vector({4}, std::vector<int64_t>{1, 6, 1, 1}), true}};
  std::vector<Node> nodes = {
      make_node("Conv", {0, 1, 2}, attrs({{"pads", Ints{1, 1, 1, 1}}})),
      make_node("Relu", {5}),
      make_node("MaxPool", {6}, attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})),
      make_node("Flatten", {7}),
      make_node("Gemm", {8, 3}, attrs({{"transB", int64_t{1}}})),
      make_node("Reshape", {9, 4}),
      make_node("Relu", {10})};
  check_chain(in, nodes);
}

TEST_F(AdrenoOpsTest, TensorTooLargeForImageIsUnsupportedWithReason) {
  // 4 channels x 70000 wide: a 70000-texel-wide image exceeds every device's image2d limit.
  Tensor x(DType::kFloat32, {1, 4, 1, 70000});
  Case c({{x}}, {make_node("Relu", {0})}, 13);
  tsr_support support{};
  support.struct_size = sizeof(support);
  ASSERT_EQ(plugin_->query_node(instance_->handle, device_.c_str(), &c.region, 0, &support),
            TSR_OK);
  EXPECT_EQ(support.supported, 0);
  const std::string reason = support.reason;
  EXPECT_NE(reason.find("needs a 70000-wide image, device max"), std::string::npos) << reason;
  EXPECT_NE(reason.find("v0"), std::string::npos) << reason;
  // The same width split over 4x more channels (4 texels of 17500) fits.
  Tensor ok = random_tensor({1, 16, 2, 1750}, 37);
  check_node("Relu", {{ok}});
}

// Conv weights are packed into an image too: 3x3 over 8000 input channels needs a
// 3 * 3 * 8000 = 72000-wide weight image, beyond every device's limit, so the node falls back.
TEST_F(AdrenoOpsTest, ConvWeightTooWideForImageIsUnsupportedWithReason) {
  Case c({{Tensor(DType::kFloat32, {1, 8000, 3, 3})},
          {Tensor(DType::kFloat32, {1, 8000, 3, 3}), true}},
         {make_node("Conv", {0, 1})}, 13);
  tsr_support support{};
  support.struct_size = sizeof(support);
  ASSERT_EQ(plugin_->query_node(instance_->handle, device_.c_str(), &c.region, 0, &support),
            TSR_OK);
  EXPECT_EQ(support.supported, 0);
  EXPECT_NE(std::string(support.reason)
                .find("packed weight of node 'Conv_under_test' (Conv) "
                      "needs a 72000-wide image, device max"),
            std::string::npos)
      << support.reason;
}

TEST_F(AdrenoOpsTest, UnknownOpIsUnsupportedAndTwoSidedBroadcastRunsOnBuffers) {
  Case c({{random_tensor({1, 2, 3, 3}, 38)}}, {make_node("Hardmax", {0})}, 13);
  tsr_support support{};
  support.struct_size = sizeof(support);
  ASSERT_EQ(plugin_->query_node(instance_->handle, device_.c_str(), &c.region, 0, &support),
            TSR_OK);
  EXPECT_EQ(support.supported, 0);
  EXPECT_NE(std::string(support.reason).find("no kernel for op 'Hardmax'"), std::string::npos);
  // One operand may broadcast over the other in the texture kernels; both at once run the shared
  // strided kernel on NCHW buffers.
  Case b({{random_tensor({1, 2, 3, 1}, 39)}, {random_tensor({1, 1, 1, 3}, 40)}},
         {make_node("Add", {0, 1})}, 13);
  ASSERT_EQ(plugin_->query_node(instance_->handle, device_.c_str(), &b.region, 0, &support),
            TSR_OK);
  EXPECT_EQ(support.supported, 1) << support.reason;
}

TEST_F(AdrenoOpsTest, DefaultSelectorClaimsOnlyAdreno) {
  std::vector<tsr_device_info> infos(16);
  int32_t count = 0;
  char text[512] = "";
  ASSERT_EQ(plugin_->probe_devices(instance_->handle, nullptr, infos.data(), 16, &count,
                                   {text, sizeof(text)}),
            TSR_OK);
  for (int32_t i = 0; i < count; ++i) {
    const std::string name = infos[i].name, vendor = infos[i].vendor;
    const bool adreno = name.find("Adreno") != std::string::npos ||
                        vendor.find("QUALCOMM") != std::string::npos ||
                        vendor.find("Qualcomm") != std::string::npos;
    if (!adreno) {
      EXPECT_EQ(infos[i].score, 0) << name;
      ASSERT_NE(infos[i].unusable_reason, nullptr);
      EXPECT_NE(std::string(infos[i].unusable_reason).find("adreno:any"), std::string::npos);
    }
  }
  // The id the "any" probe claimed stays usable: a device id names hardware, not a probe slot.
  tsr_support support{};
  support.struct_size = sizeof(support);
  Case c({{random_tensor({1, 4, 3, 3}, 60)}}, {make_node("Relu", {0})}, 13);
  ASSERT_EQ(plugin_->query_node(instance_->handle, device_.c_str(), &c.region, 0, &support),
            TSR_OK);
  EXPECT_EQ(support.supported, 1) << support.reason;
}

// fp16 storage: activations in CL_HALF_FLOAT images (float arithmetic). Its error against the
// fp32 reference is measured: within half precision (2^-11 relative per rounding, a few roundings
// per layer), and larger than the fp32 run's, showing the images really hold halves.
TEST_F(AdrenoOpsTest, Fp16StorageErrorVsFp32) {
  std::vector<In> in = {{random_tensor({1, 8, 12, 12}, 41)},
                        {random_tensor({8, 8, 3, 3}, 42, -0.3f, 0.3f), true},
                        {random_tensor({8}, 43), true}};
  std::vector<Node> nodes = {make_node("Conv", {0, 1, 2}, attrs({{"pads", Ints{1, 1, 1, 1}}})),
                             make_node("Relu", {3})};
  Case c(in, nodes, 13);
  const Tensor fp32 = run(c, "fp32");
  const Tensor fp16 = run(c, "fp16");
  ASSERT_EQ(fp16.numel(), c.values.back().numel());
  const double e32 = max_rel_error(fp32, c.values.back());
  const double e16 = max_rel_error(fp16, c.values.back());
  std::printf("adreno conv+relu max rel error: fp32 %.3g, fp16 storage %.3g\n", e32, e16);
  EXPECT_LE(e32, 1e-4);
  EXPECT_LE(e16, 4e-3);
  EXPECT_GT(e16, e32);
}

}  // namespace
}  // namespace tessera
