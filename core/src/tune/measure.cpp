// Task extraction and measurement of the tuner. Measurement runs one node as a one-node region in
// a child process (posix_spawn of `tessera tune --worker`, so the parent never forks with OpenCL
// state), with a timeout; the child compares the plugin's output with the reference kernel.
// compile_in_parallel() runs several compile-only children at once (oneTBB) so that the measuring
// children, one at a time, find their kernels in the plugin's on-disk cache.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "op.hpp"
#include "plugins/region_desc.hpp"
#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"
#include "tessera/tuner.hpp"

extern char** environ;

namespace tessera::tune {
namespace {

std::pair<std::string, std::string> split_target(const std::string& target) {
  const size_t colon = target.find(':');
  if (colon == std::string::npos) return {target, ""};
  return {target.substr(0, colon), target.substr(colon + 1)};
}

// The device index a Session would pick: the best score > 0 of the probe with `selector`.
int32_t pick_device(const LoadedPlugin& plugin, const std::string& selector,
                    PluginDeviceInfo* info) {
  const std::vector<PluginDeviceInfo> devices = plugin.probe(selector);
  int32_t best = -1;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].score > 0 &&
        (best < 0 || devices[i].score > devices[static_cast<size_t>(best)].score)) {
      best = static_cast<int32_t>(i);
    }
  }
  if (best < 0) throw Error("tuner: plugin '" + plugin.name() + "' has no usable device");
  if (info) *info = devices[static_cast<size_t>(best)];
  return best;
}

int node_index(const Graph& graph, const std::string& name) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (graph.nodes[i].name == name) return static_cast<int>(i);
  }
  throw Error("tuner: node '" + name + "' is not in " + graph.source);
}

}  // namespace

std::vector<TuneTask> extract_tasks(const std::string& model_path,
                                    const std::vector<std::string>& targets,
                                    std::map<std::string, DeviceDesc>* devices) {
  return extract_tasks(import_onnx_file(model_path), targets, devices);
}

std::vector<TuneTask> extract_tasks(const Graph& graph, const std::vector<std::string>& targets,
                                    std::map<std::string, DeviceDesc>* devices) {
  auto host = std::make_shared<PluginHost>();
  SessionOptions options;
  options.targets = targets;
  Session session(graph, options, host);
  const ExecutionPlan& plan = session.plan();
  const auto consumers = detail::value_consumers(graph);
  std::map<std::string, std::pair<std::shared_ptr<LoadedPlugin>, int32_t>> plugins;
  std::map<std::pair<std::string, std::string>, size_t> by_key;
  std::vector<TuneTask> tasks;
  for (const NodePlacement& placement : plan.nodes) {
    std::string target;
    for (const std::string& t : targets) {
      if (split_target(t).first == placement.plugin) target = t;
    }
    if (target.empty()) continue;
    auto& [plugin, device] = plugins[placement.plugin];
    if (!plugin) {
      plugin = host->find(placement.plugin);
      if (!plugin || !plugin->table().describe_node) continue;
      PluginDeviceInfo info;
      device = pick_device(*plugin, split_target(target).second, &info);
      if (devices) {
        (*devices)[placement.plugin] = {placement.plugin, info.name, info.vendor,
                                        info.driver_version};
      }
    }
    if (!plugin || !plugin->table().describe_node) continue;
    const int index = node_index(graph, placement.node);
    detail::RegionDesc region(graph, {index}, consumers);
    tsr_node_tuning tuning{};
    tuning.struct_size = sizeof(tuning);
    char text[512] = {0};
    tsr_status status;
    TuneTask task;
    {
      std::lock_guard<std::mutex> lock(plugin->call_mutex());
      status = plugin->table().describe_node(device, region.get(), 0, &tuning,
                                             tsr_message{text, sizeof(text)});
      if (status != TSR_OK) {
        throw Error("tuner: " + placement.plugin + " describe_node of node '" + placement.node +
                    "' failed: " + text);
      }
      if (tuning.num_schedules <= 0 || !tuning.workload_key) continue;
      task.workload = tuning.workload_key;
      const double core_flops = node_flops(graph, graph.nodes[static_cast<size_t>(index)]);
      task.flops = core_flops > 0 ? core_flops : tuning.flops;
      task.default_schedule = tuning.default_schedule;
      for (int32_t s = 0; s < tuning.num_schedules; ++s) {
        const tsr_schedule_desc& d = tuning.schedules[s];
        ScheduleSpace space;
        space.name = d.name;
        for (int32_t k = 0; k < d.num_knobs; ++k) {
          space.knobs.push_back(
              {d.knobs[k].name,
               std::vector<int64_t>(d.knobs[k].values, d.knobs[k].values + d.knobs[k].num_values)});
          space.defaults.push_back(d.default_config ? d.default_config[k].value : 0);
        }
        task.schedules.push_back(std::move(space));
      }
    }
    auto key = std::make_pair(placement.plugin, task.workload);
    auto it = by_key.find(key);
    if (it != by_key.end()) {
      tasks[it->second].weight += 1;
      continue;
    }
    task.id = static_cast<int>(tasks.size());
    task.plugin = placement.plugin;
    task.target = target;
    task.op = placement.op_type;
    task.node = placement.node;
    task.weight = 1;
    by_key[key] = tasks.size();
    tasks.push_back(std::move(task));
  }
  return tasks;
}

// ---- the child ----

int run_worker(const std::string& request_path, const std::string& result_path) {
  MeasureResult result;
  auto finish = [&]() {
    std::ostringstream out;
    out << "status=" << result.status << "\nmedian_us=" << result.median_us
        << "\nmax_error=" << result.max_error << "\nerror=";
    for (char c : result.error) out << (c == '\n' ? ' ' : c);
    out << "\n";
    write_file_atomic(result_path, out.str(), /*overwrite=*/true);
    return 0;
  };
  const char* fault = std::getenv("TESSERA_TUNE_WORKER_FAULT");
  const std::string fault_kind = fault ? fault : "";
  if (fault_kind == "crash") std::abort();
  if (fault_kind == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
  MeasureRequest req;
  {
    std::istringstream in(read_file(request_path));
    std::string line;
    while (std::getline(in, line)) {
      const size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
      if (key == "model") req.model = value;
      if (key == "node") req.node = value;
      if (key == "target") req.target = value;
      if (key == "schedule") req.schedule = value;
      if (key == "repeats") req.repeats = std::stoi(value);
      if (key == "compile_only") req.compile_only = value == "1";
      if (key == "cache_dir") req.cache_dir = value;
      if (key == "knob") {
        const size_t e2 = value.find('=');
        req.knobs.emplace_back(value.substr(0, e2), std::stoll(value.substr(e2 + 1)));
      }
    }
  }
  try {
    Graph graph = import_onnx_file(req.model);
    const int index = node_index(graph, req.node);
    const auto consumers = detail::value_consumers(graph);
    detail::RegionDesc region(graph, {index}, consumers);
    PluginHost host;
    auto plugin = host.find(split_target(req.target).first);
    if (!plugin) throw Error("tuner worker: plugin of target '" + req.target + "' not loaded");
    const int32_t device = pick_device(*plugin, split_target(req.target).second, nullptr);
    std::vector<tsr_knob> knobs;
    for (const auto& [name, value] : req.knobs) knobs.push_back({name.c_str(), value});
    tsr_node_config config{sizeof(tsr_node_config), 0, req.schedule.c_str(),
                           static_cast<int32_t>(knobs.size()), knobs.data()};
    tsr_compile_options options{};
    options.struct_size = sizeof(options);
    options.precision = "fp32";
    options.cache_dir = req.cache_dir.empty() ? nullptr : req.cache_dir.c_str();
    options.num_node_configs = req.schedule.empty() ? 0 : 1;
    options.node_configs = &config;
    char text[1024] = {0};
    tsr_region_handle handle = nullptr;
    if (plugin->table().compile_region(device, region.get(), &options, &handle,
                                       tsr_message{text, sizeof(text)}) != TSR_OK) {
      result.status = "compile";
      result.error = text;
      return finish();
    }
    if (req.compile_only) {
      if (fault_kind == "crash-compile") std::abort();
      plugin->table().release_region(handle);
      result.status = "ok";
      return finish();
    }
    // Inputs: seeded uniform values; reference outputs from the reference kernel.
    const Node& node = graph.nodes[static_cast<size_t>(index)];
    std::map<ValueId, Tensor> values;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (ValueId id : region.input_values()) {
      const Value& v = graph.value(id);
      Tensor t(v.dtype, v.shape);
      if (v.dtype == DType::kFloat32) {
        for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
      }
      values[id] = std::move(t);
    }
    std::vector<const void*> in;
    for (ValueId id : region.input_values()) in.push_back(values[id].raw());
    std::vector<Tensor> outs;
    std::vector<void*> out;
    std::vector<ops::OutputInfo> infos;
    for (ValueId id : region.output_values()) {
      const Value& v = graph.value(id);
      outs.emplace_back(v.dtype, v.shape);
      infos.push_back({v.dtype, v.shape});
    }
    for (Tensor& t : outs) out.push_back(t.raw());
    std::vector<double> times;
    for (int r = 0; r < req.repeats + 1; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      if (plugin->table().execute_region(handle, in.data(), out.data(),
                                         tsr_message{text, sizeof(text)}) != TSR_OK) {
        result.status = "run";
        result.error = text;
        plugin->table().release_region(handle);
        return finish();
      }
      const auto t1 = std::chrono::steady_clock::now();
      if (r > 0) times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    plugin->table().release_region(handle);
    std::sort(times.begin(), times.end());
    result.median_us = times.empty() ? 0 : times[times.size() / 2];
    std::vector<const Tensor*> ref_in;
    for (ValueId id : node.inputs) {
      if (id == kNoValue) {
        ref_in.push_back(nullptr);
      } else if (graph.value(id).constant) {
        ref_in.push_back(graph.value(id).constant.get());
      } else {
        ref_in.push_back(&values[id]);
      }
    }
    std::vector<ops::OutputInfo> node_infos;
    for (ValueId id : node.outputs) {
      node_infos.push_back(id == kNoValue
                               ? ops::OutputInfo{}
                               : ops::OutputInfo{graph.value(id).dtype, graph.value(id).shape});
    }
    const std::vector<Tensor> ref = ops::compute_node(node, graph.opset, ref_in, node_infos);
    result.status = "ok";
    for (size_t o = 0; o < region.output_values().size(); ++o) {
      const ValueId id = region.output_values()[o];
      const auto pos =
          std::find(node.outputs.begin(), node.outputs.end(), id) - node.outputs.begin();
      const Tensor& expect = ref.at(static_cast<size_t>(pos));
      if (expect.dtype() != DType::kFloat32) continue;
      for (int64_t i = 0; i < expect.numel(); ++i) {
        const float e = expect.data<float>()[i], g = outs[o].data<float>()[i];
        const double err = std::fabs(double(e) - double(g)) / (1.0 + std::fabs(double(e)));
        if (!(err <= result.max_error)) result.max_error = std::isnan(err) ? 1e30 : err;
      }
    }
    if (result.max_error > 1e-4) {
      result.status = "wrong-answer";
      result.error = "max relative error " + std::to_string(result.max_error) + " vs reference";
    }
  } catch (const std::exception& e) {
    result.status = result.status.empty() ? "compile" : result.status;
    result.error = e.what();
  }
  return finish();
}

// ---- the parent ----

MeasureResult measure(const std::string& worker_exe, const MeasureRequest& request) {
  MeasureResult result;
  // measure() runs on several threads at once in compile_in_parallel().
  static std::atomic<int> counter{0};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-tune-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string stem = (dir / std::to_string(counter++)).string();
  const std::string req_path = stem + ".req", res_path = stem + ".res";
  std::ostringstream req;
  req << "model=" << request.model << "\nnode=" << request.node << "\ntarget=" << request.target
      << "\nschedule=" << request.schedule << "\nrepeats=" << request.repeats
      << "\ncompile_only=" << (request.compile_only ? 1 : 0) << "\ncache_dir=" << request.cache_dir
      << "\n";
  for (const auto& [name, value] : request.knobs) req << "knob=" << name << "=" << value << "\n";
  write_file_atomic(req_path, req.str(), true);
  std::filesystem::remove(res_path);

  std::vector<std::string> args = {worker_exe, "tune", "--worker", req_path, res_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The child's chatter (driver warnings) stays out of the progress output.
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, (stem + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, worker_exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.status = "crash";
    result.error = "cannot start worker '" + worker_exe + "': " + std::strerror(rc);
    return result;
  }
  const auto start = std::chrono::steady_clock::now();
  int wstatus = 0;
  bool timed_out = false;
  while (true) {
    const pid_t done = waitpid(pid, &wstatus, WNOHANG);
    if (done == pid) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > request.timeout_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &wstatus, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string err_text;
  try {
    err_text = read_file(stem + ".err");
  } catch (const std::exception&) {
  }
  if (err_text.size() > 300) err_text = err_text.substr(err_text.size() - 300);
  std::replace(err_text.begin(), err_text.end(), '\n', ' ');
  if (timed_out) {
    result.status = "timeout";
    result.error = "worker exceeded " + std::to_string(request.timeout_s) + " s";
  } else if (WIFSIGNALED(wstatus) || !std::filesystem::exists(res_path)) {
    result.status = "crash";
    result.error = WIFSIGNALED(wstatus)
                       ? "worker killed by signal " + std::to_string(WTERMSIG(wstatus))
                       : "worker exited with " + std::to_string(WEXITSTATUS(wstatus));
    if (!err_text.empty()) result.error += ": " + err_text;
  } else {
    std::istringstream in(read_file(res_path));
    std::string line;
    while (std::getline(in, line)) {
      const size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
      if (key == "status") result.status = value;
      if (key == "median_us") result.median_us = std::stod(value);
      if (key == "max_error") result.max_error = std::stod(value);
      if (key == "error") result.error = value;
    }
  }
  std::error_code ec;
  for (const char* ext : {".req", ".res", ".err"}) std::filesystem::remove(stem + ext, ec);
  return result;
}

std::vector<MeasureResult> compile_in_parallel(const std::string& worker_exe,
                                               std::vector<MeasureRequest> requests, int jobs) {
  std::vector<MeasureResult> results(requests.size());
  for (MeasureRequest& r : requests) r.compile_only = true;
  // Each iteration only waits on its child, so the arena's width is the number of children alive
  // at once; measure() never throws for a child's failure, so no iteration can end the loop.
  // (global_control: TBB otherwise caps its workers at the number of cores.)
  jobs = std::max(1, jobs);
  tbb::global_control width(tbb::global_control::max_allowed_parallelism,
                            static_cast<size_t>(jobs));
  tbb::task_arena arena(jobs);
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, requests.size(), 1),
        [&](const tbb::blocked_range<size_t>& range) {
          for (size_t i = range.begin(); i != range.end(); ++i) {
            results[i] = measure(worker_exe, requests[i]);
          }
        },
        tbb::simple_partitioner());
  });
  return results;
}

}  // namespace tessera::tune
