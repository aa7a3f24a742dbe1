// A partial test plugin built with the helper: runs only Relu and same-shape Add (float32).
// Built twice: "halfref" (a host-memory "cpu" device) and "islandgpu" (a "gpu" device that runs
// Relu only, so that an island of Relus sits between halfref's Adds and island merge-back and
// transfer costs can be tested).
// If TESSERA_TEST_SHUTDOWN_LOG names a file, an instance that compiled at least one region appends
// "<name> destroyed" to it when it is destroyed, so tests can see when (and how often) core
// destroys instances. Target options: `record`
// (an absolute file path) makes each compile append "threads=N record=PATH" to that file, so tests
// can see what reached the plugin; `rendezvous` (an absolute directory) makes each run of a region
// leave a file named after the plugin there and then wait until another plugin's file is there
// too (at most 60 s, then the run fails), so a test can see that two regions run at once whatever
// the machine's speed; any other option is refused.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tessera/plugin.hpp"

namespace {

using namespace tessera::plugin;

class HalfRegion : public CompiledRegion {
 public:
  HalfRegion(const RegionView& region, std::string rendezvous)
      : rendezvous_(std::move(rendezvous)) {
    values_.resize(static_cast<size_t>(region.num_values()));
    for (int32_t v = 0; v < region.num_values(); ++v) {
      const tsr_tensor& t = region.value(v);
      values_[static_cast<size_t>(v)].resize(static_cast<size_t>(tensor_numel(t)));
      if (t.data != nullptr) {
        std::memcpy(values_[static_cast<size_t>(v)].data(), t.data, tensor_nbytes(t));
      }
    }
    for (int32_t n = 0; n < region.num_nodes(); ++n) {
      const NodeView node = region.node(n);
      Step step;
      step.is_add = node.op_type() == "Add";
      step.a = node.input_index(0);
      step.b = step.is_add ? node.input_index(1) : -1;
      step.out = node.output_index(0);
      steps_.push_back(step);
    }
    for (int32_t i = 0; i < region.num_inputs(); ++i) inputs_.push_back(region.input_index(i));
    for (int32_t i = 0; i < region.num_outputs(); ++i) outputs_.push_back(region.output_index(i));
  }

  void execute(const void* const* inputs, void* const* outputs) override {
    if (!rendezvous_.empty()) meet();
    for (size_t i = 0; i < inputs_.size(); ++i) {
      auto& v = values_[static_cast<size_t>(inputs_[i])];
      std::memcpy(v.data(), inputs[i], v.size() * sizeof(float));
    }
    for (const Step& s : steps_) {
      const auto& a = values_[static_cast<size_t>(s.a)];
      auto& out = values_[static_cast<size_t>(s.out)];
      for (size_t i = 0; i < out.size(); ++i) {
        out[i] = s.is_add ? a[i] + values_[static_cast<size_t>(s.b)][i] : std::max(a[i], 0.0f);
      }
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const auto& v = values_[static_cast<size_t>(outputs_[i])];
      std::memcpy(outputs[i], v.data(), v.size() * sizeof(float));
    }
  }

 private:
  // Leaves this plugin's mark in the rendezvous directory, then waits for another plugin's.
  void meet() {
    namespace fs = std::filesystem;
    if (FILE* f = std::fopen((rendezvous_ + "/" + HALFREF_NAME).c_str(), "w")) std::fclose(f);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      for (const fs::directory_entry& e : fs::directory_iterator(rendezvous_)) {
        if (e.path().filename() != HALFREF_NAME) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    throw Failure(TSR_ERROR, std::string(HALFREF_NAME) +
                                 ": no other plugin's region ran while this one waited 60 s");
  }

  struct Step {
    bool is_add;
    int32_t a, b, out;
  };
  std::vector<std::vector<float>> values_;
  std::vector<Step> steps_;
  std::vector<int32_t> inputs_, outputs_;
  std::string rendezvous_;
};

bool same_shape(const tsr_tensor& a, const tsr_tensor& b) {
  return a.rank == b.rank && std::equal(a.dims, a.dims + a.rank, b.dims);
}

class HalfRefPlugin : public Plugin {
 public:
  ~HalfRefPlugin() override {
    const char* log = std::getenv("TESSERA_TEST_SHUTDOWN_LOG");
    if (log == nullptr || compiled_ == 0) return;
    if (FILE* f = std::fopen(log, "a")) {
      std::fprintf(f, "%s destroyed\n", HALFREF_NAME);
      std::fclose(f);
    }
  }

  std::vector<DeviceInfo> probe(const std::string& selector) override {
    DeviceInfo d;
    d.id = "host";
    d.vendor = "Tessera tests";
    d.name = HALFREF_NAME " device";
    d.kind = HALFREF_KIND;
    d.compute_units = 1;
    d.score = 50;
    return {d};
  }

  Support query(const std::string& device, const RegionView& region,
                const NodeView& node) override {
    const bool relu = node.op_type() == "Relu";
#ifdef HALFREF_RELU_ONLY
    const bool add = false;
#else
    const bool add = node.op_type() == "Add";
#endif
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

  void check_options(const std::vector<TargetOption>& options) override {
    for (const TargetOption& o : options) {
      if (o.name != "record" && o.name != "rendezvous") {
        throw Failure(TSR_INVALID_ARGUMENT,
                      "unknown option '" + o.name + "' (known: record, rendezvous)");
      }
      if (o.value.empty() || o.value[0] != '/') {
        throw Failure(TSR_INVALID_ARGUMENT,
                      "option '" + o.name + "' must be an absolute path, got '" + o.value + "'");
      }
    }
  }

  std::unique_ptr<CompiledRegion> compile(const std::string& device, const RegionView& region,
                                          const CompileOptions& options) override {
    const std::string record = options.option("record", "");
    if (!record.empty()) {
      if (FILE* f = std::fopen(record.c_str(), "a")) {
        std::fprintf(f, "threads=%d record=%s\n", options.num_threads, record.c_str());
        std::fclose(f);
      }
    }
    ++compiled_;
    return std::make_unique<HalfRegion>(region, options.option("rendezvous", ""));
  }

 private:
  int compiled_ = 0;
};

}  // namespace

TESSERA_DEFINE_PLUGIN(HalfRefPlugin, HALFREF_NAME, "0.1", "test plugin: Relu and Add only")
