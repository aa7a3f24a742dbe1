// Tuner tests. Oracles: a synthetic cost function with a known optimum, hand-built log records,
// the reference kernel (through the worker's check and a Session run with the tuned config), and
// serial mode for parallel compilation (same records; compile counts from the test plugin), and
// one-child-per-candidate isolation for persistent workers (same records, statuses and log lines,
// with faults injected mid-stream; worker processes counted through the test plugin).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "builder.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/pack.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/tuner.hpp"
#include "test_requirements.hpp"
#include "tune_test_util.hpp"

namespace tessera::tune {
namespace {

using test::kTessera;
using test::relu_model;
using test::temp_path;
using test::worker_command;

// The shipped worker with faults injected (fault_worker.cpp), chosen by TESSERA_TEST_WORKER_FAULT.
const char* kFaultWorker = TESSERA_TUNE_FAULT_WORKER;

SearchSpace synthetic_space() {
  std::vector<int64_t> v;
  for (int i = 0; i < 12; ++i) v.push_back(i);
  ScheduleSpace a{"a", {{"x", v}, {"y", v}, {"z", v}}, {0, 0, 0}};
  ScheduleSpace b{"b", {{"x", v}, {"y", v}}, {0, 0}};
  return SearchSpace({a, b});
}

// Smooth bowl with its minimum at schedule a, (9, 3, 7).
double synthetic_cost(const SearchSpace& space, const Point& p) {
  const auto kv = space.knobs(p);
  double c = p.schedule == 0 ? 10.0 : 40.0;
  const int64_t target[3] = {9, 3, 7};
  for (size_t k = 0; k < kv.size(); ++k) {
    c += std::pow(static_cast<double>(kv[k].second - target[k]), 2);
  }
  return c;
}

// Trials until the optimum is measured (capped).
int trials_to_optimum(const std::string& kind, uint64_t seed,
                      std::shared_ptr<CostModelData> shared = nullptr) {
  SearchSpace space = synthetic_space();
  auto s = make_searcher(kind, space, seed, {1.0f}, std::move(shared));
  int trials = 0;
  while (trials < 1000) {
    const auto batch = s->propose(8);
    if (batch.empty()) break;
    for (const Point& p : batch) {
      ++trials;
      const double c = synthetic_cost(space, p);
      s->update(p, c);
      if (c == 10.0) return trials;
    }
  }
  return trials;
}

TEST(TuneSearch, GridCoversTheSpaceAndEveryProposalIsValid) {
  SearchSpace space = synthetic_space();
  EXPECT_EQ(space.size(), 12u * 12 * 12 + 12 * 12);
  for (const std::string kind : {"grid", "random", "ga"}) {
    auto s = make_searcher(kind, space, 3);
    std::set<Point> seen;
    for (int round = 0; round < 40; ++round) {
      for (const Point& p : s->propose(50)) {
        EXPECT_TRUE(space.valid(p)) << kind;
        EXPECT_TRUE(seen.insert(p).second) << kind << " proposed a point twice";
        s->update(p, synthetic_cost(space, p));
      }
    }
    EXPECT_FALSE(seen.empty()) << kind << " proposed nothing: nothing was checked";
    if (kind == "grid") {
      EXPECT_EQ(seen.size(), space.size());
      EXPECT_TRUE(s->propose(1).empty());
    }
  }
}

int random_trials_over_4_seeds() {
  int random = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) random += trials_to_optimum("random", seed);
  return random;
}

TEST(TuneSearch, GeneticFindsTheOptimumInFewerTrialsThanRandom) {
  const int random = random_trials_over_4_seeds();
  int ga = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) ga += trials_to_optimum("ga", seed);
  EXPECT_LT(ga, random);
  std::printf("trials to optimum over 4 seeds: random %d, ga %d\n", random, ga);
}

TEST(TuneSearch, XgbFindsTheOptimumInFewerTrialsThanRandom) {
  std::string why;
  if (!xgboost_available(&why)) TESSERA_SKIP_WITHOUT("libxgboost (libxgboost-dev)") << why;
  const int random = random_trials_over_4_seeds();
  int xgb = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) xgb += trials_to_optimum("xgb", seed);
  EXPECT_LT(xgb, random);
  std::printf("trials to optimum over 4 seeds: random %d, xgb %d\n", random, xgb);
}

TEST(TuneSearch, XgbCarriesWhatOneTaskLearnedOverToTheNextTaskOfTheSameOp) {
  std::string why;
  if (!xgboost_available(&why)) TESSERA_SKIP_WITHOUT("libxgboost (libxgboost-dev)") << why;
  // Task A of an op measures 48 points of the bowl; task B (same op, same workload features,
  // same optimum) then ranks its very first proposals with the model A's data trained.
  int fresh = 0, carried = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    fresh += trials_to_optimum("xgb", seed);
    auto data = std::make_shared<CostModelData>();
    {
      SearchSpace space = synthetic_space();
      auto a = make_searcher("random", space, seed + 100);
      for (const Point& p : a->propose(48)) {
        // What task A's xgb searcher would have stored: its features and log(cost).
        std::vector<float> row = space.features(p);
        row.push_back(1.0f);
        data->x.push_back(row);
        data->y.push_back(static_cast<float>(std::log(synthetic_cost(space, p))));
      }
    }
    carried += trials_to_optimum("xgb", seed, data);
  }
  EXPECT_LT(carried, fresh);
  std::printf("xgb trials to optimum over 4 seeds: fresh %d, after a task of the same op %d\n",
              fresh, carried);
}

TEST(TuneLog, RoundTripAndBest) {
  LogRecord a{"Conv|in=1x3x8x8",
              "mali",
              "dev \"x\"",
              "conv2d.nchw.direct",
              "ok",
              "",
              "t1",
              {{"wg_x", 16}, {"outputs_per_item", 4}},
              12.5,
              "",
              "",
              "",
              3};
  LogRecord b = a;
  b.median_us = 9.25;
  b.knobs[0].second = 8;
  LogRecord c = a;
  c.status = "crash";
  c.median_us = 0;
  c.error = "worker killed by signal 6";
  const auto pa = parse_log_line(to_json_line(a));
  ASSERT_TRUE(pa);
  EXPECT_EQ(pa->workload, a.workload);
  EXPECT_EQ(pa->device, a.device);
  EXPECT_EQ(pa->knobs, a.knobs);
  EXPECT_DOUBLE_EQ(pa->median_us, 12.5);
  EXPECT_EQ(pa->weight, 3);
  EXPECT_FALSE(parse_log_line("{\"workload\": \"Conv|in=1x3"));  // truncated by a crash
  const auto best =
      best_records({*pa, *parse_log_line(to_json_line(b)), *parse_log_line(to_json_line(c))});
  ASSERT_EQ(best.size(), 1u);
  EXPECT_DOUBLE_EQ(best.begin()->second.median_us, 9.25);
  EXPECT_EQ(best.begin()->second.knobs[0].second, 8);
}

// An ok search trial of the im2col schedule on cpu with knob mc, for the log tests.
LogRecord conv_trial(int64_t mc, double us) {
  return LogRecord{"Conv|in=1x3x8x8",
                   "cpu",
                   "dev",
                   "conv2d.nchw.im2col_gemm",
                   "ok",
                   "",
                   "t",
                   {{"mc", mc}},
                   us,
                   "",
                   "",
                   ""};
}

// Names with quotes, backslashes, newlines, tabs and other control characters (an error text
// from a driver, a device name with a quote) come back from the log's JSON unchanged: the writer
// escapes them as tessera/json.hpp does and the reader decodes every escape it writes.
TEST(TuneLog, EscapedTextSurvivesTheLog) {
  LogRecord r = conv_trial(8, 1.0);
  r.device = "dev \"quoted\" \\ path";
  r.status = "error";
  r.error = "line one\nline two\ttab \x01\x1f end";
  const std::string line = to_json_line(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);  // one record per line
  const auto parsed = parse_log_line(line);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->device, r.device);
  EXPECT_EQ(parsed->error, r.error);
  EXPECT_FALSE(parse_log_line("{\"workload\": \"bad \\q escape\"}"));
}

// Finalists measured again ("verify" records) decide: a config whose single search trial was the
// fastest loses to one whose median over the rounds is lower; workloads without verify records
// keep their fastest trial. The stage survives the log's JSON.
TEST(TuneLog, VerifiedMediansDecideOverTheFastestTrial) {
  LogRecord lucky = conv_trial(48, 5.0);
  LogRecord steady = lucky;
  steady.knobs[0].second = 96;
  steady.median_us = 6.0;
  LogRecord other = lucky;
  other.workload = "Conv|in=1x3x9x9";
  other.median_us = 4.0;
  std::vector<LogRecord> records = {lucky, steady, other};
  auto verify = [&](const LogRecord& r, double us) {
    LogRecord v = r;
    v.stage = "verify";
    v.median_us = us;
    const auto parsed = parse_log_line(to_json_line(v));
    EXPECT_TRUE(parsed && parsed->stage == "verify");
    records.push_back(*parsed);
  };
  for (const double us : {9.0, 11.0, 10.0}) verify(lucky, us);  // median 10
  for (const double us : {7.0, 30.0, 8.0}) verify(steady, us);  // median 8: one slow round
  LogRecord failed = lucky;
  failed.stage = "verify";
  failed.status = "timeout";
  records.push_back(failed);
  const auto best = best_records(records);
  ASSERT_EQ(best.size(), 2u);
  const LogRecord& conv8 = best.at({"cpu", "Conv|in=1x3x8x8"});
  EXPECT_EQ(conv8.knobs[0].second, 96);
  EXPECT_DOUBLE_EQ(conv8.median_us, 8.0);
  EXPECT_EQ(conv8.stage, "verify");
  EXPECT_DOUBLE_EQ(best.at({"cpu", "Conv|in=1x3x9x9"}).median_us, 4.0);
  EXPECT_TRUE(parse_log_line(to_json_line(lucky))->stage.empty());
}

// Finalists within the noise of the fastest are ties: the default wins a tie, else the first by
// config text, whichever ran faster this time, so a re-tune writes the same pack. The noise is
// the larger median absolute deviation of the two configs' rounds (at most 5% of the fastest
// median), or 0.125% of the model's latency over the workload's weight where that is more. A
// config outside that band never wins on its text or as the default.
TEST(TuneLog, VerifiedTiesGoToTheDefaultThenTheFirstConfigSoARetuneWritesTheSamePack) {
  auto finalist = [&](int64_t mc, std::vector<double> rounds, bool is_default = false,
                      const std::string& workload = "Conv|in=1x3x8x8", int weight = 1) {
    std::vector<LogRecord> out;
    for (const double us : rounds) {
      LogRecord r = conv_trial(mc, us);
      r.workload = workload;
      r.stage = "verify";
      r.is_default = is_default;
      r.weight = weight;
      // Through the log's JSON, as `tessera pack build` reads it.
      out.push_back(*parse_log_line(to_json_line(r)));
    }
    return out;
  };
  auto pick = [&](std::vector<std::vector<LogRecord>> groups) {
    std::vector<LogRecord> records;
    for (auto& g : groups) records.insert(records.end(), g.begin(), g.end());
    return best_records(records).at({"cpu", "Conv|in=1x3x8x8"}).knobs[0].second;
  };
  // mc=16's rounds deviate 0.2 us from their median of 10: mc=128 at 10.15 is a tie, and
  // "mc=128" < "mc=16" as text wins in either order of speed.
  EXPECT_EQ(pick({finalist(16, {10.0, 10.3, 9.8}), finalist(128, {10.15, 10.15, 10.15})}), 128);
  EXPECT_EQ(pick({finalist(16, {10.15, 10.15, 10.15}), finalist(128, {10.0, 10.3, 9.8})}), 128);
  // Steady rounds (no deviation): 1% slower is measurably slower, so the fastest wins; the
  // noise of either config widens the band.
  EXPECT_EQ(pick({finalist(16, {10.0, 10.0, 10.0}), finalist(128, {10.1, 10.1, 10.1})}), 16);
  // The default wins a tie against an earlier config text, but not when measurably slower.
  EXPECT_EQ(pick({finalist(16, {10.0, 10.3, 9.8}, true), finalist(128, {9.9, 9.9, 9.9})}), 16);
  EXPECT_EQ(pick({finalist(16, {10.5, 10.5, 10.5}, true), finalist(128, {10.0, 10.0, 10.0})}), 128);
  // A noisy config (rounds 9..11: deviation 1 us) widens the band only to 5% (0.5 us).
  EXPECT_EQ(pick({finalist(16, {9.0, 10.0, 11.0}), finalist(128, {10.4, 10.4, 10.4})}), 128);
  EXPECT_EQ(pick({finalist(16, {9.0, 10.0, 11.0}), finalist(128, {10.6, 10.6, 10.6})}), 16);
  EXPECT_EQ(pick({finalist(16, {10.0, 10.0, 10.0}), finalist(128, {9.6, 10.6, 11.6})}), 16);
  // Beside a 1000 us workload, saving 0.5 us (5%) on this one is 0.05% of the model: the default
  // stays. Beside one that occurs twice as 100 us, the model is 210 us and the same saving is
  // 0.24% of it: the faster config wins.
  const auto big = [&](double us, int weight) {
    return finalist(8, {us, us, us}, false, "Conv|in=1x3x64x64", weight);
  };
  EXPECT_EQ(pick({finalist(16, {10.5, 10.5, 10.5}, true), finalist(128, {10.0, 10.0, 10.0}),
                  big(1000, 1)}),
            16);
  EXPECT_EQ(pick({finalist(16, {10.5, 10.5, 10.5}, true), finalist(128, {10.0, 10.0, 10.0}),
                  big(100, 2)}),
            128);
  // The line lies at 0.125% of the model (here 1010 us: 1.2625 us).
  EXPECT_EQ(pick({finalist(16, {11.2, 11.2, 11.2}, true), finalist(128, {10.0, 10.0, 10.0}),
                  big(1000, 1)}),
            16);
  EXPECT_EQ(pick({finalist(16, {11.35, 11.35, 11.35}, true), finalist(128, {10.0, 10.0, 10.0}),
                  big(1000, 1)}),
            128);
  // Occurring 10 times beside the 1000 us one, it saves 10 x 0.5 us, 0.5% of the model: the
  // faster config wins.
  EXPECT_EQ(pick({finalist(16, {10.5, 10.5, 10.5}, true, "Conv|in=1x3x8x8", 10),
                  finalist(128, {10.0, 10.0, 10.0}, false, "Conv|in=1x3x8x8", 10), big(1000, 1)}),
            128);
}

std::string tiny_conv_model() {
  const std::string path =
      (std::filesystem::temp_directory_path() / "tessera_tune_tiny_conv.onnx").string();
  zoo::detail::ModelBuilder b("tiny", 5);
  auto x = b.input("x", {1, 3, 12, 12});
  zoo::detail::ConvSpec spec;
  spec.channels = 8;
  spec.kernel = {3, 3};
  spec.pad = {1, 1};
  spec.bias = true;
  auto y = b.conv(x, "conv1", spec);
  zoo::detail::ConvSpec pw;
  pw.channels = 4;
  auto z = b.conv(y, "conv2", pw);
  b.output(z);
  std::ofstream(path, std::ios::binary) << b.model().SerializeAsString();
  return path;
}

TEST(TuneWorker, CrashAndHangAreClassifiedAndTuningContinues) {
  MeasureRequest req;
  req.model = "/nonexistent.onnx";
  req.node = "n";
  req.target = "mali:any";
  req.timeout_s = 2;
  setenv("TESSERA_TEST_WORKER_FAULT", "crash", 1);
  EXPECT_EQ(measure(worker_command(kFaultWorker), req).status, "crash");
  // The hang comes after the worker's first phase marker, so the candidate's own 2 s timeout
  // (not the wider start-up allowance) is what ends it.
  setenv("TESSERA_TEST_WORKER_FAULT", "hang", 1);
  const auto t0 = std::chrono::steady_clock::now();
  const MeasureResult hung = measure(worker_command(kFaultWorker), req);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(hung.status, "timeout");
  EXPECT_NE(hung.error.find("exceeded 2.0"), std::string::npos) << hung.error;
  // The timeout is honoured (it was not ended early); the message names which one ended it.
  EXPECT_GE(waited, 2.0);
  unsetenv("TESSERA_TEST_WORKER_FAULT");
  // A bad request is a compile-class failure, not a crash of the parent.
  const MeasureResult r = measure(worker_command(kTessera), req);
  EXPECT_EQ(r.status, "compile");
  EXPECT_NE(r.error.find("nonexistent"), std::string::npos) << r.error;
}

// How often each "mode=M block=B" candidate was compiled, from the test plugin's side channel.
std::map<std::string, int> compile_counts(const std::string& path) {
  std::map<std::string, int> counts;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) counts[line.substr(0, line.find(" pid="))]++;
  return counts;
}

// The processes other than this one (the workers) that compiled candidates.
std::set<std::string> worker_pids(const std::string& path) {
  std::set<std::string> pids;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const std::string pid = line.substr(line.find(" pid=") + 5);
    if (pid != std::to_string(getpid())) pids.insert(pid);
  }
  return pids;
}

// Tunes the one Relu of relu_model() on the tunetest plugin over its whole grid: 6 configs, or
// with `faults` 14 (modes 3, 4, 5, 6 crash at run time, hang (block 1), crash in compile, fail at
// run time).
TuneReport tune_relu(int compile_jobs, const std::string& compile_log,
                     const std::string& isolation = "worker", bool faults = false,
                     const std::string& log = "",
                     const WorkerCommand& worker = worker_command(kTessera)) {
  setenv("TESSERA_PLUGIN_PATH", TESSERA_TUNE_TEST_PLUGIN_DIR, 1);
  setenv("TESSERA_TUNETEST_LOG", compile_log.c_str(), 1);
  if (faults) setenv("TESSERA_TUNETEST_FAULTS", "1", 1);
  std::filesystem::remove(compile_log);
  if (!log.empty()) std::filesystem::remove(log);
  TuneOptions o;
  o.model = relu_model();
  o.targets = {"tunetest", "reference"};
  o.trials = faults ? 14 : 6;
  o.tuner = "grid";
  o.batch = 16;  // after the default, the other configs are one batch
  o.repeats = 1;
  o.timeout_s = 6;
  o.worker_command = worker;
  o.compile_jobs = compile_jobs;
  o.isolation = isolation;
  o.log_path = log;
  TuneReport report = run_tuning(o);
  unsetenv("TESSERA_TUNETEST_FAULTS");
  unsetenv("TESSERA_TUNETEST_LOG");
  unsetenv("TESSERA_PLUGIN_PATH");
  return report;
}

// The test plugin's failures as the worker reports them (PluginRegion's messages).
const std::string kNeverCompiles =
    "compile: relu.test mode 2 never compiles (status " + std::to_string(TSR_COMPILE_FAILED) + ")";
const std::string kFailsAtRunTime = "run: plugin 'tunetest' failed to execute a region (status " +
                                    std::to_string(TSR_ERROR) +
                                    "): relu.test mode 6 fails at run time";

std::string outcome(const LogRecord& r) {
  std::string s = r.schedule;
  for (const auto& [name, value] : r.knobs) s += " " + name + "=" + std::to_string(value);
  return s + " " + r.status + (r.status == "ok" ? "" : ": " + r.error);
}

// What run_tuning throws for this worker command ("" when it tunes).
std::string worker_command_error(const WorkerCommand& worker) {
  try {
    tune_relu(1, temp_path("command_compiles.txt"), "worker", false, "", worker);
  } catch (const Error& e) {
    unsetenv("TESSERA_TUNETEST_LOG");
    unsetenv("TESSERA_PLUGIN_PATH");
    return e.what();
  }
  return "";
}

TEST(TuneWorker, MissingOrFailingWorkerCommandEndsTheRunNamingIt) {
  EXPECT_NE(worker_command_error({}).find("no worker command"), std::string::npos);
  const std::string missing = worker_command_error({"/nonexistent/tessera", "tune", "--worker"});
  EXPECT_NE(missing.find("worker command '/nonexistent/tessera tune --worker': "
                         "'/nonexistent/tessera' does not exist"),
            std::string::npos)
      << missing;
  const std::string directory = worker_command_error({"/tmp", "tune", "--worker"});
  EXPECT_NE(directory.find("'/tmp' is not a regular file"), std::string::npos) << directory;
  // A program that is no worker (here: the fault worker's usage error) ends before it says
  // "ready": one error with its exit code and stderr, not a failed run per candidate.
  const std::string failing = worker_command_error({kFaultWorker, "serve"});
  EXPECT_NE(failing.find("worker command '" + std::string(kFaultWorker) +
                         " serve' exited with 2 before serving a request"),
            std::string::npos)
      << failing;
  EXPECT_NE(failing.find("usage:"), std::string::npos) << failing;
  // The same run with a working command tunes.
  EXPECT_EQ(worker_command_error(worker_command(kFaultWorker)), "");
}

TEST(TuneParallelCompile, BadCandidateIsClassifiedAndTheOthersMeasuredAsInSerialMode) {
  const std::string counts_path = temp_path("compiles.txt");
  const TuneReport serial = tune_relu(1, counts_path);
  const std::map<std::string, int> serial_counts = compile_counts(counts_path);
  ASSERT_EQ(serial.tasks.size(), 1u);
  // Grid order after the default (mode 0, block 1); mode 2 never compiles.
  std::vector<std::string> expected = {"relu.test mode=0 block=1 ok",
                                       "relu.test mode=0 block=2 ok",
                                       "relu.test mode=1 block=1 ok",
                                       "relu.test mode=1 block=2 ok",
                                       "relu.test mode=2 block=1 " + kNeverCompiles,
                                       "relu.test mode=2 block=2 " + kNeverCompiles};
  std::vector<std::string> got;
  for (const LogRecord& r : serial.records) got.push_back(outcome(r));
  EXPECT_EQ(got, expected);
  // Serially, each candidate is compiled once, by its measuring child; the default once more by
  // the Session that task extraction places the model with.
  EXPECT_EQ(serial_counts, (std::map<std::string, int>{{"mode=0 block=1", 2},
                                                       {"mode=0 block=2", 1},
                                                       {"mode=1 block=1", 1},
                                                       {"mode=1 block=2", 1},
                                                       {"mode=2 block=1", 1},
                                                       {"mode=2 block=2", 1}}));

  const TuneReport parallel = tune_relu(3, counts_path);
  got.clear();
  for (const LogRecord& r : parallel.records) got.push_back(outcome(r));
  EXPECT_EQ(got, expected);
  EXPECT_EQ(parallel.tasks[0].trials, 6);
  EXPECT_EQ(parallel.tasks[0].errors, (std::map<std::string, int>{{"compile", 2}}));
  EXPECT_GT(parallel.tasks[0].default_us, 0);
  // The default runs alone (a batch of one: no compile step; counted twice as above). The batch
  // of five: the good
  // candidates are compiled by the compile step and again (from the cache, where the plugin has
  // one) by the measuring child; the bad ones only by the compile step, whose verdict is final.
  EXPECT_EQ(compile_counts(counts_path), (std::map<std::string, int>{{"mode=0 block=1", 2},
                                                                     {"mode=0 block=2", 2},
                                                                     {"mode=1 block=1", 2},
                                                                     {"mode=1 block=2", 2},
                                                                     {"mode=2 block=1", 1},
                                                                     {"mode=2 block=2", 1}}));

  // Compiling children that crash end neither the batch nor the run: the measuring children
  // give the verdicts a serial run gives.
  setenv("TESSERA_TEST_WORKER_FAULT", "crash-compile", 1);
  const TuneReport crashing =
      tune_relu(3, counts_path, "worker", false, "", worker_command(kFaultWorker));
  unsetenv("TESSERA_TEST_WORKER_FAULT");
  got.clear();
  for (const LogRecord& r : crashing.records) got.push_back(outcome(r));
  EXPECT_EQ(got, expected);
}

TEST(TuneWorker, RequestsAndResultsRoundTripAsOneLine) {
  MeasureRequest req;
  req.model = "/tmp/a\tb\\c\nd.onnx";  // tab, backslash and newline survive
  req.node = "conv=1";
  req.target = "mali:any";
  req.schedule = "conv2d.nchw.direct";
  req.knobs = {{"wg_x", 16}, {"outputs_per_item", -4}};
  req.repeats = 7;
  req.compile_only = true;
  req.cache_dir = "/c";
  const std::string line = encode_request(req);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto back = decode_request(line);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->model, req.model);
  EXPECT_EQ(back->node, req.node);
  EXPECT_EQ(back->target, req.target);
  EXPECT_EQ(back->schedule, req.schedule);
  EXPECT_EQ(back->knobs, req.knobs);
  EXPECT_EQ(back->repeats, 7);
  EXPECT_TRUE(back->compile_only);
  EXPECT_EQ(back->cache_dir, "/c");
  MeasureResult res;
  res.status = "wrong-answer";
  res.median_us = 123.456789012;
  res.max_error = 0.5;
  res.error = "line1\nline2";
  const auto rback = decode_result(encode_result(res));
  ASSERT_TRUE(rback);
  EXPECT_EQ(rback->status, res.status);
  EXPECT_DOUBLE_EQ(rback->median_us, res.median_us);
  EXPECT_DOUBLE_EQ(rback->max_error, 0.5);
  EXPECT_EQ(rback->error, res.error);
  EXPECT_FALSE(decode_request(""));
  EXPECT_FALSE(decode_result("median_us=1"));  // no status
}

std::vector<std::string> outcomes(const std::vector<LogRecord>& records) {
  std::vector<std::string> out;
  for (const LogRecord& r : records) out.push_back(outcome(r));
  return out;
}

TEST(TuneIsolation, WorkerModeMeasuresLikeCandidateModeInOneProcess) {
  const std::string counts_path = temp_path("iso_compiles.txt");
  const std::string log = temp_path("iso.jsonl");
  const std::vector<std::string> expected = {"relu.test mode=0 block=1 ok",
                                             "relu.test mode=0 block=2 ok",
                                             "relu.test mode=1 block=1 ok",
                                             "relu.test mode=1 block=2 ok",
                                             "relu.test mode=2 block=1 " + kNeverCompiles,
                                             "relu.test mode=2 block=2 " + kNeverCompiles};
  const TuneReport candidate = tune_relu(1, counts_path, "candidate", false, log);
  EXPECT_EQ(outcomes(candidate.records), expected);
  EXPECT_EQ(outcomes(read_log(log)), expected);
  const std::map<std::string, int> candidate_counts = compile_counts(counts_path);
  EXPECT_EQ(worker_pids(counts_path).size(), 6u);  // a child per candidate

  const TuneReport worker = tune_relu(1, counts_path, "worker", false, log);
  EXPECT_EQ(outcomes(worker.records), expected);
  EXPECT_EQ(outcomes(read_log(log)), expected);
  EXPECT_EQ(compile_counts(counts_path), candidate_counts);
  EXPECT_EQ(worker_pids(counts_path).size(), 1u);  // one child served them all
  // With a compile step over 3 workers, in either isolation, the verdicts stay the same.
  EXPECT_EQ(outcomes(tune_relu(3, counts_path, "worker").records), expected);
  EXPECT_EQ(worker_pids(counts_path).size(), 3u);
  EXPECT_EQ(outcomes(tune_relu(3, counts_path, "candidate").records), expected);
  for (const LogRecord& r : worker.records) {
    if (r.status == "ok") {
      EXPECT_GT(r.median_us, 0);
    }
  }
}

TEST(TuneIsolation, CrashAndHangMidStreamAreClassifiedAndANewWorkerGoesOn) {
  const std::string counts_path = temp_path("fault_compiles.txt");
  const std::string log = temp_path("fault.jsonl");
  // Grid order of mode {0,3,1,4,2,5,6} x block {1,2}; the default (0, 1) first.
  const std::string run_crash =
      "run: worker killed by signal 6 while running: tunetest: mode 3 crashes at run time";
  const std::string hang = "timeout: worker exceeded 6.000000 s while running";
  const std::string compile_crash =
      "compile: worker killed by signal 6 while compiling: tunetest: mode 5 crashes in compile";
  const std::vector<std::string> expected = {"relu.test mode=0 block=1 ok",
                                             "relu.test mode=0 block=2 ok",
                                             "relu.test mode=3 block=1 " + run_crash,
                                             "relu.test mode=3 block=2 " + run_crash,
                                             "relu.test mode=1 block=1 ok",
                                             "relu.test mode=1 block=2 ok",
                                             "relu.test mode=4 block=1 " + hang,
                                             "relu.test mode=4 block=2 ok",
                                             "relu.test mode=2 block=1 " + kNeverCompiles,
                                             "relu.test mode=2 block=2 " + kNeverCompiles,
                                             "relu.test mode=5 block=1 " + compile_crash,
                                             "relu.test mode=5 block=2 " + compile_crash,
                                             "relu.test mode=6 block=1 " + kFailsAtRunTime,
                                             "relu.test mode=6 block=2 " + kFailsAtRunTime};
  const TuneReport worker = tune_relu(1, counts_path, "worker", true, log);
  EXPECT_EQ(outcomes(worker.records), expected);
  EXPECT_EQ(outcomes(read_log(log)), expected);
  ASSERT_EQ(worker.tasks.size(), 1u);
  EXPECT_EQ(worker.tasks[0].errors,
            (std::map<std::string, int>{{"run", 4}, {"timeout", 1}, {"compile", 4}}));
  // A worker ends at each of the 5 crashes and the hang, and after each reported run failure (its
  // driver context may be broken); the candidates after one are measured by the next:
  // (0,1) (0,2) (3,1) | (3,2) | (1,1) (1,2) (4,1) | (4,2) (2,1) (2,2) (5,1) | (5,2) | (6,1) |
  // (6,2).
  EXPECT_EQ(worker_pids(counts_path).size(), 7u);
  const std::map<std::string, int> worker_counts = compile_counts(counts_path);

  const TuneReport candidate = tune_relu(1, counts_path, "candidate", true, log);
  EXPECT_EQ(outcomes(candidate.records), expected);
  EXPECT_EQ(outcomes(read_log(log)), expected);
  EXPECT_EQ(candidate.tasks[0].errors, worker.tasks[0].errors);
  EXPECT_EQ(compile_counts(counts_path), worker_counts);
  EXPECT_EQ(worker_pids(counts_path).size(), 14u);
}

// The tiny conv model tuned on cpu (reference beside it) by the random tuner.
TuneOptions tiny_conv_on_cpu(int repeats) {
  TuneOptions o;
  o.model = tiny_conv_model();
  o.targets = {"cpu", "reference"};
  o.tuner = "random";
  o.repeats = repeats;
  o.worker_command = worker_command(kTessera);
  return o;
}

// Times in seconds since `since` of the measurements the tunetest plugin saw start in the
// workers (its TESSERA_TUNETEST_STARTS file: the steady clock, shared by every process of the
// machine; compiles in this process, where the tuner places the model, are no measurements).
std::vector<double> measurement_starts(const std::string& path,
                                       std::chrono::steady_clock::time_point since) {
  std::vector<double> out;
  std::ifstream in(path);
  long long ns = 0;
  int pid = 0;
  while (in >> ns >> pid) {
    if (pid == getpid()) continue;
    const std::chrono::steady_clock::time_point at{std::chrono::nanoseconds(ns)};
    out.push_back(std::chrono::duration<double>(at - since).count());
  }
  return out;
}

// A budget covers the whole run, verification included, with no trial cap. The verdicts are the
// budget's rules, whatever the machine's pace. The tunetest plugin's widened space (6,000 configs,
// every measurement at least 2 runs of 25 ms of sleep) takes minutes on any machine, so the budget
// is what stops the search, and never before half of it (the most the verification may be left).
// No measurement but the last one starts after the budget (the plugin logs when each starts), and
// the run ends after that one: within the longest measurement this run saw plus a whole one-trial
// run here (the worker's start and end), measured first. The verification measures every
// finalist in every round unless the budget ran out while it did.
TEST(TuneBudget, WholeRunWithVerificationEndsWithinTheBudget) {
  const std::string starts_path = temp_path("budget_starts.txt");
  setenv("TESSERA_PLUGIN_PATH", TESSERA_TUNE_TEST_PLUGIN_DIR, 1);
  setenv("TESSERA_TUNETEST_SLEEP_MS", "25", 1);
  setenv("TESSERA_TUNETEST_WIDE", "1000", 1);
  setenv("TESSERA_TUNETEST_STARTS", starts_path.c_str(), 1);
  TuneOptions o;
  o.model = relu_model();
  o.targets = {"tunetest"};
  o.tuner = "random";
  o.repeats = 1;
  o.compile_jobs = 1;  // every compile is a measurement's start
  o.worker_command = worker_command(kTessera);
  o.trials = 1;
  const auto t0 = std::chrono::steady_clock::now();
  run_tuning(o);
  const double one_trial_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.trials = 100000000;
  o.budget_s = 6.0;
  o.verify = 2;
  std::filesystem::remove(starts_path);
  const auto t1 = std::chrono::steady_clock::now();
  const TuneReport report = run_tuning(o);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const std::vector<double> starts = measurement_starts(starts_path, t1);
  for (const char* name : {"TESSERA_PLUGIN_PATH", "TESSERA_TUNETEST_SLEEP_MS",
                           "TESSERA_TUNETEST_WIDE", "TESSERA_TUNETEST_STARTS"}) {
    unsetenv(name);
  }
  int searched = 0, verified = 0;
  for (const LogRecord& r : report.records) (r.stage == "verify" ? verified : searched)++;
  ASSERT_EQ(report.tasks.size(), 1u);
  EXPECT_EQ(report.tasks[0].space_size, 6000u);
  ASSERT_EQ(starts.size(), report.records.size());  // one start per measurement
  ASSERT_FALSE(starts.empty());
  double longest = 0;
  for (size_t i = 1; i < starts.size(); ++i) longest = std::max(longest, starts[i] - starts[i - 1]);
  const auto late =
      std::count_if(starts.begin(), starts.end(), [&](double s) { return s > o.budget_s; });
  std::printf(
      "budget %.1f s: took %.2f s (one trial %.2f s, longest measurement %.2f s), %d trials, %d "
      "verifications, %ld started after the budget\n",
      o.budget_s, took, one_trial_s, longest, searched, verified, static_cast<long>(late));
  EXPECT_LT(static_cast<size_t>(searched), report.tasks[0].space_size);
  EXPECT_GE(took, 0.5 * o.budget_s) << "stopped well before the budget";
  EXPECT_LE(late, 1) << "measurements started after the budget";
  EXPECT_LE(took, starts.back() + longest + one_trial_s);
  // The finalists (the 2 fastest and the default, which may be one of them) each in every round,
  // unless the budget ended the run.
  std::map<std::string, int> rounds;  // per finalist config
  for (const LogRecord& r : report.records) {
    if (r.stage != "verify") continue;
    std::string config = r.schedule;
    for (const auto& [name, value] : r.knobs) config += " " + name + "=" + std::to_string(value);
    rounds[config]++;
  }
  EXPECT_GT(verified, 0) << "the search left the verification no time";
  EXPECT_LE(rounds.size(), static_cast<size_t>(o.verify + 1));
  bool every_round = rounds.size() >= 2;
  for (const auto& [config, n] : rounds) {
    EXPECT_LE(n, o.verify_rounds) << config;
    every_round = every_round && n == o.verify_rounds;
  }
  if (!every_round) {
    EXPECT_GE(took, o.budget_s) << "the verification stopped before the budget";
  }
  for (const LogRecord& r : report.records) EXPECT_EQ(r.weight, 1) << r.workload;
}

// The even scheduler gives each task its share of the trials up front: with the random tuner and
// a fixed seed, runs with other batch sizes (compile jobs) measure exactly the same candidates,
// and each task exactly its share.
TEST(TuneScheduler, EvenSharesMeasureTheSameCandidatesWhateverTheBatches) {
  if (!PluginHost().find("cpu")) {
    TESSERA_SKIP_WITHOUT("the cpu plugin") << "not built (tessera info)";
  }
  TuneOptions o = tiny_conv_on_cpu(1);
  o.scheduler = "even";
  o.trials = 9;
  auto searched = [](const TuneReport& r) {
    std::map<std::string, std::multiset<std::string>> configs;  // per workload
    for (const LogRecord& rec : r.records) {
      if (!rec.stage.empty()) continue;
      std::string c = rec.schedule;
      for (const auto& [name, value] : rec.knobs) c += " " + name + "=" + std::to_string(value);
      configs[rec.workload].insert(c);
    }
    return configs;
  };
  o.compile_jobs = 1;
  const TuneReport one = run_tuning(o);
  o.compile_jobs = 3;
  const TuneReport three = run_tuning(o);
  ASSERT_EQ(one.tasks.size(), 2u);
  EXPECT_EQ(searched(one), searched(three));
  // 9 trials: the 2 defaults, then 7 left split 4 + 3 in task order.
  const auto configs = searched(one);
  EXPECT_EQ(configs.at(one.tasks[0].task.workload).size(), 1u + 4u);
  EXPECT_EQ(configs.at(one.tasks[1].task.workload).size(), 1u + 3u);
  o.scheduler = "fastest-first";
  EXPECT_THROW(run_tuning(o), Error);
}

TEST(TuneEndToEnd, TinyConvOnMaliAnyProducesAValidPackAndResumes) {
  const std::string model = tiny_conv_model();
  const std::string log =
      (std::filesystem::temp_directory_path() / "tessera_tune_e2e.jsonl").string();
  std::filesystem::remove(log);
  TuneOptions o;
  o.model = model;
  o.targets = {"mali:any", "reference"};
  o.trials = 8;
  o.tuner = "ga";
  o.log_path = log;
  o.repeats = 2;
  o.worker_command = worker_command(kTessera);
  // The one expected reason not to run: no OpenCL device for mali:any. Anything run_tuning throws
  // on a machine that has one is a tuner failure.
  {
    PluginHost host;
    const auto mali = host.find("mali");
    if (!mali) TESSERA_SKIP_WITHOUT("the mali plugin") << "not built or refused (tessera info)";
    if (mali->probe("any").empty()) {
      TESSERA_SKIP_WITHOUT("an OpenCL device") << "mali:any found none";
    }
  }
  const TuneReport report = run_tuning(o);
  ASSERT_EQ(report.tasks.size(), 2u) << "mali:any should take both Convs";
  int ok = 0;
  for (const LogRecord& r : report.records) {
    ok += r.status == "ok";
    EXPECT_TRUE(r.status == "ok") << r.status << ": " << r.error;  // wrong-answer would show
  }
  EXPECT_EQ(ok, 8);
  const Pack pack = parse_pack(
      serialize_pack(pack_from_records(report.records, "mali", report.devices.at("mali"), "test")),
      "mem");
  ASSERT_EQ(pack.entries.size(), 2u);
  for (const PackEntry& e : pack.entries) {
    const TaskResult* task = nullptr;
    for (const TaskResult& t : report.tasks) {
      if (t.task.workload == e.workload) task = &t;
    }
    ASSERT_NE(task, nullptr) << "pack key not a describe_node key: " << e.workload;
    SearchSpace space(task->task.schedules);
    std::vector<std::pair<std::string, int64_t>> kv;
    for (const Knob& k : e.knobs) kv.emplace_back(k.name, k.value);
    EXPECT_TRUE(space.find(e.schedule, kv)) << e.schedule;
  }
  // Verification: each task's 2 fastest configs and its default again, 4 rounds each; the
  // task's best is then a verified median, and the pack takes it.
  {
    TuneOptions v = o;
    v.log_path.clear();
    v.trials = 4;
    v.verify = 2;
    v.verify_rounds = 4;
    const TuneReport verified = run_tuning(v);
    std::map<std::string, int> rounds;  // per task workload
    for (const LogRecord& r : verified.records) {
      if (r.stage == "verify") ++rounds[r.workload];
    }
    ASSERT_EQ(verified.tasks.size(), 2u);
    for (const TaskResult& t : verified.tasks) {
      ASSERT_TRUE(t.best);
      EXPECT_EQ(t.best->stage, "verify");
      EXPECT_GT(rounds[t.task.workload], 0);
      EXPECT_EQ(rounds[t.task.workload] % v.verify_rounds, 0);
      EXPECT_LE(rounds[t.task.workload], 3 * v.verify_rounds);  // 2 finalists and the default
    }
  }
  // Resume: the logged configs are skipped, the best is restored, new trials are new configs.
  o.resume = true;
  o.trials = 2;
  const TuneReport again = run_tuning(o);
  EXPECT_EQ(again.records.size(), report.records.size() + 2);
  std::set<std::string> configs;
  for (const LogRecord& r : again.records) {
    std::string c = r.workload + r.schedule;
    for (const auto& k : r.knobs) c += k.first + std::to_string(k.second);
    EXPECT_TRUE(configs.insert(c).second) << "config measured twice: " << c;
  }
  ASSERT_EQ(again.tasks.size(), report.tasks.size());
  for (size_t t = 0; t < again.tasks.size(); ++t) {
    ASSERT_TRUE(again.tasks[t].best);
    EXPECT_LE(again.tasks[t].best->median_us, report.tasks[t].best->median_us);
  }
}

}  // namespace
}  // namespace tessera::tune
