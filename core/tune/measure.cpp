// The parent's side of measurement: MeasureWorker runs the caller's worker command (`tessera tune
// --worker`, or another program that calls serve_worker) as children (posix_spawn, so the parent
// never forks with OpenCL state) and talks to each over a Unix socket on the child's fd 3, one
// line per request, phase marker and result. A per-candidate timeout is enforced here: a child
// that overruns is killed ("timeout"); one that dies is classified by the phase it reported last
// ("compile" / "run"; "crash" before any), and the next candidate gets a fresh child.
// compile_in_parallel() spreads a batch's compile-only requests over several workers.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "tessera/file_util.hpp"
#include "tessera/tuner.hpp"

extern char** environ;

namespace tessera::tune {
namespace {

// Seconds a (re)started worker may take to load the plugins and import the model.
constexpr double kStartupAllowanceS = 60.0;

// Fields are "key=value" separated by tabs; a value's backslashes, tabs and newlines are escaped
// so that a request or result is always one line.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> split_fields(const std::string& line) {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string field;
  auto flush = [&]() {
    const size_t eq = field.find('=');
    if (eq != std::string::npos) fields.emplace_back(field.substr(0, eq), field.substr(eq + 1));
    field.clear();
  };
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\t') {
      flush();
    } else if (c == '\\' && i + 1 < line.size()) {
      const char n = line[++i];
      field += n == 't' ? '\t' : n == 'n' ? '\n' : n;
    } else {
      field += c;
    }
  }
  flush();
  return fields;
}

double elapsed_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Waits up to `grace_s` for the child to exit, then kills it; returns its wait status.
int reap(pid_t pid, double grace_s) {
  const auto start = std::chrono::steady_clock::now();
  int wstatus = 0;
  while (waitpid(pid, &wstatus, WNOHANG) == 0) {
    if (elapsed_since(start) > grace_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &wstatus, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return wstatus;
}

// This process's private directory for its workers' stderr files: made by mkdtemp (mode 0700, an
// unpredictable name, never an existing directory), so no other user can plant a file or symlink
// in it; removed with its files when the process exits.
class WorkerDir {
 public:
  static const std::string& path() {
    static const WorkerDir dir;
    return dir.path_;
  }

 private:
  WorkerDir() : owner_(getpid()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-tune-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      throw Error("tuner: cannot create a temporary directory '" + tmpl +
                  "': " + std::strerror(errno));
    }
    path_ = tmpl;
  }
  ~WorkerDir() {
    if (getpid() != owner_) return;  // a forked child leaves the parent's directory alone
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path_;
  pid_t owner_;
};

std::string worker_dir() {
  return WorkerDir::path();
}

// "exited with 2", "killed by signal 6": how a child ended, from its wait status.
std::string exit_text(int wstatus) {
  return WIFSIGNALED(wstatus) ? "killed by signal " + std::to_string(WTERMSIG(wstatus))
                              : "exited with " + std::to_string(WEXITSTATUS(wstatus));
}

}  // namespace

std::string worker_command_text(const WorkerCommand& command) {
  std::string text;
  for (const std::string& arg : command) {
    if (!text.empty()) text += ' ';
    text += arg.empty() || arg.find_first_of(" \t'\"") != std::string::npos ? "'" + arg + "'" : arg;
  }
  return text;
}

void check_worker_command(const WorkerCommand& command) {
  if (command.empty() || command[0].empty()) {
    throw Error(
        "tuner: no worker command: TuneOptions::worker_command names the measuring child's "
        "program and arguments, e.g. {\"/usr/bin/tessera\", \"tune\", \"--worker\"}");
  }
  std::error_code ec;
  const std::string& program = command[0];
  const char* problem = !std::filesystem::exists(program, ec)            ? "does not exist"
                        : !std::filesystem::is_regular_file(program, ec) ? "is not a regular file"
                        : ::access(program.c_str(), X_OK) != 0           ? "is not executable"
                                                                         : nullptr;
  if (problem) {
    throw Error("tuner: worker command '" + worker_command_text(command) + "': '" + program + "' " +
                problem +
                "; give the path of `tessera` (with `tune --worker`) or of another program "
                "that serves the tuner's requests (tessera::tune::serve_worker)");
  }
}

std::string encode_request(const MeasureRequest& r) {
  std::ostringstream o;
  o << "model=" << escape(r.model) << "\tnode=" << escape(r.node) << "\ttarget=" << escape(r.target)
    << "\tschedule=" << escape(r.schedule) << "\trepeats=" << r.repeats
    << "\tcompile_only=" << (r.compile_only ? 1 : 0) << "\tcache_dir=" << escape(r.cache_dir)
    << "\ttimeout_s=" << r.timeout_s;
  for (const auto& [name, value] : r.knobs) o << "\tknob=" << escape(name) << "=" << value;
  return o.str();
}

std::optional<MeasureRequest> decode_request(const std::string& line) {
  try {
    MeasureRequest r;
    bool any = false;
    for (const auto& [key, value] : split_fields(line)) {
      any = true;
      if (key == "model") r.model = value;
      if (key == "node") r.node = value;
      if (key == "target") r.target = value;
      if (key == "schedule") r.schedule = value;
      if (key == "repeats") r.repeats = std::stoi(value);
      if (key == "compile_only") r.compile_only = value == "1";
      if (key == "cache_dir") r.cache_dir = value;
      if (key == "timeout_s") r.timeout_s = std::stod(value);  // a farm agent enforces it
      if (key == "knob") {
        const size_t eq = value.rfind('=');
        if (eq == std::string::npos) return std::nullopt;
        r.knobs.emplace_back(value.substr(0, eq), std::stoll(value.substr(eq + 1)));
      }
    }
    if (!any) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string encode_result(const MeasureResult& r) {
  std::ostringstream o;
  o.precision(17);
  o << "status=" << escape(r.status) << "\tmedian_us=" << r.median_us
    << "\tmax_error=" << r.max_error << "\terror=" << escape(r.error);
  if (!r.device.empty()) o << "\tdevice=" << escape(r.device) << "\tdriver=" << escape(r.driver);
  return o.str();
}

std::optional<MeasureResult> decode_result(const std::string& line) {
  try {
    MeasureResult r;
    for (const auto& [key, value] : split_fields(line)) {
      if (key == "status") r.status = value;
      if (key == "median_us") r.median_us = std::stod(value);
      if (key == "max_error") r.max_error = std::stod(value);
      if (key == "error") r.error = value;
      if (key == "device") r.device = value;
      if (key == "driver") r.driver = value;
    }
    if (r.status.empty()) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

MeasureWorker::MeasureWorker(WorkerCommand command, bool persistent)
    : command_(std::move(command)), persistent_(persistent) {}

MeasureWorker::~MeasureWorker() {
  stop();
}

bool MeasureWorker::start(std::string* error) {
  // Several workers start at once from compile_in_parallel()'s threads.
  static std::atomic<int> counter{0};
  if (command_.empty()) {
    *error = "no worker command given";
    return false;
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    *error = std::string("cannot create the worker's socket: ") + std::strerror(errno);
    return false;
  }
  // Both ends are close-on-exec, so no other child inherits them (a worker's death must close
  // its stream); dup2 onto fd 3 gives the child its end. An end that already is fd 3 is moved
  // first, since dup2 onto itself would keep close-on-exec.
  int child_end = fds[1];
  if (child_end == 3) {
    child_end = fcntl(fds[1], F_DUPFD_CLOEXEC, 4);
    close(fds[1]);
  }
  err_path_ = worker_dir() + "/" + std::to_string(counter++) + ".err";
  std::vector<std::string> args = command_;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The child's chatter (driver warnings) stays out of the progress output and the stream.
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  // O_EXCL | O_NOFOLLOW: the name is new in a private directory; never reuse or follow a link.
  posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  posix_spawn_file_actions_adddup2(&actions, child_end, 3);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, command_[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(child_end);
  if (rc != 0) {
    close(fds[0]);
    *error = "cannot start worker '" + worker_command_text(command_) + "': " + std::strerror(rc);
    return false;
  }
  pid_ = pid;
  fd_ = fds[0];
  served_ = 0;
  buffer_.clear();
  err_offset_ = 0;
  ++starts_;
  return true;
}

void MeasureWorker::stop() {
  if (pid_ <= 0) return;
  close(fd_);  // the child's read sees the end of the stream and exits
  fd_ = -1;
  reap(pid_, 2);
  pid_ = -1;
  std::error_code ec;
  std::filesystem::remove(err_path_, ec);
}

std::string MeasureWorker::new_stderr() {
  std::string text;
  try {
    text = read_file(err_path_, "worker log", kMaxTuneLogBytes);
  } catch (const std::exception&) {
  }
  text = text.substr(std::min(text.size(), err_offset_));
  err_offset_ += text.size();
  if (text.size() > 300) text = text.substr(text.size() - 300);
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

MeasureWorker::Read MeasureWorker::next_line(std::string* line, double wait_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (true) {
    const size_t eol = buffer_.find('\n');
    if (eol != std::string::npos) {
      *line = buffer_.substr(0, eol);
      buffer_.erase(0, eol + 1);
      return Read::kLine;
    }
    const double left = wait_s - elapsed_since(t0);
    if (left <= 0) return Read::kTimeout;
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min(left, 60.0) * 1000) + 1);
    if (ready < 0 && errno != EINTR) return Read::kClosed;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Read::kClosed;  // the stream ended: the child is exiting or gone
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

int MeasureWorker::end_child(bool kill_first, std::string* err_text) {
  if (kill_first) kill(pid_, SIGKILL);
  // Otherwise the stream ended: the child is exiting; give it a moment, then make sure.
  const int wstatus = reap(pid_, 2);
  close(fd_);
  fd_ = -1;
  pid_ = -1;
  *err_text = new_stderr();
  std::error_code ec;
  std::filesystem::remove(err_path_, ec);
  return wstatus;
}

MeasureResult MeasureWorker::measure(const MeasureRequest& request) {
  MeasureResult result;
  result.reported = false;
  // The candidate's timeout starts when the worker reports its first phase; before that it is
  // starting up (plugin load, model import), which a loaded machine can make slow and which is
  // no fault of the candidate, so it gets its own, wider allowance.
  auto t0 = std::chrono::steady_clock::now();
  double limit = std::max(kStartupAllowanceS, 4.0 * request.timeout_s);
  if (pid_ <= 0) {
    std::string error;
    if (!start(&error)) {
      result.status = "crash";
      result.error = error;
      return result;
    }
  }
  const std::string line = encode_request(request) + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    // MSG_NOSIGNAL: a worker that died must not take the parent with it (SIGPIPE).
    const ssize_t n = send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the worker is gone; reading below finds out how
    sent += static_cast<size_t>(n);
  }
  std::string phase;
  bool timed_out = false;
  while (true) {
    std::string msg;
    const Read read = next_line(&msg, limit - elapsed_since(t0));
    if (read == Read::kClosed) break;
    if (read == Read::kTimeout) {
      timed_out = true;
      break;
    }
    if (msg.rfind("phase ", 0) == 0) {
      if (phase.empty()) {
        t0 = std::chrono::steady_clock::now();
        limit = request.timeout_s;
      }
      phase = msg.substr(6);
    } else if (msg.rfind("result ", 0) == 0) {
      if (auto r = decode_result(msg.substr(7))) {
        // A failed run may leave the driver's context broken for the next candidate, and the
        // plugin's in-memory program pool grows with every candidate: a fresh child then.
        if (!persistent_ || r->status == "run" || ++served_ >= kMaxServed) stop();
        return *r;
      }
    }
    // Anything else ("ready", which check_start() waits for) is no part of the answer.
  }
  std::string err_text;
  const int wstatus = end_child(timed_out, &err_text);
  const std::string during = phase.empty() ? "" : " while " + phase;
  if (timed_out) {
    result.status = "timeout";
    result.error = phase.empty()
                       ? "worker did not start within " + std::to_string(limit) +
                             " s (plugin load and model import)"
                       : "worker exceeded " + std::to_string(request.timeout_s) + " s" + during;
    return result;
  }
  result.status = phase == "compiling" ? "compile" : phase == "running" ? "run" : "crash";
  result.error = "worker " + exit_text(wstatus) + during;
  if (!err_text.empty()) result.error += ": " + err_text;
  return result;
}

void MeasureWorker::check_start() {
  const std::string who = "tuner: worker command '" + worker_command_text(command_) + "'";
  if (pid_ <= 0) {
    std::string error;
    if (!start(&error)) throw Error(who + ": " + error);
  }
  const auto t0 = std::chrono::steady_clock::now();
  Read read;
  std::string msg;
  while ((read = next_line(&msg, kStartupAllowanceS - elapsed_since(t0))) == Read::kLine) {
    if (msg == "ready") return;
  }
  const bool timed_out = read == Read::kTimeout;
  std::string err_text;
  const int wstatus = end_child(timed_out, &err_text);
  const std::string how =
      timed_out
          ? "did not answer within " + std::to_string(static_cast<int>(kStartupAllowanceS)) + " s"
          : exit_text(wstatus);
  throw Error(who + " " + how + " before serving a request" +
              (err_text.empty() ? "" : " (stderr: " + err_text + ")") +
              "; it must serve the tuner's requests on fd 3, as `tessera tune --worker` does");
}

MeasureResult measure(const WorkerCommand& command, const MeasureRequest& request) {
  MeasureWorker worker(command, /*persistent=*/false);
  return worker.measure(request);
}

std::vector<MeasureResult> compile_in_parallel(
    const std::vector<std::unique_ptr<MeasureWorker>>& workers,
    std::vector<MeasureRequest> requests) {
  std::vector<MeasureResult> results(requests.size());
  for (MeasureRequest& r : requests) r.compile_only = true;
  const size_t jobs = std::max<size_t>(1, std::min(workers.size(), requests.size()));
  // Worker w compiles requests w, w + jobs, ...; each iteration only waits on its child, so the
  // arena's width is the number of children busy at once. measure() never throws for a child's
  // failure, so no iteration can end the loop. (global_control: TBB otherwise caps its workers
  // at the number of cores.)
  tbb::global_control width(tbb::global_control::max_allowed_parallelism, jobs);
  tbb::task_arena arena(static_cast<int>(jobs));
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, jobs, 1),
        [&](const tbb::blocked_range<size_t>& range) {
          for (size_t w = range.begin(); w != range.end(); ++w) {
            for (size_t i = w; i < requests.size(); i += jobs) {
              results[i] = workers[w]->measure(requests[i]);
            }
          }
        },
        tbb::simple_partitioner());
  });
  return results;
}

}  // namespace tessera::tune
