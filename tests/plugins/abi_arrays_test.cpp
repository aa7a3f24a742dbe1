// Arrays of structs cross the plugin boundary by the element size each side declares (ABI 2.3,
// plugin_abi.h "Arrays of structs"). Core's side: raw plugins whose element structs are shorter
// than core's (abiolder), longer (abinewer) or those of 2.2 that read no strides (abi22) go
// through every slot (create with options, probe, query, describe, compile with configs,
// execute, buffers and execute_region_io, last_profile) and match the reference kernels; core
// lays a region out at an older minor's shorter sizes; the 2.2 sizes stay pinned.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "graph_builder.hpp"
#include "plugins/abi_arrays.hpp"
#include "plugins/region_desc.hpp"
#include "tessera/plugin.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using test::GraphBuilder;

std::shared_ptr<const PluginHost> abi_host() {
  PluginHostOptions o;
  o.dirs = {TESSERA_TEST_PLUGIN_ABI_DIR, TESSERA_PLUGIN_BUILD_DIR};
  o.use_environment = false;
  o.use_default_dirs = false;
  o.only = {"abiolder", "abinewer", "abi22", "reference"};
  return std::make_shared<const PluginHost>(o);
}

// LeakyRelu's alpha, after another attribute (attributes go in name order): a reader finds alpha
// only by stepping the attribute array's stride.
Attributes alpha(float value) {
  Attributes a;
  a.set("alpha", value);
  a.set("a_note", std::string("read first"));
  return a;
}

// x -> LeakyRelu -> Add(., c) -> Mul(., Sigmoid(x)) -> Relu -> y: the plugins under test run all
// but the Sigmoid, which splits them into two regions; the value between those regions stays in
// the plugin's buffers.
Graph split_graph() {
  return GraphBuilder()
      .input("x", {2, 3, 4, 5})
      .constant("c", test::random_tensor({2, 3, 4, 5}, 9))
      .node("LeakyRelu", {"x"}, {"a"}, alpha(0.2f), "leaky")
      .node("Add", {"a", "c"}, {"b"}, {}, "add")
      .node("Sigmoid", {"x"}, {"s"}, {}, "sigmoid")
      .node("Mul", {"b", "s"}, {"m"}, {}, "mul")
      .node("Relu", {"m"}, {"y"}, {}, "relu")
      .output("y")
      .build();
}

void expect_equal_values(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape());
    const float* g = got[i].data<float>();
    const float* w = want[i].data<float>();
    for (int64_t k = 0; k < got[i].numel(); ++k)
      ASSERT_EQ(g[k], w[k]) << "output " << i << "[" << k << "]";
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AbiLayout : public ::testing::TestWithParam<std::string> {
 protected:
  const std::string& name() const { return GetParam(); }
  bool older() const { return name() == "abiolder"; }
};

INSTANTIATE_TEST_SUITE_P(Plugins, AbiLayout, ::testing::Values("abiolder", "abinewer", "abi22"));

TEST_P(AbiLayout, LoadsAndProbesEveryDeviceAtTheOfferedStride) {
  const auto host = abi_host();
  for (const PluginRefusal& r : host->refusals()) ADD_FAILURE() << r.path << ": " << r.reason;
  const auto plugin = host->find(name());
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->abi_minor(), name() == "abi22" ? 2u : name() == "abiolder" ? 3u : 4u);
  const std::vector<PluginDeviceInfo>& devices = plugin->devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].id, "heap0");
  EXPECT_EQ(devices[0].name, name() + " host memory");
  EXPECT_EQ(devices[0].compute_units, 1);
  EXPECT_EQ(devices[0].memory_bytes, 1024);
  EXPECT_EQ(devices[0].features, "strided");
  EXPECT_EQ(devices[0].score, 40);
  EXPECT_EQ(devices[1].id, "off1");
  EXPECT_EQ(devices[1].compute_units, 2);
  EXPECT_EQ(devices[1].score, 0);
  // abiolder's tsr_device_info ends before unusable_reason: core's default stays.
  EXPECT_EQ(devices[1].unusable_reason, older() ? "" : "simulated: never usable");
}

TEST_P(AbiLayout, SessionMatchesTheReferenceWithValuesInItsBuffers) {
  const Graph g = split_graph();
  const std::string record = ::testing::TempDir() + "/" + name() + "_session_record.txt";
  std::remove(record.c_str());
  SessionOptions o;
  o.targets = {name(), "reference"};
  o.target_settings[name()] = {0, {{"record", record}, {"tag", "session"}}, "test: targets[0]"};
  o.profile_nodes = true;
  Session session(g, o, abi_host());
  for (const NodePlacement& p : session.plan().nodes) {
    EXPECT_EQ(p.plugin, p.node == "sigmoid" ? "reference" : name()) << p.node << ": " << p.reason;
  }
  EXPECT_GE(session.plan().device_values, 1) << "a value between two regions of one domain";
  for (uint32_t seed : {1u, 7u}) {
    const auto inputs = test::random_inputs(g, seed);
    expect_equal_values(session.run(inputs), run_reference(g, inputs));
  }
  size_t profiled = 0;
  for (const RegionProfile& r : session.profile()) {
    if (r.plugin != name()) continue;
    for (double t : r.node_times_us) EXPECT_DOUBLE_EQ(t, 0.12);  // 120 elements / 1000
    profiled += r.node_times_us.size();
  }
  EXPECT_EQ(profiled, 4u);
  const std::string text = read_file(record);
  EXPECT_NE(text.find("create tag=session\n"), std::string::npos) << text;
  EXPECT_NE(text.find("compile nodes="), std::string::npos) << text;
}

TEST_P(AbiLayout, DescribeIsReadByThePluginsStrides) {
  const auto plugin = abi_host()->find(name());
  ASSERT_NE(plugin, nullptr);
  const auto instance = plugin->create_instance();
  const PluginNodeTuning t = instance->describe_node("heap0", split_graph(), 0);
  EXPECT_EQ(t.workload_key, "LeakyRelu:120");
  EXPECT_EQ(t.flops, 120.0);
  ASSERT_EQ(t.schedules.size(), 1u);
  EXPECT_EQ(t.schedules[0].name, "elementwise.blocked");
  ASSERT_EQ(t.schedules[0].knobs.size(), 2u);
  const PluginKnobSpace& block = t.schedules[0].knobs[0];
  const PluginKnobSpace& unroll = t.schedules[0].knobs[1];
  EXPECT_EQ(block.name, "block");
  EXPECT_EQ(block.values, (std::vector<int64_t>{1, 4, 16}));
  EXPECT_EQ(unroll.name, "unroll");
  EXPECT_EQ(unroll.values, (std::vector<int64_t>{1, 2}));
  // abiolder's schedule struct ends before default_config: no defaults, so 0.
  EXPECT_EQ(block.default_value, older() ? 0 : 4);
  EXPECT_EQ(unroll.default_value, older() ? 0 : 2);
}

TEST_P(AbiLayout, CompileGetsConfigsAndOptionsAtTheirStrides) {
  const Graph g = split_graph();
  const std::string record = ::testing::TempDir() + "/" + name() + "_compile_record.txt";
  std::remove(record.c_str());
  const auto plugin = abi_host()->find(name());
  ASSERT_NE(plugin, nullptr);
  const auto instance = plugin->create_instance({{"record", record}, {"tag", "direct"}});
  RegionCompileSettings settings;
  settings.profile = true;
  settings.choose_config = [](const NodeConfigRequest& r) -> std::optional<NodeConfigChoice> {
    return NodeConfigChoice{"elementwise.blocked", {{"block", 16 + r.region_node}, {"unroll", 1}}};
  };
  // leaky, add: one region (its inputs x, and its output b).
  const auto region = PluginRegion::compile(instance, "heap0", g, {0, 1}, settings);
  EXPECT_EQ(read_file(record),
            "create tag=direct\ncompile nodes=2\n"
            "config node=0 schedule=elementwise.blocked block=16 unroll=1\n"
            "config node=1 schedule=elementwise.blocked block=17 unroll=1\n");
  const Tensor x = test::random_tensor({2, 3, 4, 5}, 3);
  Tensor b(DType::kFloat32, {2, 3, 4, 5});
  const void* ins[] = {x.raw()};
  void* outs[] = {b.raw()};
  region->execute(ins, outs);
  const Graph two = GraphBuilder()
                        .input("x", {2, 3, 4, 5})
                        .constant("c", test::random_tensor({2, 3, 4, 5}, 9))
                        .node("LeakyRelu", {"x"}, {"a"}, alpha(0.2f))
                        .node("Add", {"a", "c"}, {"b"}, {})
                        .output("b")
                        .build();
  expect_equal_values({b}, run_reference(two, {{"x", x}}));
  EXPECT_EQ(region->last_profile(), (std::vector<double>{0.12, 0.12}));
}

TEST_P(AbiLayout, QueryNodeAnswersInCoresStruct) {
  const auto plugin = abi_host()->find(name());
  ASSERT_NE(plugin, nullptr);
  const auto instance = plugin->create_instance();
  const Graph g = split_graph();
  const auto consumers = detail::value_consumers(g);
  const detail::ElementSizes sizes = detail::element_sizes_for_minor(plugin->abi_minor());
  for (int node : {0, 2}) {
    const detail::RegionDesc region(g, {node}, consumers, sizes);
    tsr_support support{};
    support.struct_size = sizeof(tsr_support);
    support.fused_into = -1;
    ASSERT_EQ(instance->table().query_node(instance->handle(), "heap0", region.get(), 0, &support),
              TSR_OK);
    EXPECT_EQ(support.supported, node == 0 ? 1 : 0);
    EXPECT_STREQ(support.reason, node == 0 ? "" : "op Sigmoid not implemented");
    EXPECT_EQ(support.fused_into, -1);
  }
}

// A plugin of an older minor whose elements are shorter than core's gets them at its sizes: a
// region laid out so (values without `data`, attributes without `tensor`) reads back through the
// SDK's stride-aware copy with those fields at their defaults and everything else intact.
TEST(AbiArrays, RegionLaidOutAtAnOlderMinorsShorterSizes) {
  Attributes gemm;
  gemm.set("alpha", 0.5f);
  gemm.set("beta", 1.0f);
  gemm.set("transA", int64_t{0});
  gemm.set("transB", int64_t{1});
  const Graph g = GraphBuilder()
                      .input("a", {2, 3})
                      .constant("w", test::random_tensor({4, 3}, 5))
                      .node("Gemm", {"a", "w"}, {"y"}, gemm, "gemm")
                      .node("LeakyRelu", {"y"}, {"z"}, alpha(0.125f), "leaky")
                      .output("z")
                      .build();
  detail::ElementSizes sizes = detail::core_element_sizes();
  sizes.tensor = offsetof(tsr_tensor, data);
  sizes.attribute = offsetof(tsr_attribute, tensor);
  const detail::RegionDesc desc(g, {0, 1}, detail::value_consumers(g), sizes);
  EXPECT_EQ(desc.get()->value_size, offsetof(tsr_tensor, data));
  EXPECT_EQ(desc.get()->attribute_size, offsetof(tsr_attribute, tensor));
  const plugin::detail::NativeRegion native(desc.get());
  const plugin::RegionView view(native.get());
  ASSERT_EQ(view.num_values(), 4);
  EXPECT_STREQ(view.value(1).name, "w");
  EXPECT_EQ(plugin::tensor_shape(view.value(1)), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(view.value(1).data, nullptr) << "past the stride: its default";
  ASSERT_EQ(view.num_nodes(), 2);
  const plugin::NodeView node = view.node(0);
  EXPECT_EQ(node.op_type(), "Gemm");
  EXPECT_FLOAT_EQ(node.attr_float("alpha", 0.0f), 0.5f);
  EXPECT_FLOAT_EQ(node.attr_float("beta", 0.0f), 1.0f);
  EXPECT_EQ(node.attr_int("transA", -1), 0);
  EXPECT_EQ(node.attr_int("transB", -1), 1);
  EXPECT_EQ(plugin::tensor_shape(*view.node(1).output(0)), (std::vector<int64_t>{2, 4}));
  EXPECT_FLOAT_EQ(view.node(1).attr_float("alpha", 0.0f), 0.125f);
}

TEST(AbiArrays, StridedArrayKeepsToItsElementsAndChecksSizes) {
  const std::vector<tsr_knob> knobs = {{"a", 1}, {"b", 2}, {"c", 3}};
  const detail::StridedArray wide = detail::StridedArray::of(knobs, sizeof(tsr_knob) + 8);
  EXPECT_EQ(wide.get<tsr_knob>(2).value, 3);
  EXPECT_STREQ(wide.get<tsr_knob>(1).name, "b");
  // A stride that ends before `value`: element i holds only the name.
  const detail::StridedArray narrow = detail::StridedArray::of(knobs, offsetof(tsr_knob, value));
  EXPECT_STREQ(narrow.get<tsr_knob>(2).name, "c");
  EXPECT_EQ(narrow.get<tsr_knob>(2).value, 0);
  EXPECT_THROW(detail::element_offset(SIZE_MAX / 2, 4), Error);
  EXPECT_THROW(detail::array_stride(TSR_MAX_STRIDE + 1, 16, "knobs"), Error);
  EXPECT_EQ(detail::array_stride(0, 16, "knobs"), 16u);
}

// The ABI 2.2 element sizes that a stride of 0 means are each struct's sizeof only while its last
// 2.2 field is still its last: a minor that appends one must freeze the 2.2 size instead.
template <class T>
size_t end_of_2_2(size_t last_field_end) {
  return (last_field_end + alignof(T) - 1) / alignof(T) * alignof(T);
}
#define LAST_2_2_FIELD(type, field) \
  end_of_2_2<type>(offsetof(type, field) + sizeof(static_cast<type*>(nullptr)->field))

TEST(AbiArrays, ElementStructsAreStillTheir2_2Size) {
  const detail::ElementSizes v2_2 = detail::v2_2_element_sizes();
  EXPECT_EQ(v2_2.tensor, LAST_2_2_FIELD(tsr_tensor, data));
  EXPECT_EQ(v2_2.attribute, LAST_2_2_FIELD(tsr_attribute, tensor));
  EXPECT_EQ(v2_2.node, LAST_2_2_FIELD(tsr_node, attributes));
  EXPECT_EQ(v2_2.node_config, LAST_2_2_FIELD(tsr_node_config, knobs));
  EXPECT_EQ(v2_2.knob, LAST_2_2_FIELD(tsr_knob, value));
  EXPECT_EQ(v2_2.target_option, LAST_2_2_FIELD(tsr_target_option, value));
  EXPECT_EQ(v2_2.io, LAST_2_2_FIELD(tsr_io, buffer));
  EXPECT_EQ(v2_2.device_info, LAST_2_2_FIELD(tsr_device_info, unusable_reason));
  EXPECT_EQ(v2_2.support, LAST_2_2_FIELD(tsr_support, fused_into));
  EXPECT_EQ(v2_2.schedule, LAST_2_2_FIELD(tsr_schedule_desc, default_config));
  EXPECT_EQ(v2_2.knob_space, LAST_2_2_FIELD(tsr_knob_space, values));
  for (uint32_t minor = 0; minor <= TESSERA_PLUGIN_ABI_MINOR + 1; ++minor) {
    const detail::ElementSizes s = detail::element_sizes_for_minor(minor);
    EXPECT_EQ(s.tensor, v2_2.tensor) << "minor " << minor;
    EXPECT_EQ(s.attribute, v2_2.attribute) << "minor " << minor;
    EXPECT_EQ(s.support, v2_2.support) << "minor " << minor;
  }
}

}  // namespace
}  // namespace tessera
