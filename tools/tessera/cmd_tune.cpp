// `tessera tune MODEL.onnx --targets LIST ...`: tunes the schedules of every node the target
// plugins run, logs each measurement as a JSON line, shows progress on stderr (a redrawn table on
// a terminal, plain lines otherwise), prints a summary table and writes the best-per-workload
// pack. `tessera tune --worker` is the hidden measuring child (serving requests on fd 3).
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "run_common.hpp"
#include "tessera/error.hpp"
#include "tessera/farm.hpp"
#include "tessera/file_util.hpp"
#include "tessera/pack.hpp"
#include "tessera/session.hpp"
#include "tessera/tuner.hpp"

namespace tessera::cli {

namespace {

void print_tune_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tessera tune MODEL.onnx|DEPLOY.yaml [--targets LIST] [--trials N] [--budget "
               "SECONDS]\n"
               "         [--tuner xgb|ga|random|grid] [--scheduler gradient|even]\n"
               "         [--early-stopping N] [--log FILE.jsonl]\n"
               "         [--pack OUT.yaml] [--resume] [--force] [--repeats N] [--timeout S]\n"
               "         [--seed N] [--isolation worker|candidate] [--compile-jobs N]\n"
               "         [--verify N] [--verify-rounds N] [--memory-limit BYTES] [--json]\n"
               "         [--farm redis://HOST:PORT [--key KEY] [--farm-wait S]]\n\n"
               "Defaults: --trials 64 without --budget, no cap with one; --budget none (0);\n"
               "--tuner xgb; --scheduler gradient; --early-stopping 0 (never); --repeats 5\n"
               "(timed runs per measurement); --timeout 30 s per measurement; --seed 1;\n"
               "--isolation worker; --verify 5; --compile-jobs as below; no --log or --pack\n"
               "unless given.\n\n"
               "Measures candidate configs of each tunable node (one-node regions in a child\n"
               "process, by default a persistent worker serving many candidates; --isolation\n"
               "candidate starts one per candidate, for drivers that leak state), appends one\n"
               "JSON line per measurement to --log, and writes the fastest config per workload\n"
               "as a pack (refusing to overwrite it without --force).\n"
               "--resume skips configs already in the log and starts from its best.\n"
               "--compile-jobs N compiles a batch's candidates in N workers at once before\n"
               "measuring them one at a time (default: 2 with worker isolation, 1 with\n"
               "candidate isolation; 1 = the measuring worker compiles; 0 = the number of\n"
               "cores).\n"
               "--verify N (default 5; 0 = off) measures each task's N fastest configs and its\n"
               "default again after the search, in --verify-rounds rounds (default 3) taking\n"
               "turns, and keeps the lowest median over the rounds: on a noisy machine the\n"
               "fastest single trial is often a config that ran in a fast moment. Medians\n"
               "within the rounds' noise of the lowest, or within 0.125%% of the model's latency,\n"
               "are ties: the default wins them, else the first config, so a re-tune writes\n"
               "the same pack. --budget is the whole command's wall-clock time: the search\n"
               "leaves the verification its estimated share (at most half) and the\n"
               "verification stops at the budget.\n"
               "--scheduler even splits the trials left after the defaults evenly over the\n"
               "tasks up front instead of following the measurements (gradient): with\n"
               "--tuner random or grid and a fixed --seed every run measures the same\n"
               "candidates, so re-tunes and farm runs differ only by the measurements.\n"
               "--resume says how many records and tasks it took from the log.\n"
               "--json prints the end-of-run summary as one JSON object on stdout (progress\n"
               "stays on stderr).\n"
               "--farm measures on a tuning farm instead of here: the agents (`tessera agent\n"
               "--broker URL` on each device) of pool KEY at that Redis server (also written\n"
               "redis://[[USER]:PASSWORD@]HOST:PORT/KEY, HOST:PORT/KEY or unix:PATH/KEY; the\n"
               "password may come from TESSERA_FARM_PASSWORD and is never printed). Without a\n"
               "key: the pool of the device it tunes for (as agents name theirs, \"Mali-G78\n"
               "r38p1\" -> mali-g78-r38p1) when an agent is alive there, else the one live pool\n"
               "whose agents measure the tuned plugins; when that is not one pool the run ends\n"
               "at once naming the live pools. Batches\n"
               "hold two candidates per live agent; a killed agent's candidate goes to\n"
               "another; a restarted server is reconnected to and the pending candidates sent\n"
               "again; with no live agent for --farm-wait seconds (default 60) the run ends\n"
               "with an error. The log, the pack and its device are the agents'; --resume\n"
               "works as without a farm. `tessera farm status` shows the agents.\n"
               "Numbers are checked: --trials 1..1e8, --budget 0..604800 s (0 = none),\n"
               "--repeats 1..100000, --timeout 0.001..86400 s, --verify 0..1000,\n"
               "--verify-rounds 1..1000, --farm-wait 1..86400 s.\n");
}

// --trials' largest value, and its default when --budget is given.
constexpr int64_t kNoTrialCap = 100000000;

std::string command_line(int argc, char** argv) {
  std::string s = "tessera";
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    s += " " + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  }
  return s;
}

// --json: the end-of-run summary as one object (the run's settings, per task its workload,
// weight, default and best times, trials, errors by class and best config, the estimated totals).
std::string report_json(const tune::TuneReport& report, const tune::TuneOptions& options) {
  std::string out = "{\"model\": " + json_string(options.model) +
                    ", \"tuner\": " + json_string(options.tuner) +
                    ", \"trials\": " + std::to_string(options.trials) +
                    ", \"budget_s\": " + json_number(options.budget_s) +
                    ", \"verify\": " + std::to_string(options.verify) + ", \"tasks\": [";
  for (size_t i = 0; i < report.tasks.size(); ++i) {
    const tune::TaskResult& t = report.tasks[i];
    std::string errors;
    for (const auto& [status, n] : t.errors) {
      errors += (errors.empty() ? "" : ", ") + json_string(status) + ": " + std::to_string(n);
    }
    std::string best = "null";
    if (t.best) {
      best = "{\"schedule\": " + json_string(t.best->schedule) + ", \"knobs\": {";
      for (size_t k = 0; k < t.best->knobs.size(); ++k) {
        best += (k ? ", " : "") + json_string(t.best->knobs[k].first) + ": " +
                std::to_string(t.best->knobs[k].second);
      }
      best += "}, \"us\": " + json_number(t.best->median_us) +
              ", \"stage\": " + json_string(t.best->stage.empty() ? "search" : t.best->stage) + "}";
    }
    out += std::string(i ? ", " : "") + "{\"id\": " + std::to_string(t.task.id) +
           ", \"plugin\": " + json_string(t.task.plugin) + ", \"op\": " + json_string(t.task.op) +
           ", \"workload\": " + json_string(t.task.workload) +
           ", \"weight\": " + std::to_string(t.task.weight) +
           ", \"default_us\": " + json_number(t.default_us) +
           ", \"trials\": " + std::to_string(t.trials) +
           ", \"space\": " + std::to_string(t.space_size) + ", \"errors\": {" + errors +
           "}, \"best\": " + best + "}";
  }
  return out +
         "], \"estimated_default_total_us\": " + json_number(report.estimated_default_total_us) +
         ", \"estimated_total_us\": " + json_number(report.estimated_total_us) + "}\n";
}

}  // namespace

std::string this_executable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw Error("tune: cannot find this executable (/proc/self/exe) to run as worker");
  return std::string(buf, static_cast<size_t>(n));
}

// CLML picks and tunes its own kernels (it lists no knobs for the search above): each clml
// target's regions are compiled once with the plugin's `tuning: build`, which runs CLML's tuner
// on every op and stores the device's tuning cache beside the kernel cache, where every later
// session (tuning: use, the default) finds it.
static void tune_clml_targets(const tune::TuneOptions& options) {
  std::vector<std::string> clml;
  std::string targets;
  for (const std::string& t : options.targets) {
    targets += (targets.empty() ? "" : ",") + t;
    if (t == "clml" || t.rfind("clml:", 0) == 0) clml.push_back(t);
  }
  if (clml.empty()) return;
  Workload workload = load_workload(options.model, targets, {});
  for (const std::string& t : clml) workload.target_settings[t].options = {{"tuning", "build"}};
  workload.allow_fallback = true;  // what the CLML tuning covers is the part clml compiles
  const Session session(std::move(workload.graph), session_options(workload));
  int regions = 0;
  for (const RegionPlacement& r : session.plan().regions) regions += r.plugin == "clml";
  std::fprintf(stderr,
               "clml: CLML's tuner ran on the ops of %d clml region(s); their tuning "
               "caches are stored beside the kernel cache\n",
               regions);
}

int cmd_tune(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--worker") {
    try {
      return tune::serve_worker(3);  // the parent's socket (MeasureWorker)
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tune worker: %s\n", e.what());
      return 3;
    }
  }
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      print_tune_usage(stdout);
      return 0;
    }
  }
  try {
    Args args(argc, argv,
              {"targets", "trials", "budget", "tuner", "scheduler", "early-stopping", "log", "pack",
               "repeats", "timeout", "seed", "compile-jobs", "isolation", "verify", "verify-rounds",
               "farm", "key", "farm-wait", kMemoryLimitOption},
              {"resume", "force", "json"});
    if (args.positionals().size() != 1) {
      print_tune_usage(stderr);
      return usage_error("usage: tessera tune MODEL.onnx|DEPLOY.yaml [options]");
    }
    apply_memory_limit_option(args);
    tune::TuneOptions options;
    options.model = args.positionals()[0];
    // The measuring workers compile with each plugin's default options: a target option would
    // tune something other than what runs, so tune refuses targets that carry one.
    for (const TargetListEntry& e : parse_target_entries(args.get("targets"))) {
      if (!e.options.empty()) {
        throw Error("--targets: target '" + e.spec +
                    "': tune does not pass target options to its measuring workers; tune "
                    "without them (--targets " +
                    e.spec + ")");
      }
      options.targets.push_back(e.spec);
    }
    if (is_package_file(options.model)) {
      throw Error(options.model +
                  ": tune measures an ONNX model or a deployment, not a package "
                  "(tune the model it was compiled from, then compile again)");
    }
    if (is_deployment_file(options.model)) {
      // A deployment YAML names the model (or zoo network) and, unless --targets is given, the
      // targets to tune for.
      Workload workload = load_workload(options.model, args.get("targets"), {});
      options.model = workload.model_path;
      options.graph = std::make_shared<const Graph>(std::move(workload.graph));  // imported once
      if (options.targets.empty()) options.targets = workload.targets;
      for (const auto& [spec, settings] : workload.target_settings) {
        if (!settings.options.empty()) {
          throw Error(settings.origin + ": target '" + spec +
                      "': tune does not pass target options to its measuring workers; tune "
                      "without them (--targets " +
                      spec + ")");
        }
      }
    }
    if (options.targets.empty()) throw Error("tune: --targets is required, e.g. mali:any");
    // 0 = no time budget; a week is more than any tuning run takes.
    options.budget_s = args.get_number("budget", 0, 0, 7 * 24 * 3600.0);
    // With a budget the time decides, so no trial count cuts the run short unless given.
    options.trials = static_cast<int>(
        args.get_int("trials", options.budget_s > 0 ? kNoTrialCap : 64, 1, kNoTrialCap));
    options.tuner = args.get("tuner", "xgb");
    options.scheduler = args.get("scheduler", "gradient");
    options.early_stopping = static_cast<int>(args.get_int("early-stopping", 0, 0, 100000000));
    options.log_path = args.get("log");
    options.resume = args.flag("resume");
    options.repeats = static_cast<int>(args.get_int("repeats", 5, 1, 100000));
    // A measurement needs some time; 0 would fail every candidate as a timeout.
    options.timeout_s = args.get_number("timeout", 30, 0.001, 24 * 3600.0);
    options.seed = static_cast<uint64_t>(args.get_int("seed", 1, 0, INT64_MAX));
    options.compile_jobs = static_cast<int>(args.get_int("compile-jobs", -1, 0, 1024));
    options.isolation = args.get("isolation", "worker");
    options.verify = static_cast<int>(args.get_int("verify", 5, 0, 1000));
    options.verify_rounds = static_cast<int>(args.get_int("verify-rounds", 3, 1, 1000));
    options.worker_command = {this_executable(), "tune", "--worker"};
    options.farm = args.get("farm");
    options.farm_key = args.get("key");
    if (!options.farm_key.empty() && options.farm.empty()) throw Error("--key needs --farm");
    if (!options.farm.empty()) tune::BrokerAddress::parse(options.farm);  // checked before work
    options.farm_agent_wait_s = args.get_number("farm-wait", 60, 1, 24 * 3600.0);
    options.command = "tessera";  // recorded in each log record, for `tessera pack build`
    for (int i = 0; i < argc; ++i) options.command += std::string(" ") + argv[i];
    const std::string pack_path = args.get("pack");
    if (!pack_path.empty() && std::filesystem::exists(pack_path) && !args.flag("force")) {
      throw Error("tune: '" + pack_path + "' exists; pass --force to overwrite it");
    }
    if (options.resume && options.log_path.empty()) throw Error("tune: --resume needs --log");
    // The terminal's height, asked at every redraw (0 when unknown: the whole table).
    const auto terminal_rows = [] {
      struct winsize size {};
      return ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 ? static_cast<int>(size.ws_row) : 0;
    };
    tune::ProgressDisplay display(
        isatty(STDERR_FILENO) != 0,
        [](const std::string& text) {
          std::fputs(text.c_str(), stderr);
          std::fflush(stderr);
        },
        terminal_rows);
    options.progress = [&](const std::string& line) { display.event(line); };
    const auto update = [&](const tune::TuneReport& r, const tune::TuneStatus& s) {
      display.update(r, s);
    };
    const tune::TuneReport report = tune::run_tuning(options, update);
    // With --json the report is printed last, once nothing can fail: an error is then the one
    // object on stdout instead of a second one after the report.
    if (!args.flag("json")) std::printf("\n%s", tune::format_summary(report).c_str());

    tune_clml_targets(options);

    if (!pack_path.empty()) {
      std::string plugin;
      for (const tune::TaskResult& t : report.tasks) {
        if (plugin.empty()) plugin = t.task.plugin;
        if (t.task.plugin != plugin) {
          throw Error("tune: --pack holds one plugin's configs; tune one plugin target at a time");
        }
      }
      if (plugin.empty()) throw Error("tune: nothing was tuned, no pack written");
      const Pack pack = tune::pack_from_records(report.records, plugin, report.devices.at(plugin),
                                                command_line(argc, argv));
      if (pack.entries.empty()) throw Error("tune: no successful measurement, no pack written");
      write_file_atomic(pack_path, serialize_validated_pack(pack, pack_path), args.flag("force"));
      if (!args.flag("json")) {
        std::printf("wrote %s (%zu entries)\n", pack_path.c_str(), pack.entries.size());
      }
    }
    if (args.flag("json")) std::printf("%s", report_json(report, options).c_str());
    return 0;
  } catch (const std::exception& e) {
    return report_error("tune", e.what());
  }
}

}  // namespace tessera::cli
