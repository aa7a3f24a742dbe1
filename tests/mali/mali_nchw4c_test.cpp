// The mali plugin's activation layouts against the reference kernels (tessera::ops): every case
// runs under both region layouts (the target option layout = nchw4c and nchw) on an OpenCL device
// selected with "any" (PoCL in CI). Conv cases run every schedule the plugin describes for the
// node with every outputs_per_item / rows_per_item candidate (requested through node_configs),
// with channel counts that are not multiples of 4, strides, pads, dilations and groups. Which
// kernels ran is read from the kernel-source dump (tsr_compile_options.dump_dir), so the tests
// also check where layout conversions are (and are not) inserted.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "knob_grid.hpp"
#include "opencl_plugin_test_util.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

using opencl_test::attrs;
using opencl_test::Case;
using opencl_test::In;
using opencl_test::Ints;
using opencl_test::random_tensor;

const tsr_plugin* load_mali() {
  static const tsr_plugin* table = opencl_test::load_plugin("libtessera-plugin-mali.so");
  return table;
}

Node node(const char* op, std::vector<ValueId> in, Attributes a = {}) {
  Node n;
  n.name = std::string(op) + "_" + std::to_string(in[0]);
  n.op_type = op;
  n.inputs = std::move(in);
  n.attrs = std::move(a);
  return n;
}

// A requested config for one node, owning what tsr_node_config points to.
struct Request {
  int32_t node = 0;
  std::string schedule;
  std::vector<std::string> names;
  std::vector<tsr_knob> knobs;
};

class MaliLayoutTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    plugin_ = load_mali();
    ASSERT_NE(plugin_, nullptr) << "libtessera-plugin-mali.so did not load: " << dlerror();
    layout_ = GetParam();
    // The instance carries the layout as a deployment target's option would.
    instance_ = &opencl_test::raw_instance(plugin_, {{"layout", layout_}});
    ASSERT_EQ(instance_->error, "");
    device_ = instance_->device();
    if (device_.empty()) TESSERA_SKIP_WITHOUT("an OpenCL device") << instance_->unusable;
    cache_dir_ = std::string(TESSERA_BINARY_DIR) + "/tests/mali/kernel-cache";
  }

  bool nchw4c() const { return GetParam() == "nchw4c"; }

  // Compiles and runs `c` with `requests`; compares the output with the reference (rel. 1e-4)
  // and returns the names of the kernels the region built (from the source dump).
  std::set<std::string> run(Case& c, const std::vector<Request>& requests = {}) {
    const std::string dump = (std::filesystem::temp_directory_path() /
                              ("tessera_mali_layout_" + std::to_string(::getpid())))
                                 .string();
    std::filesystem::remove_all(dump);
    std::filesystem::create_directories(dump);
    std::vector<tsr_node_config> configs;
    for (const Request& r : requests) {
      tsr_node_config nc{};
      nc.struct_size = sizeof(nc);
      nc.node = r.node;
      nc.schedule = r.schedule.c_str();
      nc.num_knobs = static_cast<int32_t>(r.knobs.size());
      nc.knobs = r.knobs.data();
      configs.push_back(nc);
    }
    tsr_compile_options options{};
    options.struct_size = sizeof(options);
    options.cache_dir = cache_dir_.c_str();
    options.num_node_configs = static_cast<int32_t>(configs.size());
    options.node_configs = configs.data();
    options.dump_dir = dump.c_str();
    tsr_region_handle handle = nullptr;
    char text[4096] = "";
    const tsr_status cs = plugin_->compile_region(instance_->handle, device_.c_str(), &c.region,
                                                  &options, &handle, {text, sizeof(text)});
    EXPECT_EQ(cs, TSR_OK) << text;
    std::set<std::string> kernels;
    if (cs != TSR_OK) return kernels;
    dumped_.clear();
    dumps_.clear();
    for (const auto& e : std::filesystem::directory_iterator(dump)) {
      kernels.insert(e.path().stem().string());
      std::ifstream f(e.path());
      std::stringstream text;
      text << f.rdbuf();
      dumped_ += text.str();
      dumps_.emplace_back(e.path().stem().string(), text.str());
    }
    std::filesystem::remove_all(dump);
    std::vector<const void*> in_ptrs;
    for (int32_t id : c.region_inputs) in_ptrs.push_back(c.values[id].raw());
    Tensor result(DType::kFloat32, c.values.back().shape());
    void* out_ptr = result.raw();
    const tsr_status st =
        plugin_->execute_region(handle, in_ptrs.data(), &out_ptr, {text, sizeof(text)});
    plugin_->release_region(handle);
    EXPECT_EQ(st, TSR_OK) << text;
    if (st != TSR_OK) return kernels;
    const Tensor& want = c.values.back();
    int bad = 0;
    for (int64_t i = 0; i < want.numel() && bad < 5; ++i) {
      const float w = want.data<float>()[i], g = result.data<float>()[i];
      if (!(std::fabs(g - w) <= 1e-4f * std::max(1.0f, std::fabs(w)))) {
        ADD_FAILURE() << "element " << i << ": mali " << g << " vs reference " << w;
        ++bad;
      }
    }
    return kernels;
  }

  // Every schedule describe_node lists for node `node` of `c` with the candidates of its
  // build-time knobs (wg_x at its default; all of them or a sample, see knob_grid.hpp), as
  // requests; `names` gets the schedule names, heuristic's first.
  std::vector<Request> every_config(Case& c, int32_t node, std::vector<std::string>* names) {
    tsr_node_tuning tuning{};
    tuning.struct_size = sizeof(tuning);
    char text[512] = "";
    EXPECT_EQ(plugin_->describe_node(instance_->handle, device_.c_str(), &c.region, node, &tuning,
                                     {text, sizeof(text)}),
              TSR_OK)
        << text;
    // Copy the answer out: the next describe_node call would overwrite it.
    std::vector<Request> grid;
    for (int32_t s = 0; s < tuning.num_schedules; ++s) {
      const tsr_schedule_desc& d = tuning.schedules[s];
      names->push_back(d.name);
      std::vector<std::vector<int64_t>> values;
      for (int32_t k = 0; k < d.num_knobs; ++k) {
        const std::string knob = d.knobs[k].name;
        if (knob == "wg_x") {
          values.push_back({d.default_config[k].value});
        } else {
          values.emplace_back(d.knobs[k].values, d.knobs[k].values + d.knobs[k].num_values);
        }
      }
      // A sample in CI, all of it in the slow set (each config is a kernel build, and PoCL
      // takes a second or two per build).
      const std::vector<std::vector<int64_t>> points =
          tessera_test::knob_grid("schedule " + std::string(d.name), values);
      for (const auto& p : points) {
        Request r;
        r.node = node;
        r.schedule = d.name;
        for (int32_t k = 0; k < d.num_knobs; ++k) r.names.push_back(d.knobs[k].name);
        for (int32_t k = 0; k < d.num_knobs; ++k) r.knobs.push_back({r.names[k].c_str(), p[k]});
        grid.push_back(std::move(r));
      }
    }
    // A caller loops over the grid: an empty one would pass with nothing checked.
    EXPECT_FALSE(grid.empty()) << "describe_node listed no config for node " << node;
    return grid;
  }

  static std::string label(const Request& r) {
    std::string s = r.schedule;
    for (const tsr_knob& k : r.knobs)
      s += " " + std::string(k.name) + "=" + std::to_string(k.value);
    return s;
  }

  // Runs a one-Conv case with every schedule describe_node lists and every candidate of its
  // build-time knobs (wg_x at its default); returns the schedule names seen, heuristic's first.
  // describe_node is not given the target's options, so it lists the default layout's (nchw4c)
  // schedules; under layout=nchw the heuristic's NCHW kernel runs once instead, and the name
  // returned is the schedule of the kernel that ran.
  std::vector<std::string> run_every_conv_schedule(const std::vector<In>& inputs, Attributes a) {
    Case c(inputs, {opencl_test::make_node_over_inputs("Conv", inputs.size(), std::move(a))}, 13);
    std::vector<std::string> names;
    if (!nchw4c()) {
      for (const std::string& kernel : run(c)) {
        const std::string suffix = "_f32";
        if (kernel.rfind("conv2d_", 0) != 0 || kernel.size() <= suffix.size() ||
            kernel.compare(kernel.size() - suffix.size(), suffix.size(), suffix) != 0) {
          continue;
        }
        names.push_back("conv2d.nchw." + kernel.substr(7, kernel.size() - 7 - suffix.size()));
      }
      EXPECT_EQ(names.size(), 1u) << "expected one NCHW conv kernel";
      return names;
    }
    for (const Request& r : every_config(c, 0, &names)) {
      SCOPED_TRACE(label(r));
      const std::set<std::string> kernels = run(c, {r});
      // The requested schedule ran: "conv2d.<layout>.<variant>" builds conv2d_<variant>_4c
      // (nchw4c) or conv2d_<variant>_f32 (nchw).
      const bool c4 = r.schedule.find(".nchw4c.") != std::string::npos;
      EXPECT_EQ(c4, nchw4c()) << r.schedule;
      const std::string variant = r.schedule.substr(r.schedule.rfind('.') + 1);
      EXPECT_EQ(kernels.count("conv2d_" + variant + (c4 ? "_4c" : "_f32")), 1u);
      // Build-time knobs reach the program as defines (unroll, outputs_per_item as OPW).
      for (const tsr_knob& k : r.knobs) {
        const std::string name = k.name;
        const char* macro = name == "unroll" ? "UNROLL" : name == "outputs_per_item" ? "OPW" : "";
        if (*macro == 0) continue;
        EXPECT_NE(dumped_.find("-D" + std::string(macro) + "=" + std::to_string(k.value)),
                  std::string::npos)
            << name;
      }
    }
    return names;
  }

  // Runs `c` with node `node` at every config describe_node lists for it (every candidate of
  // its vec knob); returns how many of them ran as requested: the schedule's kernel was built
  // with that vec. A schedule of the other layout (BatchNormalization lists both) falls back to
  // the heuristic's config.
  int run_every_vec(Case& c, int32_t node) {
    static const std::map<std::string, std::string> kernel_of = {
        {"eltwise.unary", "unary_f32"},
        {"eltwise.binary", "binary_f32"},
        {"eltwise.channel_affine", "channel_affine_f32"},
        {"eltwise.channel_affine.nchw4c", "channel_affine_4c_f32"},
        {"copy.block", "copy_block_f32"},
        {"pool.global_avg", "global_avg_pool_f32"},
        {"pool.global_avg.nchw4c", "global_avg_pool_4c_f32"}};
    std::vector<std::string> names;
    int ran = 0;
    for (const Request& r : every_config(c, node, &names)) {
      SCOPED_TRACE(label(r));
      int64_t vec = -1;
      for (const tsr_knob& k : r.knobs) {
        if (std::string(k.name) == "vec") vec = k.value;
      }
      EXPECT_GT(vec, 0) << "no vec knob";
      EXPECT_EQ(kernel_of.count(r.schedule), 1u);
      run(c, {r});
      const std::string kernel = kernel_of.count(r.schedule) ? kernel_of.at(r.schedule) : "?";
      const std::string define = "-DVEC=" + std::to_string(vec);
      for (const auto& [stem, text] : dumps_) {
        // A kernel built with other options too is dumped again as "<kernel>.2".
        if (stem != kernel && stem.rfind(kernel + ".", 0) != 0) continue;
        const size_t at = text.find(define);
        if (at != std::string::npos && !std::isdigit(static_cast<unsigned char>(
                                           text[std::min(at + define.size(), text.size() - 1)]))) {
          ++ran;
          break;
        }
      }
    }
    return ran;
  }

  const tsr_plugin* plugin_ = nullptr;
  std::string dumped_;  // the kernel sources (with their build options) of the last run()
  std::vector<std::pair<std::string, std::string>> dumps_;  // (file stem, source) of each
  opencl_test::RawInstance* instance_ = nullptr;
  std::string device_;  // id of the first usable device
  std::string cache_dir_;
  std::string layout_;  // the target option `layout` of the instance
};

std::string first_or_empty(const std::vector<std::string>& v) {
  return v.empty() ? "" : v.front();
}

TEST_P(MaliLayoutTest, Conv3x3Stride1PadsBiasOddChannels) {
  const auto names = run_every_conv_schedule({{random_tensor({2, 5, 9, 10}, 1)},
                                              {random_tensor({7, 5, 3, 3}, 2), true},
                                              {random_tensor({7}, 3), true}},
                                             attrs({{"pads", Ints{1, 1, 1, 1}}}));
  EXPECT_EQ(first_or_empty(names), nchw4c() ? "conv2d.nchw4c.3x3s1" : "conv2d.nchw.direct");
}

TEST_P(MaliLayoutTest, Conv3x3Stride1NarrowUnpadded) {
  // OW = 3: the 3x3 tile's last strip overhangs, and OH = 3 is odd for rows_per_item = 2.
  const auto names = run_every_conv_schedule(
      {{random_tensor({1, 3, 5, 5}, 4)}, {random_tensor({6, 3, 3, 3}, 5), true}}, {});
  EXPECT_EQ(first_or_empty(names), nchw4c() ? "conv2d.nchw4c.3x3s1" : "conv2d.nchw.direct");
}

TEST_P(MaliLayoutTest, ConvStride2AsymmetricPads) {
  run_every_conv_schedule({{random_tensor({1, 6, 11, 9}, 6)},
                           {random_tensor({9, 6, 3, 3}, 7), true},
                           {random_tensor({9}, 8), true}},
                          attrs({{"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 2, 1}}}));
}

TEST_P(MaliLayoutTest, ConvPointwiseOddChannels) {
  const auto names = run_every_conv_schedule({{random_tensor({2, 10, 5, 7}, 9)},
                                              {random_tensor({5, 10, 1, 1}, 10), true},
                                              {random_tensor({5}, 11), true}},
                                             {});
  EXPECT_EQ(first_or_empty(names), nchw4c() ? "conv2d.nchw4c.1x1" : "conv2d.nchw.1x1");
}

TEST_P(MaliLayoutTest, ConvPointwiseStride2) {
  run_every_conv_schedule(
      {{random_tensor({1, 8, 7, 7}, 12)}, {random_tensor({12, 8, 1, 1}, 13), true}},
      attrs({{"strides", Ints{2, 2}}}));
}

TEST_P(MaliLayoutTest, ConvDepthwiseStride2SameUpper) {
  const auto names = run_every_conv_schedule({{random_tensor({1, 6, 9, 9}, 14)},
                                              {random_tensor({6, 1, 3, 3}, 15), true},
                                              {random_tensor({6}, 16), true}},
                                             attrs({{"group", int64_t{6}},
                                                    {"strides", Ints{2, 2}},
                                                    {"auto_pad", std::string("SAME_UPPER")}}));
  EXPECT_EQ(first_or_empty(names), nchw4c() ? "conv2d.nchw4c.depthwise" : "conv2d.nchw.depthwise");
}

TEST_P(MaliLayoutTest, ConvDepthwise5x5Pad2) {
  run_every_conv_schedule(
      {{random_tensor({1, 7, 8, 6}, 17)}, {random_tensor({7, 1, 5, 5}, 18), true}},
      attrs({{"group", int64_t{7}}, {"pads", Ints{2, 2, 2, 2}}}));
}

TEST_P(MaliLayoutTest, ConvGroupsNotBlockAlignedWithDilations) {
  // 2 input / 3 output channels per group: output blocks straddle groups.
  run_every_conv_schedule(
      {{random_tensor({1, 4, 11, 12}, 19)}, {random_tensor({6, 2, 3, 2}, 20), true}},
      attrs({{"group", int64_t{2}},
             {"strides", Ints{2, 1}},
             {"dilations", Ints{2, 2}},
             {"pads", Ints{1, 0, 2, 1}}}));
}

TEST_P(MaliLayoutTest, ConvGroupsBlockAligned) {
  // 8 input / 4 output channels per group: each output block reads only its group's blocks.
  run_every_conv_schedule({{random_tensor({1, 16, 6, 7}, 21)},
                           {random_tensor({8, 8, 3, 3}, 22), true},
                           {random_tensor({8}, 23), true}},
                          attrs({{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}}));
}

// Conv -> BN -> Relu -> MaxPool -> Conv -> Add (residual) -> Clip -> AveragePool ->
// GlobalAveragePool -> Flatten -> Gemm, all on NCHW4c but Flatten/Gemm; with 8 channels the
// pooled [1, 8, 1, 1] value is NCHW already, so nothing converts back to NCHW.
// Gemm's split-reduction schedule at every config of its grid (a sample in CI), asked for as
// the node config: transposes, alpha/beta with a broadcast C, K not a multiple of the split and
// N narrower than a work-group; the split kernel is the one that ran.
TEST_P(MaliLayoutTest, GemmSplitEveryConfig) {
  const std::vector<std::pair<std::vector<In>, Attributes>> cases = {
      {{{random_tensor({1, 75}, 70)},
        {random_tensor({13, 75}, 71), true},
        {random_tensor({13}, 72), true}},
       attrs({{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}})},
      {{{random_tensor({37, 3}, 73)}, {random_tensor({37, 5}, 74), true}},
       attrs({{"transA", int64_t{1}}})},
  };
  for (const auto& [inputs, a] : cases) {
    Case c(inputs, {opencl_test::make_node_over_inputs("Gemm", inputs.size(), a)}, 13);
    std::vector<std::string> names;
    int ran = 0;
    for (const Request& r : every_config(c, 0, &names)) {
      if (r.schedule != "gemm.split") continue;
      SCOPED_TRACE(label(r));
      EXPECT_EQ(run(c, {r}).count("gemm_split_f32"), 1u);
      ++ran;
    }
    EXPECT_GT(ran, 0) << "describe_node lists no gemm.split";
  }
}

// Batched MatMul's output tiles (rows_per_item x cols_per_item) at every config of the grid (a
// sample in CI): both operands batched (attention) and a shared 2-D B (a Linear layer), with M
// and N that leave partial tiles.
TEST_P(MaliLayoutTest, MatMulTilesEveryConfig) {
  const std::vector<std::vector<In>> cases = {
      {{random_tensor({2, 3, 7, 5}, 80)}, {random_tensor({2, 3, 5, 9}, 81)}},
      {{random_tensor({1, 10, 6}, 82)}, {random_tensor({6, 11}, 83), true}},
      // Partial tiles of every matmul.tiled size, and K not a multiple of any k_tile.
      {{random_tensor({2, 37, 19}, 84)}, {random_tensor({2, 19, 41}, 85)}},
  };
  for (const auto& inputs : cases) {
    Case c(inputs, {opencl_test::make_node_over_inputs("MatMul", inputs.size(), {})}, 13);
    std::vector<std::string> names;
    int ran = 0;
    for (const Request& r : every_config(c, 0, &names)) {
      SCOPED_TRACE(label(r));
      const char* kernel = r.schedule == "matmul.tiled" ? "gemm_tiled_f32" : "gemm_batched_f32";
      EXPECT_EQ(run(c, {r}).count(kernel), 1u);
      ++ran;
    }
    EXPECT_GT(ran, 1) << "describe_node lists no tile grid for MatMul";
  }
}

// LayerNormalization under every config of both schedules (a work-item per row; a group per
// row): rows shorter and longer than the group, a row count no group size divides.
TEST_P(MaliLayoutTest, LayerNormEveryConfig) {
  Attributes last;
  last.set("axis", int64_t{-1});
  const std::vector<std::vector<In>> cases = {
      {{random_tensor({1, 13, 5}, 90)},
       {random_tensor({5}, 91), true},
       {random_tensor({5}, 92), true}},
      {{random_tensor({2, 3, 97}, 93)}, {random_tensor({97}, 94), true}},
  };
  for (const auto& inputs : cases) {
    Case c(inputs, {opencl_test::make_node_over_inputs("LayerNormalization", inputs.size(), last)},
           17);
    std::vector<std::string> names;
    int ran = 0;
    for (const Request& r : every_config(c, 0, &names)) {
      SCOPED_TRACE(label(r));
      const char* kernel =
          r.schedule == "layer_norm.group" ? "layer_norm_group_f32" : "layer_norm_rows_f32";
      EXPECT_EQ(run(c, {r}).count(kernel), 1u);
      ++ran;
    }
    EXPECT_GT(ran, 6) << "describe_node lists no group configs for LayerNormalization";
  }
}

TEST_P(MaliLayoutTest, ResidualChainNeedsNoConversionBackWhenChannelsAreBlocks) {
  std::vector<In> inputs = {{random_tensor({1, 3, 12, 12}, 30)},         // 0 x
                            {random_tensor({8, 3, 3, 3}, 31), true},     // 1 w1
                            {random_tensor({8}, 32), true},              // 2 scale
                            {random_tensor({8}, 33), true},              // 3 bias
                            {random_tensor({8}, 34), true},              // 4 mean
                            {random_tensor({8}, 35, 0.5f, 2.0f), true},  // 5 var
                            {random_tensor({8, 8, 3, 3}, 36), true},     // 6 w2
                            {random_tensor({5, 8}, 37), true},           // 7 fc w
                            {random_tensor({5}, 38), true}};             // 8 fc b
  Case c(inputs,
         {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}})),   // 9
          node("BatchNormalization", {9, 2, 3, 4, 5}),                 // 10
          node("Relu", {10}),                                          // 11
          node("MaxPool", {11}, opencl_test::pool_2x2_stride2()),      // 12
          node("Conv", {12, 6}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 13
          node("Add", {13, 12}),                                       // 14
          node("Clip", {14}, attrs({{"min", 0.25f}, {"max", 6.0f}})),  // 15 (opset 6)
          node("AveragePool", {15},
               attrs({{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}})),  // 16
          node("GlobalAveragePool", {16}),                                          // 17
          node("Flatten", {17}),                                                    // 18
          node("Gemm", {18, 7, 8}, attrs({{"transB", int64_t{1}}}))},               // 19
         /*opset=*/6);
  const std::set<std::string> k = run(c);
  EXPECT_EQ(k.count("nchw_to_nchw4c_f32"), nchw4c() ? 1u : 0u);
  EXPECT_EQ(k.count("nchw4c_to_nchw_f32"), 0u);
  EXPECT_EQ(k.count("conv2d_3x3s1_4c"), nchw4c() ? 1u : 0u);
  EXPECT_EQ(k.count("channel_affine_4c_f32"), nchw4c() ? 1u : 0u);
  EXPECT_EQ(k.count("pool2d_4c_f32"), nchw4c() ? 1u : 0u);
  EXPECT_EQ(k.count("global_avg_pool_4c_f32"), nchw4c() ? 1u : 0u);
}

// Identity and Dropout keep NCHW4c (no round trip through NCHW around them).
TEST_P(MaliLayoutTest, AliasesKeepTheLayout) {
  std::vector<In> inputs = {{random_tensor({1, 3, 6, 5}, 90)},
                            {random_tensor({8, 3, 3, 3}, 91), true}};
  Case c(inputs,
         {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 2
          node("Identity", {2}),                                      // 3
          node("Dropout", {3}),                                       // 4
          node("Sigmoid", {4}),                                       // 5
          node("GlobalAveragePool", {5}),                             // 6
          node("Flatten", {6})},                                      // 7
         13);
  const std::set<std::string> k = run(c);
  EXPECT_EQ(k.count("nchw4c_to_nchw_f32"), 0u);
  EXPECT_EQ(k.count("global_avg_pool_4c_f32"), nchw4c() ? 1u : 0u);
}

// With 6 channels the pooled value differs between layouts: Flatten gets a conversion; a
// broadcasting Add runs on NCHW, so its NCHW4c input is converted.
TEST_P(MaliLayoutTest, ConversionWhereAConsumerNeedsNchw) {
  std::vector<In> inputs = {{random_tensor({2, 5, 7, 6}, 40)},
                            {random_tensor({6, 5, 3, 3}, 41), true},
                            {random_tensor({6}, 42), true},
                            {random_tensor({6, 4}, 43), true},
                            {random_tensor({1, 6, 1, 1}, 44), true}};
  {
    Case c(inputs,
           {node("Conv", {0, 1, 2}, attrs({{"strides", Ints{2, 2}}})),  // 5
            node("Sigmoid", {5}),                                       // 6
            node("GlobalAveragePool", {6}),                             // 7
            node("Flatten", {7}),                                       // 8
            node("MatMul", {8, 3})},                                    // 9
           13);
    const std::set<std::string> k = run(c);
    EXPECT_EQ(k.count("nchw4c_to_nchw_f32"), nchw4c() ? 1u : 0u);
    EXPECT_EQ(k.count("global_avg_pool_4c_f32"), nchw4c() ? 1u : 0u);
  }
  {
    Case c(inputs,
           {node("Conv", {0, 1, 2}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 5
            node("Add", {5, 4}),                                           // 6
            node("Relu", {6})},                                            // 7
           13);
    const std::set<std::string> k = run(c);
    EXPECT_EQ(k.count("nchw4c_to_nchw_f32"), nchw4c() ? 1u : 0u);
  }
}

// Region output in NCHW4c: converted back after its producer; Add of a converted region input.
TEST_P(MaliLayoutTest, RegionInputsAndOutputsConvert) {
  std::vector<In> inputs = {{random_tensor({1, 5, 6, 7}, 50)},
                            {random_tensor({7, 5, 3, 3}, 51), true},
                            {random_tensor({1, 7, 6, 7}, 52)}};
  Case c(inputs,
         {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 3
          node("Add", {3, 2}),                                        // 4
          node("Sigmoid", {4})},                                      // 5
         13);
  const std::set<std::string> k = run(c);
  EXPECT_EQ(k.count("nchw_to_nchw4c_f32"), nchw4c() ? 1u : 0u);
  EXPECT_EQ(k.count("nchw4c_to_nchw_f32"), nchw4c() ? 1u : 0u);
}

// Concat on channel blocks (4 + 8 channels) stays NCHW4c; with 6 channels it runs on NCHW.
TEST_P(MaliLayoutTest, ConcatOnChannelBlocksAndOtherwise) {
  for (int64_t second : {8, 6}) {
    SCOPED_TRACE(second);
    std::vector<In> inputs = {{random_tensor({1, 3, 5, 6}, 60)},
                              {random_tensor({4, 3, 1, 1}, 61), true},
                              {random_tensor({second, 3, 3, 3}, 62), true}};
    Case c(inputs,
           {node("Conv", {0, 1}),                                       // 3
            node("Conv", {0, 2}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 4
            node("Concat", {3, 4}, attrs({{"axis", int64_t{1}}})),      // 5
            node("MaxPool", {5},
                 attrs({{"kernel_shape", Ints{3, 3}},
                        {"strides", Ints{2, 2}},
                        {"pads", Ints{1, 1, 1, 1}}}))},  // 6
           13);
    const std::set<std::string> k = run(c);
    EXPECT_EQ(k.count("pool2d_4c_f32"), nchw4c() && second == 8 ? 1u : 0u);
  }
}

// Conv -> Clip (min > 0, so clip(0) of padded lanes would not be zero) -> Conv -> LeakyRelu:
// both activations are fused into their Conv (no unary program); with 5 channels the first
// Conv's padded lanes must stay zero for the second Conv.
TEST_P(MaliLayoutTest, FusedActivationsKeepPaddingZero) {
  std::vector<In> inputs = {{random_tensor({1, 3, 7, 8}, 80)},
                            {random_tensor({5, 3, 3, 3}, 81), true},
                            {random_tensor({5}, 82), true},
                            {random_tensor({6, 5, 1, 1}, 83), true}};
  Case c(inputs,
         {node("Conv", {0, 1, 2}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 4
          node("Clip", {4}, attrs({{"min", 0.5f}, {"max", 0.75f}})),     // 5
          node("Conv", {5, 3}),                                          // 6
          node("LeakyRelu", {6}, attrs({{"alpha", 0.125f}}))},           // 7
         /*opset=*/6);
  const std::set<std::string> k = run(c);
  EXPECT_EQ(k.count("unary_f32"), 0u);
}

TEST_P(MaliLayoutTest, UnknownScheduleRequestFallsBackToHeuristic) {
  // A pack measured for the other layout names schedules this layout does not have.
  std::vector<In> inputs = {{random_tensor({1, 4, 6, 6}, 70)},
                            {random_tensor({4, 4, 3, 3}, 71), true}};
  Case c(inputs, {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}}))}, 13);
  Request r;
  r.schedule = nchw4c() ? "conv2d.nchw.direct" : "conv2d.nchw4c.direct";
  r.names = {"wg_x", "outputs_per_item"};
  r.knobs = {{r.names[0].c_str(), 8}, {r.names[1].c_str(), 2}};
  const std::set<std::string> k = run(c, {r});
  EXPECT_EQ(k.count(nchw4c() ? "conv2d_3x3s1_4c" : "conv2d_direct_f32"), 1u);
}

// Channel blocks 6 (unroll 4: one trip and a remainder of 2) for 3x3s1, 1x1 and direct.
TEST_P(MaliLayoutTest, ConvUnrollRemainderChannels) {
  run_every_conv_schedule({{random_tensor({1, 22, 6, 5}, 100)},
                           {random_tensor({6, 22, 3, 3}, 101), true},
                           {random_tensor({6}, 102), true}},
                          attrs({{"pads", Ints{1, 1, 1, 1}}}));
  run_every_conv_schedule(
      {{random_tensor({1, 21, 4, 5}, 103)}, {random_tensor({9, 21, 1, 1}, 104), true}}, {});
  run_every_conv_schedule(
      {{random_tensor({1, 23, 7, 6}, 105)}, {random_tensor({5, 23, 2, 3}, 106), true}},
      attrs({{"strides", Ints{2, 1}}}));
}

// Unary activations with every vec: 10 channels (NCHW4c: padded lanes masked; 420 floats, not a
// multiple of 8 in either layout) and a plain NCHW region input of 105 floats.
TEST_P(MaliLayoutTest, UnaryEveryVec) {
  std::vector<In> inputs = {{random_tensor({1, 3, 5, 7}, 110)},
                            {random_tensor({10, 3, 3, 3}, 111), true}};
  for (const char* op : {"Sigmoid", "HardSwish", "Relu"}) {
    SCOPED_TRACE(op);
    Case c(inputs,
           {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 2
            node("Sigmoid", {2}),                                       // 3 (op stays unfused)
            node(op, {3})},                                             // 4
           13);
    EXPECT_EQ(run_every_vec(c, 2), 3);
  }
  Case plain({{random_tensor({1, 3, 5, 7}, 112)}}, {node("Sigmoid", {0})}, 13);
  EXPECT_EQ(run_every_vec(plain, 0), 3);
}

// Add / Mul with every vec: same shapes (one flat NCHW4c pass after a Conv) and broadcasts
// along rows of 7 (vectors straddling rows go element by element) and of whole planes (splat).
TEST_P(MaliLayoutTest, BinaryEveryVec) {
  std::vector<In> inputs = {{random_tensor({1, 3, 5, 7}, 120)},
                            {random_tensor({10, 3, 3, 3}, 121), true},
                            {random_tensor({10, 3, 3, 3}, 122), true}};
  Case same(inputs,
            {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 3
             node("Conv", {0, 2}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 4
             node("Mul", {3, 4})},                                       // 5
            13);
  EXPECT_EQ(run_every_vec(same, 2), 3);
  std::vector<In> bc = {{random_tensor({2, 3, 5, 7}, 123)},
                        {random_tensor({3, 1, 7}, 124), true},
                        {random_tensor({1, 3, 1, 1}, 125), true}};
  Case rows(bc, {node("Add", {0, 1}), node("Mul", {3, 2})}, 13);
  EXPECT_EQ(run_every_vec(rows, 0), 3);
  EXPECT_EQ(run_every_vec(rows, 1), 3);
}

// Residual Add -> Relu fuses into the Add (no unary program); Add -> Clip(0.5, 0.75) does not
// (clip(0) != 0 would break the zero padding of 5 channels), and the Conv after it still sees
// zero padded lanes. Both compared with the reference kernels.
TEST_P(MaliLayoutTest, BinaryFusesActivationsKeepingZero) {
  std::vector<In> inputs = {{random_tensor({1, 3, 6, 7}, 140)},
                            {random_tensor({5, 3, 3, 3}, 141), true},
                            {random_tensor({5, 3, 1, 1}, 142), true},
                            {random_tensor({4, 5, 1, 1}, 143), true}};
  Case relu(inputs,
            {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 4
             node("Conv", {0, 2}),                                       // 5
             node("Add", {4, 5}),                                        // 6
             node("Relu", {6}),                                          // 7
             node("Conv", {7, 3})},                                      // 8
            13);
  EXPECT_EQ(run(relu).count("unary_f32"), 0u);
  Case clip(inputs,
            {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 4
             node("Conv", {0, 2}),                                       // 5
             node("Add", {4, 5}),                                        // 6
             node("Clip", {6}, attrs({{"min", 0.5f}, {"max", 0.75f}})),  // 7
             node("Conv", {7, 3})},                                      // 8
            6);
  EXPECT_EQ(run(clip).count("unary_f32"), 1u);
}

// BatchNormalization with every vec of its layout's schedule: after a 10-channel Conv (NCHW4c:
// vectors of 4, 8, 16 floats inside block planes of 35 pixels) and on an NCHW region input.
TEST_P(MaliLayoutTest, BatchNormEveryVec) {
  std::vector<In> inputs = {
      {random_tensor({1, 3, 5, 7}, 130)}, {random_tensor({10, 3, 3, 3}, 131), true},
      {random_tensor({10}, 132), true},   {random_tensor({10}, 133), true},
      {random_tensor({10}, 134), true},   {random_tensor({10}, 135, 0.5f, 2.0f), true}};
  Case c(inputs,
         {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 6
          node("BatchNormalization", {6, 2, 3, 4, 5})},               // 7
         13);
  EXPECT_EQ(run_every_vec(c, 1), 3);
  std::vector<In> plain_in = {
      {random_tensor({2, 10, 3, 5}, 136)}, inputs[2], inputs[3], inputs[4], inputs[5]};
  Case plain(plain_in, {node("BatchNormalization", {0, 1, 2, 3, 4})}, 13);
  EXPECT_EQ(run_every_vec(plain, 0), 3);
}

// Concat copies with every vec: rows of 105 and 70 floats (axis 1), of 7 and 5 (axis 3).
TEST_P(MaliLayoutTest, ConcatEveryVec) {
  for (int64_t axis : {1, 3}) {
    SCOPED_TRACE(axis);
    std::vector<In> inputs = {{random_tensor({2, 3, 5, 7}, 140)},
                              {random_tensor({2, axis == 1 ? 2 : 3, 5, axis == 1 ? 7 : 5}, 141)}};
    Case c(inputs, {node("Concat", {0, 1}, attrs({{"axis", axis}}))}, 13);
    EXPECT_EQ(run_every_vec(c, 0), 3);
  }
}

// GlobalAveragePool with every vec (loads along the plane): planes of 35 float4 after a
// 10-channel Conv (NCHW4c; 140 floats, not a multiple of 8 or 16) and of 35 floats (NCHW).
TEST_P(MaliLayoutTest, GlobalAveragePoolEveryVec) {
  std::vector<In> inputs = {{random_tensor({1, 3, 5, 7}, 150)},
                            {random_tensor({10, 3, 3, 3}, 151), true}};
  Case c(inputs,
         {node("Conv", {0, 1}, attrs({{"pads", Ints{1, 1, 1, 1}}})),  // 2
          node("GlobalAveragePool", {2})},                            // 3
         13);
  EXPECT_EQ(run_every_vec(c, 1), 3);
  Case plain({{random_tensor({2, 3, 5, 7}, 152)}}, {node("GlobalAveragePool", {0})}, 13);
  EXPECT_EQ(run_every_vec(plain, 0), 3);
}

TEST(MaliLayoutOption, BadOptionsAreRefusedNamingTheOption) {
  const tsr_plugin* plugin = load_mali();
  ASSERT_NE(plugin, nullptr);
  const auto refusal = [&](const tsr_target_option& option) {
    const std::string answer = opencl_test::option_refusal(plugin, option.name, option.value);
    return answer == "ok" ? std::string("accepted") : answer;
  };
  EXPECT_EQ(refusal({"layout", "nchw"}), "accepted");
  EXPECT_EQ(refusal({"layout", "nchw4c"}), "accepted");
  EXPECT_EQ(refusal({"build_options", "-cl-fast-relaxed-math"}), "accepted");
  EXPECT_EQ(refusal({"layout", "nhwc"}),
            "mali: option 'layout' = 'nhwc' is not a layout; use 'nchw4c' (default) or 'nchw'");
  EXPECT_NE(refusal({"layuot", "nchw"}).find("unknown option 'layuot'"), std::string::npos);
  EXPECT_NE(refusal({"build_options", "-DA\n-DB"}).find("'build_options'"), std::string::npos);

  // No instance exists with a refused option, so nothing can compile with it.
  EXPECT_NE(opencl_test::raw_instance(plugin, {{"layout", "nhwc"}})
                .error.find("option 'layout' = 'nhwc'"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(mali, MaliLayoutTest, ::testing::Values("nchw4c", "nchw"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tessera
