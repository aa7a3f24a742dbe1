// Test helpers shared by the OpenCL plugin suites (tests/opencl for mali, tests/adreno): loading a
// plugin's C table, random tensors, building a one-node (or small chain) tsr_region with the
// reference values (ops::compute_node) alongside, running it through the plugin, and the Session
// options and value comparison of the end-to-end tests. Header-only: each suite is one binary.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "op.hpp"
#include "tessera/graph.hpp"
#include "tessera/passes.hpp"
#include "tessera/plugin_abi.h"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"

namespace tessera::opencl_test {

// The plugin table of plugins/lib/<file> in the build tree, or nullptr (dlerror() says why).
inline const tsr_plugin* load_plugin(const std::string& file) {
  const std::string path = std::string(TESSERA_BINARY_DIR) + "/plugins/lib/" + file;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return nullptr;
  auto entry = reinterpret_cast<tsr_plugin_entry_fn>(dlsym(lib, TESSERA_PLUGIN_ENTRY_NAME));
  return entry ? entry(TESSERA_PLUGIN_ABI_MAJOR, TESSERA_PLUGIN_ABI_MINOR) : nullptr;
}

using OptionList = std::vector<std::pair<std::string, std::string>>;

// One instance of a plugin made through its raw table with a target's options, probed with a
// selector: the ids of its usable devices, and why the others are not.
struct RawInstance {
  const tsr_plugin* table = nullptr;
  tsr_instance handle = nullptr;
  std::string error;                 // create or probe failed: why ("" = it did not)
  std::vector<std::string> usable;   // ids of usable devices, in probe order
  std::string unusable;              // the unusable devices' reasons, "; "-separated
  std::vector<std::string> all_ids;  // every probed device's id
  // The first usable device's id, "" when none.
  std::string device() const { return usable.empty() ? "" : usable.front(); }
};

// Creates an instance of `table` with `options`, probed with `selector`. Cached for the process
// per (table, options, selector): each instance builds its own OpenCL context and program pool,
// and the suites run hundreds of cases. Destroyed at exit (the plugin libraries these tests
// dlopen stay loaded), so the driver sees its contexts released before it tears itself down.
inline RawInstance& raw_instance(const tsr_plugin* table, const OptionList& options = {},
                                 const std::string& selector = "any") {
  using Key = std::tuple<const tsr_plugin*, OptionList, std::string>;
  struct Cache {
    std::map<Key, std::unique_ptr<RawInstance>> instances;
    ~Cache() {
      for (auto& [key, instance] : instances) {
        if (instance && instance->handle != nullptr) instance->table->destroy(instance->handle);
      }
    }
  };
  static Cache cache;
  auto& slot = cache.instances[Key{table, options, selector}];
  if (slot) return *slot;
  slot = std::make_unique<RawInstance>();
  RawInstance& r = *slot;
  r.table = table;
  std::vector<tsr_target_option> raw;
  for (const auto& [name, value] : options) raw.push_back({name.c_str(), value.c_str()});
  const tsr_host_api host{sizeof(tsr_host_api), TESSERA_PLUGIN_ABI_MAJOR, TESSERA_PLUGIN_ABI_MINOR,
                          sizeof(tsr_target_option)};
  char text[512] = "";
  if (table->create(&host, raw.empty() ? nullptr : raw.data(), static_cast<int32_t>(raw.size()),
                    &r.handle, {text, sizeof(text)}) != TSR_OK) {
    r.error = std::string("create: ") + text;
    return r;
  }
  std::vector<tsr_device_info> infos(16);
  int32_t count = 0;
  if (table->probe_devices(r.handle, selector.empty() ? nullptr : selector.c_str(), infos.data(),
                           16, &count, {text, sizeof(text)}) != TSR_OK) {
    r.error = std::string("probe: ") + text;
    return r;
  }
  for (int32_t i = 0; i < count; ++i) {
    r.all_ids.push_back(infos[i].id ? infos[i].id : "");
    if (infos[i].score > 0) {
      r.usable.push_back(r.all_ids.back());
    } else {
      r.unusable += std::string(r.unusable.empty() ? "" : "; ") +
                    (infos[i].unusable_reason ? infos[i].unusable_reason : "score 0");
    }
  }
  return r;
}

// "ok" when `table` creates an instance with the one option name = value, else its message.
inline std::string option_refusal(const tsr_plugin* table, const char* name, const char* value) {
  const tsr_target_option option{name, value};
  const tsr_host_api host{sizeof(tsr_host_api), TESSERA_PLUGIN_ABI_MAJOR, TESSERA_PLUGIN_ABI_MINOR,
                          sizeof(tsr_target_option)};
  char text[512] = "";
  tsr_instance instance = nullptr;
  const tsr_status st = table->create(&host, &option, 1, &instance, {text, sizeof(text)});
  if (st != TSR_OK) return text;
  table->destroy(instance);
  return "ok";
}

// One input of a case: its tensor and whether it is a constant (weight) or a region input.
struct In {
  Tensor tensor;
  bool constant = false;
};

inline Tensor random_tensor(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
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

inline Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}
using Ints = std::vector<int64_t>;

// MaxPool/AveragePool attributes of a 2x2 window with stride 2.
inline Attributes pool_2x2_stride2() {
  return attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
}

inline Node make_node(const std::string& op, std::vector<ValueId> inputs, Attributes a = {}) {
  Node n;
  n.name = op + "_under_test";
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(a);
  return n;
}

// make_node over values 0 .. num_inputs-1 (the inputs of a one-node Case).
inline Node make_node_over_inputs(const std::string& op, size_t num_inputs, Attributes a = {}) {
  std::vector<ValueId> ids;
  for (size_t i = 0; i < num_inputs; ++i) ids.push_back(static_cast<ValueId>(i));
  return make_node(op, std::move(ids), std::move(a));
}

// A region of `nodes` over `inputs` (values: the inputs, then each node's single output) with
// the reference values computed along the way. Not copyable: the C views point into it.
struct Case {
  std::vector<Tensor> values;
  std::vector<std::string> names;
  std::vector<tsr_tensor> tvalues;
  std::vector<std::unique_ptr<AttrStore>> attrs;
  std::vector<Node> nodes;
  std::vector<tsr_node> tnodes;
  std::vector<int32_t> region_inputs;
  int32_t out_id = 0;
  tsr_region region{};

  Case(const std::vector<In>& inputs, std::vector<Node> chain, int64_t opset)
      : nodes(std::move(chain)) {
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
      // The plugin gets the node as core hands it over (auto_pad written out as pads); the
      // reference above computed it from the attributes as written.
      std::vector<Shape> shapes;
      for (const ops::InputInfo& info : infos) shapes.push_back(info.shape);
      normalise_window_attributes(nodes[n], opset, shapes);
    }
    for (size_t i = 0; i < values.size(); ++i) names.push_back("v" + std::to_string(i));
    tvalues.resize(values.size());
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
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].constant) region_inputs.push_back(static_cast<int32_t>(i));
    }
    out_id = static_cast<int32_t>(values.size() - 1);
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
  }
  Case(const Case&) = delete;
  Case& operator=(const Case&) = delete;
};

// A hand-built region of one float32 rank-1 node `op_type` named `name` (value 0 -> value 1),
// for the tests that only query or compile a node the reference cannot compute.
struct TinyRegion {
  tsr_tensor values[2] = {};
  int32_t in = 0, out = 1;
  tsr_node node{};
  tsr_region region{};

  TinyRegion(const char* name, const char* op_type) {
    for (tsr_tensor& t : values) {
      t.struct_size = sizeof(t);
      t.name = "v";
      t.dtype = TSR_DTYPE_FLOAT32;
      t.rank = 1;
      t.dims[0] = 4;
    }
    node.struct_size = sizeof(node);
    node.name = name;
    node.op_type = op_type;
    node.num_inputs = 1;
    node.inputs = &in;
    node.num_outputs = 1;
    node.outputs = &out;
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
  }
  TinyRegion(const TinyRegion&) = delete;
  TinyRegion& operator=(const TinyRegion&) = delete;
};

// Runs the case on `device` of `plugin` (every node must be claimed; `precision` nullptr leaves
// the plugin's default; `target_options` as a deployment target's `options:`, given to the
// instance) into `*result`, checking the per-node profile. `configs` are passed as the compile's
// node_configs, `dump_dir` (if not empty) as its dump_dir. Failures are reported with EXPECT;
// returns false when the region did not compile or execute.
inline bool run_case(const tsr_plugin* plugin, const std::string& device, Case& c,
                     const std::string& cache_dir, const char* precision, Tensor* result,
                     const OptionList& target_options = {},
                     const std::vector<tsr_node_config>& configs = {},
                     const std::string& dump_dir = "") {
  RawInstance& instance = raw_instance(plugin, target_options);
  EXPECT_EQ(instance.error, "");
  if (!instance.error.empty()) return false;
  for (int32_t n = 0; n < c.region.num_nodes; ++n) {
    tsr_support support{};
    support.struct_size = sizeof(support);
    EXPECT_EQ(plugin->query_node(instance.handle, device.c_str(), &c.region, n, &support), TSR_OK);
    EXPECT_EQ(support.supported, 1) << support.reason;
  }
  tsr_compile_options options{};
  options.struct_size = sizeof(options);
  options.cache_dir = cache_dir.c_str();
  options.precision = precision;
  options.profile = 1;
  options.num_node_configs = static_cast<int32_t>(configs.size());
  options.node_configs = configs.empty() ? nullptr : configs.data();
  options.dump_dir = dump_dir.empty() ? nullptr : dump_dir.c_str();
  tsr_region_handle handle = nullptr;
  char text[4096] = "";
  const tsr_status cs = plugin->compile_region(instance.handle, device.c_str(), &c.region, &options,
                                               &handle, {text, sizeof(text)});
  EXPECT_EQ(cs, TSR_OK) << text;
  if (cs != TSR_OK) return false;
  std::vector<const void*> in_ptrs;
  for (int32_t id : c.region_inputs) in_ptrs.push_back(c.values[id].raw());
  *result = Tensor(DType::kFloat32, c.values.back().shape());
  void* out_ptr = result->raw();
  const tsr_status st =
      plugin->execute_region(handle, in_ptrs.data(), &out_ptr, {text, sizeof(text)});
  if (st == TSR_OK) {
    std::vector<double> times(c.tnodes.size(), -1.0);
    int32_t count = 0;
    EXPECT_EQ(plugin->last_profile(handle, times.data(), c.region.num_nodes, &count), TSR_OK);
    EXPECT_EQ(count, c.region.num_nodes);
  }
  plugin->release_region(handle);
  EXPECT_EQ(st, TSR_OK) << text;
  return st == TSR_OK;
}

// One plugin host over the build tree's plugins/lib for a whole test process: the OpenCL plugins
// keep per-device state in the library (one context per device), so two hosts loading the same
// plugin would share it.
inline std::shared_ptr<const PluginHost> build_tree_host() {
  static const auto h = [] {
    PluginHostOptions o;
    o.dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
    o.use_environment = false;
    o.use_default_dirs = false;
    return std::make_shared<const PluginHost>(o);
  }();
  return h;
}

// Session options of the end-to-end tests: `targets` from the build tree's plugins only, kernel
// binaries cached under tests/<suite>/kernel-cache.
inline SessionOptions session_options(std::vector<std::string> targets, const std::string& suite) {
  SessionOptions options;
  options.targets = std::move(targets);
  options.plugin_dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  options.cache_dir = std::string(TESSERA_BINARY_DIR) + "/tests/" + suite + "/kernel-cache";
  return options;
}

// Every element of `got` within rtol * max(1, |want|) of `want`.
inline void expect_all_near(const Tensor& got, const Tensor& want, float rtol) {
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float w = want.data<float>()[i];
    EXPECT_NEAR(got.data<float>()[i], w, rtol * std::max(1.0f, std::fabs(w))) << i;
  }
}

}  // namespace tessera::opencl_test
