// Test plugin for the tuner, built with the helper (plugin.hpp): runs float32 Relu, tunable with
// schedule "relu.test", knobs mode {0,1,2} and block {1,2} (default mode 0, block 1). mode 2 is a
// deliberately bad candidate: compile() fails with TSR_COMPILE_FAILED. The values computed never
// depend on the config. Its device is "TuneTest CPU".
//
// Side channel: when TESSERA_TUNETEST_LOG names a file, every compile() appends one line
// "mode=<m> block=<b>" so a test can count how often each candidate was compiled.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/plugin.hpp"

namespace {

using namespace tessera::plugin;

class ReluRegion : public CompiledRegion {
 public:
  explicit ReluRegion(size_t n) : n_(n) {}
  void execute(const void* const* inputs, void* const* outputs) override {
    const float* in = static_cast<const float*>(inputs[0]);
    float* out = static_cast<float*>(outputs[0]);
    for (size_t i = 0; i < n_; ++i) out[i] = std::max(in[i], 0.0f);
  }

 private:
  size_t n_;
};

class TuneTestPlugin : public Plugin {
 public:
  std::vector<DeviceInfo> probe(const std::string& selector) override {
    (void)selector;
    DeviceInfo d;
    d.vendor = "Tessera tests";
    d.name = "TuneTest CPU";
    d.driver_version = "1.0";
    d.kind = "cpu";
    d.compute_units = 1;
    d.score = 60;
    return {d};
  }

  Support query(int32_t device, const RegionView& region, const NodeView& node) override {
    (void)device;
    (void)region;
    if (node.op_type() != "Relu") return Support::no("only Relu is implemented");
    if (node.input(0) == nullptr || node.input(0)->dtype != TSR_DTYPE_FLOAT32) {
      return Support::no("only float32 is implemented");
    }
    return Support::yes(1e-6 * static_cast<double>(tensor_numel(*node.output(0))));
  }

  NodeTuning describe(int32_t device, const RegionView& region, const NodeView& node) override {
    (void)device;
    (void)region;
    NodeTuning t;
    if (node.op_type() != "Relu") return t;
    t.workload_key = "relu|n=" + std::to_string(tensor_numel(*node.input(0))) + "|f32";
    Schedule s;
    s.name = "relu.test";
    s.knobs.push_back({"mode", {0, 1, 2}, 0});
    s.knobs.push_back({"block", {1, 2}, 1});
    t.schedules.push_back(std::move(s));
    return t;
  }

  std::unique_ptr<CompiledRegion> compile(int32_t device, const RegionView& region,
                                          const CompileOptions& options) override {
    (void)device;
    if (region.num_nodes() != 1 || region.node(0).op_type() != "Relu") {
      throw Failure(TSR_COMPILE_FAILED, "tunetest compiles one-node Relu regions only");
    }
    const NodeConfig* c = options.config_for(0);
    const int64_t mode = c ? c->knob("mode", 0) : 0, block = c ? c->knob("block", 1) : 1;
    if (const char* path = std::getenv("TESSERA_TUNETEST_LOG")) {
      if (FILE* f = std::fopen(path, "a")) {
        std::fprintf(f, "mode=%lld block=%lld\n", static_cast<long long>(mode),
                     static_cast<long long>(block));
        std::fclose(f);
      }
    }
    if (mode == 2) throw Failure(TSR_COMPILE_FAILED, "relu.test mode 2 never compiles");
    return std::make_unique<ReluRegion>(
        static_cast<size_t>(tensor_numel(region.value(region.output_index(0)))));
  }
};

}  // namespace

TESSERA_DEFINE_PLUGIN(TuneTestPlugin, "tunetest", "0.1", "test plugin: tunable Relu for the tuner")
