// What the tuner shows while it runs and when it ends: the live per-task table (a bar per task,
// latency, GFLOPS, trials) with the estimated total latency, the plain one-line form for logs and
// pipes, the end-of-run summary, and the display that redraws the table on a terminal.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <tuple>
#include <vector>

#include "tessera/tuner.hpp"

namespace tessera::tune {
namespace {

std::string printf_string(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof(buf), format, args);
  va_end(args);
  return buf;
}

std::string us_text(double us) {
  return us > 0 ? printf_string("%.1f", us) : "-";
}

double best_us(const TaskResult& t) {
  return t.best ? t.best->median_us : 0;
}

std::string gflops_text(const TaskResult& t) {
  const double us = best_us(t);
  // FLOP / us / 1e3 = GFLOP/s.
  return t.task.flops > 0 && us > 0 ? printf_string("%.2f", t.task.flops / us / 1e3) : "-";
}

std::string totals_text(const TuneReport& report) {
  if (!(report.estimated_total_us > 0)) return "estimated total latency: -";
  std::string s = "estimated total latency: " + us_text(report.estimated_total_us) + " us";
  if (report.estimated_default_total_us > report.estimated_total_us) {
    s += " (default " + us_text(report.estimated_default_total_us) + " us, " +
         printf_string("%.2fx", report.estimated_default_total_us / report.estimated_total_us) +
         ")";
  }
  return s;
}

std::string config_text(const LogRecord& r) {
  std::string s = r.schedule + "{";
  for (size_t k = 0; k < r.knobs.size(); ++k) {
    s += (k ? "," : "") + r.knobs[k].first + "=" + std::to_string(r.knobs[k].second);
  }
  return s + "}";
}

}  // namespace

std::string progress_bar(double fraction, int width) {
  if (!(fraction > 0)) fraction = 0;
  fraction = std::min(fraction, 1.0);
  const int full = static_cast<int>(std::lround(fraction * width));
  return "[" + std::string(static_cast<size_t>(full), '#') +
         std::string(static_cast<size_t>(width - full), '-') + "]";
}

// `text` cut to `width` columns ("DepthToSpace~" for a narrower column), so a long plugin or op
// name cannot push the columns after it out of line.
std::string fit(const std::string& text, size_t width) {
  return text.size() <= width ? text : text.substr(0, width - 1) + "~";
}

std::string format_progress_table(const TuneReport& report, const TuneStatus& status,
                                  int max_lines) {
  std::string out = printf_string("%-4s %-8s %-14s %-12s %10s %8s %6s %6s\n", "ID", "plugin", "op",
                                  "progress", "latency us", "GFLOPS", "trials", "weight");
  // Header and totals take 2 lines; a cut table also says what it left out.
  std::vector<const TaskResult*> shown;
  for (const TaskResult& t : report.tasks) shown.push_back(&t);
  int left_out = 0;
  if (max_lines > 0 && static_cast<int>(shown.size()) + 2 > max_lines) {
    const size_t room = static_cast<size_t>(std::max(max_lines - 3, 1));
    // The current task first, then the unfinished ones holding the most estimated time.
    std::stable_sort(shown.begin(), shown.end(), [&](const TaskResult* a, const TaskResult* b) {
      const auto key = [&](const TaskResult* t) {
        const double best = best_us(*t) > 0 ? best_us(*t) : t->default_us;
        return std::make_tuple(t->task.id == status.current, !t->finished,
                               t->task.weight * best);
      };
      return key(a) > key(b);
    });
    left_out = static_cast<int>(shown.size() - std::min(room, shown.size()));
    shown.resize(std::min(room, shown.size()));
    std::sort(shown.begin(), shown.end(),
              [](const TaskResult* a, const TaskResult* b) { return a->task.id < b->task.id; });
  }
  for (const TaskResult* task : shown) {
    const TaskResult& t = *task;
    // A task's bar: its trials over what it could get (its space, at most the run's budget).
    const uint64_t cap =
        std::min<uint64_t>(t.space_size, static_cast<uint64_t>(std::max(status.trials, 1)));
    const std::string bar =
        t.finished ? "[  done  ]" : progress_bar(cap ? double(t.trials) / double(cap) : 0, 8);
    const std::string id = std::to_string(t.task.id) + (t.task.id == status.current ? "*" : "");
    out +=
        printf_string("%-4s %-8s %-14s %-12s %10s %8s %6d %6d\n", id.c_str(),
                      fit(t.task.plugin, 8).c_str(), fit(t.task.op, 14).c_str(), bar.c_str(),
                      us_text(best_us(t)).c_str(),
                      gflops_text(t).c_str(), t.trials, t.task.weight);
  }
  if (left_out > 0) {
    out += printf_string("     ... %d more task(s) not shown, to fit the terminal\n", left_out);
  }
  out += totals_text(report) +
         printf_string("   trials %d/%d   %.0f s\n", status.used, status.trials, status.elapsed_s);
  return out;
}

std::string format_progress_line(const TuneReport& report, const TuneStatus& status) {
  std::string out =
      printf_string("[trials %d/%d, %.0f s] ", status.used, status.trials, status.elapsed_s);
  const TaskResult* t = nullptr;
  for (const TaskResult& r : report.tasks) {
    if (r.task.id == status.current) t = &r;
  }
  if (t) {
    out += "task " + std::to_string(t->task.id) + " " + t->task.plugin + " " + t->task.op + ": " +
           std::to_string(t->trials) + " trials, best " + us_text(best_us(*t)) + " us, " +
           gflops_text(*t) + " GFLOPS; ";
  } else if (status.finished) {
    out += "done; ";
  }
  return out + totals_text(report);
}

std::string format_summary(const TuneReport& report) {
  std::string out =
      printf_string("%-4s %-8s %-14s %6s %11s %10s %8s %6s  %s\n", "ID", "plugin", "op", "weight",
                    "default us", "best us", "speed-up", "trials", "errors");
  for (const TaskResult& t : report.tasks) {
    const double best = best_us(t);
    const std::string speedup =
        t.default_us > 0 && best > 0 ? printf_string("%.2fx", t.default_us / best) : "-";
    std::string errors;
    for (const auto& [status, n] : t.errors) {
      errors += (errors.empty() ? "" : " ") + status + ":" + std::to_string(n);
    }
    out += printf_string("%-4d %-8s %-14s %6d %11s %10s %8s %6d  %s\n", t.task.id,
                         fit(t.task.plugin, 8).c_str(), fit(t.task.op, 14).c_str(), t.task.weight,
                         us_text(t.default_us).c_str(), us_text(best).c_str(), speedup.c_str(),
                         t.trials, errors.empty() ? "-" : errors.c_str());
  }
  out += printf_string("estimated total latency of tuned nodes: %s us before, %s us after",
                       us_text(report.estimated_default_total_us).c_str(),
                       us_text(report.estimated_total_us).c_str());
  if (report.estimated_total_us > 0 && report.estimated_default_total_us > 0) {
    out += printf_string(" (%.2fx)", report.estimated_default_total_us / report.estimated_total_us);
  }
  out += "\nbest config per task:\n";
  for (const TaskResult& t : report.tasks) {
    out += printf_string("%-4d %s\n     %s\n", t.task.id,
                         t.best ? config_text(*t.best).c_str() : "- (nothing ok)",
                         t.task.workload.c_str());
  }
  return out;
}

void ProgressDisplay::erase() {
  // Cursor up over the table drawn last, then clear to the end of the screen.
  if (drawn_lines_ > 0) write_("\r\x1b[" + std::to_string(drawn_lines_) + "A\x1b[J");
  drawn_lines_ = 0;
}

void ProgressDisplay::event(const std::string& line) {
  if (!tty_) {
    write_(line + "\n");
    return;
  }
  erase();
  write_(line + "\n");
  if (!last_table_.empty()) {
    write_(last_table_);
    drawn_lines_ = static_cast<int>(std::count(last_table_.begin(), last_table_.end(), '\n'));
  }
}

void ProgressDisplay::update(const TuneReport& report, const TuneStatus& status) {
  if (!tty_) {
    if (status.batch_end) write_(format_progress_line(report, status) + "\n");
    return;
  }
  erase();
  // Two lines stay free: the event line above the table and the cursor's line below it.
  const int rows = rows_ ? rows_() : 0;
  last_table_ = format_progress_table(report, status, rows > 4 ? rows - 2 : 0);
  write_(last_table_);
  drawn_lines_ = static_cast<int>(std::count(last_table_.begin(), last_table_.end(), '\n'));
  if (status.finished) {
    // The last table stays on the screen.
    drawn_lines_ = 0;
    last_table_.clear();
  }
}

}  // namespace tessera::tune
