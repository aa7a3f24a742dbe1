// tessera-soak: N threads x M sessions x K runs of one model, resident memory sampled over time.
//
//   tessera-soak [MODEL.onnx|DEPLOY.yaml] [--targets LIST] [--threads N] [--sessions M]
//                [--runs K | --duration S] [--session-threads T] [--rebuild-every R]
//                [--warmup-fraction F] [--sample-ms MS] [--max-growth-mb X]
//                [--max-growth-mb-per-1000 Y] [--seed S] [--no-check]
//
// Each of N threads builds M sessions of the model over one shared plugin host and runs them in
// turn, K runs per thread (or until S seconds have passed); with --rebuild-every R a thread
// destroys and rebuilds the session it is about to run every R runs, so that compile and teardown
// are soaked too. Every output is compared with the reference runner's (computed once before the
// threads start) unless --no-check. A sampler thread reads VmRSS from /proc/self/status every
// MS milliseconds.
//
// Prints RSS over time, then RSS at start (model loaded, no session), after warm-up (the first F
// of all runs: allocator arenas, kernel caches and thread pools reach their size there; the median
// over the next tenth of the runs), at the end (the median over the last tenth, sessions alive)
// and after teardown, and the growth after warm-up: end minus warm-up, and
// the least-squares slope of RSS over runs done, both per 1000 runs. Exits 1 when the growth after
// warm-up exceeds --max-growth-mb, or (with at least 1000 runs after warm-up) the slope exceeds
// --max-growth-mb-per-1000; 1 also when an output differs from the oracle.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "output_match.hpp"
#include "run_common.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera::cli {
namespace {

struct SoakOptions {
  int threads = 2;
  int sessions = 2;
  int64_t runs = 200;       // per thread; ignored when duration_s > 0
  double duration_s = 0.0;  // > 0: run until then
  int64_t rebuild_every = 50;
  double warmup_fraction = 0.2;
  int64_t sample_ms = 100;
  double max_growth_mb = 8.0;
  double max_growth_mb_per_1000 = 1.0;
  bool check = true;
};

// VmRSS of this process in KiB (0 when /proc is unreadable, which the table then shows).
int64_t rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoll(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

struct Sample {
  double seconds = 0.0;
  int64_t runs = 0;
  int64_t rss_kib = 0;
};

// Samples RSS and the shared run counter every `period` until stopped.
class Sampler {
 public:
  Sampler(const std::atomic<int64_t>& runs, std::chrono::milliseconds period)
      : runs_(runs), period_(period), start_(std::chrono::steady_clock::now()) {
    take();
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!cv_.wait_for(lock, period_, [this] { return stop_; })) take_locked();
    });
  }
  ~Sampler() { stop(); }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    take();
  }
  void take() {
    std::lock_guard<std::mutex> lock(mutex_);
    take_locked();
  }
  std::vector<Sample> samples() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return samples_;
  }

 private:
  void take_locked() {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    samples_.push_back({s, runs_.load(), rss_kib()});
  }
  const std::atomic<int64_t>& runs_;
  const std::chrono::milliseconds period_;
  const std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<Sample> samples_;
  std::thread thread_;
};

struct Shared {
  const Graph* graph = nullptr;
  SessionOptions options;
  std::shared_ptr<const PluginHost> host;
  const std::map<std::string, Tensor>* inputs = nullptr;
  const std::vector<Tensor>* oracle = nullptr;  // null with --no-check
  std::chrono::steady_clock::time_point deadline;
  std::atomic<int64_t> runs{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::condition_variable cv;
  std::string failure;  // the first one
  int threads_done = 0;
  bool release = false;  // set once the end sample is taken: threads may drop their sessions

  void fail(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    if (failure.empty()) failure = what;
    failed = true;
  }
  // Called by each thread with its sessions still alive; returns once `release` is set.
  void finish_and_wait() {
    std::unique_lock<std::mutex> lock(mutex);
    ++threads_done;
    cv.notify_all();
    cv.wait(lock, [this] { return release; });
  }
};

void soak_thread(int t, const SoakOptions& o, Shared& shared) {
  std::vector<std::unique_ptr<Session>> sessions;
  try {
    for (int s = 0; s < o.sessions; ++s) {
      sessions.push_back(std::make_unique<Session>(*shared.graph, shared.options, shared.host));
    }
    for (int64_t k = 0; !shared.failed; ++k) {
      if (o.duration_s > 0 ? std::chrono::steady_clock::now() >= shared.deadline : k >= o.runs)
        break;
      std::unique_ptr<Session>& session = sessions[static_cast<size_t>(k % o.sessions)];
      if (o.rebuild_every > 0 && k > 0 && k % o.rebuild_every == 0) {
        session.reset();  // first, so that a thread never holds more than M sessions
        session = std::make_unique<Session>(*shared.graph, shared.options, shared.host);
      }
      const std::vector<Tensor> out = session->run(*shared.inputs);
      if (shared.oracle != nullptr) {
        const std::string diff = first_mismatch(out, *shared.oracle);
        if (!diff.empty())
          shared.fail("thread " + std::to_string(t) + " run " + std::to_string(k) + ": " + diff);
      }
      ++shared.runs;
    }
  } catch (const std::exception& e) {
    shared.fail("thread " + std::to_string(t) + ": " + e.what());
  }
  shared.finish_and_wait();
}

// Median RSS of the samples taken while the run count was in [from, to] (the nearest sample when
// none was).
int64_t median_rss(const std::vector<Sample>& samples, int64_t from, int64_t to) {
  std::vector<int64_t> rss;
  for (const Sample& s : samples) {
    if (s.runs >= from && s.runs <= to) rss.push_back(s.rss_kib);
  }
  if (rss.empty()) {
    const auto it = std::find_if(samples.begin(), samples.end(),
                                 [&](const Sample& s) { return s.runs >= from; });
    return it != samples.end() ? it->rss_kib : samples.back().rss_kib;
  }
  std::nth_element(rss.begin(), rss.begin() + static_cast<std::ptrdiff_t>(rss.size() / 2),
                   rss.end());
  return rss[rss.size() / 2];
}

// Least-squares slope of RSS (KiB) over runs done, in MiB per 1000 runs.
double slope_mb_per_1000(const std::vector<Sample>& samples) {
  if (samples.size() < 2) return 0.0;
  double mx = 0, my = 0;
  for (const Sample& s : samples) {
    mx += static_cast<double>(s.runs);
    my += static_cast<double>(s.rss_kib);
  }
  mx /= static_cast<double>(samples.size());
  my /= static_cast<double>(samples.size());
  double sxy = 0, sxx = 0;
  for (const Sample& s : samples) {
    sxy += (static_cast<double>(s.runs) - mx) * (static_cast<double>(s.rss_kib) - my);
    sxx += (static_cast<double>(s.runs) - mx) * (static_cast<double>(s.runs) - mx);
  }
  return sxx > 0 ? sxy / sxx * 1000.0 / 1024.0 : 0.0;
}

double mib(int64_t kib) {
  return static_cast<double>(kib) / 1024.0;
}

// About 12 rows of the samples, then the summary; returns the process exit code.
int report(const SoakOptions& o, const std::vector<Sample>& samples, int64_t rss_start,
           int64_t rss_teardown, const std::string& failure) {
  std::printf("\n%10s %10s %10s %10s\n", "seconds", "runs", "RSS MiB", "runs/s");
  const size_t step = std::max<size_t>(1, samples.size() / 12);
  for (size_t i = 0; i < samples.size(); i += step) {
    const Sample& s = samples[i];
    const Sample& prev = samples[i >= step ? i - step : 0];
    const double dt = s.seconds - prev.seconds;
    std::printf("%10.1f %10lld %10.1f %10.1f\n", s.seconds, static_cast<long long>(s.runs),
                mib(s.rss_kib), dt > 0 ? static_cast<double>(s.runs - prev.runs) / dt : 0.0);
  }
  const Sample& end = samples.back();
  const double total = static_cast<double>(end.runs);
  const int64_t warm_runs = static_cast<int64_t>(std::ceil(o.warmup_fraction * total));
  const auto warm_it = std::find_if(samples.begin(), samples.end(),
                                    [&](const Sample& s) { return s.runs >= warm_runs; });
  const std::vector<Sample> after(warm_it, samples.end());
  // RSS moves by a few MiB while sessions are rebuilt, so single samples are noisy: the levels
  // compared are medians over the tenth of the runs right after warm-up and the last tenth.
  const int64_t tenth = static_cast<int64_t>(std::ceil(0.1 * total));
  const int64_t warm_rss = median_rss(after, warm_runs, warm_runs + tenth);
  const int64_t end_rss = median_rss(after, end.runs - tenth, end.runs);
  const int64_t runs_after = end.runs - warm_runs;
  const double growth = mib(end_rss - warm_rss);
  const double per_1000 = runs_after > 0 ? growth * 1000.0 / static_cast<double>(runs_after) : 0;
  const double slope = slope_mb_per_1000(after);
  int64_t peak = 0;
  for (const Sample& s : samples) peak = std::max(peak, s.rss_kib);
  std::printf("\nruns done              %lld (%d threads x %d sessions, %.1f s, %.1f runs/s)\n",
              static_cast<long long>(end.runs), o.threads, o.sessions, end.seconds,
              end.seconds > 0 ? static_cast<double>(end.runs) / end.seconds : 0.0);
  std::printf("RSS start              %.1f MiB (model loaded, no session)\n", mib(rss_start));
  std::printf("RSS after warm-up      %.1f MiB (median over runs %lld to %lld)\n", mib(warm_rss),
              static_cast<long long>(warm_runs), static_cast<long long>(warm_runs + tenth));
  std::printf(
      "RSS end                %.1f MiB (median over the last %lld runs, sessions alive; "
      "peak %.1f MiB)\n",
      mib(end_rss), static_cast<long long>(tenth), mib(peak));
  std::printf("RSS after teardown     %.1f MiB\n", mib(rss_teardown));
  std::printf("growth after warm-up   %+.2f MiB over %lld runs = %+.3f MiB per 1000 runs\n", growth,
              static_cast<long long>(runs_after), per_1000);
  std::printf("fitted slope           %+.3f MiB per 1000 runs (%zu samples after warm-up)\n", slope,
              after.size());
  int status = 0;
  if (!failure.empty()) {
    std::printf("FAIL: %s\n", failure.c_str());
    status = 1;
  }
  if (growth > o.max_growth_mb) {
    std::printf("FAIL: RSS grew %.2f MiB after warm-up (limit %.2f, --max-growth-mb)\n", growth,
                o.max_growth_mb);
    status = 1;
  }
  if (runs_after >= 1000 && slope > o.max_growth_mb_per_1000) {
    std::printf("FAIL: RSS slope %.3f MiB per 1000 runs (limit %.3f, --max-growth-mb-per-1000)\n",
                slope, o.max_growth_mb_per_1000);
    status = 1;
  }
  if (status == 0) std::printf("PASS: resident memory flat after warm-up\n");
  return status;
}

int soak_main(int argc, char** argv) {
  Args args(argc, argv,
            {"targets", "threads", "sessions", "runs", "duration", "session-threads",
             "rebuild-every", "warmup-fraction", "sample-ms", "max-growth-mb",
             "max-growth-mb-per-1000", "seed", kMemoryLimitOption},
            {"no-check", "help"});
  if (args.flag("help") || args.positionals().size() > 1) {
    std::printf(
        "usage: tessera-soak [MODEL.onnx|DEPLOY.yaml (default %s)] [--targets LIST]\n"
        "         [--threads N (2)] [--sessions M per thread (2)] [--runs K per thread (200)]\n"
        "         [--duration S (instead of --runs)] [--session-threads T (1)]\n"
        "         [--rebuild-every R runs (50; 0 = never)] [--warmup-fraction F (0.2)]\n"
        "         [--sample-ms MS (100)] [--max-growth-mb X (8)]\n"
        "         [--max-growth-mb-per-1000 Y (1)] [--seed S] [--no-check]\n",
        TESSERA_DEFAULT_DEPLOYMENT);
    return args.flag("help") ? 0 : 2;
  }
  SoakOptions o;
  o.threads = static_cast<int>(args.get_int("threads", o.threads, 1, 256));
  o.sessions = static_cast<int>(args.get_int("sessions", o.sessions, 1, 256));
  o.runs = args.get_int("runs", o.runs, 1, INT64_MAX / 1024);
  o.duration_s = args.get_number("duration", 0.0, 0.0, 7 * 24 * 3600.0);
  o.rebuild_every = args.get_int("rebuild-every", o.rebuild_every, 0, INT64_MAX);
  o.warmup_fraction = args.get_number("warmup-fraction", o.warmup_fraction, 0.0, 0.9);
  o.sample_ms = args.get_int("sample-ms", o.sample_ms, 1, 3600 * 1000);
  o.max_growth_mb = args.get_number("max-growth-mb", o.max_growth_mb, 0.0, 1e9);
  o.max_growth_mb_per_1000 =
      args.get_number("max-growth-mb-per-1000", o.max_growth_mb_per_1000, 0.0, 1e9);
  o.check = !args.flag("no-check");
  apply_memory_limit_option(args);

  const std::string model =
      args.positionals().empty() ? TESSERA_DEFAULT_DEPLOYMENT : args.positionals()[0];
  Workload workload = load_workload(model, args.get("targets", ""), {});
  workload.threads = static_cast<int32_t>(args.get_int("session-threads", 1, 0, 1024));
  const auto inputs = load_or_generate_inputs(
      workload.graph, {}, static_cast<uint64_t>(args.get_int("seed", 0, 0, INT64_MAX)));
  std::vector<Tensor> oracle;
  if (o.check) oracle = run_reference(workload.graph, inputs);

  Shared shared;
  shared.graph = &workload.graph;
  shared.options = session_options(workload);
  PluginHostOptions host_options;
  host_options.dirs = shared.options.plugin_dirs;
  host_options.allow_shadowing = shared.options.allow_plugin_shadowing;
  shared.host = std::make_shared<const PluginHost>(host_options);
  shared.inputs = &inputs;
  shared.oracle = o.check ? &oracle : nullptr;
  std::string targets;
  for (const std::string& t : workload.targets) targets += (targets.empty() ? "" : ",") + t;
  const std::string length = o.duration_s > 0 ? std::to_string(o.duration_s) + " s"
                                              : std::to_string(o.runs) + " runs per thread";
  std::printf("soak: %s on %s: %d threads x %d sessions x %s, %d plugin thread(s) per session\n",
              workload.description.c_str(), targets.empty() ? "every plugin" : targets.c_str(),
              o.threads, o.sessions, length.c_str(), workload.threads);
  std::fflush(stdout);
  const int64_t rss_start = rss_kib();
  std::vector<Sample> samples;
  {
    Sampler sampler(shared.runs, std::chrono::milliseconds(o.sample_ms));
    shared.deadline = std::chrono::steady_clock::now() +
                      std::chrono::microseconds(static_cast<int64_t>(o.duration_s * 1e6));
    std::vector<std::thread> threads;
    for (int t = 0; t < o.threads; ++t) {
      threads.emplace_back(soak_thread, t, std::cref(o), std::ref(shared));
    }
    {
      std::unique_lock<std::mutex> lock(shared.mutex);
      shared.cv.wait(lock, [&] { return shared.threads_done == o.threads; });
    }
    sampler.stop();  // its last sample is the end: every session still alive
    samples = sampler.samples();
    {
      std::lock_guard<std::mutex> lock(shared.mutex);
      shared.release = true;
    }
    shared.cv.notify_all();
    for (std::thread& th : threads) th.join();
  }
  // Every session is gone with its thread; the host and the model remain.
  const int64_t rss_teardown = rss_kib();
  return report(o, samples, rss_start, rss_teardown, shared.failure);
}

}  // namespace
}  // namespace tessera::cli

int main(int argc, char** argv) {
  try {
    return tessera::cli::soak_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-soak: error: %s\n", e.what());
    return 1;
  }
}
