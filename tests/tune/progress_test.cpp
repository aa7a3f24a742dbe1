// Tests of the tuner's pure parts. Oracles: hand-computed FLOP counts, the scheduler's choice
// worked out by hand from Ansor's gradient, and the exact text of the progress formatter for a
// hand-built report (column widths as printf lays them out).
#include <gtest/gtest.h>

#include <limits>

#include "tessera/tuner.hpp"

namespace tessera::tune {
namespace {

ValueId add(Graph& g, const std::string& name, Shape shape, bool known = true) {
  Value v;
  v.name = name;
  v.dtype = DType::kFloat32;
  v.shape = std::move(shape);
  v.shape_known = known;
  return g.add_value(std::move(v));
}

Node node(const std::string& op, std::vector<ValueId> in, ValueId out) {
  Node n;
  n.name = op;
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = {out};
  return n;
}

TEST(TuneFlops, ConvGemmMatMulFromShapesOthersZero) {
  Graph g;
  // Grouped conv: 8 channels in 2 groups -> weights [16, 4, 3, 3].
  Node conv = node("Conv", {add(g, "x", {1, 8, 10, 10}), add(g, "w", {16, 4, 3, 3})},
                   add(g, "y", {1, 16, 8, 8}));
  conv.attrs.set("group", int64_t{2});
  EXPECT_DOUBLE_EQ(node_flops(g, conv), 2.0 * 1 * 16 * 8 * 8 * 4 * 3 * 3);
  // Gemm with transA: A is [K=5, M=7], B [5, 3], Y [7, 3].
  Node gemm = node("Gemm", {add(g, "a", {5, 7}), add(g, "b", {5, 3})}, add(g, "c", {7, 3}));
  gemm.attrs.set("transA", int64_t{1});
  EXPECT_DOUBLE_EQ(node_flops(g, gemm), 2.0 * 7 * 3 * 5);
  // Batched MatMul: [2, 4, 6] x [6, 3] -> [2, 4, 3].
  Node mm = node("MatMul", {add(g, "p", {2, 4, 6}), add(g, "q", {6, 3})}, add(g, "r", {2, 4, 3}));
  EXPECT_DOUBLE_EQ(node_flops(g, mm), 2.0 * 2 * 4 * 3 * 6);
  EXPECT_DOUBLE_EQ(node_flops(g, node("Relu", {add(g, "s", {4})}, add(g, "t", {4}))), 0.0);
  Node unknown =
      node("MatMul", {add(g, "u", {2, 6}), add(g, "v", {6, 3})}, add(g, "o", {}, /*known=*/false));
  EXPECT_DOUBLE_EQ(node_flops(g, unknown), 0.0);
}

TEST(TuneScheduler, PrefersTheTaskStillImprovingOverTheStuckOne) {
  const double inf = std::numeric_limits<double>::infinity();
  // A: 10 trials stuck at 100 us: 0.2 * 0 + 0.8 * 100 / 10 = 8.
  SchedulerTask a{1, std::vector<double>(10, 100.0), true};
  // B: 80 -> 50 over its last 4 trials: 0.2 * 30 / 4 + 0.8 * 50 / 5 = 9.5.
  SchedulerTask b{1, {80, 80, 70, 60, 50}, true};
  EXPECT_EQ(pick_task({a, b}, 4), 1);
  a.weight = 2;  // 16 > 9.5
  EXPECT_EQ(pick_task({a, b}, 4), 0);
  // Nothing ok yet: first for 2 x window trials, then behind everything available.
  SchedulerTask failing{1, std::vector<double>(7, inf), true};
  EXPECT_EQ(pick_task({a, b, failing}, 4), 2);
  failing.best_after.push_back(inf);
  EXPECT_EQ(pick_task({a, b, failing}, 4), 0);
  a.available = b.available = false;
  EXPECT_EQ(pick_task({a, b, failing}, 4), 2);
  failing.available = false;
  EXPECT_EQ(pick_task({a, b, failing}, 4), -1);
}

TuneReport sample_report() {
  TuneReport report;
  TaskResult conv;
  conv.task.id = 0;
  conv.task.plugin = "mali";
  conv.task.op = "Conv";
  conv.task.weight = 2;
  conv.task.flops = 2e6;
  conv.task.workload = "Conv|w0";
  conv.space_size = 100;
  conv.trials = 8;
  conv.default_us = 20;
  LogRecord best;
  best.schedule = "conv.a";
  best.knobs = {{"x", 4}};
  best.median_us = 10;
  best.status = "ok";
  conv.best = best;
  conv.errors = {{"timeout", 2}, {"compile", 1}};
  TaskResult relu;
  relu.task.id = 1;
  relu.task.plugin = "mali";
  relu.task.op = "Relu";
  relu.task.weight = 1;
  relu.task.workload = "relu|w1";
  relu.space_size = 6;
  relu.trials = 6;
  relu.finished = true;
  relu.errors = {{"crash", 6}};
  report.tasks = {conv, relu};
  report.estimated_total_us = 20;  // 2 x 10; relu has nothing ok
  report.estimated_default_total_us = 40;
  return report;
}

TuneStatus sample_status() {
  TuneStatus s;
  s.used = 14;
  s.trials = 20;
  s.current = 0;
  s.batch_end = true;
  s.elapsed_s = 3.2;
  return s;
}

const char* kTable =
    "ID   plugin   op             progress     latency us   GFLOPS trials weight\n"
    "0*   mali     Conv           [###-----]         10.0   200.00      8      2\n"
    "1    mali     Relu           [  done  ]            -        -      6      1\n"
    "estimated total latency: 20.0 us (default 40.0 us, 2.00x)   trials 14/20   3 s\n";

TEST(TuneProgress, BarTableLineAndSummaryText) {
  EXPECT_EQ(progress_bar(0.4, 8), "[###-----]");  // 3.2 cells round to 3
  EXPECT_EQ(progress_bar(1.5, 4), "[####]");
  EXPECT_EQ(progress_bar(-1, 2), "[--]");
  const TuneReport report = sample_report();
  EXPECT_EQ(format_progress_table(report, sample_status()), kTable);
  EXPECT_EQ(format_progress_line(report, sample_status()),
            "[trials 14/20, 3 s] task 0 mali Conv: 8 trials, best 10.0 us, 200.00 GFLOPS; "
            "estimated total latency: 20.0 us (default 40.0 us, 2.00x)");
  EXPECT_EQ(format_summary(report),
            "ID   plugin   op             weight  default us    best us speed-up trials  errors\n"
            "0    mali     Conv                2        20.0       10.0    2.00x      8  "
            "compile:1 timeout:2\n"
            "1    mali     Relu                1           -          -        -      6  crash:6\n"
            "estimated total latency of tuned nodes: 40.0 us before, 20.0 us after (2.00x)\n"
            "best config per task:\n"
            "0    conv.a{x=4}\n"
            "     Conv|w0\n"
            "1    - (nothing ok)\n"
            "     relu|w1\n");
}

TEST(TuneProgress, PlainDisplayPrintsLinesAtBatchEndsWithoutControlCharacters) {
  std::string out;
  ProgressDisplay display(false, [&](const std::string& s) { out += s; });
  TuneStatus mid = sample_status();
  mid.batch_end = false;
  display.update(sample_report(), mid);
  EXPECT_EQ(out, "");
  display.event("task 0: mali Conv|w0 x2 (100 configs)");
  display.update(sample_report(), sample_status());
  EXPECT_EQ(out, "task 0: mali Conv|w0 x2 (100 configs)\n" +
                     format_progress_line(sample_report(), sample_status()) + "\n");
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\r'), std::string::npos);
}

TEST(TuneProgress, TerminalDisplayRedrawsTheTableBelowEvents) {
  std::string out;
  ProgressDisplay display(true, [&](const std::string& s) { out += s; });
  display.update(sample_report(), sample_status());
  EXPECT_EQ(out, kTable);
  out.clear();
  // An event erases the 4 table lines, prints itself, then the table again.
  display.event("  task 0 conv.a{x=8}: timeout");
  EXPECT_EQ(out, std::string("\r\x1b[4A\x1b[J  task 0 conv.a{x=8}: timeout\n") + kTable);
  out.clear();
  TuneStatus done = sample_status();
  done.finished = true;
  display.update(sample_report(), done);
  EXPECT_EQ(out, std::string("\r\x1b[4A\x1b[J") + kTable);
  out.clear();
  display.event("after");  // the final table stays
  EXPECT_EQ(out, "after\n");
}

// A table taller than the terminal cannot be redrawn in place (it scrolls, leaving copies): with
// the terminal's height known, the table keeps the current task and the unfinished tasks holding
// the most time, says how many it leaves out, and fits. Long op names are cut to their column.
TEST(TuneProgress, TallTableIsCutToTheTerminal) {
  TuneReport report;
  for (int i = 0; i < 30; ++i) {
    TaskResult t;
    t.task.id = i;
    t.task.plugin = "cpu";
    t.task.op = i == 7 ? "GroupNormalization" : "Conv";
    t.task.weight = 1;
    t.space_size = 100;
    t.trials = 3;
    t.default_us = 10.0 + i;  // later tasks hold more time
    t.finished = i == 29;     // ... but the last one is done
    report.tasks.push_back(t);
  }
  TuneStatus status = sample_status();
  status.current = 2;
  std::string out;
  ProgressDisplay display(true, [&](const std::string& s) { out += s; }, [] { return 12; });
  display.update(report, status);
  const auto lines = std::count(out.begin(), out.end(), '\n');
  EXPECT_EQ(lines, 10) << out;  // 12 rows, 2 kept free
  EXPECT_NE(out.find("\n2*   cpu"), std::string::npos) << out;   // the current task
  EXPECT_NE(out.find("\n28   cpu"), std::string::npos) << out;   // the most time left
  EXPECT_EQ(out.find("\n29   cpu"), std::string::npos) << out;   // finished: left out
  EXPECT_NE(out.find("... 23 more task(s) not shown"), std::string::npos) << out;
  // Without a height, or with room for all, the whole table.
  EXPECT_EQ(format_progress_table(report, status, 0).find("more task"), std::string::npos);
  EXPECT_NE(format_progress_table(report, status, 0).find("GroupNormaliz~ "), std::string::npos);
}

}  // namespace
}  // namespace tessera::tune
