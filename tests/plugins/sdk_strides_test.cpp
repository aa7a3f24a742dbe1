// The plugin SDK (plugin.hpp) reads and writes every array of boundary structs by the stride it
// travels with (ABI 2.3, plugin_abi.h "Arrays of structs"), driven through the C table as cores
// of other minors would: a later core whose elements are longer (their extra bytes a marker the
// plugin must neither see nor overwrite), a 2.2 core that sends no strides, and a core whose
// elements stop before fields this build has. Every array sits in a heap block of exactly its
// size, so the sanitizers see any access past it.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tessera/plugin.hpp"

namespace {

using namespace tessera::plugin;

constexpr unsigned char kMarker = 0xA5;

// What the plugin under test was handed, for the tests to check (one test at a time).
struct Seen {
  std::vector<TargetOption> options;
  std::vector<NodeConfig> configs;
};
Seen& seen() {
  static Seen s;
  return s;
}

// LeakyRelu (alpha) then Add of a constant, float32, on host memory or its own buffers.
class StrideRegion : public CompiledRegion {
 public:
  explicit StrideRegion(const RegionView& region) {
    const NodeView leaky = region.node(0);
    alpha_ = leaky.attr_float("alpha", 0.01f);
    const tsr_tensor& c = *region.node(1).input(1);
    constant_.assign(static_cast<const float*>(c.data),
                     static_cast<const float*>(c.data) + tensor_numel(c));
  }
  void execute(const void* const* inputs, void* const* outputs) override {
    const float* x = static_cast<const float*>(inputs[0]);
    float* y = static_cast<float*>(outputs[0]);
    for (size_t i = 0; i < constant_.size(); ++i) {
      y[i] = (x[i] >= 0.0f ? x[i] : alpha_ * x[i]) + constant_[i];
    }
  }
  void execute_io(const tsr_io* inputs, const tsr_io* outputs) override {
    const void* in[] = {memory(inputs[0])};
    void* out[] = {memory(outputs[0])};
    execute(in, out);
  }
  std::vector<double> last_profile() override { return {1.0, 2.0}; }

 private:
  static void* memory(const tsr_io& io) {
    return io.buffer != nullptr ? reinterpret_cast<std::vector<float>*>(io.buffer)->data()
                                : io.host;
  }
  float alpha_ = 0.0f;
  std::vector<float> constant_;
};

class StridePlugin : public Plugin {
 public:
  void check_options(const std::vector<TargetOption>& options) override {
    seen().options = options;
  }
  std::vector<DeviceInfo> probe(const std::string&) override {
    std::vector<DeviceInfo> out(2);
    for (int i = 0; i < 2; ++i) {
      out[i].id = "dev" + std::to_string(i);
      out[i].vendor = "tests";
      out[i].name = "device " + std::to_string(i);
      out[i].driver_version = "1." + std::to_string(i);
      out[i].compute_units = 4 + i;
      out[i].memory_bytes = 1000 + i;
      out[i].features = "f" + std::to_string(i);
      out[i].score = i == 0 ? 9 : 0;
      out[i].unusable_reason = i == 0 ? "" : "never usable";
    }
    return out;
  }
  Support query(const std::string&, const RegionView& region, const NodeView& node) override {
    std::string text = std::string(node.op_type()) + " " + std::string(node.name()) + " reads '" +
                       region.value(node.input_index(0)).name + "'";
    text += " alpha=" + std::to_string(node.attr_float("alpha", -1.0f));
    text += " note=" + node.attr_string("a_note", "none");
    return Support::yes(1.5, text);
  }
  std::unique_ptr<CompiledRegion> compile(const std::string&, const RegionView& region,
                                          const CompileOptions& options) override {
    seen().configs = options.node_configs;
    return std::make_unique<StrideRegion>(region);
  }
  NodeTuning describe(const std::string&, const RegionView&, const NodeView& node) override {
    NodeTuning t;
    t.workload_key = std::string(node.op_type());
    t.flops = 6.0;
    t.schedules = {{"s.one", {{"wg", {1, 2, 4}, 2}, {"vec", {1, 4}, 4}}}, {"s.two", {}}};
    t.default_schedule = 1;
    return t;
  }
  std::string buffer_domain(const std::string&) override { return "sdk-test:host"; }
  tsr_buffer alloc_buffer(const std::string&, uint64_t bytes) override {
    return reinterpret_cast<tsr_buffer>(new std::vector<float>(bytes / sizeof(float)));
  }
  void free_buffer(tsr_buffer buffer) override {
    delete reinterpret_cast<std::vector<float>*>(buffer);
  }
};

using H = tessera::plugin::detail::Host<StridePlugin>;

// One heap block of exactly `size` bytes, filled with `fill`.
struct Block {
  Block(size_t size, unsigned char fill) : bytes(new unsigned char[size]), size(size) {
    std::memset(bytes.get(), fill, size);
  }
  template <class T>
  T* as() const {
    return reinterpret_cast<T*>(bytes.get());
  }
  std::unique_ptr<unsigned char[]> bytes;
  size_t size;
};

// `elements` laid out `stride` bytes apart: the bytes each element has within the stride, the
// marker past them.
template <class T>
Block lay_out(const std::vector<T>& elements, uint32_t stride) {
  Block block(elements.size() * stride, kMarker);
  for (size_t i = 0; i < elements.size(); ++i)
    write_element(block.as<void>(), i, stride, elements[i]);
  return block;
}

// A single struct whose writer's struct_size is `size`: exactly that many bytes.
template <class T>
Block single(T value, size_t size) {
  value.struct_size = static_cast<uint32_t>(size);
  Block block(size, 0);
  std::memcpy(block.bytes.get(), &value, std::min(size, sizeof(T)));
  return block;
}

// The sizeof a struct had when `field` was its last.
template <class T>
size_t size_ending_at(size_t field_end) {
  return (field_end + alignof(T) - 1) / alignof(T) * alignof(T);
}
#define SIZE_ENDING_AT(type, field) \
  size_ending_at<type>(offsetof(type, field) + sizeof(static_cast<type*>(nullptr)->field))

// Element sizes and struct sizes of a simulated core.
struct CoreLayout {
  uint32_t tensor = sizeof(tsr_tensor), node = sizeof(tsr_node), attribute = sizeof(tsr_attribute);
  uint32_t io = sizeof(tsr_io), node_config = sizeof(tsr_node_config), knob = sizeof(tsr_knob);
  uint32_t target_option = sizeof(tsr_target_option), device_info = sizeof(tsr_device_info);
  uint32_t support = sizeof(tsr_support);
  size_t region = sizeof(tsr_region), options = sizeof(tsr_compile_options);
  size_t host = sizeof(tsr_host_api), tuning = sizeof(tsr_node_tuning);
  bool sends_strides = true;  // false: a core of 2.2 (stride fields absent, arrays at 2.2 sizes)
};

// x -> LeakyRelu(alpha 0.25) -> a -> Add(a, c) -> y, laid out as `core` would.
class CoreRegion {
 public:
  explicit CoreRegion(const CoreLayout& core) {
    const int64_t dims[TESSERA_MAX_RANK] = {2, 3};
    const char* names[] = {"x", "c", "a", "y"};
    std::vector<tsr_tensor> values(4);
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = {core.tensor, names[i], TSR_DTYPE_FLOAT32, 2, {}, nullptr};
      std::copy(dims, dims + 2, values[i].dims);
    }
    values[1].data = constant.data();
    attributes.push_back(lay_out(
        std::vector<tsr_attribute>{string_attr("a_note", "first"), float_attr("alpha", 0.25f)},
        core.attribute));
    attributes.push_back(
        lay_out(std::vector<tsr_attribute>{string_attr("tag", "second")}, core.attribute));
    std::vector<tsr_node> nodes = {
        {core.node, "leaky", "LeakyRelu", 1, leaky_in, 1, leaky_out, 2,
         attributes[0].as<tsr_attribute>()},
        {core.node, "add", "Add", 2, add_in, 1, add_out, 1, attributes[1].as<tsr_attribute>()}};
    values_block = std::make_unique<Block>(lay_out(values, core.tensor));
    nodes_block = std::make_unique<Block>(lay_out(nodes, core.node));
    tsr_region r{};
    r.opset = 13;
    r.num_values = 4;
    r.values = values_block->as<tsr_tensor>();
    r.num_nodes = 2;
    r.nodes = nodes_block->as<tsr_node>();
    r.num_inputs = 1;
    r.inputs = region_in;
    r.num_outputs = 1;
    r.outputs = region_out;
    if (core.sends_strides) {
      r.value_size = core.tensor;
      r.node_size = core.node;
      r.attribute_size = core.attribute;
      r.io_size = core.io;
    }
    region_block = std::make_unique<Block>(single(r, core.region));
  }
  const tsr_region* get() const { return region_block->as<tsr_region>(); }

  std::vector<float> constant = {0.5f, -1.0f, 2.0f, 0.0f, 1.0f, -0.5f};

 private:
  static tsr_attribute string_attr(const char* name, const char* value) {
    tsr_attribute a{};
    a.name = name;
    a.kind = TSR_ATTR_STRING;
    a.s = value;
    return a;
  }
  static tsr_attribute float_attr(const char* name, float value) {
    tsr_attribute a{};
    a.name = name;
    a.kind = TSR_ATTR_FLOAT;
    a.f = value;
    return a;
  }

  int32_t leaky_in[1] = {0}, leaky_out[1] = {2}, add_in[2] = {2, 1}, add_out[1] = {3};
  int32_t region_in[1] = {0}, region_out[1] = {3};
  std::vector<Block> attributes;
  std::unique_ptr<Block> values_block, nodes_block, region_block;
};

// The plugin's table and one instance created with two options, as `core` would.
struct Plugged {
  explicit Plugged(const CoreLayout& core) {
    table = H::entry(TESSERA_PLUGIN_ABI_MAJOR, "strides", "1", "test");
    tsr_host_api host{0, TESSERA_PLUGIN_ABI_MAJOR, core.sends_strides ? 3u : 2u,
                      core.sends_strides ? core.target_option : 0};
    const Block host_block = single(host, core.host);
    const Block options = lay_out(std::vector<tsr_target_option>{{"colour", "red"}, {"size", "7"}},
                                  core.target_option);
    char text[256] = "";
    seen() = Seen{};
    EXPECT_EQ(table->create(host_block.as<tsr_host_api>(), options.as<tsr_target_option>(), 2,
                            &instance, {text, sizeof(text)}),
              TSR_OK)
        << text;
  }
  ~Plugged() { table->destroy(instance); }
  const tsr_plugin* table = nullptr;
  tsr_instance instance = nullptr;
};

void expect_marker_past(const Block& block, size_t count, uint32_t stride, size_t written) {
  for (size_t i = 0; i < count; ++i) {
    for (size_t b = written; b < stride; ++b) {
      ASSERT_EQ(block.bytes[i * stride + b], kMarker) << "element " << i << " byte " << b;
    }
  }
}

void check_probe(const Plugged& p, const CoreLayout& core) {
  tsr_device_info blank{};
  blank.struct_size = core.sends_strides ? core.device_info : 0;
  const Block out = lay_out(std::vector<tsr_device_info>(3, blank), core.device_info);
  int32_t count = 0;
  char text[256] = "";
  ASSERT_EQ(p.table->probe_devices(p.instance, nullptr, out.as<tsr_device_info>(), 3, &count,
                                   {text, sizeof(text)}),
            TSR_OK)
      << text;
  ASSERT_EQ(count, 2);
  for (int i = 0; i < 2; ++i) {
    const auto d = read_element<tsr_device_info>(out.as<void>(), i, core.device_info);
    EXPECT_STREQ(d.id, i == 0 ? "dev0" : "dev1");
    EXPECT_STREQ(d.name, i == 0 ? "device 0" : "device 1");
    EXPECT_EQ(d.compute_units, 4 + i);
    EXPECT_EQ(d.memory_bytes, 1000 + i);
    EXPECT_EQ(d.score, i == 0 ? 9 : 0);
    if (core.device_info >= sizeof(tsr_device_info)) {
      EXPECT_STREQ(d.unusable_reason, i == 0 ? "" : "never usable");
    }
  }
  expect_marker_past(out, 3, core.device_info, sizeof(tsr_device_info));
}

void check_queries(const Plugged& p, const CoreLayout& core, const CoreRegion& region) {
  tsr_support one{};
  one.struct_size = sizeof(tsr_support);
  ASSERT_EQ(p.table->query_node(p.instance, "dev0", region.get(), 0, &one), TSR_OK);
  EXPECT_STREQ(one.reason, "LeakyRelu leaky reads 'x' alpha=0.250000 note=first");
  tsr_support blank{};
  blank.struct_size = core.support;
  blank.fused_into = -1;
  const Block answers = lay_out(std::vector<tsr_support>(2, blank), core.support);
  char text[256] = "";
  ASSERT_EQ(p.table->query_subgraph(p.instance, "dev0", region.get(), answers.as<tsr_support>(),
                                    {text, sizeof(text)}),
            TSR_OK)
      << text;
  const auto second = read_element<tsr_support>(answers.as<void>(), 1, core.support);
  EXPECT_EQ(second.supported, 1);
  EXPECT_EQ(second.cost_us, 1.5);
  EXPECT_STREQ(second.reason, "Add add reads 'a' alpha=-1.000000 note=none");
  EXPECT_EQ(second.struct_size, core.support) << "the plugin leaves struct_size as core set it";
  if (core.support >= sizeof(tsr_support)) {
    EXPECT_EQ(second.fused_into, -1);
  }
  expect_marker_past(answers, 2, core.support, sizeof(tsr_support));
}

// Compiles with two node configs of two knobs each, runs through both execute slots, and checks
// the outputs, the configs the plugin saw and last_profile.
void check_compile_and_run(const Plugged& p, const CoreLayout& core, const CoreRegion& region) {
  std::vector<Block> knobs;
  knobs.push_back(lay_out(std::vector<tsr_knob>{{"wg", 4}, {"vec", 1}}, core.knob));
  knobs.push_back(lay_out(std::vector<tsr_knob>{{"wg", 2}, {"vec", 4}}, core.knob));
  const Block configs = lay_out(
      std::vector<tsr_node_config>{{core.node_config, 0, "s.one", 2, knobs[0].as<tsr_knob>()},
                                   {core.node_config, 1, "s.one", 2, knobs[1].as<tsr_knob>()}},
      core.node_config);
  tsr_compile_options o{};
  o.precision = "fp32";
  o.num_node_configs = 2;
  o.node_configs = configs.as<tsr_node_config>();
  o.profile = 1;
  if (core.sends_strides) {
    o.node_config_size = core.node_config;
    o.knob_size = core.knob;
  }
  const Block options = single(o, core.options);
  tsr_region_handle handle = nullptr;
  char text[256] = "";
  ASSERT_EQ(
      p.table->compile_region(p.instance, "dev0", region.get(), options.as<tsr_compile_options>(),
                              &handle, {text, sizeof(text)}),
      TSR_OK)
      << text;
  ASSERT_EQ(seen().configs.size(), 2u);
  EXPECT_EQ(seen().configs[1].node, 1);
  EXPECT_EQ(seen().configs[1].schedule, "s.one");
  EXPECT_EQ(seen().configs[1].knob("wg", 0), 2);
  EXPECT_EQ(seen().configs[1].knob("vec", 0), 4);
  EXPECT_EQ(seen().configs[0].knob("wg", 0), 4);

  const std::vector<float> x = {1.0f, -2.0f, 3.0f, -4.0f, 0.0f, 8.0f};
  std::vector<float> want(6), got(6, -99.0f), in_buffer_out(6, -99.0f);
  for (size_t i = 0; i < 6; ++i) {
    want[i] = (x[i] >= 0.0f ? x[i] : 0.25f * x[i]) + region.constant[i];
  }
  const void* ins[] = {x.data()};
  void* outs[] = {got.data()};
  ASSERT_EQ(p.table->execute_region(handle, ins, outs, {text, sizeof(text)}), TSR_OK) << text;
  EXPECT_EQ(got, want);
  // execute_region_io: the input in host memory, the output in one of the plugin's buffers.
  tsr_buffer buffer = nullptr;
  ASSERT_EQ(
      p.table->alloc_buffer(p.instance, "dev0", 6 * sizeof(float), &buffer, {text, sizeof(text)}),
      TSR_OK);
  const Block io_in =
      lay_out(std::vector<tsr_io>{{const_cast<float*>(x.data()), nullptr}}, core.io);
  const Block io_out = lay_out(std::vector<tsr_io>{{nullptr, buffer}}, core.io);
  ASSERT_EQ(p.table->execute_region_io(handle, io_in.as<tsr_io>(), io_out.as<tsr_io>(),
                                       {text, sizeof(text)}),
            TSR_OK)
      << text;
  EXPECT_EQ(*reinterpret_cast<std::vector<float>*>(buffer), want);
  p.table->free_buffer(p.instance, buffer);
  double times[4] = {0};
  int32_t count = 0;
  ASSERT_EQ(p.table->last_profile(handle, times, 4, &count), TSR_OK);
  EXPECT_EQ(count, 2);
  EXPECT_EQ(times[1], 2.0);
  p.table->release_region(handle);
}

// describe_node writes only what core's struct holds and lays its arrays out at this build's
// sizes, declaring them where there is room.
void check_describe(const Plugged& p, const CoreLayout& core, const CoreRegion& region) {
  tsr_node_tuning blank{};
  const Block tuning = single(blank, core.tuning);
  char text[256] = "";
  ASSERT_EQ(p.table->describe_node(p.instance, "dev0", region.get(), 0,
                                   tuning.as<tsr_node_tuning>(), {text, sizeof(text)}),
            TSR_OK)
      << text;
  const tsr_node_tuning t = read_struct(tuning.as<tsr_node_tuning>(), 0);
  EXPECT_STREQ(t.workload_key, "LeakyRelu");
  ASSERT_EQ(t.num_schedules, 2);
  EXPECT_EQ(t.default_schedule, 1);
  const uint32_t schedule_size = array_stride<tsr_schedule_desc>(t.schedule_size);
  const uint32_t space_size = array_stride<tsr_knob_space>(t.knob_space_size);
  const uint32_t knob_size = array_stride<tsr_knob>(t.knob_size);
  if (core.tuning >= sizeof(tsr_node_tuning)) {
    EXPECT_EQ(t.schedule_size, sizeof(tsr_schedule_desc));
    EXPECT_EQ(t.knob_space_size, sizeof(tsr_knob_space));
    EXPECT_EQ(t.knob_size, sizeof(tsr_knob));
  }
  const auto one = read_element<tsr_schedule_desc>(t.schedules, 0, schedule_size);
  EXPECT_STREQ(one.name, "s.one");
  ASSERT_EQ(one.num_knobs, 2);
  const auto vec = read_element<tsr_knob_space>(one.knobs, 1, space_size);
  EXPECT_STREQ(vec.name, "vec");
  ASSERT_EQ(vec.num_values, 2);
  EXPECT_EQ(vec.values[1], 4);
  EXPECT_EQ(read_element<tsr_knob>(one.default_config, 1, knob_size).value, 4);
  EXPECT_STREQ(read_element<tsr_schedule_desc>(t.schedules, 1, schedule_size).name, "s.two");
}

void check_every_slot(const CoreLayout& core) {
  const Plugged p(core);
  ASSERT_NE(p.instance, nullptr);
  ASSERT_EQ(seen().options.size(), 2u);
  EXPECT_EQ(seen().options[1].name, "size");
  EXPECT_EQ(seen().options[1].value, "7");
  const CoreRegion region(core);
  check_probe(p, core);
  check_queries(p, core, region);
  check_compile_and_run(p, core, region);
  check_describe(p, core, region);
}

TEST(SdkStrides, ALaterCoresLongerElementsAreReadByTheirStride) {
  CoreLayout later;
  later.tensor += 24;
  later.node += 40;
  later.attribute += 8;
  later.io += 16;
  later.node_config += 24;
  later.knob += 8;
  later.target_option += 16;
  later.device_info += 32;
  later.support += 24;
  later.region += 32;
  later.options += 16;
  later.host += 8;
  later.tuning += 16;
  check_every_slot(later);
}

TEST(SdkStrides, ACoreOf2_2SendsNoStridesAndGetsThe2_2Layout) {
  CoreLayout v2_2;
  v2_2.sends_strides = false;
  v2_2.region = SIZE_ENDING_AT(tsr_region, outputs);
  v2_2.options = SIZE_ENDING_AT(tsr_compile_options, profile);
  v2_2.host = SIZE_ENDING_AT(tsr_host_api, abi_minor);
  v2_2.tuning = SIZE_ENDING_AT(tsr_node_tuning, default_schedule);
  check_every_slot(v2_2);
}

TEST(SdkStrides, ACoreWithShorterElementsGetsOnlyTheFieldsItHolds) {
  CoreLayout shorter;
  shorter.attribute = offsetof(tsr_attribute, tensor);
  shorter.device_info = offsetof(tsr_device_info, unusable_reason);
  shorter.support = offsetof(tsr_support, fused_into);
  check_every_slot(shorter);
}

TEST(SdkStrides, AStrideAboveTheLimitIsRefused) {
  CoreLayout bad;
  const Plugged p(bad);
  const CoreRegion region(bad);
  tsr_region r = *region.get();
  r.value_size = TSR_MAX_STRIDE + 1;
  tsr_compile_options o{};
  o.struct_size = sizeof(o);
  tsr_region_handle handle = nullptr;
  char text[256] = "";
  EXPECT_EQ(p.table->compile_region(p.instance, "dev0", &r, &o, &handle, {text, sizeof(text)}),
            TSR_INVALID_ARGUMENT);
  EXPECT_STREQ(text, "array element size 65537 is above TSR_MAX_STRIDE");
  EXPECT_EQ(handle, nullptr);
}

}  // namespace
