// Task extraction, and the measuring child's side of the tuner (`tessera tune --worker`): it
// serves requests from its parent (worker.cpp) one line at a time, keeping the imported model and
// the loaded plugin with its device context between candidates. Each candidate is still a fresh
// one-node region, compiled, run `repeats` times (median kept) and compared with the reference
// kernel. Before each phase the child tells the parent "compiling" / "running", so that a crash can
// be classified by the phase it happened in.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "op.hpp"
#include "plugins/region_desc.hpp"
#include "tessera/error.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"
#include "tessera/tuner.hpp"

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

namespace {

// What a serving child keeps between candidates: the plugins (and so their device contexts, which
// live until the plugin is unloaded), the imported models, and each target's device.
struct WorkerState {
  PluginHost host;
  std::map<std::string, std::shared_ptr<const Graph>> graphs;
  std::map<std::string, std::pair<std::shared_ptr<LoadedPlugin>, int32_t>> targets;
  // The reference kernel's outputs per (model, node): the seeded inputs are the same for every
  // candidate of a node, and the naive reference kernel can cost more than a whole trial's runs.
  std::map<std::pair<std::string, std::string>, std::vector<Tensor>> references;
};

// Measures one request; `phase` is told "compiling" / "running" before each phase.
MeasureResult measure_here(WorkerState& state, const MeasureRequest& req,
                           const std::function<void(const char*)>& phase,
                           const WorkerHooks& hooks) {
  MeasureResult result;
  try {
    auto& graph_ptr = state.graphs[req.model];
    if (!graph_ptr) graph_ptr = std::make_shared<const Graph>(import_onnx_file(req.model));
    const Graph& graph = *graph_ptr;
    const int index = node_index(graph, req.node);
    const auto consumers = detail::value_consumers(graph);
    detail::RegionDesc region(graph, {index}, consumers);
    auto& [plugin, device] = state.targets[req.target];
    if (!plugin) {
      auto found = state.host.find(split_target(req.target).first);
      if (!found) throw Error("tuner worker: plugin of target '" + req.target + "' not loaded");
      device = pick_device(*found, split_target(req.target).second, nullptr);
      plugin = found;
    }
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
    phase("compiling");
    if (plugin->table().compile_region(device, region.get(), &options, &handle,
                                       tsr_message{text, sizeof(text)}) != TSR_OK) {
      result.status = "compile";
      result.error = text;
      return result;
    }
    if (req.compile_only) {
      if (hooks.after_compile_only) hooks.after_compile_only();
      plugin->table().release_region(handle);
      result.status = "ok";
      return result;
    }
    phase("running");
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
    for (ValueId id : region.output_values()) {
      const Value& v = graph.value(id);
      outs.emplace_back(v.dtype, v.shape);
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
        return result;
      }
      const auto t1 = std::chrono::steady_clock::now();
      if (r > 0) times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    plugin->table().release_region(handle);
    std::sort(times.begin(), times.end());
    result.median_us = times.empty() ? 0 : times[times.size() / 2];
    std::vector<Tensor>& ref = state.references[{req.model, req.node}];
    if (ref.empty()) {
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
      ref = ops::compute_node(node, graph.opset, ref_in, node_infos);
    }
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
  return result;
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int serve_worker(int fd, const WorkerHooks& hooks) {
  if (hooks.at_start) {
    hooks.at_start([&](const char* phase) { write_all(fd, std::string("phase ") + phase + "\n"); });
  }
  WorkerState state;
  std::string pending;
  char buf[4096];
  while (true) {
    const size_t eol = pending.find('\n');
    if (eol == std::string::npos) {
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return 0;  // the parent closed the stream: done
      pending.append(buf, static_cast<size_t>(n));
      continue;
    }
    const std::string line = pending.substr(0, eol);
    pending.erase(0, eol + 1);
    MeasureResult result;
    if (auto req = decode_request(line)) {
      result = measure_here(
          state, *req,
          [&](const char* phase) { write_all(fd, std::string("phase ") + phase + "\n"); }, hooks);
    } else {
      result.status = "compile";
      result.error = "tuner worker: unreadable request line";
    }
    if (!write_all(fd, "result " + encode_result(result) + "\n")) return 0;
  }
}

}  // namespace tessera::tune
