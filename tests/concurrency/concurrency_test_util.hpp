// What the concurrency suite's files share: sessions over the build tree's plugins, the
// comparison with the oracle (first_mismatch, shared with the soak benchmark), and threads
// started together.
#pragma once

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "output_match.hpp"  // tools/bench
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"

namespace tessera::concurrency_test {

constexpr int kThreads = 4;

inline std::string build_plugin_dir() {
  return std::string(TESSERA_BINARY_DIR) + "/plugins/lib";
}

// Sessions over the build tree's plugins only, whatever the environment says.
inline SessionOptions options_for(std::vector<std::string> targets, int32_t threads) {
  SessionOptions options;
  options.targets = std::move(targets);
  options.plugin_dirs = {build_plugin_dir()};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  options.threads = threads;
  return options;
}

inline std::shared_ptr<const PluginHost> build_tree_host() {
  PluginHostOptions options;
  options.dirs = {build_plugin_dir()};
  options.use_environment = false;
  options.use_default_dirs = false;
  return std::make_shared<const PluginHost>(options);
}

// Conv 3x3, padded: the spatial shape stays.
inline Attributes conv_3x3_same() {
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return a;
}

// MaxPool 3x3 (stride 1, padded: the shape stays) with storage_order 1, which only orders the
// Indices output: the cpu plugin refuses it (the reference and mali plugins run it).
inline Attributes pool_cpu_refuses() {
  Attributes a = conv_3x3_same();
  a.set("kernel_shape", std::vector<int64_t>{3, 3});
  a.set("strides", std::vector<int64_t>{1, 1});
  a.set("storage_order", int64_t{1});
  return a;
}

// Starts `body(thread index)` on kThreads threads released together (so that construction and
// the first runs overlap), joins them and returns every failure they recorded.
template <typename Body>
std::vector<std::string> run_together(Body body) {
  std::mutex mutex;
  std::condition_variable cv;
  int ready = 0;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      {
        std::unique_lock<std::mutex> lock(mutex);
        ++ready;
        cv.notify_all();
        cv.wait(lock, [&] { return ready == kThreads; });
      }
      std::string failure;
      try {
        failure = body(t);
      } catch (const std::exception& e) {
        failure = std::string("threw: ") + e.what();
      }
      if (!failure.empty()) {
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back("thread " + std::to_string(t) + ": " + failure);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  return failures;
}

inline std::string join_lines(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return all;
}

}  // namespace tessera::concurrency_test
