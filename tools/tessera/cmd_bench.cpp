// `tessera bench MODEL.onnx|DEPLOY.yaml [--targets LIST] [--threads N] [--repeat N]
//                 [--warmup N] [--seed S] [--json] [--profile] [--pack FILE]... [--no-packs]
//                 [--trace FILE.json [--force]]`
// Latency statistics of repeated runs on seeded random inputs, and the process's peak memory.
// --profile adds each region's and node's median time over the measured runs (per node where the
// plugin reports node times; nodes fused into another node's kernel show 0). --trace writes the
// measured runs as a Chrome trace (trace.hpp). Every run's counters (Session::last_run_stats)
// give the bytes copied host<->device per run and how far regions ran at once.
// A benchmark, not a test: compare runtimes with tools/bench/*.py, which run a peer beside it.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>

#include "cli.hpp"
#include "npz.hpp"
#include "run_common.hpp"
#include "tessera/file_util.hpp"
#include "tessera/flops.hpp"
#include "tessera/plugin_host.hpp"
#include "trace.hpp"

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

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return percentile(values, 0.5);
}

// One line of the --profile table: a region (node empty) or one node of it.
struct ProfileRow {
  int region = -1;
  std::string plugin, node, op;
  double us = 0.0;
  double flops = 0.0;  // node_flops() of the node; 0 for regions and nodes without a count

  // GFLOP/s of the node's median time; 0 when it has no count or no time (a fused node).
  double gflops() const { return flops > 0 && us > 0 ? flops / (us * 1e3) : 0.0; }
};

// Collects the per-run profiles and reduces them to medians per region and per node.
class ProfileCollector {
 public:
  // `graph`: the prepared graph the plan's node names refer to (for FLOP counts).
  ProfileCollector(const ExecutionPlan& plan, const Graph& graph) : plan_(plan) {
    for (const NodePlacement& n : plan.nodes) op_of_[n.node] = n.op_type;
    for (const Node& n : graph.nodes) flops_of_[n.name] = node_flops(graph, n);
  }

  void add(const std::vector<RegionProfile>& profile) {
    for (const RegionProfile& r : profile) {
      region_us_[r.region].push_back(r.time_us);
      plugin_of_[r.region] = r.plugin;
      for (size_t i = 0; i < r.node_times_us.size(); ++i) {
        node_us_[{r.region, i}].push_back(r.node_times_us[i]);
      }
    }
  }

  // Regions in execution order, each followed by its nodes, slowest first.
  std::vector<ProfileRow> rows() const {
    std::vector<ProfileRow> out;
    for (const auto& [region, times] : region_us_) {
      out.push_back({region, plugin_of_.at(region), "", "", median(times)});
      std::vector<ProfileRow> nodes;
      const std::vector<std::string>* names = nullptr;
      for (const RegionPlacement& rp : plan_.regions) {
        if (rp.id == region) names = &rp.nodes;
      }
      for (const auto& [key, node_times] : node_us_) {
        if (key.first != region) continue;
        ProfileRow row{region, plugin_of_.at(region), "#" + std::to_string(key.second), "?",
                       median(node_times)};
        if (names != nullptr && key.second < names->size()) {
          row.node = (*names)[key.second];
          const auto op = op_of_.find(row.node);
          if (op != op_of_.end()) row.op = op->second;
          const auto flops = flops_of_.find(row.node);
          if (flops != flops_of_.end()) row.flops = flops->second;
        }
        nodes.push_back(std::move(row));
      }
      std::stable_sort(nodes.begin(), nodes.end(),
                       [](const ProfileRow& a, const ProfileRow& b) { return a.us > b.us; });
      out.insert(out.end(), nodes.begin(), nodes.end());
    }
    return out;
  }

 private:
  const ExecutionPlan& plan_;
  std::map<std::string, std::string> op_of_;
  std::map<std::string, double> flops_of_;
  std::map<int, std::vector<double>> region_us_;
  std::map<int, std::string> plugin_of_;
  std::map<std::pair<int, size_t>, std::vector<double>> node_us_;
};

// The measured runs' RunStats, reduced for the report.
struct RunCounters {
  int64_t host_device_bytes = 0;   // the same for every run of one plan: the last run's
  int max_regions_in_flight = 0;   // over all runs
  std::vector<double> overlap_us;  // per run

  void add(const RunStats& stats) {
    host_device_bytes = stats.host_device_bytes;
    max_regions_in_flight = std::max(max_regions_in_flight, stats.max_regions_in_flight);
    overlap_us.push_back(stats.overlap_us);
  }
};

}  // namespace

int cmd_bench(int argc, char** argv) {
  Args args(argc, argv,
            {"targets", "threads", "repeat", "warmup", "seed", "input", "input-shape", "pack",
             "precision", "trace", "trusted-key", kMemoryLimitOption},
            {"json", "no-packs", "profile", "allow-fallback", "force", "mixed-precision", "replan",
             "help"});
  if (args.flag("help") || args.positionals().size() != 1) {
    return print_usage(
        "usage: tessera bench MODEL.onnx|DEPLOY.yaml [--targets LIST] [--threads N]\n"
        "                     [--repeat N (default 30)] [--warmup N (default 3)] [--json]\n"
        "                     [--profile] [--pack FILE]... [--no-packs] [--precision P]\n"
        "                     [--mixed-precision] [--replan] [--trusted-key KEY]...\n"
        "                     [--allow-fallback] [--trace FILE.json [--force]]\n"
        "                     [--input NAME=FILE.npy | --input FILE.npz]...\n"
        "                     [--input-shape NAME=D0,D1,...]...\n"
        "MODEL may be a package (tessera compile); --replan plans it again where its targets\n"
        "differ from those here (another device, driver or plugin version) instead of refusing.\n"
        "--trace FILE.json writes the measured runs as a Chrome trace (chrome://tracing,\n"
        "ui.perfetto.dev): runs, regions per plugin track, nodes with their placement and\n"
        "pack config; an existing file is kept unless --force.\n"
        "Counters of the measured runs (--json field names):\n"
        "  host_device_bytes_per_run  bytes of the values entering and leaving regions on\n"
        "                             devices with memory of their own (GPU, OpenCL), which\n"
        "                             those regions copy host<->device; 0 on cpu/reference\n"
        "  max_regions_in_flight      the most regions executing at once in any run (1: one\n"
        "                             at a time; independent regions on different devices\n"
        "                             run at once)\n"
        "  overlap_us                 median time per run during which two or more regions\n"
        "                             executed at once\n",
        args.flag("help"));
  }
  const int64_t repeat = args.get_int("repeat", 30, 1, 1000000);
  const int64_t warmup = args.get_int("warmup", 3, 0, 1000000);
  apply_memory_limit_option(args);
  Workload workload = load_workload(args.positionals()[0], args.get("targets", ""),
                                    parse_input_shapes(args.get_all("input-shape")));
  apply_model_options(workload, args);
  if (args.has("threads")) {
    const int64_t threads = args.get_int("threads", 0, 0, kMaxThreads);
    workload.threads = static_cast<int32_t>(threads);
  }
  const int32_t threads = workload.threads;
  const std::string description = workload.description;
  const TraceInfo trace_info{workload.model_path, workload.description, workload.precision,
                             workload.threads};
  const std::string trace_path = args.get("trace");
  if (!trace_path.empty() && std::filesystem::exists(trace_path) && !args.flag("force")) {
    throw Error("--trace: '" + trace_path + "' exists; pass --force to replace it");
  }
  const auto inputs = load_inputs(workload.graph, args.get_all("input"),
                                  static_cast<uint64_t>(args.get_int("seed", 0, 0, INT64_MAX)));
  const bool profile = args.flag("profile");
  workload.profile_nodes = profile || !trace_path.empty();
  Runner runner(std::move(workload));
  for (int64_t i = 0; i < warmup; ++i) runner.run(inputs);
  // A graph whose shapes depend on input values is planned by its first run: that run is not
  // timed, whatever --warmup says.
  if (warmup == 0 && runner.plan().input_signature.empty()) runner.run(inputs);
  std::vector<double> ms;
  RunCounters counters;
  ProfileCollector collector(runner.plan(), runner.graph());
  std::vector<TracedRun> traced;
  const auto first_start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    runner.run(inputs);
    const auto end = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    counters.add(runner.last_run_stats());
    if (!profile && trace_path.empty()) continue;
    std::vector<RegionProfile> regions = runner.profile();
    if (profile) collector.add(regions);
    if (!trace_path.empty()) {
      using Us = std::chrono::duration<double, std::micro>;
      traced.push_back(
          {Us(start - first_start).count(), Us(end - start).count(), std::move(regions)});
    }
  }
  if (!trace_path.empty()) {
    write_file_atomic(trace_path, chrome_trace(runner.plan(), traced, trace_info),
                      args.flag("force"));
    std::fprintf(stderr, "wrote %s (%zu runs)\n", trace_path.c_str(), traced.size());
  }
  const std::vector<ProfileRow> rows = profile ? collector.rows() : std::vector<ProfileRow>{};
  std::sort(ms.begin(), ms.end());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  // Sample standard deviation (n - 1); 0 for a single run.
  double squares = 0.0;
  for (double v : ms) squares += (v - mean) * (v - mean);
  const double stddev =
      ms.size() > 1 ? std::sqrt(squares / static_cast<double>(ms.size() - 1)) : 0.0;
  const std::map<std::string, int> per_plugin = runner.nodes_per_plugin();
  if (args.flag("json")) {
    std::printf(
        "{\"median_ms\": %.4f, \"p90_ms\": %.4f, \"min_ms\": %.4f, \"mean_ms\": %.4f, "
        "\"stddev_ms\": %.4f, \"repeat\": %lld, \"warmup\": %lld, \"threads\": %d, "
        "\"peak_rss_mb\": %.1f, \"host_device_bytes_per_run\": %lld, "
        "\"max_regions_in_flight\": %d, \"overlap_us\": %.2f, \"plans_held\": %d, %s, "
        "\"nodes\": {",
        percentile(ms, 0.5), percentile(ms, 0.9), ms.front(), mean, stddev,
        static_cast<long long>(repeat), static_cast<long long>(warmup), threads, peak_rss_mb(),
        static_cast<long long>(counters.host_device_bytes), counters.max_regions_in_flight,
        median(counters.overlap_us), runner.plans_held(),
        plan_json_members(runner.plan(), trace_info.model, trace_info.precision).c_str());
    // "nodes" is the older name of "nodes_by_plugin" (in plan_json_members); both stay for the
    // scripts that read it.
    std::string counts;
    for (const auto& [plugin, count] : per_plugin) {
      counts += (counts.empty() ? "" : ", ") + json_string(plugin) + ": " + std::to_string(count);
    }
    std::printf("%s}", counts.c_str());
    if (profile) {
      std::printf(", \"profile\": [");
      for (size_t i = 0; i < rows.size(); ++i) {
        const ProfileRow& r = rows[i];
        std::printf(
            "%s{\"region\": %d, \"plugin\": %s, \"node\": %s, \"op\": %s, "
            "\"median_us\": %.2f, \"gflop\": %.6f, \"gflops\": %.2f}",
            i ? ", " : "", r.region, json_string(r.plugin).c_str(), json_string(r.node).c_str(),
            json_string(r.op).c_str(), r.us, r.flops * 1e-9, r.gflops());
      }
      std::printf("]");
    }
    std::printf("}\n");
    return 0;
  }
  std::printf("%s\n", description.c_str());
  std::printf("nodes:");
  for (const auto& [plugin, count] : per_plugin) std::printf(" %s=%d", plugin.c_str(), count);
  std::printf(
      "\nlatency over %lld runs after %lld warm-up: median %.3f ms, p90 %.3f ms, "
      "min %.3f ms, mean %.3f ms, stddev %.3f ms\npeak RSS %.1f MiB\n",
      static_cast<long long>(repeat), static_cast<long long>(warmup), percentile(ms, 0.5),
      percentile(ms, 0.9), ms.front(), mean, stddev, peak_rss_mb());
  std::printf(
      "host<->device copies %lld bytes per run; regions at once: at most %d, overlapping for a "
      "median %.1f us per run\n",
      static_cast<long long>(counters.host_device_bytes), counters.max_regions_in_flight,
      median(counters.overlap_us));
  if (profile) {
    const double total_ms = percentile(ms, 0.5);
    std::printf("\nprofile (median over %lld runs; share of the median latency):\n",
                static_cast<long long>(repeat));
    std::printf("  %-6s %-10s %-36s %-20s %12s %7s %9s\n", "region", "plugin", "node", "op", "us",
                "share", "GFLOP/s");
    for (const ProfileRow& r : rows) {
      const double share = total_ms > 0 ? 100.0 * r.us / (1000.0 * total_ms) : 0.0;
      if (r.node.empty()) {
        std::printf("  %-6d %-10s %-36s %-20s %12.1f %6.1f%%\n", r.region, r.plugin.c_str(),
                    "(whole region)", "", r.us, share);
      } else {
        std::printf("  %-6s %-10s %-36s %-20s %12.1f %6.1f%%", "", "", r.node.c_str(), r.op.c_str(),
                    r.us, share);
        if (r.gflops() > 0) std::printf(" %9.1f", r.gflops());
        std::printf("\n");
      }
    }
  }
  return 0;
}

}  // namespace tessera::cli
