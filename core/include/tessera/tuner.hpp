// libtessera-tune (target tessera::tune), the auto-tuner over libtessera: task extraction (which
// nodes of a model each target plugin runs, deduplicated by the plugin's workload key and weighted
// by occurrence), searchers over a plugin's knob spaces (random, grid, genetic, and a
// gradient-boosted-trees cost model), measurement of one config as a one-node region in an
// isolated child process (the caller's worker command, e.g. `tessera tune --worker`, persistent
// or one per candidate; a batch's candidates optionally first compiled by several workers), the
// JSON-lines log, the task scheduler that ties them together into a tuned pack, pack building
// from logs, and the progress display. An application that only runs models links libtessera
// alone.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tessera/flops.hpp"
#include "tessera/graph.hpp"
#include "tessera/pack.hpp"

namespace tessera::tune {

struct KnobSpace {
  std::string name;
  std::vector<int64_t> values;
};

struct ScheduleSpace {
  std::string name;
  std::vector<KnobSpace> knobs;
  std::vector<int64_t> defaults;  // the heuristic's value per knob
};

// One point of a task's space: a schedule and a value index per knob.
struct Point {
  int schedule = 0;
  std::vector<int> index;
  bool operator<(const Point& o) const {
    return schedule != o.schedule ? schedule < o.schedule : index < o.index;
  }
  bool operator==(const Point& o) const { return schedule == o.schedule && index == o.index; }
};

// Every schedule's knob space of one task, flattened for the searchers.
class SearchSpace {
 public:
  explicit SearchSpace(std::vector<ScheduleSpace> schedules);
  const std::vector<ScheduleSpace>& schedules() const { return schedules_; }
  uint64_t size() const { return total_; }
  Point at(uint64_t flat) const;  // grid order: schedule-major, last knob fastest
  bool valid(const Point& p) const;
  Point random(std::mt19937_64& rng) const;
  // The point of schedule `name` with these knob values; nullopt when it is not in the space.
  std::optional<Point> find(const std::string& schedule,
                            const std::vector<std::pair<std::string, int64_t>>& knobs) const;
  std::vector<std::pair<std::string, int64_t>> knobs(const Point& p) const;
  std::string describe(const Point& p) const;  // "conv2d.nchw.direct{wg_x=16,outputs_per_item=4}"
  // Features for the cost model: schedule index and each knob's value (absent knobs -1).
  std::vector<float> features(const Point& p) const;

 private:
  std::vector<ScheduleSpace> schedules_;
  std::vector<uint64_t> sizes_;
  uint64_t total_ = 0;
  size_t max_knobs_ = 0;
};

// Proposes points to measure and learns from their costs (lower is better; failures are
// reported as infinity). Never proposes a point twice, never an invalid one.
class Searcher {
 public:
  virtual ~Searcher() = default;
  // Up to `n` new points; fewer (possibly none) once the space is exhausted.
  virtual std::vector<Point> propose(int n) = 0;
  virtual void update(const Point& p, double cost);
  // Marks a point as already measured (resume) without counting it as a proposal.
  void mark_visited(const Point& p) { visited_.insert(p); }
  bool exhausted() const { return visited_.size() >= space_.size(); }

 protected:
  Searcher(const SearchSpace& space, uint64_t seed) : space_(space), rng_(seed) {}
  // A random unvisited point, or nullopt when the space is exhausted.
  std::optional<Point> random_unvisited();
  const SearchSpace& space_;
  std::mt19937_64 rng_;
  std::set<Point> visited_;
  std::vector<std::pair<Point, double>> history_;
};

// Training data a cost model shares between tasks of the same op: features are the point's
// features followed by `workload_features`.
struct CostModelData {
  std::vector<std::vector<float>> x;
  std::vector<float> y;  // log(cost)
};

// kind: "random", "grid", "ga", "xgb". `shared` (xgb only) may be shared by tasks of one op.
// Throws tessera::Error for an unknown kind, or when xgb's library cannot be loaded.
std::unique_ptr<Searcher> make_searcher(const std::string& kind, const SearchSpace& space,
                                        uint64_t seed, std::vector<float> workload_features = {},
                                        std::shared_ptr<CostModelData> shared = nullptr);
// Whether libxgboost could be loaded (xgb searcher available).
bool xgboost_available(std::string* why = nullptr);

// ---- tasks ----

struct TuneTask {
  int id = 0;
  std::string plugin;  // "mali"
  std::string target;  // "mali:any"
  std::string op;
  std::string workload;
  std::string node;  // a representative graph node name
  int weight = 0;    // occurrences in the model
  double flops = 0;  // node_flops() of the node (the plugin's count where core knows none)
  int default_schedule = 0;
  std::vector<ScheduleSpace> schedules;
};

struct DeviceDesc {
  std::string plugin, name, vendor, driver;
};

// Places the model like a Session would for `targets` and asks each node's plugin to describe it;
// only nodes with schedules become tasks. `devices` receives the device each plugin runs on.
std::vector<TuneTask> extract_tasks(const std::string& model_path,
                                    const std::vector<std::string>& targets,
                                    std::map<std::string, DeviceDesc>* devices);
// The same for a graph already imported from a model file (graph.source).
std::vector<TuneTask> extract_tasks(const Graph& graph, const std::vector<std::string>& targets,
                                    std::map<std::string, DeviceDesc>* devices);

// ---- measurement ----

struct MeasureRequest {
  std::string model;
  std::string node;
  std::string target;  // "mali:any"
  std::string schedule;
  std::vector<std::pair<std::string, int64_t>> knobs;
  int repeats = 5;
  double timeout_s = 30;
  // Only compile the candidate (warming the plugin's on-disk kernel cache in `cache_dir`), do not
  // run it: status "ok" then means it compiled.
  bool compile_only = false;
  std::string cache_dir;  // passed to compile_region; "" = the plugin's default
};

struct MeasureResult {
  // "ok", "compile", "run", "timeout", "crash", "wrong-answer"
  std::string status;
  double median_us = 0;
  double max_error = 0;
  std::string error;
  // false when the parent inferred the outcome (the worker died or overran its timeout) rather
  // than the worker reporting it.
  bool reported = true;
  // The device that measured and its driver, as the worker probed them ("" when it did not get
  // that far): on a farm, the agent's device rather than the tuner's.
  std::string device, driver;
};

// The command line that starts a measuring child: the program (a path, used as given: PATH is not
// searched) and its arguments. The child serves requests on its fd 3 by calling serve_worker, as
// `tessera tune --worker` does; the `tessera` command passes {its own path, "tune", "--worker"},
// and a library user names `tessera` or a worker program of their own.
using WorkerCommand = std::vector<std::string>;
// The command as one line for messages: "/usr/bin/tessera tune --worker".
std::string worker_command_text(const WorkerCommand& command);
// Throws tessera::Error naming the command when it is empty or its program does not exist or is
// not an executable file.
void check_worker_command(const WorkerCommand& command);

// One measuring child process (the worker command, started with posix_spawn) that the parent
// talks to over a socket on the child's fd 3: the child says "ready" once; then per request a
// request line goes in, "phase compiling" / "phase running" come out before each phase, then a
// result line. A persistent worker serves many requests, keeping the imported model and the
// plugin's device context between them; otherwise each request gets a fresh child (for drivers
// that leak state). The timeout is per request: an overrunning child is killed ("timeout"); a
// child that dies is classified by the phase it reported last ("compile" / "run"; "crash" before
// any). Either way the next request starts a new child, as it does after a reported "run" failure
// (the driver's context may be broken) and every 256 requests. measure() never throws for the
// child's failures.
class MeasureWorker {
 public:
  MeasureWorker(WorkerCommand command, bool persistent);
  ~MeasureWorker();
  MeasureWorker(const MeasureWorker&) = delete;
  MeasureWorker& operator=(const MeasureWorker&) = delete;
  MeasureResult measure(const MeasureRequest& request);
  // Starts a child (unless one runs) and waits until it says "ready", so that a command that is
  // no worker (a wrong program or arguments) ends the run with one clear error instead of
  // failing every candidate. Throws tessera::Error naming the command, how the child ended and
  // the tail of its stderr. The child then serves the next measure().
  void check_start();
  void stop();                            // ends the child, if one is running
  int starts() const { return starts_; }  // child processes started so far

 private:
  enum class Read { kLine, kTimeout, kClosed };
  bool start(std::string* error);
  // The child's next line, waiting up to `wait_s`; kClosed when its stream ended.
  Read next_line(std::string* line, double wait_s);
  // Kills the child first when asked, reaps it and returns its wait status; `err_text` gets the
  // tail of its stderr.
  int end_child(bool kill_first, std::string* err_text);
  std::string new_stderr();  // what the child wrote to stderr since the last call (tail, one line)
  WorkerCommand command_;
  bool persistent_;
  int pid_ = -1;
  int fd_ = -1;
  std::string buffer_;
  std::string err_path_;
  size_t err_offset_ = 0;
  int starts_ = 0;
  int served_ = 0;                        // requests the current child has answered
  static constexpr int kMaxServed = 256;  // then it is replaced (bounds its caches' growth)
};

// Measures one request in a fresh child.
MeasureResult measure(const WorkerCommand& worker, const MeasureRequest& request);
// Compiles the requests (their compile_only set) spread over the workers (request i on worker
// i % workers.size()), the workers busy at once (a oneTBB loop), each compiling its share in turn,
// warming the plugins' on-disk kernel cache; result i belongs to request i. (In-process parallel
// compilation cannot pay: core and the OpenCL plugins serialise compile_region on a mutex.)
std::vector<MeasureResult> compile_in_parallel(
    const std::vector<std::unique_ptr<MeasureWorker>>& workers,
    std::vector<MeasureRequest> requests);
// The worker protocol's lines (no newline; tabs separate "key=value" fields).
std::string encode_request(const MeasureRequest& request);
std::optional<MeasureRequest> decode_request(const std::string& line);
std::string encode_result(const MeasureResult& result);
std::optional<MeasureResult> decode_result(const std::string& line);
// Points where a test's measuring child injects faults (tests/tune/fault_worker.cpp: crashes,
// hangs); the shipped `tessera tune --worker` sets none.
struct WorkerHooks {
  // Called once before the first request, with the function that reports a phase ("compiling",
  // "running") to the parent.
  std::function<void(const std::function<void(const char*)>& report_phase)> at_start;
  // Called after a compile-only request compiled, before it is answered.
  std::function<void()> after_compile_only;
};
// The child side, the body of a worker command's program: says "ready", then serves requests on
// `fd` until the parent closes it. Returns the exit code.
int serve_worker(int fd, const WorkerHooks& hooks = {});

// ---- log ----

struct LogRecord {
  std::string workload, plugin, device, schedule, status, error, timestamp;
  std::vector<std::pair<std::string, int64_t>> knobs;
  double median_us = 0;
  // Appended later (older logs lack them: ""): the device's driver version and the tuner command
  // line that measured the record (for `tessera pack build`).
  std::string driver, command;
  // "" for a search trial; "verify" for a finalist measured again after the search (see
  // TuneOptions::verify): where a workload has such records, they decide its best config.
  std::string stage;
  // How many nodes of the model share the workload (its task's weight; 0 in older logs): a
  // model's estimated latency is the sum of weight x best over its workloads.
  int weight = 0;
  // The task's default config (its default schedule, every knob at its default): where the
  // finalists tie, the pack keeps it (see best_records). false in older logs.
  bool is_default = false;
};
std::string to_json_line(const LogRecord& r);
// nullopt for a line that is not a record (blank, truncated by a crash).
std::optional<LogRecord> parse_log_line(const std::string& line);
std::vector<LogRecord> read_log(const std::string& path);  // missing file: empty
// The best ok record per (plugin, workload): among finalists measured again ("verify" records),
// where the workload has them, the config with the lowest median over its rounds (that median
// as its time), except that finalists within the noise of that median are ties, won by the
// task's default config if it is one, else by the first config text, so a re-tune writes the
// same pack. The noise: the larger median absolute deviation of the two configs' rounds (at
// most 5% of the fastest median), or 0.125% of the plugin's model latency (the weighted sum of
// the workloads' fastest medians) over the workload's weight where that is more. Without
// verify records, the fastest single search trial.
std::map<std::pair<std::string, std::string>, LogRecord> best_records(
    const std::vector<LogRecord>& records);
// A pack of the best record per workload of `plugin` measured on `device`.
Pack pack_from_records(const std::vector<LogRecord>& records, const std::string& plugin,
                       const DeviceDesc& device, const std::string& how);

// `tessera pack build`: the pack of the fastest ok record per workload in the tuner logs at
// `log_paths`. measured.how names the logs (and the tuner command lines they record). Throws
// tessera::Error when a log cannot be read or holds no record, when the logs mix plugins, devices
// or drivers (naming both; build one pack per plugin and device), or when no record is ok.
Pack pack_from_logs(const std::vector<std::string>& log_paths);

// ---- the driver ----

struct TuneOptions {
  std::string model;
  std::vector<std::string> targets;
  int trials = 64;  // total over all tasks
  // Wall-clock seconds for the whole run, verification included (0 = none): the search leaves
  // the verification an estimated share (at most half) and the verification stops at the budget.
  double budget_s = 0;
  std::string tuner = "xgb";
  int early_stopping = 0;  // per task: stop after N trials without improvement (0 = never)
  // Which task's candidates come next. "gradient" (Ansor's): the task whose improvement promises
  // most for the model's latency, so the trials follow the measurements. "even": the trials left
  // after the defaults are split evenly over the tasks up front (in task order) and each task
  // gets exactly its share, whatever the measurements, batch sizes or agents: with the random or
  // grid tuner and a fixed seed, every run measures the same candidates, so a re-tune (or a farm
  // run with agents killed) differs from the first only by the measurements themselves.
  std::string scheduler = "gradient";
  std::string log_path;  // "" = no log
  bool resume = false;
  int batch = 4;
  int repeats = 5;
  double timeout_s = 30;
  uint64_t seed = 1;
  // "worker": persistent measuring children, each serving many candidates; "candidate": a fresh
  // child per candidate (for plugins whose drivers leak state).
  std::string isolation = "worker";
  // Workers that compile a batch's candidates at once before they are measured one at a time:
  // 0 = the number of cores, 1 = no separate compile step (the measuring worker compiles), -1 =
  // 2 with worker isolation (level with 1 on PoCL with 2 cores, ahead on an H100 through NVIDIA's
  // OpenCL), 1 with candidate isolation (there, separate compiling children cost more than they
  // save on both).
  int compile_jobs = -1;
  std::string cache_dir;  // the plugins' kernel cache the compile step warms; "" = their default
  // The measuring child (required): e.g. {path of `tessera`, "tune", "--worker"}. run_tuning
  // throws tessera::Error naming it when it is missing or does not start as a worker.
  WorkerCommand worker_command;
  // A tuning farm (tessera/farm.hpp) that measures instead of local workers: "HOST:PORT[/POOL]"
  // or "unix:PATH[/POOL]" of its Redis server; "" = measure here. Batches then hold at least two
  // candidates per live agent, measured at once on the agents' devices; the compile-ahead step
  // and worker_command are the agents' business.
  std::string farm;
  // The pool, instead of the address's (e.g. "mali-g78"). "" = the address's, or where it names
  // none, the pool of the device the tasks run on, else the one live pool that measures their
  // plugins (choose_farm_pool in tessera/farm.hpp).
  std::string farm_key;
  double farm_agent_wait_s = 60;  // with no live agent for this long, the run ends with an error
  std::string command;            // the command line, recorded in each log record ("" = none)
  // After the search, each task's `verify` fastest distinct configs and its default are measured
  // again, `verify_rounds` rounds taking turns, and the lowest median over the rounds wins: the
  // fastest single trial of a noisy machine is often a config that ran in a fast moment (the
  // winner's curse). 0 = keep the fastest trial. Inside `budget_s`, not counted in `trials`.
  int verify = 0;
  // More rounds average out more of the device's run-to-run noise (a GPU's timer ticks, clock
  // changes) in each finalist's median, at the cost of more measurements.
  int verify_rounds = 3;
  // The model already imported from `model` (saves a second import); null = import `model`.
  std::shared_ptr<const Graph> graph;
  std::function<void(const std::string&)> progress;  // one line per event (task list, errors)
};

struct TaskResult {
  TuneTask task;
  int trials = 0;
  double default_us = 0;  // 0 when the default was not measured
  std::optional<LogRecord> best;
  uint64_t space_size = 0;
  bool finished = false;              // space exhausted or stopped early
  std::map<std::string, int> errors;  // failed trials by status ("compile", "timeout", ...)
};

struct TuneReport {
  std::vector<TaskResult> tasks;
  std::map<std::string, DeviceDesc> devices;
  std::vector<LogRecord> records;         // every record (resumed and new)
  double estimated_total_us = 0;          // sum of weight x best (x default where nothing is ok)
  double estimated_default_total_us = 0;  // sum of weight x default, over the same tasks
};

// Where a run stands, for progress displays.
struct TuneStatus {
  int used = 0;            // trials measured in this run
  int trials = 0;          // this run's trial budget
  int current = -1;        // the task last measured
  bool batch_end = false;  // the current task's batch is done
  bool finished = false;   // the run is over
  double elapsed_s = 0;
};

// The task scheduler's view of one task.
struct SchedulerTask {
  int weight = 1;
  std::vector<double> best_after;  // best latency after each trial (infinity before any ok)
  bool available = true;           // false once exhausted or stopped early
};
// The available task whose next trials should cut sum(weight x best) most, or -1 when none is
// available. Ansor's gradient: weight x (0.2 x the improvement per trial over the last `window`
// trials + 0.8 x best / trials, the optimistic guess), so a task that stopped improving yields to
// the others. A task with nothing ok yet goes first for 2 x window trials, then last.
int pick_task(const std::vector<SchedulerTask>& tasks, int window);

// Runs the search. `on_update`, when set, is called after every measurement with the report so
// far (estimated totals filled in).
TuneReport run_tuning(
    const TuneOptions& options,
    const std::function<void(const TuneReport&, const TuneStatus&)>& on_update = nullptr);

// ---- progress (progress.cpp) ----

// "[#####-----]" of `width` cells for fraction in [0, 1].
std::string progress_bar(double fraction, int width);
// The live table: a bar per task (trials over min(space, budget)), ID, latency, GFLOPS, trials,
// weight, then the estimated total latency and the run's trials.
// With max_lines > 0 and more tasks than fit, the table keeps its header, the current task and
// the unfinished tasks with the most estimated time (weight x best), says how many it leaves
// out, and ends with the totals: at most max_lines lines.
std::string format_progress_table(const TuneReport& report, const TuneStatus& status,
                                  int max_lines = 0);
// One line for logs and pipes (no control characters): the current task and the total.
std::string format_progress_line(const TuneReport& report, const TuneStatus& status);
// The end-of-run table: per task default us, best us, speed-up, trials, errors by class, and the
// estimated total latency before and after, then the best config per task.
std::string format_summary(const TuneReport& report);

// Shows progress on a terminal (the table redrawn in place) or, when `tty` is false, as plain
// lines at each batch end; event lines go above the table. `write` receives the text.
class ProgressDisplay {
 public:
  // `rows` gives the terminal's height (0 = unknown), asked at every redraw so a resized
  // terminal is followed: the table is cut to fit it (a table taller than the screen cannot be
  // redrawn in place and would leave copies of itself scrolling past).
  ProgressDisplay(bool tty, std::function<void(const std::string&)> write,
                  std::function<int()> rows = nullptr)
      : tty_(tty), write_(std::move(write)), rows_(std::move(rows)) {}
  void event(const std::string& line);
  void update(const TuneReport& report, const TuneStatus& status);

 private:
  void erase();
  bool tty_;
  std::function<void(const std::string&)> write_;
  std::function<int()> rows_;
  int drawn_lines_ = 0;
  std::string last_table_;
};

}  // namespace tessera::tune
