// Test plugin for pack application, built with the helper (plugin.hpp): runs Relu and same-shape
// Add on float32. Relu is tunable: schedule "relu.blocked" with knobs block {1,2,4,8} (elements
// per inner step) and wg_x {1,64,256,1024} (a pretend work-group size); Add describes nothing.
// Its device is "PackTest GPU" from vendor "Tessera tests", driver "3.2.1", 4 compute units.
//
// Side channel: when TESSERA_PACKTEST_LOG names a file, compile() appends one line per Relu node,
// "<node> <schedule> block=<b> wg_x=<w> <source>", where source is "config" when it applied the
// node config core passed and "heuristic" otherwise. The values computed never depend on the
// config (block only changes the loop's step).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/plugin.hpp"

namespace {

using namespace tessera::plugin;

const std::vector<int64_t> kBlocks = {1, 2, 4, 8};
const std::vector<int64_t> kWorkGroups = {1, 64, 256, 1024};
constexpr int64_t kDefaultBlock = 4;
constexpr int64_t kDefaultWorkGroup = 64;

bool contains(const std::vector<int64_t>& values, int64_t v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

class PackRegion : public CompiledRegion {
 public:
  PackRegion(const RegionView& region, const CompileOptions& options) {
    values_.resize(static_cast<size_t>(region.num_values()));
    for (int32_t v = 0; v < region.num_values(); ++v) {
      const tsr_tensor& t = region.value(v);
      values_[static_cast<size_t>(v)].resize(static_cast<size_t>(tensor_numel(t)));
      if (t.data != nullptr) {
        std::memcpy(values_[static_cast<size_t>(v)].data(), t.data, tensor_nbytes(t));
      }
    }
    std::string log;
    for (int32_t n = 0; n < region.num_nodes(); ++n) {
      const NodeView node = region.node(n);
      Step step;
      step.is_add = node.op_type() == "Add";
      step.a = node.input_index(0);
      step.b = step.is_add ? node.input_index(1) : -1;
      step.out = node.output_index(0);
      if (!step.is_add) {
        // Apply the config when it is one this schedule implements; otherwise the heuristic.
        int64_t block = kDefaultBlock, wg = kDefaultWorkGroup;
        const char* source = "heuristic";
        const NodeConfig* c = options.config_for(n);
        if (c != nullptr && c->schedule == "relu.blocked" &&
            contains(kBlocks, c->knob("block", -1)) &&
            contains(kWorkGroups, c->knob("wg_x", kDefaultWorkGroup))) {
          block = c->knob("block", -1);
          wg = c->knob("wg_x", kDefaultWorkGroup);
          source = "config";
        }
        step.block = static_cast<size_t>(block);
        log += std::string(node.name()) + " relu.blocked block=" + std::to_string(block) +
               " wg_x=" + std::to_string(wg) + " " + source + "\n";
      }
      steps_.push_back(step);
    }
    for (int32_t i = 0; i < region.num_inputs(); ++i) inputs_.push_back(region.input_index(i));
    for (int32_t i = 0; i < region.num_outputs(); ++i) outputs_.push_back(region.output_index(i));
    if (const char* path = std::getenv("TESSERA_PACKTEST_LOG")) {
      if (FILE* f = std::fopen(path, "a")) {
        std::fputs(log.c_str(), f);
        std::fclose(f);
      }
    }
  }

  void execute(const void* const* inputs, void* const* outputs) override {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      auto& v = values_[static_cast<size_t>(inputs_[i])];
      std::memcpy(v.data(), inputs[i], v.size() * sizeof(float));
    }
    for (const Step& s : steps_) {
      const auto& a = values_[static_cast<size_t>(s.a)];
      auto& out = values_[static_cast<size_t>(s.out)];
      if (s.is_add) {
        const auto& b = values_[static_cast<size_t>(s.b)];
        for (size_t i = 0; i < out.size(); ++i) out[i] = a[i] + b[i];
        continue;
      }
      // Blocks of `block` elements, then the tail one by one.
      size_t i = 0;
      for (; i + s.block <= out.size(); i += s.block) {
        for (size_t j = 0; j < s.block; ++j) out[i + j] = std::max(a[i + j], 0.0f);
      }
      for (; i < out.size(); ++i) out[i] = std::max(a[i], 0.0f);
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const auto& v = values_[static_cast<size_t>(outputs_[i])];
      std::memcpy(outputs[i], v.data(), v.size() * sizeof(float));
    }
  }

 private:
  struct Step {
    bool is_add = false;
    int32_t a = -1, b = -1, out = -1;
    size_t block = 1;
  };
  std::vector<std::vector<float>> values_;
  std::vector<Step> steps_;
  std::vector<int32_t> inputs_, outputs_;
};

bool same_shape(const tsr_tensor& a, const tsr_tensor& b) {
  return a.rank == b.rank && std::equal(a.dims, a.dims + a.rank, b.dims);
}

std::string dims_text(const tsr_tensor& t) {
  std::string out;
  for (int32_t i = 0; i < t.rank; ++i) out += (i ? "x" : "") + std::to_string(t.dims[i]);
  return out;
}

class PackTestPlugin : public Plugin {
 public:
  std::vector<DeviceInfo> probe(const std::string& selector) override {
    (void)selector;
    DeviceInfo d;
    d.id = "host";
    d.vendor = "Tessera tests";
    d.name = "PackTest GPU";
    d.driver_version = "3.2.1";
    d.kind = "cpu";  // host memory, so the partitioner adds no transfer costs
    d.compute_units = 4;
    d.score = 60;
    return {d};
  }

  Support query(const std::string& device, const RegionView& region,
                const NodeView& node) override {
    (void)device;
    (void)region;
    const bool relu = node.op_type() == "Relu", add = node.op_type() == "Add";
    if (!relu && !add) return Support::no("op " + std::string(node.op_type()) + " not implemented");
    for (int32_t i = 0; i < node.num_inputs(); ++i) {
      if (node.input(i) == nullptr || node.input(i)->dtype != TSR_DTYPE_FLOAT32) {
        return Support::no("only float32 is implemented");
      }
    }
    if (add && !same_shape(*node.input(0), *node.input(1))) {
      return Support::no("Add with broadcasting not implemented");
    }
    return Support::yes(0.0001 * static_cast<double>(tensor_numel(*node.output(0))));
  }

  NodeTuning describe(const std::string& device, const RegionView& region,
                      const NodeView& node) override {
    (void)device;
    (void)region;
    NodeTuning t;
    if (node.op_type() != "Relu") return t;  // Add: nothing tunable
    t.workload_key = "relu|in=" + dims_text(*node.input(0)) + "|f32";
    t.flops = static_cast<double>(tensor_numel(*node.output(0)));
    Schedule s;
    s.name = "relu.blocked";
    s.knobs.push_back({"block", kBlocks, kDefaultBlock});
    s.knobs.push_back({"wg_x", kWorkGroups, kDefaultWorkGroup});
    t.schedules.push_back(std::move(s));
    return t;
  }

  std::unique_ptr<CompiledRegion> compile(const std::string& device, const RegionView& region,
                                          const CompileOptions& options) override {
    (void)device;
    return std::make_unique<PackRegion>(region, options);
  }
};

}  // namespace

TESSERA_DEFINE_PLUGIN(PackTestPlugin, "packtest", "0.1", "test plugin: tunable Relu, plain Add")
