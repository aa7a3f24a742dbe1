// `tessera bench MODEL.onnx|DEPLOY.yaml [--targets LIST] [--threads N] [--repeat N]
//                 [--warmup N] [--seed S] [--json] [--pack FILE]... [--no-packs]`
// Latency statistics of repeated runs on seeded random inputs, and the process's peak memory.
// A benchmark, not a test: compare runtimes with tools/bench/*.py, which run a peer beside it.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <numeric>

#include "cli.hpp"
#include "run_common.hpp"

namespace tessera::cli {
namespace {

double peak_rss_mb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

double percentile(const std::vector<double>& sorted, double p) {
  const size_t index = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  Args args(argc, argv,
            {"targets", "threads", "repeat", "warmup", "seed", "input-shape", "pack", "precision"},
            {"json", "no-packs", "help"});
  if (args.flag("help") || args.positionals().size() != 1) {
    std::printf(
        "usage: tessera bench MODEL.onnx|DEPLOY.yaml [--targets LIST] [--threads N]\n"
        "                     [--repeat N (default 30)] [--warmup N (default 3)] [--json]\n"
        "                     [--pack FILE]... [--no-packs] [--precision P]\n");
    return args.flag("help") ? 0 : 2;
  }
  const int64_t repeat = args.get_int("repeat", 30);
  const int64_t warmup = args.get_int("warmup", 3);
  if (repeat < 1 || warmup < 0) throw Error("--repeat must be >= 1 and --warmup >= 0");
  Workload workload = load_workload(args.positionals()[0], args.get("targets", ""),
                                    parse_input_shapes(args.get_all("input-shape")));
  apply_pack_options(workload, args.get_all("pack"), args.flag("no-packs"));
  apply_precision_option(workload, args.get("precision"));
  if (args.has("threads")) {
    const int64_t threads = args.get_int("threads", 0);
    if (threads < 0 || threads > 1024) throw Error("--threads must be between 0 and 1024");
    workload.threads = static_cast<int32_t>(threads);
  }
  const int32_t threads = workload.threads;
  const std::string description = workload.description;
  const auto inputs =
      load_or_generate_inputs(workload.graph, {}, static_cast<uint64_t>(args.get_int("seed", 0)));
  Runner runner(std::move(workload));
  for (int64_t i = 0; i < warmup; ++i) runner.run(inputs);
  std::vector<double> ms;
  for (int64_t i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    runner.run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  const std::map<std::string, int> per_plugin = runner.nodes_per_plugin();
  if (args.flag("json")) {
    std::printf(
        "{\"median_ms\": %.4f, \"p90_ms\": %.4f, \"min_ms\": %.4f, \"mean_ms\": %.4f, "
        "\"repeat\": %lld, \"threads\": %d, \"peak_rss_mb\": %.1f, \"nodes\": {",
        percentile(ms, 0.5), percentile(ms, 0.9), ms.front(), mean, static_cast<long long>(repeat),
        threads, peak_rss_mb());
    bool first = true;
    for (const auto& [plugin, count] : per_plugin) {
      std::printf("%s\"%s\": %d", first ? "" : ", ", plugin.c_str(), count);
      first = false;
    }
    std::printf("}}\n");
    return 0;
  }
  std::printf("%s\n", description.c_str());
  std::printf("nodes:");
  for (const auto& [plugin, count] : per_plugin) std::printf(" %s=%d", plugin.c_str(), count);
  std::printf(
      "\nlatency over %lld runs after %lld warm-up: median %.3f ms, p90 %.3f ms, "
      "min %.3f ms, mean %.3f ms\npeak RSS %.1f MiB\n",
      static_cast<long long>(repeat), static_cast<long long>(warmup), percentile(ms, 0.5),
      percentile(ms, 0.9), ms.front(), mean, peak_rss_mb());
  return 0;
}

}  // namespace tessera::cli
