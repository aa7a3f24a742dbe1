// A plugin written against the raw C table whose element structs have a layout of their own, to
// check that arrays of structs cross the boundary by the element size each side declares
// (plugin_abi.h, "Arrays of structs", ABI 2.3). Built three times (tests/plugins/CMakeLists.txt):
//   abiolder  ABI_SIM_LAYOUT=1: declares 2.3, and its element structs stop before trailing
//             fields core has (tsr_attribute.tensor, tsr_device_info.unusable_reason,
//             tsr_support.fused_into, tsr_schedule_desc.default_config): a plugin built before
//             those fields, run by a core that has them.
//   abinewer  ABI_SIM_LAYOUT=2: declares 2.4, and its element structs end with fields core does
//             not know, which it fills with a marker where it lays arrays out: a plugin of a
//             later minor.
//   abi22     ABI_SIM_LAYOUT=0: declares 2.2 and steps through every array by its own sizeof,
//             reading no stride: a plugin built before 2.3.
// It runs float32 Relu, LeakyRelu (alpha), Add and Mul (same shapes; an input may be a constant)
// in host memory, which it also hands out as buffers of a domain of its own, so a value between
// two of its regions stays in its buffers (execute_region_io). describe_node gives each node one
// schedule with knobs "block" and "unroll"; create and compile append what reached them (target
// options, node configs) to the file named by the target option `record`.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "tessera/plugin_abi.h"

#ifndef ABI_SIM_LAYOUT
#error "ABI_SIM_LAYOUT must be 0 (2.2), 1 (older element structs) or 2 (newer element structs)"
#endif

namespace {

#if ABI_SIM_LAYOUT == 1
#define SIM_OLDER 1
#else
#define SIM_OLDER 0
#endif
#if ABI_SIM_LAYOUT == 2
// Trailing fields of a later minor: core never reads them, and never writes them in arrays it
// lays out (they stay 0 when this plugin reads core's shorter elements).
#define SIM_LATER_FIELDS \
  uint64_t later_id;     \
  const char* later_note;
constexpr uint64_t kLaterMarker = 0x5ca1ab1e0ddba11ull;
#else
#define SIM_LATER_FIELDS
#endif

// The element structs as this plugin sees them: prefixes of core's (checked below), shorter or
// longer at the end.
namespace sim {
struct tensor {
  uint32_t struct_size;
  const char* name;
  int32_t dtype;
  int32_t rank;
  int64_t dims[TESSERA_MAX_RANK];
  const void* data;
  SIM_LATER_FIELDS
};
struct attribute {
  uint32_t struct_size;
  const char* name;
  int32_t kind;
  int64_t i;
  float f;
  const char* s;
  int64_t count;
  const int64_t* ints;
  const float* floats;
  const char* const* strings;
#if !SIM_OLDER
  const tsr_tensor* tensor;
#endif
  SIM_LATER_FIELDS
};
struct node {
  uint32_t struct_size;
  const char* name;
  const char* op_type;
  int32_t num_inputs;
  const int32_t* inputs;
  int32_t num_outputs;
  const int32_t* outputs;
  int32_t num_attributes;
  const void* attributes;  // sim::attribute at the region's attribute_size
  SIM_LATER_FIELDS
};
struct knob {
  const char* name;
  int64_t value;
  SIM_LATER_FIELDS
};
struct knob_space {
  const char* name;
  int32_t num_values;
  const int64_t* values;
  SIM_LATER_FIELDS
};
struct schedule_desc {
  const char* name;
  int32_t num_knobs;
  const knob_space* knobs;
#if !SIM_OLDER
  const knob* default_config;
#endif
  SIM_LATER_FIELDS
};
struct node_config {
  uint32_t struct_size;
  int32_t node;
  const char* schedule;
  int32_t num_knobs;
  const void* knobs;  // sim::knob at the options' knob_size
  SIM_LATER_FIELDS
};
struct target_option {
  const char* name;
  const char* value;
  SIM_LATER_FIELDS
};
struct io {
  void* host;
  tsr_buffer buffer;
  SIM_LATER_FIELDS
};
struct device_info {
  uint32_t struct_size;
  const char* id;
  const char* vendor;
  const char* name;
  const char* driver_version;
  const char* kind;
  int32_t compute_units;
  int64_t memory_bytes;
  const char* features;
  int32_t score;
#if !SIM_OLDER
  const char* unusable_reason;
#endif
  SIM_LATER_FIELDS
};
struct support {
  uint32_t struct_size;
  int32_t supported;
  int32_t preferred_layout;
  double cost_us;
  char reason[256];
#if !SIM_OLDER
  int32_t fused_into;
#endif
  SIM_LATER_FIELDS
};
}  // namespace sim

#define SIM_SAME_PLACE(sim_type, core_type, field) \
  static_assert(offsetof(sim::sim_type, field) == offsetof(core_type, field), #sim_type "." #field)
SIM_SAME_PLACE(tensor, tsr_tensor, data);
SIM_SAME_PLACE(attribute, tsr_attribute, strings);
SIM_SAME_PLACE(node, tsr_node, attributes);
SIM_SAME_PLACE(knob, tsr_knob, value);
SIM_SAME_PLACE(knob_space, tsr_knob_space, values);
SIM_SAME_PLACE(schedule_desc, tsr_schedule_desc, knobs);
SIM_SAME_PLACE(node_config, tsr_node_config, knobs);
SIM_SAME_PLACE(target_option, tsr_target_option, value);
SIM_SAME_PLACE(io, tsr_io, buffer);
SIM_SAME_PLACE(device_info, tsr_device_info, score);
SIM_SAME_PLACE(support, tsr_support, reason);
#if SIM_OLDER
static_assert(sizeof(sim::attribute) < sizeof(tsr_attribute), "older: shorter than core's");
static_assert(sizeof(sim::device_info) < sizeof(tsr_device_info), "older: shorter than core's");
static_assert(sizeof(sim::support) < sizeof(tsr_support), "older: shorter than core's");
#elif ABI_SIM_LAYOUT == 2
static_assert(sizeof(sim::tensor) > sizeof(tsr_tensor), "newer: longer than core's");
#else
static_assert(sizeof(sim::tensor) == sizeof(tsr_tensor) && sizeof(sim::io) == sizeof(tsr_io) &&
                  sizeof(sim::support) == sizeof(tsr_support),
              "2.2: core's own layout");
#endif

#if ABI_SIM_LAYOUT == 0
constexpr uint32_t kDeclaredMinor = 2;
#elif ABI_SIM_LAYOUT == 1
constexpr uint32_t kDeclaredMinor = 3;
#else
constexpr uint32_t kDeclaredMinor = TESSERA_PLUGIN_ABI_MINOR + 1;
#endif

void say(tsr_message m, const std::string& text) {
  if (m.text == nullptr || m.capacity == 0) return;
  std::snprintf(m.text, m.capacity, "%s", text.c_str());
}

// The step through an array of T whose stride field says `declared`: a 2.2 plugin knows no
// strides and steps by its own sizeof; a later one refuses 0 here (core always sends one).
template <class T>
uint32_t stride_of(uint32_t declared) {
  if (ABI_SIM_LAYOUT == 0) return sizeof(T);
  return declared;
}

// Element i of an array laid out `stride` bytes apart: the bytes both know, zero for the rest.
template <class T>
T get(const void* base, int64_t i, uint32_t stride) {
  T value{};
  std::memcpy(&value, static_cast<const unsigned char*>(base) + static_cast<size_t>(i) * stride,
              std::min<size_t>(stride, sizeof(T)));
  return value;
}

template <class T>
void put(void* base, int64_t i, uint32_t stride, const T& value) {
  std::memcpy(static_cast<unsigned char*>(base) + static_cast<size_t>(i) * stride, &value,
              std::min<size_t>(stride, sizeof(T)));
}

// Fills the trailing fields of a later minor with the marker (core must not read them).
template <class T>
void mark_later(T& value) {
#if ABI_SIM_LAYOUT == 2
  value.later_id = kLaterMarker;
  value.later_note = "a field of a later minor";
#else
  (void)value;
#endif
}

// Throws when an element core laid out holds anything in this plugin's later fields: core's
// elements are shorter, so those must read as their defaults.
template <class T>
void expect_no_later(const T& value, const char* what) {
#if ABI_SIM_LAYOUT == 2
  if (value.later_id != 0 || value.later_note != nullptr) {
    throw std::string(what) + ": a field past core's element size did not read as 0";
  }
#else
  (void)value;
  (void)what;
#endif
}

int64_t numel(const sim::tensor& t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

// The region as this plugin reads it: every array through its stride.
struct Region {
  std::vector<sim::tensor> values;
  std::vector<sim::node> nodes;
  std::vector<std::vector<sim::attribute>> attributes;  // per node
  std::vector<int32_t> inputs, outputs;
  uint32_t io_size = 0;
};

Region read_region(const tsr_region* r) {
  if (r == nullptr) throw std::string("null region");
  const bool strides = ABI_SIM_LAYOUT != 0 && TSR_HAS_FIELD(r, tsr_region, io_size);
  if (ABI_SIM_LAYOUT != 0 && !strides) throw std::string("core sent no element sizes");
  Region out;
  const uint32_t value_stride = stride_of<sim::tensor>(strides ? r->value_size : 0);
  const uint32_t node_stride = stride_of<sim::node>(strides ? r->node_size : 0);
  const uint32_t attribute_stride = stride_of<sim::attribute>(strides ? r->attribute_size : 0);
  out.io_size = stride_of<sim::io>(strides ? r->io_size : 0);
  if (value_stride == 0 || node_stride == 0 || attribute_stride == 0 || out.io_size == 0) {
    throw std::string("core sent an element size of 0");
  }
  for (int32_t v = 0; v < r->num_values; ++v) {
    out.values.push_back(get<sim::tensor>(r->values, v, value_stride));
    expect_no_later(out.values.back(), "value");
  }
  for (int32_t n = 0; n < r->num_nodes; ++n) {
    out.nodes.push_back(get<sim::node>(r->nodes, n, node_stride));
    const sim::node& node = out.nodes.back();
    expect_no_later(node, "node");
    out.attributes.emplace_back();
    for (int32_t a = 0; a < node.num_attributes; ++a) {
      out.attributes.back().push_back(get<sim::attribute>(node.attributes, a, attribute_stride));
      expect_no_later(out.attributes.back().back(), "attribute");
    }
  }
  out.inputs.assign(r->inputs, r->inputs + r->num_inputs);
  out.outputs.assign(r->outputs, r->outputs + r->num_outputs);
  return out;
}

float attr_float(const Region& region, int32_t node, const char* name, float fallback) {
  for (const sim::attribute& a : region.attributes[static_cast<size_t>(node)]) {
    if (a.name != nullptr && std::strcmp(a.name, name) == 0 && a.kind == TSR_ATTR_FLOAT) return a.f;
  }
  return fallback;
}

bool same_shape(const sim::tensor& a, const sim::tensor& b) {
  return a.rank == b.rank && std::equal(a.dims, a.dims + a.rank, b.dims);
}

// "" when this plugin runs node n, else why not.
std::string refusal(const Region& region, int32_t n) {
  const sim::node& node = region.nodes[static_cast<size_t>(n)];
  const std::string op = node.op_type ? node.op_type : "";
  const bool unary = op == "Relu" || op == "LeakyRelu";
  const bool binary = op == "Add" || op == "Mul";
  if (!unary && !binary) return "op " + op + " not implemented";
  if (node.num_inputs != (unary ? 1 : 2) || node.num_outputs != 1) return "unexpected arity";
  const sim::tensor& out = region.values[static_cast<size_t>(node.outputs[0])];
  for (int32_t i = 0; i < node.num_inputs; ++i) {
    if (node.inputs[i] < 0) return "omitted input";
    const sim::tensor& in = region.values[static_cast<size_t>(node.inputs[i])];
    if (in.dtype != TSR_DTYPE_FLOAT32) return "only float32 is implemented";
    if (!same_shape(in, out)) return "broadcasting not implemented";
  }
  return "";
}

struct Buffer {
  std::vector<unsigned char> bytes;
};

struct Instance {
  std::string record;  // target option `record`: a file create and compile append to
  std::string tag;     // target option `tag`: echoed into the record
  std::string domain = std::string("abisim-") + ABI_SIM_NAME + ":host";
  std::mutex mutex;
  // describe_node's answer, kept until the next call on this instance.
  std::string workload_key;
  std::vector<int64_t> block_values{1, 4, 16}, unroll_values{1, 2};
  std::vector<sim::knob_space> spaces;
  std::vector<sim::knob> defaults;
  std::vector<sim::schedule_desc> schedules;
};

void append_record(const Instance& instance, const std::string& line) {
  if (instance.record.empty()) return;
  if (FILE* f = std::fopen(instance.record.c_str(), "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

// One step of a compiled region: out = op(a[, b]).
struct Step {
  std::string op;
  int32_t a = -1, b = -1, out = -1;
  float alpha = 0.01f;
  int64_t elements = 0;
};

struct Compiled {
  std::vector<std::vector<float>> values;  // per region value; constants filled at compile
  std::vector<Step> steps;
  std::vector<int32_t> inputs, outputs;
  uint32_t io_size = 0;
  std::vector<double> times_us;  // per node: its output element count / 1000
};

void run_steps(Compiled& c) {
  for (const Step& s : c.steps) {
    const float* a = c.values[static_cast<size_t>(s.a)].data();
    const float* b = s.b >= 0 ? c.values[static_cast<size_t>(s.b)].data() : nullptr;
    float* out = c.values[static_cast<size_t>(s.out)].data();
    for (int64_t i = 0; i < s.elements; ++i) {
      if (s.op == "Relu") {
        out[i] = a[i] > 0.0f ? a[i] : 0.0f;
      } else if (s.op == "LeakyRelu") {
        out[i] = a[i] >= 0.0f ? a[i] : s.alpha * a[i];
      } else if (s.op == "Add") {
        out[i] = a[i] + b[i];
      } else {
        out[i] = a[i] * b[i];
      }
    }
  }
  c.times_us.clear();
  for (const Step& s : c.steps) c.times_us.push_back(static_cast<double>(s.elements) / 1000.0);
}

// ---- slots ----

tsr_status create(const tsr_host_api* host, const tsr_target_option* options, int32_t count,
                  tsr_instance* out, tsr_message m) {
  try {
    *out = nullptr;
    const bool strides = ABI_SIM_LAYOUT != 0 && host != nullptr &&
                         TSR_HAS_FIELD(host, tsr_host_api, target_option_size);
    const uint32_t stride = stride_of<sim::target_option>(strides ? host->target_option_size : 0);
    if (count > 0 && stride == 0) throw std::string("core sent no target option size");
    auto instance = new Instance();
    for (int32_t i = 0; i < count; ++i) {
      const sim::target_option o = get<sim::target_option>(options, i, stride);
      expect_no_later(o, "target option");
      const std::string name = o.name ? o.name : "", value = o.value ? o.value : "";
      if (name == "record") {
        instance->record = value;
      } else if (name == "tag") {
        instance->tag = value;
      } else {
        delete instance;
        say(m, "unknown option '" + name + "' (known: record, tag)");
        return TSR_INVALID_ARGUMENT;
      }
    }
    append_record(*instance, "create tag=" + instance->tag);
    *out = reinterpret_cast<tsr_instance>(instance);
    return TSR_OK;
  } catch (const std::string& e) {
    say(m, e);
    return TSR_ERROR;
  } catch (...) {
    say(m, "create failed");
    return TSR_ERROR;
  }
}

void destroy(tsr_instance instance) {
  delete reinterpret_cast<Instance*>(instance);
}

tsr_status probe(tsr_instance, const char*, tsr_device_info* out, int32_t capacity, int32_t* count,
                 tsr_message m) {
  if (capacity < 2) {
    say(m, "room for 2 devices needed");
    return TSR_INVALID_ARGUMENT;
  }
  const uint32_t stride = stride_of<sim::device_info>(out[0].struct_size);
  if (stride == 0) {
    say(m, "core sent no device info size");
    return TSR_INVALID_ARGUMENT;
  }
  for (int32_t i = 0; i < 2; ++i) {
    sim::device_info d = get<sim::device_info>(out, i, stride);  // core's defaults
    d.id = i == 0 ? "heap0" : "off1";
    d.vendor = "Tessera tests";
    d.name = i == 0 ? ABI_SIM_NAME " host memory" : ABI_SIM_NAME " unusable";
    d.driver_version = "sim";
    d.kind = "cpu";
    d.compute_units = 1 + i;
    d.memory_bytes = 1024;
    d.features = "strided";
    d.score = i == 0 ? 40 : 0;
#if !SIM_OLDER
    d.unusable_reason = i == 0 ? "" : "simulated: never usable";
#endif
    mark_later(d);
    put(out, i, stride, d);
  }
  *count = 2;
  return TSR_OK;
}

void answer(const Region& region, int32_t n, sim::support& s) {
  const std::string why = refusal(region, n);
  s.supported = why.empty() ? 1 : 0;
  s.preferred_layout = TSR_LAYOUT_NCHW;
  s.cost_us = 0.0;
  if (why.empty()) {
    const int32_t out = region.nodes[static_cast<size_t>(n)].outputs[0];
    s.cost_us = 0.0001 * static_cast<double>(numel(region.values[static_cast<size_t>(out)]));
  }
  std::snprintf(s.reason, sizeof(s.reason), "%s", why.c_str());
#if !SIM_OLDER
  s.fused_into = -1;
#endif
  mark_later(s);
}

tsr_status query_node(tsr_instance, const char*, const tsr_region* r, int32_t node,
                      tsr_support* support) {
  try {
    const Region region = read_region(r);
    sim::support s{};
    answer(region, node, s);
    // A single struct: write the fields core's struct_size holds.
    put(support, 0, std::min<uint32_t>(support->struct_size, sizeof(sim::support)), s);
    return TSR_OK;
  } catch (const std::string& e) {
    std::snprintf(support->reason, sizeof(support->reason), "%s", e.c_str());
    return TSR_ERROR;
  }
}

tsr_status query_subgraph(tsr_instance, const char*, const tsr_region* r, tsr_support* answers,
                          tsr_message m) {
  try {
    const Region region = read_region(r);
    const uint32_t stride = stride_of<sim::support>(answers[0].struct_size);
    if (stride == 0) throw std::string("core sent no support size");
    for (int32_t n = 0; n < static_cast<int32_t>(region.nodes.size()); ++n) {
      sim::support s = get<sim::support>(answers, n, stride);  // core's defaults
      answer(region, n, s);
      put(answers, n, stride, s);
    }
    return TSR_OK;
  } catch (const std::string& e) {
    say(m, e);
    return TSR_ERROR;
  }
}

// The configs core sent, read through their strides: one record line each, each line led by
// its newline.
std::string configs_text(const tsr_compile_options* options) {
  if (options == nullptr || options->num_node_configs == 0) return "";
  const bool strides =
      ABI_SIM_LAYOUT != 0 && TSR_HAS_FIELD(options, tsr_compile_options, knob_size);
  if (ABI_SIM_LAYOUT != 0 && !strides) throw std::string("core sent no node config sizes");
  const uint32_t config_stride =
      stride_of<sim::node_config>(strides ? options->node_config_size : 0);
  const uint32_t knob_stride = stride_of<sim::knob>(strides ? options->knob_size : 0);
  std::string text;
  for (int32_t c = 0; c < options->num_node_configs; ++c) {
    const sim::node_config config = get<sim::node_config>(options->node_configs, c, config_stride);
    expect_no_later(config, "node config");
    text += "\nconfig node=" + std::to_string(config.node) +
            " schedule=" + (config.schedule ? config.schedule : "");
    for (int32_t k = 0; k < config.num_knobs; ++k) {
      const sim::knob knob = get<sim::knob>(config.knobs, k, knob_stride);
      expect_no_later(knob, "knob");
      text += std::string(" ") + (knob.name ? knob.name : "") + "=" + std::to_string(knob.value);
    }
  }
  return text;
}

tsr_status compile(tsr_instance instance, const char*, const tsr_region* r,
                   const tsr_compile_options* options, tsr_region_handle* handle, tsr_message m) {
  try {
    const Region region = read_region(r);
    auto c = new Compiled();
    c->io_size = region.io_size;
    c->inputs = region.inputs;
    c->outputs = region.outputs;
    for (const sim::tensor& t : region.values) {
      c->values.emplace_back(static_cast<size_t>(numel(t)));
      if (t.data != nullptr) {
        std::memcpy(c->values.back().data(), t.data, c->values.back().size() * sizeof(float));
      }
    }
    for (int32_t n = 0; n < static_cast<int32_t>(region.nodes.size()); ++n) {
      const sim::node& node = region.nodes[static_cast<size_t>(n)];
      Step s;
      s.op = node.op_type;
      s.a = node.inputs[0];
      s.b = node.num_inputs > 1 ? node.inputs[1] : -1;
      s.out = node.outputs[0];
      s.alpha = attr_float(region, n, "alpha", 0.01f);
      s.elements = numel(region.values[static_cast<size_t>(s.out)]);
      c->steps.push_back(s);
    }
    append_record(*reinterpret_cast<Instance*>(instance),
                  "compile nodes=" + std::to_string(region.nodes.size()) + configs_text(options));
    *handle = reinterpret_cast<tsr_region_handle>(c);
    return TSR_OK;
  } catch (const std::string& e) {
    say(m, e);
    return TSR_COMPILE_FAILED;
  } catch (...) {
    say(m, "compile failed");
    return TSR_COMPILE_FAILED;
  }
}

tsr_status execute(tsr_region_handle handle, const void* const* inputs, void* const* outputs,
                   tsr_message) {
  Compiled& c = *reinterpret_cast<Compiled*>(handle);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    std::vector<float>& v = c.values[static_cast<size_t>(c.inputs[i])];
    std::memcpy(v.data(), inputs[i], v.size() * sizeof(float));
  }
  run_steps(c);
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    const std::vector<float>& v = c.values[static_cast<size_t>(c.outputs[i])];
    std::memcpy(outputs[i], v.data(), v.size() * sizeof(float));
  }
  return TSR_OK;
}

void* io_memory(const sim::io& io) {
  return io.buffer != nullptr ? reinterpret_cast<Buffer*>(io.buffer)->bytes.data() : io.host;
}

tsr_status execute_io(tsr_region_handle handle, const tsr_io* inputs, const tsr_io* outputs,
                      tsr_message m) {
  Compiled& c = *reinterpret_cast<Compiled*>(handle);
  try {
    std::vector<const void*> in;
    std::vector<void*> out;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const sim::io io = get<sim::io>(inputs, static_cast<int64_t>(i), c.io_size);
      expect_no_later(io, "io input");
      in.push_back(io_memory(io));
    }
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      const sim::io io = get<sim::io>(outputs, static_cast<int64_t>(i), c.io_size);
      expect_no_later(io, "io output");
      out.push_back(io_memory(io));
    }
    return execute(handle, in.data(), out.data(), m);
  } catch (const std::string& e) {
    say(m, e);
    return TSR_ERROR;
  }
}

void release(tsr_region_handle handle) {
  delete reinterpret_cast<Compiled*>(handle);
}

tsr_status last_profile(tsr_region_handle handle, double* times_us, int32_t capacity,
                        int32_t* count) {
  const Compiled& c = *reinterpret_cast<Compiled*>(handle);
  const int32_t n = std::min<int32_t>(capacity, static_cast<int32_t>(c.times_us.size()));
  std::copy(c.times_us.begin(), c.times_us.begin() + n, times_us);
  *count = n;
  return TSR_OK;
}

// The answer's arrays, laid out at this plugin's sizeof (its own memory).
void fill_schedules(Instance& s) {
  s.spaces.assign(2, sim::knob_space{});
  s.spaces[0].name = "block";
  s.spaces[0].num_values = static_cast<int32_t>(s.block_values.size());
  s.spaces[0].values = s.block_values.data();
  s.spaces[1].name = "unroll";
  s.spaces[1].num_values = static_cast<int32_t>(s.unroll_values.size());
  s.spaces[1].values = s.unroll_values.data();
  s.defaults.assign(2, sim::knob{});
  s.defaults[0].name = "block";
  s.defaults[0].value = 4;
  s.defaults[1].name = "unroll";
  s.defaults[1].value = 2;
  for (sim::knob_space& k : s.spaces) mark_later(k);
  for (sim::knob& k : s.defaults) mark_later(k);
  sim::schedule_desc d{};
  d.name = "elementwise.blocked";
  d.num_knobs = 2;
  d.knobs = s.spaces.data();
#if !SIM_OLDER
  d.default_config = s.defaults.data();
#endif
  mark_later(d);
  s.schedules = {d};
}

tsr_status describe(tsr_instance instance, const char*, const tsr_region* r, int32_t node,
                    tsr_node_tuning* tuning, tsr_message m) {
  try {
    Instance& s = *reinterpret_cast<Instance*>(instance);
    const Region region = read_region(r);
    if (node < 0 || node >= static_cast<int32_t>(region.nodes.size())) {
      throw std::string("node out of range");
    }
    const sim::node& n = region.nodes[static_cast<size_t>(node)];
    const sim::tensor& out = region.values[static_cast<size_t>(n.outputs[0])];
    std::lock_guard<std::mutex> lock(s.mutex);
    s.workload_key = std::string(n.op_type) + ":" + std::to_string(numel(out));
    fill_schedules(s);
    tuning->workload_key = s.workload_key.c_str();
    tuning->flops = static_cast<double>(numel(out));
    tuning->num_schedules = 1;
    tuning->schedules = reinterpret_cast<const tsr_schedule_desc*>(s.schedules.data());
    tuning->default_schedule = 0;
#if ABI_SIM_LAYOUT != 0
    if (!TSR_HAS_FIELD(tuning, tsr_node_tuning, knob_size)) throw std::string("no room for sizes");
    tuning->schedule_size = sizeof(sim::schedule_desc);
    tuning->knob_space_size = sizeof(sim::knob_space);
    tuning->knob_size = sizeof(sim::knob);
#endif
    return TSR_OK;
  } catch (const std::string& e) {
    say(m, e);
    return TSR_ERROR;
  }
}

tsr_status buffer_kind(tsr_instance instance, const char*, tsr_buffer_kind* kind) {
  kind->domain = reinterpret_cast<Instance*>(instance)->domain.c_str();
  kind->alignment = 16;
  kind->host_mappable = 1;
  return TSR_OK;
}

tsr_status alloc_buffer(tsr_instance, const char*, uint64_t bytes, tsr_buffer* buffer,
                        tsr_message m) {
  try {
    auto b = new Buffer();
    b->bytes.resize(static_cast<size_t>(bytes));
    *buffer = reinterpret_cast<tsr_buffer>(b);
    return TSR_OK;
  } catch (const std::bad_alloc&) {
    say(m, "out of host memory");
    return TSR_OUT_OF_MEMORY;
  }
}

void free_buffer(tsr_instance, tsr_buffer buffer) {
  delete reinterpret_cast<Buffer*>(buffer);
}

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t major, uint32_t) {
  static const tsr_plugin table = {sizeof(tsr_plugin),
                                   TESSERA_PLUGIN_ABI_MAJOR,
                                   kDeclaredMinor,
                                   ABI_SIM_NAME,
                                   "0.1",
                                   "test plugin: element structs of another minor's layout",
                                   create,
                                   destroy,
                                   probe,
                                   query_node,
                                   compile,
                                   execute,
                                   release,
                                   last_profile,
                                   describe,
                                   buffer_kind,
                                   alloc_buffer,
                                   free_buffer,
                                   execute_io,
                                   query_subgraph};
  return major == TESSERA_PLUGIN_ABI_MAJOR ? &table : nullptr;
}
