// The plugin-author helper (plugin.hpp) on its own: typed attribute getters and the trampolines'
// exception -> status mapping, driven through the C table like core does.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tessera/plugin.hpp"

namespace {

using namespace tessera::plugin;

struct HandMadeRegion {
  tsr_tensor values[2]{};
  int32_t in[1] = {0};
  int32_t out[1] = {1};
  int64_t ints[3] = {1, 2, 3};
  tsr_attribute attrs[3]{};
  tsr_node node{};
  tsr_region region{};

  HandMadeRegion() {
    values[0] = {sizeof(tsr_tensor), "x", TSR_DTYPE_FLOAT32, 2, {2, 3}, nullptr};
    values[1] = {sizeof(tsr_tensor), "y", TSR_DTYPE_FLOAT32, 2, {2, 3}, nullptr};
    attrs[0].name = "alpha";
    attrs[0].kind = TSR_ATTR_FLOAT;
    attrs[0].f = 0.25f;
    attrs[1].name = "perm";
    attrs[1].kind = TSR_ATTR_INTS;
    attrs[1].count = 3;
    attrs[1].ints = ints;
    attrs[2].name = "mode";
    attrs[2].kind = TSR_ATTR_STRING;
    attrs[2].s = "nearest";
    node = {sizeof(tsr_node), "n0", "LeakyRelu", 1, in, 1, out, 3, attrs};
    // Strides 0: the ABI 2.2 sizes, which are this build's.
    region = {sizeof(tsr_region), 13, 2, values, 1, &node, 1, in, 1, out, 0, 0, 0, 0};
  }
};

TEST(PluginHelper, TypedAttributeGettersWithDefaults) {
  HandMadeRegion r;
  const NodeView node = RegionView(&r.region).node(0);
  EXPECT_EQ(node.op_type(), "LeakyRelu");
  EXPECT_FLOAT_EQ(node.attr_float("alpha", 0.01f), 0.25f);
  EXPECT_FLOAT_EQ(node.attr_float("beta", 0.5f), 0.5f);
  EXPECT_EQ(node.attr_ints("perm", {}), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(node.attr_string("mode", "linear"), "nearest");
  EXPECT_EQ(node.attr_int("axis", -1), -1);
  EXPECT_EQ(tensor_numel(*node.input(0)), 6);
  EXPECT_EQ(tensor_nbytes(*node.output(0)), 24u);
  EXPECT_EQ(node.input(1), nullptr);
  try {
    node.attr_int("alpha", 0);
    FAIL() << "expected a Failure";
  } catch (const Failure& f) {
    EXPECT_EQ(f.status(), TSR_INVALID_ARGUMENT);
    EXPECT_STREQ(f.what(), "node 'n0' (LeakyRelu): attribute 'alpha' has kind 2, expected 1");
  }
}

class Thrower : public Plugin {
 public:
  std::vector<DeviceInfo> probe(const std::string& selector) override {
    DeviceInfo d;
    d.id = "dev0";
    d.name = "dev:" + selector + ":" + option("colour", "none");
    return {d};
  }
  Support query(const std::string&, const RegionView&, const NodeView& node) override {
    throw std::runtime_error("query exploded for " + std::string(node.name()));
  }
  std::unique_ptr<CompiledRegion> compile(const std::string&, const RegionView&,
                                          const CompileOptions& options) override {
    throw Failure(TSR_COMPILE_FAILED, "no kernel for precision " + options.precision);
  }
  void check_options(const std::vector<TargetOption>& options) override {
    for (const TargetOption& o : options) {
      if (o.name != "colour")
        throw Failure(TSR_INVALID_ARGUMENT, "unknown option '" + o.name + "'");
    }
  }
};

using H = detail::Host<Thrower>;

tsr_instance make(const tsr_plugin* table, std::vector<tsr_target_option> options,
                  std::string* error = nullptr) {
  const tsr_host_api host{sizeof(tsr_host_api), TESSERA_PLUGIN_ABI_MAJOR, TESSERA_PLUGIN_ABI_MINOR,
                          sizeof(tsr_target_option)};
  tsr_instance instance = nullptr;
  char text[128] = {0};
  const tsr_status st = table->create(&host, options.data(), static_cast<int32_t>(options.size()),
                                      &instance, {text, sizeof(text)});
  if (error) *error = st == TSR_OK ? "" : text;
  return instance;
}

TEST(PluginHelper, TrampolinesTurnExceptionsIntoStatus) {
  const tsr_plugin* table = H::entry(TESSERA_PLUGIN_ABI_MAJOR, "thrower", "1", "test");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(H::entry(TESSERA_PLUGIN_ABI_MAJOR + 1, "thrower", "1", "test"), nullptr);
  tsr_instance instance = make(table, {});
  ASSERT_NE(instance, nullptr);

  // Zeroed as core zeroes them: element 0's struct_size is the array's stride (0: the 2.2 size).
  tsr_device_info infos[4]{};
  int32_t count = 0;
  char text[128] = {0};
  ASSERT_EQ(table->probe_devices(instance, "any", infos, 4, &count, {text, sizeof(text)}), TSR_OK);
  ASSERT_EQ(count, 1);
  EXPECT_STREQ(infos[0].name, "dev:any:none");
  EXPECT_STREQ(infos[0].id, "dev0");

  HandMadeRegion r;
  tsr_support support{};
  EXPECT_EQ(table->query_node(instance, "dev0", &r.region, 0, &support), TSR_ERROR);
  EXPECT_EQ(support.supported, 0);
  EXPECT_STREQ(support.reason, "query exploded for n0");

  tsr_compile_options options{};
  options.struct_size = sizeof(tsr_compile_options);
  options.precision = "fp16";
  tsr_region_handle handle = nullptr;
  EXPECT_EQ(
      table->compile_region(instance, "dev0", &r.region, &options, &handle, {text, sizeof(text)}),
      TSR_COMPILE_FAILED);
  EXPECT_STREQ(text, "no kernel for precision fp16");
  EXPECT_EQ(handle, nullptr);

  // Messages are truncated to the caller's buffer, never overflow it.
  char small[8];
  EXPECT_EQ(
      table->compile_region(instance, "dev0", &r.region, &options, &handle, {small, sizeof(small)}),
      TSR_COMPILE_FAILED);
  EXPECT_STREQ(small, "no kern");
  table->destroy(instance);
}

// Two instances of one plugin keep their own options (and so their own answers); an option the
// plugin refuses makes no instance, with the plugin's message.
TEST(PluginHelper, InstancesAreIndependentAndOptionsAreCheckedAtCreate) {
  const tsr_plugin* table = H::entry(TESSERA_PLUGIN_ABI_MAJOR, "thrower", "1", "test");
  ASSERT_NE(table, nullptr);
  tsr_instance red = make(table, {{"colour", "red"}});
  tsr_instance blue = make(table, {{"colour", "blue"}});
  ASSERT_NE(red, nullptr);
  ASSERT_NE(blue, nullptr);
  EXPECT_NE(red, blue);
  const auto name_of = [&](tsr_instance instance) {
    tsr_device_info info{};
    int32_t count = 0;
    char text[128] = {0};
    EXPECT_EQ(table->probe_devices(instance, nullptr, &info, 1, &count, {text, sizeof(text)}),
              TSR_OK);
    return count == 1 ? std::string(info.name) : std::string();
  };
  EXPECT_EQ(name_of(red), "dev::red");
  EXPECT_EQ(name_of(blue), "dev::blue");
  EXPECT_EQ(name_of(red), "dev::red");
  table->destroy(red);
  EXPECT_EQ(name_of(blue), "dev::blue");
  table->destroy(blue);

  std::string error;
  EXPECT_EQ(make(table, {{"size", "3"}}, &error), nullptr);
  EXPECT_EQ(error, "unknown option 'size'");
}

}  // namespace
