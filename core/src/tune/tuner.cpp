// The tuner's JSON-lines log, pack building, and the task scheduler: every task's default config
// first, then batches to the task with the largest weight x best latency.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/tuner.hpp"

namespace tessera::tune {
namespace {

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// A minimal reader for the flat records this file writes: "key": "string" | number | {knobs}.
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
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out += s_[i_++];
    }
    if (!eat('"')) throw Error("unterminated string");
    return out;
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

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw Error("tuner: cannot find this executable (/proc/self/exe)");
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

std::string to_json_line(const LogRecord& r) {
  std::ostringstream o;
  o.precision(10);
  o << "{\"workload\": \"" << json_escape(r.workload) << "\", \"plugin\": \""
    << json_escape(r.plugin) << "\", \"device\": \"" << json_escape(r.device)
    << "\", \"schedule\": \"" << json_escape(r.schedule) << "\", \"knobs\": {";
  for (size_t i = 0; i < r.knobs.size(); ++i) {
    o << (i ? ", " : "") << "\"" << json_escape(r.knobs[i].first) << "\": " << r.knobs[i].second;
  }
  o << "}, \"status\": \"" << json_escape(r.status) << "\", \"median_us\": " << r.median_us
    << ", \"error\": \"" << json_escape(r.error) << "\", \"timestamp\": \""
    << json_escape(r.timestamp) << "\"";
  if (!r.driver.empty()) o << ", \"driver\": \"" << json_escape(r.driver) << "\"";
  if (!r.command.empty()) o << ", \"command\": \"" << json_escape(r.command) << "\"";
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
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (auto r = parse_log_line(line)) out.push_back(std::move(*r));
  }
  return out;
}

std::map<std::pair<std::string, std::string>, LogRecord> best_records(
    const std::vector<LogRecord>& records) {
  std::map<std::pair<std::string, std::string>, LogRecord> best;
  for (const LogRecord& r : records) {
    if (r.status != "ok" || !(r.median_us > 0)) continue;
    auto key = std::make_pair(r.plugin, r.workload);
    auto it = best.find(key);
    if (it == best.end() || r.median_us < it->second.median_us) best[key] = r;
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

TuneReport run_tuning(const TuneOptions& options) {
  TuneReport report;
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  const std::vector<TuneTask> tasks =
      extract_tasks(options.model, options.targets, &report.devices);
  const std::string worker = options.worker_exe.empty() ? self_exe() : options.worker_exe;
  std::vector<LogRecord> previous;
  if (options.resume && !options.log_path.empty()) previous = read_log(options.log_path);
  report.records = previous;
  std::ofstream log;
  if (!options.log_path.empty()) {
    log.open(options.log_path, std::ios::app);
    if (!log) throw Error("tuner: cannot open log '" + options.log_path + "' for appending");
  }

  struct State {
    std::unique_ptr<SearchSpace> space;
    std::unique_ptr<Searcher> searcher;
    double best = std::numeric_limits<double>::infinity();
    int since_best = 0;
    bool done = false;
    bool default_done = false;
  };
  std::vector<State> states(tasks.size());
  std::map<std::string, std::shared_ptr<CostModelData>> models;  // by op
  for (size_t t = 0; t < tasks.size(); ++t) {
    const TuneTask& task = tasks[t];
    TaskResult tr;
    tr.task = task;
    report.tasks.push_back(tr);
    State& s = states[t];
    s.space = std::make_unique<SearchSpace>(task.schedules);
    auto& shared = models[task.op];
    if (!shared) shared = std::make_shared<CostModelData>();
    s.searcher = make_searcher(options.tuner, *s.space, options.seed + t,
                               {static_cast<float>(std::log10(task.flops + 1.0))}, shared);
    const std::string device = report.devices[task.plugin].name;
    for (const LogRecord& r : previous) {
      if (r.plugin != task.plugin || r.workload != task.workload || r.device != device) continue;
      auto p = s.space->find(r.schedule, r.knobs);
      if (!p) continue;
      const double cost = r.status == "ok" ? r.median_us : std::numeric_limits<double>::infinity();
      s.searcher->update(*p, cost);
      report.tasks[t].trials++;
      if (cost < s.best) {
        s.best = cost;
        report.tasks[t].best = r;
      }
      const ScheduleSpace& ds = task.schedules[static_cast<size_t>(task.default_schedule)];
      if (r.schedule == ds.name) {
        bool same = true;
        for (size_t k = 0; k < ds.knobs.size(); ++k) {
          same &= r.knobs[k].second == ds.defaults[k];
        }
        if (same) {
          s.default_done = true;
          if (r.status == "ok") report.tasks[t].default_us = r.median_us;
        }
      }
    }
    say("task " + std::to_string(task.id) + ": " + task.plugin + " " + task.workload + " x" +
        std::to_string(task.weight) + " (" + std::to_string(s.space->size()) + " configs)");
  }

  const auto start = std::chrono::steady_clock::now();
  int used = 0;
  auto out_of_budget = [&]() {
    if (used >= options.trials) return true;
    if (options.budget_s <= 0) return false;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
           options.budget_s;
  };
  auto run_one = [&](size_t t, const Point& p) {
    const TuneTask& task = tasks[t];
    State& s = states[t];
    MeasureRequest req;
    req.model = options.model;
    req.node = task.node;
    req.target = task.target;
    req.schedule = s.space->schedules()[static_cast<size_t>(p.schedule)].name;
    req.knobs = s.space->knobs(p);
    req.repeats = options.repeats;
    req.timeout_s = options.timeout_s;
    const MeasureResult m = measure(worker, req);
    LogRecord r;
    r.workload = task.workload;
    r.plugin = task.plugin;
    r.device = report.devices[task.plugin].name;
    r.schedule = req.schedule;
    r.knobs = req.knobs;
    r.status = m.status;
    r.median_us = m.median_us;
    r.error = m.error;
    r.timestamp = utc_now("%Y-%m-%dT%H:%M:%SZ");
    r.driver = report.devices[task.plugin].driver;
    r.command = options.command;
    if (log.is_open()) {
      log << to_json_line(r) << "\n";
      log.flush();
    }
    report.records.push_back(r);
    const double cost = m.status == "ok" ? m.median_us : std::numeric_limits<double>::infinity();
    s.searcher->update(p, cost);
    report.tasks[t].trials++;
    ++used;
    if (cost < s.best) {
      s.best = cost;
      s.since_best = 0;
      report.tasks[t].best = r;
    } else {
      ++s.since_best;
    }
    if (m.status != "ok") {
      say("  task " + std::to_string(task.id) + " " + s.space->describe(p) + ": " + m.status +
          ": " + m.error);
    }
    return r;
  };

  // Defaults first: the baseline every task's speed-up is measured against.
  for (size_t t = 0; t < tasks.size() && !out_of_budget(); ++t) {
    State& s = states[t];
    if (s.default_done) continue;
    const TuneTask& task = tasks[t];
    const ScheduleSpace& ds = task.schedules[static_cast<size_t>(task.default_schedule)];
    std::vector<std::pair<std::string, int64_t>> kv;
    for (size_t k = 0; k < ds.knobs.size(); ++k) kv.emplace_back(ds.knobs[k].name, ds.defaults[k]);
    auto p = s.space->find(ds.name, kv);
    if (!p) continue;
    s.searcher->mark_visited(*p);
    const LogRecord r = run_one(t, *p);
    if (r.status == "ok") report.tasks[t].default_us = r.median_us;
  }
  while (!out_of_budget()) {
    // The task whose improvement matters most: weight x best latency (unmeasured first).
    int pick = -1;
    double score = -1;
    for (size_t t = 0; t < tasks.size(); ++t) {
      State& s = states[t];
      if (s.done || s.searcher->exhausted()) continue;
      if (options.early_stopping > 0 && s.since_best >= options.early_stopping) continue;
      const double v =
          std::isfinite(s.best) ? tasks[t].weight * s.best : std::numeric_limits<double>::max();
      if (v > score) {
        score = v;
        pick = static_cast<int>(t);
      }
    }
    if (pick < 0) break;
    State& s = states[static_cast<size_t>(pick)];
    const int n = std::min(options.batch, options.trials - used);
    const std::vector<Point> batch = s.searcher->propose(n);
    if (batch.empty()) {
      s.done = true;
      continue;
    }
    for (const Point& p : batch) {
      if (out_of_budget()) break;
      run_one(static_cast<size_t>(pick), p);
    }
    const TaskResult& tr = report.tasks[static_cast<size_t>(pick)];
    std::ostringstream line;
    line << "task " << pick << " trials " << tr.trials << " best ";
    if (tr.best) {
      line << tr.best->median_us << " us " << tr.best->schedule;
    } else {
      line << "none";
    }
    line << " (used " << used << "/" << options.trials << ")";
    say(line.str());
  }
  for (const TaskResult& tr : report.tasks) {
    if (tr.best) report.estimated_total_us += tr.task.weight * tr.best->median_us;
  }
  return report;
}

}  // namespace tessera::tune
