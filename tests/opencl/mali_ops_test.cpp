// Differential tests of the mali plugin against the reference kernels (tessera::ops): each case
// builds a one-node (or small chain) region, runs it through the plugin's C table on an OpenCL
// device selected with "any" (PoCL in CI) and compares with ops::compute_node, rel. tol 1e-4.
// Kernel binaries are cached under the build tree so reruns skip PoCL's slow compiles.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "op.hpp"
#include "tessera/graph.hpp"
#include "tessera/plugin_abi.h"

namespace tessera {
namespace {

const tsr_plugin* load_mali() {
  static const tsr_plugin* table = []() -> const tsr_plugin* {
    const std::string path =
        std::string(TESSERA_BINARY_DIR) + "/plugins/lib/libtessera-plugin-mali.so";
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    auto entry = reinterpret_cast<tsr_plugin_entry_fn>(dlsym(lib, TESSERA_PLUGIN_ENTRY_NAME));
    return entry ? entry(TESSERA_PLUGIN_ABI_MAJOR, TESSERA_PLUGIN_ABI_MINOR) : nullptr;
  }();
  return table;
}

// One input of a case: its tensor and whether it is a constant (weight) or a region input.
struct In {
  Tensor tensor;
  bool constant = false;
};

Tensor random_tensor(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector(std::move(shape), v);
}

// Owns the C views of one node's attributes.
struct AttrStore {
  std::vector<std::string> names;
  std::vector<std::string> strings;
  std::vector<tsr_attribute> attrs;
  explicit AttrStore(const Attributes& a) {
    names.reserve(a.all().size());
    strings.reserve(a.all().size());
    for (const auto& [name, value] : a.all()) {
      names.push_back(name);
      tsr_attribute t{};
      t.struct_size = sizeof(t);
      t.name = names.back().c_str();
      if (auto* i = std::get_if<int64_t>(&value)) {
        t.kind = TSR_ATTR_INT;
        t.i = *i;
      } else if (auto* f = std::get_if<float>(&value)) {
        t.kind = TSR_ATTR_FLOAT;
        t.f = *f;
      } else if (auto* s = std::get_if<std::string>(&value)) {
        t.kind = TSR_ATTR_STRING;
        strings.push_back(*s);
        t.s = strings.back().c_str();
      } else if (auto* v = std::get_if<std::vector<int64_t>>(&value)) {
        t.kind = TSR_ATTR_INTS;
        t.count = static_cast<int64_t>(v->size());
        t.ints = v->data();
      } else {
        ADD_FAILURE() << "attribute kind not handled by the test helper: " << name;
      }
      attrs.push_back(t);
    }
  }
};

class MaliOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plugin_ = load_mali();
    ASSERT_NE(plugin_, nullptr) << "libtessera-plugin-mali.so did not load: " << dlerror();
    std::vector<tsr_device_info> infos(16);
    int32_t count = 0;
    char text[512] = "";
    ASSERT_EQ(plugin_->probe_devices("any", infos.data(), 16, &count, {text, sizeof(text)}), TSR_OK)
        << text;
    for (int32_t i = 0; i < count; ++i) {
      if (infos[i].score > 0) {
        device_ = i;
        break;
      }
    }
    if (device_ < 0) {
      GTEST_SKIP() << "no OpenCL device: "
                   << (count > 0 && infos[0].unusable_reason ? infos[0].unusable_reason : "none");
    }
    cache_dir_ = std::string(TESSERA_BINARY_DIR) + "/tests/opencl/kernel-cache";
  }

  // Runs `nodes` (ops on values 0..) on mali and the reference; compares every region output.
  // Values: the case inputs first, then each node's single output, in order.
  void check_chain(const std::vector<In>& inputs, std::vector<Node> nodes, int64_t opset = 13,
                   float rtol = 1e-4f) {
    // Reference: run node by node.
    std::vector<Tensor> values;
    for (const In& in : inputs) values.push_back(in.tensor);
    for (size_t n = 0; n < nodes.size(); ++n) {
      nodes[n].outputs = {static_cast<ValueId>(values.size())};
      std::vector<ops::InputInfo> infos;
      std::vector<const Tensor*> ptrs;
      for (ValueId id : nodes[n].inputs) {
        ops::InputInfo info;
        info.present = id >= 0;
        if (id >= 0) {
          info.dtype = values[id].dtype();
          info.shape = values[id].shape();
          if (id < static_cast<ValueId>(inputs.size()) && inputs[id].constant) {
            info.constant = &values[id];
          }
        }
        infos.push_back(info);
        ptrs.push_back(id >= 0 ? &values[id] : nullptr);
      }
      auto out_infos = ops::infer_node(nodes[n], opset, "test", infos);
      values.push_back(ops::compute_node(nodes[n], opset, ptrs, out_infos).at(0));
    }
    // The plugin's region.
    std::vector<std::string> names;
    for (size_t i = 0; i < values.size(); ++i) names.push_back("v" + std::to_string(i));
    std::vector<tsr_tensor> tvalues(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      tsr_tensor& t = tvalues[i];
      t = tsr_tensor{};
      t.struct_size = sizeof(t);
      t.name = names[i].c_str();
      t.dtype = static_cast<int32_t>(values[i].dtype());
      t.rank = static_cast<int32_t>(values[i].rank());
      for (int32_t d = 0; d < t.rank; ++d) t.dims[d] = values[i].shape()[d];
      t.data = i < inputs.size() && inputs[i].constant ? values[i].raw() : nullptr;
    }
    std::vector<std::unique_ptr<AttrStore>> attrs;
    std::vector<tsr_node> tnodes;
    for (const Node& n : nodes) {
      attrs.push_back(std::make_unique<AttrStore>(n.attrs));
      tsr_node t{};
      t.struct_size = sizeof(t);
      t.name = n.name.c_str();
      t.op_type = n.op_type.c_str();
      t.num_inputs = static_cast<int32_t>(n.inputs.size());
      t.inputs = n.inputs.data();
      t.num_outputs = 1;
      t.outputs = n.outputs.data();
      t.num_attributes = static_cast<int32_t>(attrs.back()->attrs.size());
      t.attributes = attrs.back()->attrs.data();
      tnodes.push_back(t);
    }
    std::vector<int32_t> region_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].constant) region_inputs.push_back(static_cast<int32_t>(i));
    }
    const int32_t out_id = static_cast<int32_t>(values.size() - 1);
    tsr_region region{};
    region.struct_size = sizeof(region);
    region.opset = opset;
    region.num_values = static_cast<int32_t>(tvalues.size());
    region.values = tvalues.data();
    region.num_nodes = static_cast<int32_t>(tnodes.size());
    region.nodes = tnodes.data();
    region.num_inputs = static_cast<int32_t>(region_inputs.size());
    region.inputs = region_inputs.data();
    region.num_outputs = 1;
    region.outputs = &out_id;

    for (int32_t n = 0; n < region.num_nodes; ++n) {
      tsr_support support{};
      support.struct_size = sizeof(support);
      ASSERT_EQ(plugin_->query_node(device_, &region, n, &support), TSR_OK);
      ASSERT_EQ(support.supported, 1) << support.reason;
    }
    tsr_compile_options options{};
    options.struct_size = sizeof(options);
    options.cache_dir = cache_dir_.c_str();
    tsr_region_handle handle = nullptr;
    char text[4096] = "";
    ASSERT_EQ(plugin_->compile_region(device_, &region, &options, &handle, {text, sizeof(text)}),
              TSR_OK)
        << text;
    std::vector<const void*> in_ptrs;
    for (int32_t id : region_inputs) in_ptrs.push_back(values[id].raw());
    Tensor result(DType::kFloat32, values.back().shape());
    void* out_ptr = result.raw();
    const tsr_status st =
        plugin_->execute_region(handle, in_ptrs.data(), &out_ptr, {text, sizeof(text)});
    std::vector<double> times(tnodes.size(), -1.0);
    int32_t count = 0;
    if (st == TSR_OK) {
      EXPECT_EQ(plugin_->last_profile(handle, times.data(), region.num_nodes, &count), TSR_OK);
      EXPECT_EQ(count, region.num_nodes);
    }
    plugin_->release_region(handle);
    ASSERT_EQ(st, TSR_OK) << text;

    const Tensor& expected = values.back();
    ASSERT_EQ(result.numel(), expected.numel());
    const float* got = result.data<float>();
    const float* want = expected.data<float>();
    int bad = 0;
    for (int64_t i = 0; i < expected.numel() && bad < 5; ++i) {
      const float tol = rtol * std::max(1.0f, std::fabs(want[i]));
      if (!(std::fabs(got[i] - want[i]) <= tol)) {
        ADD_FAILURE() << nodes.back().op_type << " element " << i << ": mali " << got[i]
                      << " vs reference " << want[i];
        ++bad;
      }
    }
  }

  void check_node(const std::string& op, const std::vector<In>& inputs, Attributes attrs = {},
                  int64_t opset = 13) {
    Node n;
    n.name = op + "_under_test";
    n.op_type = op;
    for (size_t i = 0; i < inputs.size(); ++i) n.inputs.push_back(static_cast<ValueId>(i));
    n.attrs = std::move(attrs);
    SCOPED_TRACE(op);
    check_chain(inputs, {n}, opset);
  }

  const tsr_plugin* plugin_ = nullptr;
  int32_t device_ = -1;
  std::string cache_dir_;
};

Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}
using Ints = std::vector<int64_t>;

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
  tsr_tensor values[2] = {};
  for (tsr_tensor& t : values) {
    t.struct_size = sizeof(t);
    t.name = "v";
    t.dtype = TSR_DTYPE_FLOAT32;
    t.rank = 1;
    t.dims[0] = 4;
  }
  const int32_t in = 0, out = 1;
  tsr_node node{};
  node.struct_size = sizeof(node);
  node.name = "t";
  node.op_type = "Tanh";
  node.num_inputs = 1;
  node.inputs = &in;
  node.num_outputs = 1;
  node.outputs = &out;
  tsr_region region{};
  region.struct_size = sizeof(region);
  region.opset = 13;
  region.num_values = 2;
  region.values = values;
  region.num_nodes = 1;
  region.nodes = &node;
  tsr_support support{};
  support.struct_size = sizeof(support);
  ASSERT_EQ(plugin_->query_node(device_, &region, 0, &support), TSR_OK);
  EXPECT_EQ(support.supported, 0);
  EXPECT_NE(std::string(support.reason).find("Tanh"), std::string::npos) << support.reason;
  // A float64-free but int32 Relu is refused too, with the dtype named.
  values[0].dtype = values[1].dtype = TSR_DTYPE_INT32;
  node.op_type = "Relu";
  ASSERT_EQ(plugin_->query_node(device_, &region, 0, &support), TSR_OK);
  EXPECT_EQ(support.supported, 0);
  EXPECT_NE(std::string(support.reason).find("float32"), std::string::npos) << support.reason;
}

TEST_F(MaliOpsTest, KernelBuildFailureIsCompileFailedNamingDevice) {
  // Redefining the shared activation helper's name breaks every kernel: a real compiler error
  // with a build log.
  setenv("TESSERA_MALI_BUILD_OPTIONS", "-Dtsr_activate=)", 1);
  tsr_tensor values[2] = {};
  for (tsr_tensor& t : values) {
    t.struct_size = sizeof(t);
    t.name = "v";
    t.dtype = TSR_DTYPE_FLOAT32;
    t.rank = 1;
    t.dims[0] = 4;
  }
  const int32_t in = 0, out = 1;
  tsr_node node{};
  node.struct_size = sizeof(node);
  node.name = "relu0";
  node.op_type = "Relu";
  node.num_inputs = 1;
  node.inputs = &in;
  node.num_outputs = 1;
  node.outputs = &out;
  tsr_region region{};
  region.struct_size = sizeof(region);
  region.opset = 13;
  region.num_values = 2;
  region.values = values;
  region.num_nodes = 1;
  region.nodes = &node;
  region.num_inputs = 1;
  region.inputs = &in;
  region.num_outputs = 1;
  region.outputs = &out;
  tsr_region_handle handle = nullptr;
  char text[8192] = "";
  const tsr_status st =
      plugin_->compile_region(device_, &region, nullptr, &handle, {text, sizeof(text)});
  unsetenv("TESSERA_MALI_BUILD_OPTIONS");
  EXPECT_EQ(st, TSR_COMPILE_FAILED) << text;
  EXPECT_EQ(handle, nullptr);
  const std::string msg = text;
  EXPECT_NE(msg.find("relu0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("elementwise.cl"), std::string::npos) << msg;
  EXPECT_NE(msg.find("build log"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessera
