// A measuring child for the tuner's fault tests: `tessera-tune-fault-worker tune --worker`
// serves requests as the shipped worker does, with the fault named by TESSERA_TEST_WORKER_FAULT
// injected through tune::WorkerHooks (the shipped library reads no such variable):
//   crash          aborts at start-up
//   hang           reports its first phase, then sleeps (the per-candidate timeout ends it)
//   crash-compile  aborts after compiling a compile-only request
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "tessera/tuner.hpp"

int main(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]) != "tune" || std::string(argv[2]) != "--worker") {
    std::fprintf(stderr, "usage: %s tune --worker (started by the tuner tests)\n", argv[0]);
    return 2;
  }
  const char* env = std::getenv("TESSERA_TEST_WORKER_FAULT");
  const std::string fault = env ? env : "";
  tessera::tune::WorkerHooks hooks;
  if (fault == "crash") {
    hooks.at_start = [](const auto&) { std::abort(); };
  } else if (fault == "hang") {
    // Hangs inside a candidate (after its first phase marker), where the per-candidate timeout
    // applies, rather than during start-up, which has its own wider allowance.
    hooks.at_start = [](const auto& report_phase) {
      report_phase("compiling");
      std::this_thread::sleep_for(std::chrono::hours(1));
    };
  } else if (fault == "crash-compile") {
    hooks.after_compile_only = [] { std::abort(); };
  } else if (!fault.empty()) {
    std::fprintf(stderr, "fault worker: unknown TESSERA_TEST_WORKER_FAULT '%s'\n", fault.c_str());
    return 2;
  }
  try {
    return tessera::tune::serve_worker(3, hooks);  // the parent's socket (MeasureWorker)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fault worker: %s\n", e.what());
    return 3;
  }
}
