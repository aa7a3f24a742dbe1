// The measuring child's side of the tuner (`tessera tune --worker`, or any program that calls
// serve_worker): it serves requests from its parent (measure.cpp) one line at a time, keeping the
// imported models and the loaded plugins with their device contexts between candidates. Each
// candidate is still a fresh one-node region, compiled, run `repeats` times (median of the node's
// profiled time where the plugin profiles, else of the whole execute) and compared with the
// reference kernel. Before each phase the child tells the parent "compiling" /
// "running", so that a crash can be classified by the phase it happened in.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "targets.hpp"
#include "tessera/error.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/tuner.hpp"

namespace tessera::tune {
namespace {

// What a serving child keeps between candidates: one plugin instance per target (and so its device
// contexts and kernel pools), the imported models, and each target's device.
struct WorkerState {
  PluginHost host;
  std::map<std::string, std::shared_ptr<const Graph>> graphs;
  std::map<std::string, std::pair<std::shared_ptr<PluginInstance>, std::string>> targets;
  // The reference kernel's outputs per (model, node): the seeded inputs are the same for every
  // candidate of a node, and the naive reference kernel can cost more than a whole trial's runs.
  std::map<std::pair<std::string, std::string>, std::vector<Tensor>> references;
  // Each target's device as probed here, named in every result (a farm's tuner learns from it
  // which device measured).
  std::map<std::string, PluginDeviceInfo> target_devices;
  // Each node's described schedules and knob spaces, per (model, node, target): what a request's
  // config is checked against before anything compiles.
  std::map<std::tuple<std::string, std::string, std::string>, PluginNodeTuning> spaces;
};

// Why the request's config is outside what the plugin describes for the node ("" when inside):
// a known schedule, known knobs, each value within the range of the knob's candidates and this
// device's heuristic default. A range, not the candidates alone: a heuristic may pick a value
// between them, and a farm's tuner sends the default its own machine computed, which another
// device's heuristic need not share. A farm agent's worker sees requests from the network; the
// local tuner only sends described configs.
std::string config_problem(const PluginNodeTuning& tuning, const MeasureRequest& req) {
  const PluginSchedule* schedule = tuning.find_schedule(req.schedule);
  if (schedule == nullptr) {
    std::string names;
    for (const PluginSchedule& s : tuning.schedules) names += (names.empty() ? "" : ", ") + s.name;
    return "schedule '" + escaped(req.schedule) + "' is not one the plugin describes for node '" +
           escaped(req.node) + "' (" + (names.empty() ? "nothing tunable" : names) + ")";
  }
  for (const auto& [name, value] : req.knobs) {
    const PluginKnobSpace* knob = nullptr;
    for (const PluginKnobSpace& k : schedule->knobs) {
      if (k.name == name) knob = &k;
    }
    if (knob == nullptr) {
      return "schedule '" + schedule->name + "' has no knob '" + escaped(name) + "'";
    }
    int64_t lo = knob->default_value, hi = knob->default_value;
    for (int64_t v : knob->values) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (value < lo || value > hi) {
      return "knob '" + name + "' = " + std::to_string(value) + " is outside the space of '" +
             schedule->name + "' (" + std::to_string(lo) + ".." + std::to_string(hi) + ")";
    }
  }
  return "";
}

// The request's config for the region's one node; none (the plugin's heuristic) without a
// schedule.
RegionCompileSettings compile_settings(const MeasureRequest& req) {
  RegionCompileSettings settings;
  settings.precision = "fp32";
  settings.cache_dir = req.cache_dir;
  // The node's own time where the plugin reports it (an OpenCL plugin: its kernels' event times):
  // a one-node region's execute also copies its inputs to the device and its outputs back, which
  // on a discrete GPU takes longer than most kernels and would bury the knobs' effect in the
  // copies' noise. Inside a network the values stay on the device.
  settings.profile = true;
  if (!req.schedule.empty()) {
    NodeConfigChoice choice;
    choice.schedule = req.schedule;
    for (const auto& [name, value] : req.knobs) choice.knobs.push_back({name, value});
    settings.choose_config = [choice](const NodeConfigRequest&) { return choice; };
  }
  return settings;
}

// Seeded uniform values for the region's float inputs (zeros for the others): the same for every
// candidate of a node, so that its reference outputs can be computed once.
std::map<ValueId, Tensor> seeded_inputs(const Graph& graph, const std::vector<ValueId>& ids) {
  std::map<ValueId, Tensor> values;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (ValueId id : ids) {
    const Value& v = graph.value(id);
    Tensor t(v.dtype, v.shape);
    if (v.dtype == DType::kFloat32) {
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    }
    values[id] = std::move(t);
  }
  return values;
}

// The node's outputs from the reference kernel, for the region's seeded inputs.
std::vector<Tensor> reference_outputs(const Graph& graph, const Node& node,
                                      std::map<ValueId, Tensor>& values) {
  std::vector<const Tensor*> inputs;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) {
      inputs.push_back(nullptr);
    } else if (graph.value(id).constant) {
      inputs.push_back(graph.value(id).constant.get());
    } else {
      inputs.push_back(&values[id]);
    }
  }
  return run_reference_node(graph, node, inputs);
}

// Measures one request; `phase` is told "compiling" / "running" before each phase.
MeasureResult measure_here(WorkerState& state, const MeasureRequest& req,
                           const std::function<void(const char*)>& phase,
                           const WorkerHooks& hooks) {
  MeasureResult result;
  try {
    auto& graph_ptr = state.graphs[req.model];
    if (!graph_ptr) graph_ptr = std::make_shared<const Graph>(import_onnx_file(req.model));
    const Graph& graph = *graph_ptr;
    const int index = detail::node_index(graph, req.node);
    auto& [plugin, device] = state.targets[req.target];
    if (!plugin) {
      auto found = state.host.find(detail::split_target(req.target).first);
      if (!found) throw Error("tuner worker: plugin of target '" + req.target + "' not loaded");
      std::shared_ptr<PluginInstance> instance = found->create_instance();
      device = detail::pick_device(*instance, detail::split_target(req.target).second,
                                   &state.target_devices[req.target]);
      plugin = std::move(instance);
    }
    if (!req.schedule.empty() && plugin->has_describe_node()) {
      const auto key = std::make_tuple(req.model, req.node, req.target);
      auto space = state.spaces.find(key);
      if (space == state.spaces.end()) {
        space = state.spaces.emplace(key, plugin->describe_node(device, graph, index)).first;
      }
      if (const std::string why = config_problem(space->second, req); !why.empty()) {
        result.status = "refused";
        result.error = why;
        return result;
      }
    }
    phase("compiling");
    std::shared_ptr<PluginRegion> region;
    try {
      region = PluginRegion::compile(plugin, device, graph, {index}, compile_settings(req));
    } catch (const RegionCompileError& e) {
      result.status = "compile";
      result.error = e.what();
      return result;
    }
    if (req.compile_only) {
      if (hooks.after_compile_only) hooks.after_compile_only();
      result.status = "ok";
      return result;
    }
    phase("running");
    const Node& node = graph.nodes[static_cast<size_t>(index)];
    std::map<ValueId, Tensor> values = seeded_inputs(graph, region->input_values());
    std::vector<const void*> in;
    for (ValueId id : region->input_values()) in.push_back(values[id].raw());
    std::vector<Tensor> outs;
    std::vector<void*> out;
    for (ValueId id : region->output_values()) {
      const Value& v = graph.value(id);
      outs.emplace_back(v.dtype, v.shape);
    }
    for (Tensor& t : outs) out.push_back(t.raw());
    std::vector<double> times;
    for (int r = 0; r < req.repeats + 1; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        region->execute(in.data(), out.data());
      } catch (const Error& e) {
        result.status = "run";
        result.error = e.what();
        return result;
      }
      const auto t1 = std::chrono::steady_clock::now();
      if (r == 0) continue;  // warm-up
      const std::vector<double> node_us = region->last_profile();
      times.push_back(!node_us.empty() && node_us[0] > 0
                          ? node_us[0]
                          : std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(times.begin(), times.end());
    // In whole nanoseconds, which no timer here resolves beyond: the log's decimal text then
    // reads back as the same number, so a resumed run's best is the one it logged.
    result.median_us = times.empty() ? 0 : std::round(times[times.size() / 2] * 1000) / 1000;
    std::vector<Tensor>& ref = state.references[{req.model, req.node}];
    if (ref.empty()) ref = reference_outputs(graph, node, values);
    result.status = "ok";
    for (size_t o = 0; o < region->output_values().size(); ++o) {
      const ValueId id = region->output_values()[o];
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
  // Tells the parent that this command is a worker that serves its requests (a wrong program or
  // arguments exit before this line, and the parent names the command).
  if (!write_all(fd, "ready\n")) return 0;
  const auto report_phase = [&](const char* phase) {
    write_all(fd, std::string("phase ") + phase + "\n");
  };
  if (hooks.at_start) hooks.at_start(report_phase);
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
      result = measure_here(state, *req, report_phase, hooks);
      const auto device = state.target_devices.find(req->target);
      if (device != state.target_devices.end()) {
        result.device = device->second.name;
        result.driver = device->second.driver_version;
      }
    } else {
      result.status = "compile";
      result.error = "tuner worker: unreadable request line";
    }
    if (!write_all(fd, "result " + encode_result(result) + "\n")) return 0;
  }
}

}  // namespace tessera::tune
