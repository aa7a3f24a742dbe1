// The tuner's JSON-lines log, pack building, and the task scheduler: every task's default config
// first, then batches to the task whose trials are expected to cut the weighted sum of task
// latencies most (Ansor's gradient: its recent improvement and an optimistic best/trials).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "tessera/error.hpp"
#include "tessera/farm.hpp"
#include "tessera/file_util.hpp"
#include "tessera/json.hpp"
#include "tessera/tuner.hpp"

namespace tessera::tune {
namespace {

// A minimal reader for the flat records this file writes: "key": "string" | number | true |
// false | {knobs}.
class JsonCursor {
 public:
  explicit JsonCursor(const std::string& s) : s_(s) {}
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    ws();
    return i_ < s_.size() && s_[i_] == c;
  }
  std::string str() {
    if (!eat('"')) throw Error("expected string");
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] != '\\') {
        out += s_[i_++];
        continue;
      }
      ++i_;
      if (!json_unescape_at(s_, i_, out)) throw Error("malformed escape in a string");
    }
    if (!eat('"')) throw Error("unterminated string");
    return out;
  }
  bool boolean() {
    ws();
    for (const char* word : {"true", "false"}) {
      if (s_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return word[0] == 't';
      }
    }
    throw Error("expected true or false");
  }
  double num() {
    ws();
    size_t used = 0;
    const double v = std::stod(s_.substr(i_), &used);
    i_ += used;
    return v;
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
};

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), format, &tm);
  return buf;
}

// The task's default config: its default schedule with each knob at its default.
std::vector<std::pair<std::string, int64_t>> default_knobs(const TuneTask& task) {
  const ScheduleSpace& ds = task.schedules[static_cast<size_t>(task.default_schedule)];
  std::vector<std::pair<std::string, int64_t>> kv;
  for (size_t k = 0; k < ds.knobs.size(); ++k) kv.emplace_back(ds.knobs[k].name, ds.defaults[k]);
  return kv;
}

// The median of `t` (the mean of the middle two for an even count), as the tuner reports a
// config's time over its verification rounds.
double median_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
}

bool is_default_config(const TuneTask& task, const std::string& schedule,
                       const std::vector<std::pair<std::string, int64_t>>& knobs) {
  return schedule == task.schedules[static_cast<size_t>(task.default_schedule)].name &&
         knobs == default_knobs(task);
}

}  // namespace

std::string to_json_line(const LogRecord& r) {
  std::ostringstream o;
  o.precision(12);  // times in whole ns (the worker rounds them) read back exactly below 1e9 us
  o << "{\"workload\": " << json_string(r.workload) << ", \"plugin\": " << json_string(r.plugin)
    << ", \"device\": " << json_string(r.device) << ", \"schedule\": " << json_string(r.schedule)
    << ", \"knobs\": {";
  for (size_t i = 0; i < r.knobs.size(); ++i) {
    o << (i ? ", " : "") << json_string(r.knobs[i].first) << ": " << r.knobs[i].second;
  }
  o << "}, \"status\": " << json_string(r.status) << ", \"median_us\": " << r.median_us
    << ", \"error\": " << json_string(r.error) << ", \"timestamp\": " << json_string(r.timestamp);
  if (!r.driver.empty()) o << ", \"driver\": " << json_string(r.driver);
  if (!r.command.empty()) o << ", \"command\": " << json_string(r.command);
  if (!r.stage.empty()) o << ", \"stage\": " << json_string(r.stage);
  if (r.weight > 0) o << ", \"weight\": " << r.weight;
  if (r.is_default) o << ", \"default\": true";
  o << "}";
  return o.str();
}

std::optional<LogRecord> parse_log_line(const std::string& line) {
  try {
    JsonCursor c(line);
    if (!c.eat('{')) return std::nullopt;
    LogRecord r;
    bool first = true;
    while (!c.eat('}')) {
      if (!first && !c.eat(',')) return std::nullopt;
      first = false;
      const std::string key = c.str();
      if (!c.eat(':')) return std::nullopt;
      if (key == "knobs") {
        if (!c.eat('{')) return std::nullopt;
        bool kfirst = true;
        while (!c.eat('}')) {
          if (!kfirst && !c.eat(',')) return std::nullopt;
          kfirst = false;
          const std::string name = c.str();
          if (!c.eat(':')) return std::nullopt;
          r.knobs.emplace_back(name, static_cast<int64_t>(c.num()));
        }
      } else if (key == "median_us") {
        r.median_us = c.num();
      } else if (key == "weight") {
        r.weight = static_cast<int>(c.num());
      } else if (key == "default") {
        r.is_default = c.boolean();
      } else {
        const std::string v = c.str();
        if (key == "workload") r.workload = v;
        if (key == "plugin") r.plugin = v;
        if (key == "device") r.device = v;
        if (key == "schedule") r.schedule = v;
        if (key == "status") r.status = v;
        if (key == "error") r.error = v;
        if (key == "timestamp") r.timestamp = v;
        if (key == "driver") r.driver = v;
        if (key == "command") r.command = v;
        if (key == "stage") r.stage = v;
      }
    }
    if (r.workload.empty() || r.plugin.empty()) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<LogRecord> read_log(const std::string& path) {
  std::vector<LogRecord> out;
  // A log that does not exist yet is an empty one (--resume of a first run).
  if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) return out;
  std::istringstream in(read_file(path, "tuning log", kMaxTuneLogBytes));
  std::string line;
  while (std::getline(in, line)) {
    if (auto r = parse_log_line(line)) out.push_back(std::move(*r));
  }
  return out;
}

std::map<std::pair<std::string, std::string>, LogRecord> best_records(
    const std::vector<LogRecord>& records) {
  using Key = std::pair<std::string, std::string>;
  auto config_of = [](const LogRecord& r) {
    std::string c = r.schedule;
    for (const auto& [name, value] : r.knobs) c += "|" + name + "=" + std::to_string(value);
    return c;
  };
  // Verified finalists: per workload, per config, the times of its rounds.
  std::map<Key, std::map<std::string, std::vector<const LogRecord*>>> verified;
  for (const LogRecord& r : records) {
    if (r.stage == "verify" && r.status == "ok" && r.median_us > 0) {
      verified[{r.plugin, r.workload}][config_of(r)].push_back(&r);
    }
  }
  std::map<Key, LogRecord> best;
  for (const LogRecord& r : records) {
    if (r.status != "ok" || !(r.median_us > 0) || !r.stage.empty()) continue;
    const Key key{r.plugin, r.workload};
    if (verified.count(key)) continue;
    auto it = best.find(key);
    if (it == best.end() || r.median_us < it->second.median_us) best[key] = r;
  }
  // Finalists within the noise of the fastest one are ties. A tie keeps the task's default if it
  // is one, else the first config text wins: tuning the same model on the same device again then
  // writes the same pack unless a config is measurably and worthwhile faster, instead of
  // whichever tie ran in a quiet moment. The band is the larger of
  // - the noise of the two medians compared: the larger median absolute deviation of their
  //   rounds, which unlike the rounds' range does not grow with more rounds (at most
  //   kNoiseCeiling of the fastest median);
  // - kModelShare of the model's latency: a config that would save less than that (the saving
  //   times the workload's weight) is no reason to leave the default, the config the plugin
  //   would have chosen untuned. Small elementwise kernels have many near-equal configs whose
  //   order in a run is decided by timer steps; this takes them out of the choice, at a cost of
  //   at most kModelShare per workload. On an H200 (resnet-18, mali, 15 runs) their savings
  //   reached 0.105% of the model and the smallest convolution's gain was 0.155% or more;
  //   0.125% lies between, where a 2% band of the kernel's own time split a convolution's two
  //   best configs differently from run to run.
  constexpr double kNoiseCeiling = 0.05, kModelShare = 0.00125;
  struct Finalist {
    const std::string* config;
    const LogRecord* last;
    double median, deviation;
    bool is_default;
  };
  struct Workload {
    std::vector<Finalist> finalists;
    const Finalist* fastest = nullptr;
  };
  std::map<Key, Workload> workloads;
  std::map<std::string, double> model_us;  // per plugin: the sum of weight x fastest median
  for (const auto& [key, configs] : verified) {
    Workload& w = workloads[key];
    for (const auto& [config, rounds] : configs) {
      std::vector<double> t;
      bool is_default = false;
      for (const LogRecord* r : rounds) {
        t.push_back(r->median_us);
        is_default = is_default || r->is_default;
      }
      const double median = median_of(t);
      for (double& x : t) x = std::fabs(x - median);
      w.finalists.push_back({&config, rounds.back(), median, median_of(t), is_default});
    }
    w.fastest = &*std::min_element(
        w.finalists.begin(), w.finalists.end(),
        [](const Finalist& a, const Finalist& b) { return a.median < b.median; });
    model_us[key.first] += std::max(1, w.fastest->last->weight) * w.fastest->median;
  }
  for (const auto& [key, w] : workloads) {
    const Finalist& fastest = *w.fastest;
    const double worthwhile = kModelShare * model_us[key.first] / std::max(1, fastest.last->weight);
    const Finalist* pick = nullptr;
    for (const Finalist& f : w.finalists) {
      const double noise =
          std::min(std::max(fastest.deviation, f.deviation), kNoiseCeiling * fastest.median);
      if (f.median > fastest.median + std::max(worthwhile, noise)) continue;
      if (!pick || (f.is_default && !pick->is_default) ||
          (f.is_default == pick->is_default && *f.config < *pick->config)) {
        pick = &f;
      }
    }
    LogRecord r = *pick->last;
    r.median_us = pick->median;
    best[key] = r;
  }
  return best;
}

Pack pack_from_records(const std::vector<LogRecord>& records, const std::string& plugin,
                       const DeviceDesc& device, const std::string& how) {
  Pack pack;
  pack.plugin = plugin;
  pack.match.device = device.name;
  if (!device.driver.empty()) pack.match.driver = VersionRange::parse(device.driver);
  pack.engine_version = VersionRange::parse("==" + engine_version());
  pack.measured.how = how;
  pack.measured.when = utc_now("%Y-%m-%d");
  pack.measured.tool_version = engine_version();
  for (const auto& [key, r] : best_records(records)) {
    if (key.first != plugin || (!device.name.empty() && r.device != device.name)) continue;
    PackEntry e;
    e.workload = r.workload;
    e.schedule = r.schedule;
    for (const auto& [name, value] : r.knobs) e.knobs.push_back({name, value});
    e.time_us = r.median_us;
    pack.entries.push_back(std::move(e));
  }
  return pack;
}

int pick_task(const std::vector<SchedulerTask>& tasks, int window) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kAlpha = 0.2;  // Ansor's weight of the measured (backward) gradient
  window = std::max(1, window);
  int pick = -1;
  double score = -1;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const SchedulerTask& task = tasks[i];
    if (!task.available) continue;
    const std::vector<double>& h = task.best_after;
    const size_t t = h.size();
    const double best = t ? h.back() : kInf;
    double v;
    if (!std::isfinite(best)) {
      // Nothing ok yet: a few trials to find any working config first, then last in line.
      v = t < static_cast<size_t>(2 * window) ? kInf : 0;
    } else {
      const size_t back = std::min(t - 1, static_cast<size_t>(window));
      const double before = h[t - 1 - back];
      const double backward =
          back > 0 && std::isfinite(before) ? (before - best) / static_cast<double>(back) : 0;
      const double forward = best / static_cast<double>(t);
      v = task.weight * (kAlpha * backward + (1 - kAlpha) * forward);
    }
    if (v > score) {
      score = v;
      pick = static_cast<int>(i);
    }
  }
  return pick;
}

static void update_estimates(TuneReport& report) {
  report.estimated_total_us = 0;
  report.estimated_default_total_us = 0;
  for (const TaskResult& tr : report.tasks) {
    if (!tr.best) continue;
    const double best = tr.best->median_us;
    report.estimated_total_us += tr.task.weight * best;
    report.estimated_default_total_us +=
        tr.task.weight * (tr.default_us > 0 ? tr.default_us : best);
  }
}

namespace {

// The isolation and scheduler names, checked before anything starts.
void validate_options(const TuneOptions& options) {
  if (options.isolation != "worker" && options.isolation != "candidate") {
    throw Error("tuner: unknown isolation '" + options.isolation +
                "' (use 'worker' or 'candidate')");
  }
  if (options.scheduler != "gradient" && options.scheduler != "even") {
    throw Error("tuner: unknown scheduler '" + options.scheduler + "' (use 'gradient' or 'even')");
  }
}

// One call of run_tuning. Its stages run in this order: the options checked, the farm reached (or
// the worker command checked), the tasks found, the workers started, the log read and opened,
// every task's searcher primed from the log, then the defaults, the search and the finalists'
// verification measured. What the stages share (the report, the budget's pace, the counts) is
// held in members. The members stand in the order the stages create them, so they are destroyed
// in the reverse order: the searchers first, then the log is closed, the workers stopped and the
// farm client last.
class TuningRun {
 public:
  using OnUpdate = std::function<void(const TuneReport&, const TuneStatus&)>;
  TuningRun(const TuneOptions& options, const OnUpdate& on_update)
      : options_(options), on_update_(on_update), start_(std::chrono::steady_clock::now()) {}
  TuneReport run();

 private:
  using Batch = std::vector<std::pair<size_t, Point>>;  // (task, config) pairs to measure
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  struct State {
    std::unique_ptr<SearchSpace> space;
    std::unique_ptr<Searcher> searcher;
    double best = kInf;
    std::vector<double> best_after;  // best after each trial, for the scheduler
    int since_best = 0;
    bool default_done = false;
  };

  void say(const std::string& line) const {
    if (options_.progress) options_.progress(line);
  }
  void connect_farm();
  void discover_tasks();
  void start_workers();
  void open_log();
  void prepare_tasks();
  int resume_task(size_t t);
  void count(size_t t, const LogRecord& r, double cost);
  double elapsed() const;
  double verify_reserve() const;
  bool out_of_budget() const;
  void notify(int current, bool batch_end, bool finished);
  MeasureRequest request_for(size_t t, const Point& p) const;
  LogRecord log_record(size_t t, const MeasureRequest& req, const MeasureResult& m,
                       const std::string& stage);
  LogRecord record(size_t t, const Point& p, const MeasureRequest& req, const MeasureResult& m);
  std::vector<LogRecord> run_batch(const Batch& batch);
  std::vector<LogRecord> run_batch_on_farm(const Batch& batch,
                                           const std::vector<MeasureRequest>& requests);
  std::vector<LogRecord> run_batch_here(const Batch& batch,
                                        const std::vector<MeasureRequest>& requests);
  void measure_defaults();
  void search();
  int next_task(const std::vector<int>& share, const std::vector<int>& taken);
  bool stopped(size_t t) const;
  void verify();
  Batch pick_finalists();
  int measure_finalists(const Batch& finalists);
  void adopt_verified();

  const TuneOptions& options_;
  const OnUpdate& on_update_;
  // The budget counts from here: task discovery and the workers' start-up are the user's wait too.
  const std::chrono::steady_clock::time_point start_;
  std::unique_ptr<FarmClient> farm_;
  BrokerAddress farm_address_;
  TuneReport report_;
  std::vector<TuneTask> tasks_;
  int compile_jobs_ = 1;
  // workers_[0] measures; all of them compile when a batch has a compile step. None on a farm.
  std::vector<std::unique_ptr<MeasureWorker>> workers_;
  int batch_size_ = 1;
  std::vector<LogRecord> previous_;  // the log's records before this run (--resume)
  std::unique_ptr<AppendFile> log_;
  std::vector<State> states_;
  std::set<std::string> farm_device_seen_;  // plugins whose farm device was taken from a result
  int used_ = 0;  // trials measured in this run, the count options.trials bounds
  // The pace is that of the search's measurements that ran ("ok"), plus the share of a batch's
  // compile ahead (compile_jobs > 1 compiles outside measure(), and each verification
  // measurement compiles its config again). Every finalist is such a measurement; configs
  // refused or failing are often far cheaper, and a pace over all trials (a space where most
  // configs fail fast) left the finalists 2 of their 18 measurements.
  int searched_ = 0;
  double search_start_ = -1.0;
  double ok_seconds_ = 0.0, compile_seconds_ = 0.0;
  int ok_count_ = 0, compiled_count_ = 0;
  double longest_step_ = 0.0;  // seconds of the longest compile-ahead step or measurement
};

TuneReport TuningRun::run() {
  validate_options(options_);
  connect_farm();
  discover_tasks();
  start_workers();
  open_log();
  prepare_tasks();
  measure_defaults();
  search();
  if (options_.verify > 0) verify();
  update_estimates(report_);
  notify(-1, true, true);
  return std::move(report_);
}

void TuningRun::connect_farm() {
  if (options_.farm.empty()) {
    check_worker_command(options_.worker_command);
    return;
  }
  farm_address_ = BrokerAddress::parse(options_.farm);
  if (!options_.farm_key.empty()) {
    if (const std::string why = farm_key_problem(options_.farm_key); !why.empty()) {
      throw Error("tuner: farm key: " + why);
    }
    farm_address_.pool = options_.farm_key;
    farm_address_.pool_given = true;
  }
  // Without a key the pool follows from the tasks' device (discover_tasks); the server is
  // reached now.
  farm_ = std::make_unique<FarmClient>(farm_address_, options_.farm_agent_wait_s);
}

void TuningRun::discover_tasks() {
  tasks_ = options_.graph ? extract_tasks(*options_.graph, options_.targets, &report_.devices)
                          : extract_tasks(options_.model, options_.targets, &report_.devices);
  if (!farm_ || farm_address_.pool_given || tasks_.empty()) return;
  std::vector<std::string> plugins;
  for (const TuneTask& t : tasks_) {
    if (std::find(plugins.begin(), plugins.end(), t.plugin) == plugins.end()) {
      plugins.push_back(t.plugin);
    }
  }
  std::string why;
  farm_address_.pool = choose_farm_pool(
      farm_address_, farm_key_from_device(report_.devices[tasks_[0].plugin].name), plugins, &why);
  say("farm " + farm_address_.text() + ": no key given; " + why);
  farm_ = std::make_unique<FarmClient>(farm_address_, options_.farm_agent_wait_s);
}

void TuningRun::start_workers() {
  compile_jobs_ = options_.compile_jobs;
  if (compile_jobs_ < 0) compile_jobs_ = options_.isolation == "worker" ? 2 : 1;
  if (compile_jobs_ == 0) compile_jobs_ = static_cast<int>(std::thread::hardware_concurrency());
  compile_jobs_ = farm_ ? 1 : std::max(1, compile_jobs_);
  for (int i = 0; i < (farm_ ? 0 : compile_jobs_); ++i) {
    workers_.push_back(
        std::make_unique<MeasureWorker>(options_.worker_command, options_.isolation == "worker"));
  }
  if (!tasks_.empty() && !farm_) workers_[0]->check_start();
  // A farm's batches keep every live agent busy twice over.
  batch_size_ = options_.batch;
  if (farm_) {
    const int agents = farm_->agents_alive();
    batch_size_ = std::max(batch_size_, 2 * std::max(1, agents));
    say("farm " + farm_address_.text() + ": " + std::to_string(agents) +
        " agent(s) alive; batches of " + std::to_string(batch_size_));
  }
}

void TuningRun::open_log() {
  if (options_.resume && !options_.log_path.empty()) previous_ = read_log(options_.log_path);
  report_.records = previous_;
  if (options_.log_path.empty()) return;
  bool repaired = false;
  log_ = std::make_unique<AppendFile>(options_.log_path, "tuning log", &repaired);
  if (repaired) {
    say("log '" + options_.log_path +
        "' ended in a partial line (an interrupted run); it is kept, ended with a newline, and "
        "skipped on reading");
  }
}

void TuningRun::prepare_tasks() {
  states_.resize(tasks_.size());
  // Cost-model data is shared by the tasks of one op on one plugin: their schedules and knobs
  // (the features) mean the same; another plugin's Conv has other schedules.
  std::map<std::string, std::shared_ptr<CostModelData>> models;
  int resumed_trials = 0, resumed_tasks = 0;
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const TuneTask& task = tasks_[t];
    TaskResult tr;
    tr.task = task;
    report_.tasks.push_back(tr);
    State& s = states_[t];
    s.space = std::make_unique<SearchSpace>(task.schedules);
    report_.tasks[t].space_size = s.space->size();
    auto& shared = models[task.plugin + "|" + task.op];
    if (!shared) shared = std::make_shared<CostModelData>();
    s.searcher = make_searcher(options_.tuner, *s.space, options_.seed + t,
                               {static_cast<float>(std::log10(task.flops + 1.0))}, shared);
    const int resumed = resume_task(t);
    resumed_trials += resumed;
    if (resumed > 0) ++resumed_tasks;
    say("task " + std::to_string(task.id) + ": " + task.plugin + " " + task.workload + " x" +
        std::to_string(task.weight) + " (" + std::to_string(s.space->size()) + " configs)");
  }
  if (options_.resume) {
    say("resumed from '" + options_.log_path + "': " + std::to_string(previous_.size()) +
        " record(s), " + std::to_string(resumed_trials) + " trial(s) of " +
        std::to_string(resumed_tasks) + " of this run's " + std::to_string(tasks_.size()) +
        " task(s) (their configs are not measured again; records of other models, devices or "
        "configs outside the spaces are kept in the log and ignored)");
  }
}

// Feeds task t's searcher the trials the log already holds for it; returns how many it had.
int TuningRun::resume_task(size_t t) {
  const TuneTask& task = tasks_[t];
  State& s = states_[t];
  const std::string device = report_.devices[task.plugin].name;
  int resumed = 0;
  for (const LogRecord& r : previous_) {
    if (r.plugin != task.plugin || r.workload != task.workload || r.device != device) continue;
    if (!r.stage.empty()) continue;  // a re-measurement, not a trial of the search
    auto p = s.space->find(r.schedule, r.knobs);
    if (!p) continue;
    const double cost = r.status == "ok" ? r.median_us : kInf;
    s.searcher->update(*p, cost);
    count(t, r, cost);
    ++resumed;
    if (is_default_config(task, r.schedule, r.knobs)) {
      s.default_done = true;
      if (r.status == "ok") report_.tasks[t].default_us = r.median_us;
    }
  }
  return resumed;
}

void TuningRun::count(size_t t, const LogRecord& r, double cost) {
  State& s = states_[t];
  TaskResult& tr = report_.tasks[t];
  tr.trials++;
  if (r.status != "ok") tr.errors[r.status]++;
  if (cost < s.best) {
    s.best = cost;
    s.since_best = 0;
    tr.best = r;
  } else {
    ++s.since_best;
  }
  s.best_after.push_back(s.best);
}

double TuningRun::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

// The budget covers the whole run, verification included: the search stops early enough to
// leave the finalists' re-measurement its time (one measurement per finalist per round, up to
// verify + 1 finalists per task) with a margin of 1.5x and at least 5% of the budget (a batch
// compiled ahead can overrun its check), but never more than half the budget; the verification
// stops at the budget itself.
double TuningRun::verify_reserve() const {
  if (options_.verify <= 0 || options_.budget_s <= 0 || searched_ == 0) return 0.0;
  double per_measurement =
      ok_count_ > 0 ? ok_seconds_ / ok_count_ : (elapsed() - search_start_) / searched_;
  if (compiled_count_ > 0) per_measurement += compile_seconds_ / compiled_count_;
  const double finalists = static_cast<double>(tasks_.size()) * (options_.verify + 1);
  // The budget is checked between steps, so the search may overrun by its longest step (a
  // batch's compile ahead, a measurement that restarted its worker): that comes on top.
  return std::min(0.5 * options_.budget_s,
                  std::max(0.05 * options_.budget_s,
                           1.5 * per_measurement * finalists * options_.verify_rounds) +
                      longest_step_);
}

bool TuningRun::out_of_budget() const {
  if (used_ >= options_.trials) return true;
  return options_.budget_s > 0 && elapsed() + verify_reserve() > options_.budget_s;
}

void TuningRun::notify(int current, bool batch_end, bool finished) {
  if (!on_update_) return;
  update_estimates(report_);
  TuneStatus st;
  st.used = used_;
  st.trials = options_.trials;
  st.current = current;
  st.batch_end = batch_end;
  st.finished = finished;
  st.elapsed_s = elapsed();
  on_update_(report_, st);
}

MeasureRequest TuningRun::request_for(size_t t, const Point& p) const {
  MeasureRequest req;
  req.model = options_.model;
  req.node = tasks_[t].node;
  req.target = tasks_[t].target;
  req.schedule = states_[t].space->schedules()[static_cast<size_t>(p.schedule)].name;
  req.knobs = states_[t].space->knobs(p);
  req.repeats = options_.repeats;
  req.timeout_s = options_.timeout_s;
  req.cache_dir = options_.cache_dir;
  return req;
}

// Appends one measurement's record to the log and the report.
LogRecord TuningRun::log_record(size_t t, const MeasureRequest& req, const MeasureResult& m,
                                const std::string& stage) {
  const TuneTask& task = tasks_[t];
  // On a farm the agents' device is what measured: it names the records and the pack (the
  // tuner's own machine only placed the model). One pool is one kind of device.
  DeviceDesc& device = report_.devices[task.plugin];
  if (farm_ && !m.device.empty() && (m.device != device.name || m.driver != device.driver)) {
    if (farm_device_seen_.count(task.plugin) == 0) {
      say("farm: " + task.plugin + " measured on '" + m.device + "' (" + m.driver + ")");
      device.name = m.device;
      device.driver = m.driver;
      farm_device_seen_.insert(task.plugin);
    } else {
      say("farm: warning: " + task.plugin + " also measured on '" + m.device +
          "': a pool should hold one kind of device; the log names each record's device");
    }
  }
  LogRecord r;
  r.workload = task.workload;
  r.plugin = task.plugin;
  r.device = m.device.empty() || !farm_ ? device.name : m.device;
  r.schedule = req.schedule;
  r.knobs = req.knobs;
  r.status = m.status;
  r.median_us = m.median_us;
  r.error = m.error;
  r.timestamp = utc_now("%Y-%m-%dT%H:%M:%SZ");
  r.driver = m.device.empty() || !farm_ ? device.driver : m.driver;
  r.command = options_.command;
  r.stage = stage;
  r.weight = task.weight;
  r.is_default = is_default_config(task, req.schedule, req.knobs);
  if (log_) log_->append_line(to_json_line(r));
  report_.records.push_back(r);
  return r;
}

// Logs one trial's outcome and feeds it to the searcher.
LogRecord TuningRun::record(size_t t, const Point& p, const MeasureRequest& req,
                            const MeasureResult& m) {
  const TuneTask& task = tasks_[t];
  State& s = states_[t];
  const LogRecord r = log_record(t, req, m, "");
  const double cost = m.status == "ok" ? m.median_us : kInf;
  s.searcher->update(p, cost);
  count(t, r, cost);
  ++used_;
  if (m.status != "ok") {
    say("  task " + std::to_string(task.id) + " " + s.space->describe(p) + ": " + m.status + ": " +
        m.error);
  }
  return r;
}

// Measures (task, point) pairs of the search (the defaults included) and returns their records.
std::vector<LogRecord> TuningRun::run_batch(const Batch& batch) {
  if (search_start_ < 0) search_start_ = elapsed();
  std::vector<MeasureRequest> requests;
  for (const auto& [t, p] : batch) requests.push_back(request_for(t, p));
  return farm_ ? run_batch_on_farm(batch, requests) : run_batch_here(batch, requests);
}

// Measured at once on the agents: each measurement's share of the batch's time is its pace.
std::vector<LogRecord> TuningRun::run_batch_on_farm(const Batch& batch,
                                                    const std::vector<MeasureRequest>& requests) {
  const double batch_start = elapsed();
  const std::vector<MeasureResult> results = farm_->measure(requests);
  const double share = (elapsed() - batch_start) / static_cast<double>(results.size());
  longest_step_ = std::max(longest_step_, elapsed() - batch_start);
  std::vector<LogRecord> out;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (results[i].status == "ok") {
      ok_seconds_ += share;
      ++ok_count_;
    }
    out.push_back(record(batch[i].first, batch[i].second, requests[i], results[i]));
    ++searched_;
    notify(static_cast<int>(batch[i].first), i + 1 == batch.size(), false);
  }
  return out;
}

// With compile_jobs > 1, first every candidate is compiled by the workers at once, so that the
// measuring worker finds its kernels in the plugins' caches; then each is measured alone, so
// timings never overlap. A compile error the compile step reported is final (the measuring worker
// would hit the same one); any other outcome there (a crash, a timeout under the parallel load)
// leaves the verdict to the measuring worker, as in a serial run.
std::vector<LogRecord> TuningRun::run_batch_here(const Batch& batch,
                                                 const std::vector<MeasureRequest>& requests) {
  std::vector<MeasureResult> compiled;
  if (compile_jobs_ > 1 && batch.size() > 1) {
    const double compile_start = elapsed();
    compiled = compile_in_parallel(workers_, requests);
    compile_seconds_ += elapsed() - compile_start;
    longest_step_ = std::max(longest_step_, elapsed() - compile_start);
    compiled_count_ += static_cast<int>(requests.size());
  }
  std::vector<LogRecord> out;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (out_of_budget()) break;
    const auto& [t, p] = batch[i];
    const bool compile_failed =
        i < compiled.size() && compiled[i].status == "compile" && compiled[i].reported;
    const double measure_start = elapsed();
    const MeasureResult m = compile_failed ? compiled[i] : workers_[0]->measure(requests[i]);
    longest_step_ = std::max(longest_step_, elapsed() - measure_start);
    if (m.status == "ok") {
      ok_seconds_ += elapsed() - measure_start;
      ++ok_count_;
    }
    out.push_back(record(t, p, requests[i], m));
    ++searched_;
    notify(static_cast<int>(t), i + 1 == batch.size(), false);
  }
  return out;
}

// Defaults first: the baseline every task's speed-up is measured against.
void TuningRun::measure_defaults() {
  Batch defaults;
  for (size_t t = 0; t < tasks_.size(); ++t) {
    if (states_[t].default_done) continue;
    if (used_ + static_cast<int>(defaults.size()) >= options_.trials) break;
    const TuneTask& task = tasks_[t];
    const ScheduleSpace& ds = task.schedules[static_cast<size_t>(task.default_schedule)];
    auto p = states_[t].space->find(ds.name, default_knobs(task));
    if (!p) continue;
    states_[t].searcher->mark_visited(*p);
    defaults.emplace_back(t, *p);
  }
  // In chunks, so a budget in seconds is checked between them.
  const size_t chunk = static_cast<size_t>(std::max(compile_jobs_, batch_size_));
  for (size_t b = 0; b < defaults.size() && !out_of_budget(); b += chunk) {
    const Batch part(defaults.begin() + static_cast<long>(b),
                     defaults.begin() + static_cast<long>(std::min(defaults.size(), b + chunk)));
    const std::vector<LogRecord> records = run_batch(part);
    for (size_t i = 0; i < records.size(); ++i) {
      if (records[i].status == "ok") report_.tasks[part[i].first].default_us = records[i].median_us;
    }
  }
}

// Batches to the task the scheduler picks until the budget is spent or every task is finished.
void TuningRun::search() {
  // The even scheduler's shares of what the defaults left, fixed before any search result.
  std::vector<int> share(tasks_.size(), 0), taken(tasks_.size(), 0);
  if (options_.scheduler == "even" && !tasks_.empty()) {
    const int left = std::max(0, options_.trials - used_), n = static_cast<int>(tasks_.size());
    for (int t = 0; t < n; ++t) share[static_cast<size_t>(t)] = left / n + (t < left % n ? 1 : 0);
  }
  while (!out_of_budget()) {
    const int pick = next_task(share, taken);
    if (pick < 0) break;
    const size_t t = static_cast<size_t>(pick);
    int n = std::min(batch_size_, options_.trials - used_);
    if (options_.scheduler == "even") n = std::min(n, share[t] - taken[t]);
    taken[t] += n;
    Batch batch;
    for (const Point& p : states_[t].searcher->propose(n)) batch.emplace_back(t, p);
    if (batch.empty()) {
      report_.tasks[t].finished = true;
      continue;
    }
    run_batch(batch);
  }
  for (size_t t = 0; t < tasks_.size(); ++t) {
    report_.tasks[t].finished = report_.tasks[t].finished || stopped(t);
  }
}

// The task to search next, or -1 when none is available; marks the unavailable ones finished.
int TuningRun::next_task(const std::vector<int>& share, const std::vector<int>& taken) {
  std::vector<SchedulerTask> view(tasks_.size());
  for (size_t t = 0; t < tasks_.size(); ++t) {
    view[t].weight = tasks_[t].weight;
    view[t].best_after = states_[t].best_after;
    view[t].available = !report_.tasks[t].finished && !stopped(t);
    report_.tasks[t].finished = !view[t].available;
  }
  if (options_.scheduler != "even") return pick_task(view, batch_size_);
  // The available task furthest from its share (the first of equals).
  int pick = -1;
  auto left = [&](size_t t) { return share[t] - taken[t]; };
  for (size_t t = 0; t < tasks_.size(); ++t) {
    if (view[t].available && left(t) > 0 &&
        (pick < 0 || left(t) > left(static_cast<size_t>(pick)))) {
      pick = static_cast<int>(t);
    }
  }
  return pick;
}

// Whether task t's search is over by itself: its space is exhausted or it stopped early.
bool TuningRun::stopped(size_t t) const {
  const State& s = states_[t];
  return s.searcher->exhausted() ||
         (options_.early_stopping > 0 && s.since_best >= options_.early_stopping);
}

// Finalists: per task its `verify` fastest distinct configs and its default, measured again in
// `verify_rounds` rounds that take turns (so a slow or fast spell of the machine falls on all of
// them); best_records then takes each config's median over its rounds.
void TuningRun::verify() {
  const Batch finalists = pick_finalists();
  say("verifying " + std::to_string(finalists.size()) + " finalists in " +
      std::to_string(options_.verify_rounds) + " rounds");
  const int verified = measure_finalists(finalists);
  if (verified < static_cast<int>(finalists.size()) * options_.verify_rounds) {
    say("verification stopped at the budget after " + std::to_string(verified) + " of " +
        std::to_string(finalists.size() * options_.verify_rounds) +
        " measurements; configs verified in fewer rounds keep the median of those they had");
  }
  adopt_verified();
}

TuningRun::Batch TuningRun::pick_finalists() {
  Batch finalists;
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const TuneTask& task = tasks_[t];
    const std::string device = report_.devices[task.plugin].name;
    std::vector<const LogRecord*> trials;
    for (const LogRecord& r : report_.records) {
      if (r.plugin == task.plugin && r.workload == task.workload && r.device == device &&
          r.status == "ok" && r.stage.empty()) {
        trials.push_back(&r);
      }
    }
    std::stable_sort(trials.begin(), trials.end(), [](const LogRecord* a, const LogRecord* b) {
      return a->median_us < b->median_us;
    });
    std::vector<Point> picked;
    auto pick = [&](const std::string& schedule,
                    const std::vector<std::pair<std::string, int64_t>>& knobs) {
      const auto p = states_[t].space->find(schedule, knobs);
      if (p && std::find(picked.begin(), picked.end(), *p) == picked.end()) picked.push_back(*p);
    };
    for (const LogRecord* r : trials) {
      if (static_cast<int>(picked.size()) >= options_.verify) break;
      pick(r->schedule, r->knobs);
    }
    const ScheduleSpace& ds = task.schedules[static_cast<size_t>(task.default_schedule)];
    if (!trials.empty()) pick(ds.name, default_knobs(task));
    for (const Point& p : picked) finalists.emplace_back(t, p);
  }
  return finalists;
}

// Measures the finalists in their rounds until the budget is spent; returns how many ran.
int TuningRun::measure_finalists(const Batch& finalists) {
  int verified = 0;
  for (int round = 0; round < options_.verify_rounds; ++round) {
    if (farm_) {
      // A round at once on the agents, in batches so the budget is checked between them.
      for (size_t b = 0; b < finalists.size(); b += static_cast<size_t>(batch_size_)) {
        if (options_.budget_s > 0 && elapsed() > options_.budget_s) break;
        std::vector<MeasureRequest> requests;
        const size_t end = std::min(finalists.size(), b + static_cast<size_t>(batch_size_));
        for (size_t i = b; i < end; ++i) {
          requests.push_back(request_for(finalists[i].first, finalists[i].second));
        }
        const std::vector<MeasureResult> results = farm_->measure(requests);
        for (size_t i = b; i < end; ++i) {
          log_record(finalists[i].first, requests[i - b], results[i - b], "verify");
          ++verified;
        }
      }
      continue;
    }
    for (const auto& [t, p] : finalists) {
      if (options_.budget_s > 0 && elapsed() > options_.budget_s) break;
      const MeasureRequest req = request_for(t, p);
      log_record(t, req, workers_[0]->measure(req), "verify");
      ++verified;
    }
  }
  return verified;
}

// Each task's best and its default's time, both as verified (so the speed-up compares like with
// like).
void TuningRun::adopt_verified() {
  const auto best = best_records(report_.records);
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const TuneTask& task = tasks_[t];
    const auto it = best.find({task.plugin, task.workload});
    if (it == best.end() || it->second.stage != "verify") continue;
    report_.tasks[t].best = it->second;
    std::vector<double> times;
    for (const LogRecord& r : report_.records) {
      if (r.stage == "verify" && r.status == "ok" && r.plugin == task.plugin &&
          r.workload == task.workload && is_default_config(task, r.schedule, r.knobs)) {
        times.push_back(r.median_us);
      }
    }
    if (!times.empty()) report_.tasks[t].default_us = median_of(std::move(times));
  }
}

}  // namespace

TuneReport run_tuning(const TuneOptions& options,
                      const std::function<void(const TuneReport&, const TuneStatus&)>& on_update) {
  return TuningRun(options, on_update).run();
}

}  // namespace tessera::tune
