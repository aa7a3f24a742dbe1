// `tessera run MODEL.onnx [--targets LIST] [--input NAME=FILE.npy | FILE.npz]... [--output-dir DIR]
//               [--repeat N]   (or a deployment YAML in place of MODEL.onnx) [--seed S]
//               [--input-shape NAME=DIMS]... [--force] [--threads N] [--verbose|--quiet]
//               [--precision P --check-accuracy [--accuracy-samples N] [--accuracy-budget R]]`
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>

#include "accuracy.hpp"
#include "cli.hpp"
#include "npz.hpp"
#include "run_common.hpp"
#include "tessera/npy.hpp"
#include "tessera/passes.hpp"
#include "tessera/plugin_host.hpp"

namespace tessera::cli {
namespace {

// The usage: on stdout for --help, on stderr when the command line is wrong.
const char* const kRunUsage =
    "usage: tessera run MODEL.onnx|DEPLOY.yaml|MODEL.tsp [options]\n"
    "  --targets LIST        plugin priority, e.g. cpu,reference or mali:any,reference\n"
    "                        (overrides the deployment's targets); an entry may carry its\n"
    "                        target options: 'mali:any[layout=nchw],reference'\n"
    "  --input NAME=FILE.npy input tensor (repeatable); others get seeded random data\n"
    "  --input FILE.npz      every array of the archive (np.savez, np.savez_compressed)\n"
    "                        as the input of its name\n"
    "  --input-shape NAME=D0,D1,...  fix a symbolic input shape\n"
    "  --seed S              seed for generated inputs (default 0)\n"
    "  --output-dir DIR      write every output to DIR/<name>.npy\n"
    "  --force               replace existing files in --output-dir\n"
    "  --repeat N            timed runs after one warm-up (default 10)\n"
    "  --threads N           threads of every target (default: each plugin's own)\n"
    "  --verbose             every node's placement, full pack reasons, packs ignored\n"
    "  --quiet               only warnings, the latency line and files written\n"
    "  --json                one JSON object instead of text: the plan (targets, packs,\n"
    "                        regions, nodes per plugin, warnings), latency statistics,\n"
    "                        outputs (dtype, shape, top-5, file written)\n"
    "  --pack FILE           use exactly this tuned pack (repeatable)\n"
    "  --no-packs            no tuned packs: the schedules' heuristics only\n"
    "  --precision P         fp32, fp16 or fp16-acc32 (over the deployment's)\n"
    "  --mixed-precision     with fp16/fp16-acc32: keep the ops the mixed-precision pass\n"
    "                        lists as never (Softmax, LayerNormalization, reductions, Exp,\n"
    "                        Erf, ...) and what only they feed in fp32\n"
    "  --allow-fallback      skip a named target that cannot run, or move work that fails\n"
    "                        to compile on it to the next target (default: an error)\n"
    "  --replan              a package (tessera compile) whose targets differ from those\n"
    "                        here (device, driver, plugin version): plan it again instead\n"
    "                        of refusing\n"
    "  --memory-limit BYTES  refuse models needing more (e.g. 4G; default: physical memory)\n"
    "  --trusted-key KEY     ed25519:<hex>, or an absolute .pub file (tessera keygen):\n"
    "                        refuse a package or pack no trusted key signed (repeatable;\n"
    "                        replaces the deployment's trusted_keys)\n"
    "  --check-accuracy      also run the model in fp32 on the same targets and report, per\n"
    "                        output, the largest abs and relative (to the output's largest\n"
    "                        magnitude) difference over a batch of inputs, and for class\n"
    "                        scores ([rows, classes]) top-1 agreement and top-5 overlap\n"
    "  --accuracy-samples N  inputs in that batch (default 8): the given --input files stay,\n"
    "                        the others are generated with seeds S, S+1, ...\n"
    "  --accuracy-budget R   fail (exit 1) when an output's relative difference exceeds R;\n"
    "                        with --mixed-precision, first search op types to keep in fp32\n"
    "                        until it holds and print the lists (default: the deployment's\n"
    "                        mixed_precision.accuracy_budget)\n";

// What --check-accuracy found: the JSON member ("accuracy": {...}; empty in text mode, where
// the report is printed) and whether the budget was exceeded.
struct AccuracyOutcome {
  std::string json;
  bool over_budget = false;
};

// --check-accuracy: the session's outputs against an fp32 session of the same workload on the
// same targets, over `samples` inputs. With a budget that the session's mixed-precision lists
// miss, a greedy search moves op types to `never` (each step: the op type still run reduced
// whose move lowers the worst relative error most) until the budget holds, and reports on the
// session it settled on, with the lists to put in the deployment.
AccuracyOutcome check_accuracy(Runner& runner, const std::string& precision,
                               const MixedPrecisionSettings& mixed, const std::string& model_path,
                               const Args& args, uint64_t seed, bool json) {
  const int64_t samples = args.get_int("accuracy-samples", 8, 1, 100000);
  // 0 = no budget; get_number names the option when the value is not a number in range.
  const double budget = args.has("accuracy-budget")
                            ? args.get_number("accuracy-budget", 0.0, 1e-12, 1e6)
                            : mixed.accuracy_budget;
  const auto load = [&](const std::string& p) {
    Workload w = load_workload(model_path, args.get("targets", ""),
                               parse_input_shapes(args.get_all("input-shape")));
    apply_pack_options(w, args.get_all("pack"), args.flag("no-packs"));
    apply_fallback_option(w, args.flag("allow-fallback"));
    if (args.has("threads"))
      w.threads = static_cast<int32_t>(args.get_int("threads", 0, 1, kMaxThreads));
    w.precision = p;
    return w;
  };
  Workload reference = load("fp32");
  reference.mixed_precision.enabled = false;
  Runner fp32(std::move(reference));
  const Graph& g = runner.graph();
  std::vector<std::string> names;
  for (ValueId id : g.outputs) names.push_back(g.value(id).name);
  // The batch and its fp32 outputs, computed once for every session measured against them.
  std::vector<std::map<std::string, Tensor>> batch;
  std::vector<std::vector<Tensor>> want;
  for (int64_t i = 0; i < samples; ++i) {
    batch.push_back(load_inputs(g, args.get_all("input"), seed + i));
    want.push_back(fp32.run(batch.back()));
  }
  const auto measure = [&](Runner& r) {
    AccuracyCheck c(names);
    for (size_t i = 0; i < batch.size(); ++i) c.add(r.run(batch[i]), want[i]);
    return c;
  };
  AccuracyCheck check = measure(runner);
  std::unique_ptr<Runner> settled;  // the session the search ended on, if it searched
  MixedPrecisionSettings lists = mixed;
  std::vector<std::string> moved;
  if (budget > 0.0 && check.worst_rel() > budget && mixed.enabled) {
    if (!json) {
      std::printf(
          "accuracy budget %.3g: worst relative difference %.3g; searching op types to "
          "keep in fp32\n",
          budget, check.worst_rel());
    }
    while (check.worst_rel() > budget) {
      std::set<std::string> reduced_ops;
      for (const NodePlacement& n : (settled ? *settled : runner).plan().nodes) {
        if (n.precision != "fp32") reduced_ops.insert(n.op_type);
      }
      if (reduced_ops.empty()) break;
      std::unique_ptr<Runner> best;
      std::optional<AccuracyCheck> best_check;
      std::string best_op;
      for (const std::string& op : reduced_ops) {
        Workload w = load(precision);
        w.mixed_precision = lists;
        w.mixed_precision.overrides[op] = MixedPrecisionClass::kNever;
        auto candidate = std::make_unique<Runner>(std::move(w));
        AccuracyCheck c = measure(*candidate);
        if (!best_check || c.worst_rel() < best_check->worst_rel()) {
          best = std::move(candidate);
          best_check = std::move(c);
          best_op = op;
        }
      }
      lists.overrides[best_op] = MixedPrecisionClass::kNever;
      moved.push_back(best_op);
      settled = std::move(best);
      check = std::move(*best_check);
      if (!json) {
        std::printf("  + %s in fp32: worst relative difference %.3g\n", best_op.c_str(),
                    check.worst_rel());
      }
    }
    if (!json) {
      std::string list;
      for (const std::string& op : moved) list += (list.empty() ? "" : ", ") + op;
      std::printf("  deployment lists for this: mixed_precision: {never: [%s]}\n", list.c_str());
    }
  } else if (budget > 0.0 && check.worst_rel() > budget && !json) {
    std::printf(
        "accuracy budget %.3g exceeded; with --mixed-precision (or a deployment's "
        "mixed_precision:) run searches for op types to keep in fp32\n",
        budget);
  }
  Runner& reported = settled ? *settled : runner;
  std::string out;
  char line[512];
  if (!json) {
    std::printf(
        "accuracy of %s against fp32 on the same targets over %d inputs (seeds %llu..%llu "
        "for generated inputs):\n",
        precision.c_str(), check.samples(), static_cast<unsigned long long>(seed),
        static_cast<unsigned long long>(seed + samples - 1));
  }
  for (const OutputAccuracy& o : check.outputs()) {
    if (json) {
      std::snprintf(line, sizeof(line),
                    "%s{\"name\": %s, \"max_abs\": %.6g, \"max_rel\": %.6g, \"rows\": %lld, "
                    "\"top1_agreement\": %.6g, \"top5_overlap\": %.6g, \"non_finite\": %s}",
                    out.empty() ? "" : ", ", json_string(o.name).c_str(), o.max_abs, o.max_rel,
                    static_cast<long long>(o.rows),
                    o.rows ? static_cast<double>(o.top1_agree) / o.rows : 0.0,
                    o.rows ? o.top5_overlap / o.rows : 0.0, o.non_finite ? "true" : "false");
      out += line;
      continue;
    }
    std::printf("  output '%s': max abs %.3g, max rel %.3g%s", o.name.c_str(), o.max_abs, o.max_rel,
                o.non_finite ? ", NON-FINITE values where fp32 has none" : "");
    if (o.rows > 0) {
      std::printf("; top-1 agreement %lld/%lld (%.1f%%), top-5 overlap %.1f%%",
                  static_cast<long long>(o.top1_agree), static_cast<long long>(o.rows),
                  100.0 * static_cast<double>(o.top1_agree) / static_cast<double>(o.rows),
                  100.0 * o.top5_overlap / static_cast<double>(o.rows));
    }
    std::printf("\n");
  }
  // Only the mixed-precision pass keeps nodes in fp32: a target that cannot run `precision` is
  // an error at compile, not an fp32 fallback.
  if (!json) {
    std::printf("  nodes kept in fp32: %s\n", fp32_nodes_text(reported.plan(), precision).c_str());
  }
  const bool over = budget > 0.0 && check.worst_rel() > budget;
  if (json) {
    std::snprintf(line, sizeof(line),
                  "\"accuracy\": {\"reference\": \"fp32\", \"samples\": %d, \"budget\": %.6g, "
                  "\"within_budget\": %s, \"kept_fp32_op_types\": ",
                  check.samples(), budget, over ? "false" : "true");
    out = line + json_string_list(moved) +
          ", \"fp32_nodes\": " + json_string_list(fp32_nodes(reported.plan(), precision)) +
          ", \"outputs\": [" + out + "]}";
  }
  return {out, over};
}

// The 5 best classes of the first row of a 1000-class classifier's output, best first; empty for
// any other output.
std::vector<int> top5_classes(const Tensor& output) {
  // numel: a [0, 1000] output has the class axis but no row to read.
  if (output.dtype() != DType::kFloat32 || output.shape().empty() ||
      output.shape().back() != 1000 || output.numel() < 1000) {
    return {};
  }
  const float* row = output.data<float>();
  std::vector<int> order(1000);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                    [&](int a, int b) { return row[a] > row[b]; });
  order.resize(5);
  return order;
}

void print_top5(const std::string& name, const Tensor& output) {
  const std::vector<int> classes = top5_classes(output);
  if (classes.empty()) return;
  const float* row = output.data<float>();
  std::printf("top-5 of '%s' (batch item 0):\n", name.c_str());
  for (size_t k = 0; k < classes.size(); ++k) {
    std::printf("  #%zu  class %4d  score %.6f\n", k + 1, classes[k], row[classes[k]]);
  }
}

}  // namespace

int cmd_run(int argc, char** argv) {
  Args args(argc, argv,
            {"targets", "input", "input-shape", "seed", "output-dir", "repeat", "pack", "precision",
             "threads", "accuracy-samples", "accuracy-budget", "trusted-key", kMemoryLimitOption},
            {"force", "no-packs", "allow-fallback", "verbose", "quiet", "json", "check-accuracy",
             "mixed-precision", "replan", "help"});
  if (args.flag("help") || args.positionals().size() != 1) {
    return print_usage(kRunUsage, args.flag("help"));
  }
  const std::string model_path = args.positionals()[0];
  const int64_t repeat = args.get_int("repeat", 10, 1, 1000000);
  const uint64_t seed = static_cast<uint64_t>(args.get_int("seed", 0, 0, INT64_MAX));
  if (args.flag("verbose") && args.flag("quiet")) {
    throw Error("--verbose and --quiet contradict each other; give one");
  }
  const Runner::Verbosity verbosity = args.flag("quiet")     ? Runner::Verbosity::kQuiet
                                      : args.flag("verbose") ? Runner::Verbosity::kVerbose
                                                             : Runner::Verbosity::kNormal;
  const bool json = args.flag("json");
  if (json && (args.flag("verbose") || args.flag("quiet"))) {
    throw Error("--json prints one object; it does not combine with --verbose or --quiet");
  }
  const bool quiet = verbosity == Runner::Verbosity::kQuiet || json;
  const bool check = args.flag("check-accuracy");
  if (!check && (args.has("accuracy-samples") || args.has("accuracy-budget"))) {
    throw Error("--accuracy-samples and --accuracy-budget go with --check-accuracy");
  }
  apply_memory_limit_option(args);

  const auto t_import = std::chrono::steady_clock::now();
  Workload workload = load_workload(model_path, args.get("targets", ""),
                                    parse_input_shapes(args.get_all("input-shape")));
  apply_model_options(workload, args);
  if (args.has("threads")) {
    workload.threads = static_cast<int32_t>(args.get_int("threads", 0, 1, kMaxThreads));
  }
  if (!quiet) std::printf("running %s\n", workload.description.c_str());
  const std::string model = workload.model_path, precision = workload.precision;
  const MixedPrecisionSettings mixed = workload.mixed_precision;
  std::map<std::string, Tensor> inputs = load_inputs(workload.graph, args.get_all("input"), seed);

  const auto t_compile = std::chrono::steady_clock::now();
  Runner runner(std::move(workload));
  const auto t_ready = std::chrono::steady_clock::now();
  // A graph whose shapes depend on input values is planned by its first run.
  const bool planned_by_run = planned_at_first_run(runner.graph());
  if (!planned_by_run && !json) runner.print_placement(verbosity);
  using Ms = std::chrono::duration<double, std::milli>;
  if (!quiet) {
    std::printf("start-up: import %.1f ms, load plugins + partition + compile %.1f ms\n",
                Ms(t_compile - t_import).count(), Ms(t_ready - t_compile).count());
  }

  std::vector<Tensor> outputs = runner.run(inputs);  // warm-up, also the outputs we report
  if (planned_by_run && !json) runner.print_placement(verbosity);
  std::vector<double> times_ms;
  for (int64_t i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    runner.run(inputs);
    times_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times_ms.begin(), times_ms.end());
  if (!json) {
    std::printf("latency: median %.3f ms over %lld runs (min %.3f ms, max %.3f ms)\n",
                times_ms[times_ms.size() / 2], static_cast<long long>(repeat), times_ms.front(),
                times_ms.back());
  }

  const Graph& g = runner.graph();
  for (size_t i = 0; i < outputs.size() && !quiet; ++i) {
    const std::string& name = g.value(g.outputs[i]).name;
    std::printf("output '%s': %s %s\n", name.c_str(), dtype_name(outputs[i].dtype()),
                shape_str(outputs[i].shape()).c_str());
    print_top5(name, outputs[i]);
  }
  std::vector<std::string> written(outputs.size());
  if (args.has("output-dir")) {
    const std::filesystem::path dir = args.get("output-dir");
    std::filesystem::create_directories(dir);
    std::vector<std::string> names;
    for (ValueId id : g.outputs) names.push_back(g.value(id).name);
    std::vector<std::string> notes;
    const std::vector<std::string> files = output_file_names(names, notes);
    for (const std::string& note : notes) {
      if (!json) std::printf("note: %s\n", note.c_str());
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      written[i] = dir / files[i];
      write_npy(written[i], outputs[i], args.flag("force"));
      if (!json) std::printf("wrote %s\n", written[i].c_str());
    }
  }
  const AccuracyOutcome accuracy =
      check ? check_accuracy(runner, precision, mixed, model_path, args, seed, json)
            : AccuracyOutcome{};
  const std::string over_budget = accuracy.over_budget
                                      ? "--accuracy-budget " + args.get("accuracy-budget") +
                                            " exceeded: an output of " + precision +
                                            " differs from fp32 by more (see the accuracy report)"
                                      : "";
  if (json) {
    std::string out = "{" + plan_json_members(runner.plan(), model, precision) +
                      ", \"repeat\": " + std::to_string(repeat) + ", \"latency_ms\": {";
    char stats[160];
    std::snprintf(stats, sizeof(stats), "\"median\": %.4f, \"min\": %.4f, \"max\": %.4f}",
                  times_ms[times_ms.size() / 2], times_ms.front(), times_ms.back());
    out += std::string(stats) + ", \"outputs\": [";
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::vector<int> classes = top5_classes(outputs[i]);
      out += std::string(i ? ", " : "") + "{\"name\": " + json_string(g.value(g.outputs[i]).name) +
             ", \"dtype\": " + json_string(dtype_name(outputs[i].dtype())) +
             ", \"shape\": " + json_int_list(outputs[i].shape()) +
             ", \"top5\": " + json_int_list({classes.begin(), classes.end()}) +
             ", \"file\": " + json_string(written[i]) + "}";
    }
    out += "]";
    if (check) out += ", " + accuracy.json;
    // The report is the one object on stdout; the failure travels in it.
    if (!over_budget.empty()) out += ", \"error\": " + json_string(over_budget);
    std::printf("%s}\n", out.c_str());
    if (!over_budget.empty()) std::fprintf(stderr, "tessera run: error: %s\n", over_budget.c_str());
    return over_budget.empty() ? 0 : 1;
  }
  if (!over_budget.empty()) throw Error(over_budget);
  return 0;
}

}  // namespace tessera::cli
