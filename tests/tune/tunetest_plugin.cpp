// Test plugin for the tuner, built with the helper (plugin.hpp): runs float32 Relu, tunable with
// schedule "relu.test", knobs mode {0,1,2} and block {1,2} (default mode 0, block 1). mode 2 is a
// deliberately bad candidate: compile() fails with TSR_COMPILE_FAILED. The values computed never
// depend on the config. Its device is "TuneTest CPU".
//
// With TESSERA_TUNETEST_FAULTS=1 the knob mode is {0,3,1,4,2,5,6} (grid order interleaves faulty
// and good candidates): mode 3 aborts in execute (a run-time crash), mode 4 with block 1 hangs in
// execute, mode 5 aborts in compile (each writes a line to stderr first), mode 6 fails in execute
// with an error status.
//
// With TESSERA_TUNETEST_SLEEP_MS=N every execute sleeps first, N ms times 1 + mode + 2 (block - 1)
// (mode 0 block 1: N; mode 1 block 1: 2N; mode 0 block 2: 3N; mode 1 block 2: 4N): a device whose
// measurement takes wall time but no CPU (farm agents, a tuning budget), and whose fastest config
// wins by a margin no scheduling noise closes.
//
// With TESSERA_TUNETEST_WIDE=N (1..100000) the schedule has a third knob, pad {0..N-1} (default
// 0), that changes nothing: a space of 6 N configs, which with a sleep no machine covers quickly.
//
// With TESSERA_TUNETEST_BARRIER=<dir>:<n> every execute first leaves a file named after its
// process in <dir>, then waits until <dir> holds n of them (at most 15 s, else it fails with an
// error status): the first runs of n measuring workers end only when all n were running at once.
//
// Side channels: when TESSERA_TUNETEST_LOG names a file, every compile() appends one line
// "mode=<m> block=<b> pid=<process>" so a test can count how often each candidate was compiled,
// and by how many processes; when TESSERA_TUNETEST_STARTS names a file, every compile() (in a
// measuring worker: the start of a measurement) appends "<steady clock ns> <process id>".
#include <fcntl.h>
#include <unistd.h>

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

bool faults_enabled() {
  const char* v = std::getenv("TESSERA_TUNETEST_FAULTS");
  return v && std::string(v) == "1";
}

// TESSERA_TUNETEST_WIDE's value, or 0.
int64_t pad_values() {
  const char* v = std::getenv("TESSERA_TUNETEST_WIDE");
  const int64_t n = v ? std::atoll(v) : 0;
  return n >= 1 && n <= 100000 ? n : 0;
}

// TESSERA_TUNETEST_BARRIER: this process's mark, then the wait for the others'.
void wait_at_barrier() {
  const char* spec = std::getenv("TESSERA_TUNETEST_BARRIER");
  if (spec == nullptr) return;
  const std::string text = spec;
  const size_t colon = text.rfind(':');
  const std::filesystem::path dir = text.substr(0, colon);
  const long wanted = std::atol(text.substr(colon + 1).c_str());
  const std::string mark = (dir / std::to_string(getpid())).string();
  const int fd = ::open(mark.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd >= 0) ::close(fd);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  long there = 0;
  while (true) {
    std::error_code ec;
    there = 0;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ++there;
    }
    if (there >= wanted) return;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  throw Failure(TSR_ERROR, "tunetest barrier: " + std::to_string(there) + " of " +
                               std::to_string(wanted) + " workers were running at once");
}

void append_line(const char* path, const std::string& line) {
  if (FILE* f = std::fopen(path, "a")) {
    std::fputs(line.c_str(), f);
    std::fclose(f);
  }
}

class ReluRegion : public CompiledRegion {
 public:
  ReluRegion(size_t n, int64_t mode, int64_t block) : n_(n), mode_(mode), block_(block) {}
  void execute(const void* const* inputs, void* const* outputs) override {
    if (mode_ == 3) {
      std::fputs("tunetest: mode 3 crashes at run time\n", stderr);
      std::abort();
    }
    if (mode_ == 4 && block_ == 1) {
      std::fputs("tunetest: mode 4 hangs at run time\n", stderr);
      std::this_thread::sleep_for(std::chrono::hours(1));
    }
    if (mode_ == 6) throw Failure(TSR_ERROR, "relu.test mode 6 fails at run time");
    wait_at_barrier();
    if (const char* ms = std::getenv("TESSERA_TUNETEST_SLEEP_MS")) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::atoi(ms) * (1 + mode_ + 2 * (block_ - 1))));
    }
    const float* in = static_cast<const float*>(inputs[0]);
    float* out = static_cast<float*>(outputs[0]);
    for (size_t i = 0; i < n_; ++i) out[i] = std::max(in[i], 0.0f);
  }

 private:
  size_t n_;
  int64_t mode_, block_;
};

class TuneTestPlugin : public Plugin {
 public:
  std::vector<DeviceInfo> probe(const std::string& selector) override {
    (void)selector;
    DeviceInfo d;
    d.id = "host";
    d.vendor = "Tessera tests";
    d.name = "TuneTest CPU";
    d.driver_version = "1.0";
    d.kind = "cpu";
    d.compute_units = 1;
    d.score = 60;
    return {d};
  }

  Support query(const std::string& device, const RegionView& region,
                const NodeView& node) override {
    (void)device;
    (void)region;
    if (node.op_type() != "Relu") return Support::no("only Relu is implemented");
    if (node.input(0) == nullptr || node.input(0)->dtype != TSR_DTYPE_FLOAT32) {
      return Support::no("only float32 is implemented");
    }
    return Support::yes(1e-6 * static_cast<double>(tensor_numel(*node.output(0))));
  }

  NodeTuning describe(const std::string& device, const RegionView& region,
                      const NodeView& node) override {
    (void)device;
    (void)region;
    NodeTuning t;
    if (node.op_type() != "Relu") return t;
    t.workload_key = "relu|n=" + std::to_string(tensor_numel(*node.input(0))) + "|f32";
    Schedule s;
    s.name = "relu.test";
    if (faults_enabled()) {
      s.knobs.push_back({"mode", {0, 3, 1, 4, 2, 5, 6}, 0});
    } else {
      s.knobs.push_back({"mode", {0, 1, 2}, 0});
    }
    s.knobs.push_back({"block", {1, 2}, 1});
    if (const int64_t n = pad_values(); n > 0) {
      std::vector<int64_t> pads(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) pads[static_cast<size_t>(i)] = i;
      s.knobs.push_back({"pad", pads, 0});
    }
    t.schedules.push_back(std::move(s));
    return t;
  }

  std::unique_ptr<CompiledRegion> compile(const std::string& device, const RegionView& region,
                                          const CompileOptions& options) override {
    (void)device;
    if (region.num_nodes() != 1 || region.node(0).op_type() != "Relu") {
      throw Failure(TSR_COMPILE_FAILED, "tunetest compiles one-node Relu regions only");
    }
    const NodeConfig* c = options.config_for(0);
    const int64_t mode = c ? c->knob("mode", 0) : 0, block = c ? c->knob("block", 1) : 1;
    if (const char* path = std::getenv("TESSERA_TUNETEST_STARTS")) {
      const auto now = std::chrono::steady_clock::now().time_since_epoch();
      append_line(
          path, std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) +
                    " " + std::to_string(getpid()) + "\n");
    }
    if (const char* path = std::getenv("TESSERA_TUNETEST_LOG")) {
      append_line(path, "mode=" + std::to_string(mode) + " block=" + std::to_string(block) +
                            " pid=" + std::to_string(getpid()) + "\n");
    }
    if (mode == 2) throw Failure(TSR_COMPILE_FAILED, "relu.test mode 2 never compiles");
    if (mode == 5) {
      std::fputs("tunetest: mode 5 crashes in compile\n", stderr);
      std::abort();
    }
    return std::make_unique<ReluRegion>(
        static_cast<size_t>(tensor_numel(region.value(region.output_index(0)))), mode, block);
  }
};

}  // namespace

TESSERA_DEFINE_PLUGIN(TuneTestPlugin, "tunetest", "0.1", "test plugin: tunable Relu for the tuner")
