// Task extraction: the model is placed as a Session would place it, and each node's plugin
// describes the node alone in a region (its workload key and knob spaces); nodes with the same
// (plugin, workload key) become one task weighted by how often it occurs.
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "targets.hpp"
#include "tessera/error.hpp"
#include "tessera/flops.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"
#include "tessera/tuner.hpp"

namespace tessera::tune {
namespace detail {

std::pair<std::string, std::string> split_target(const std::string& target) {
  const size_t colon = target.find(':');
  if (colon == std::string::npos) return {target, ""};
  return {target.substr(0, colon), target.substr(colon + 1)};
}

std::string pick_device(const PluginInstance& plugin, const std::string& selector,
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
  return devices[static_cast<size_t>(best)].id;
}

int node_index(const Graph& graph, const std::string& name) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (graph.nodes[i].name == name) return static_cast<int>(i);
  }
  throw Error("tuner: node '" + name + "' is not in " + graph.source);
}

}  // namespace detail

namespace {

// The task of one node from its plugin's description; nullopt when nothing is tunable.
std::optional<TuneTask> describe_task(const Graph& graph, int index, const PluginInstance& plugin,
                                      const std::string& device) {
  const PluginNodeTuning tuning = plugin.describe_node(device, graph, index);
  if (tuning.schedules.empty() || tuning.workload_key.empty()) return std::nullopt;
  TuneTask task;
  task.workload = tuning.workload_key;
  const double core_flops = node_flops(graph, graph.nodes[static_cast<size_t>(index)]);
  task.flops = core_flops > 0 ? core_flops : tuning.flops;
  task.default_schedule = tuning.default_schedule;
  for (const PluginSchedule& schedule : tuning.schedules) {
    ScheduleSpace space;
    space.name = schedule.name;
    for (const PluginKnobSpace& knob : schedule.knobs) {
      space.knobs.push_back({knob.name, knob.values});
      space.defaults.push_back(knob.default_value);
    }
    task.schedules.push_back(std::move(space));
  }
  return task;
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
  std::map<std::string, std::pair<std::shared_ptr<PluginInstance>, std::string>> plugins;
  std::map<std::pair<std::string, std::string>, size_t> by_key;
  std::vector<TuneTask> tasks;
  for (const NodePlacement& placement : plan.nodes) {
    std::string target;
    for (const std::string& t : targets) {
      if (detail::split_target(t).first == placement.plugin) target = t;
    }
    if (target.empty()) continue;
    auto& [plugin, device] = plugins[placement.plugin];
    if (!plugin) {
      const std::shared_ptr<LoadedPlugin> loaded = host->find(placement.plugin);
      if (!loaded || !loaded->has_describe_node()) continue;
      plugin = loaded->create_instance();
      PluginDeviceInfo info;
      device = detail::pick_device(*plugin, detail::split_target(target).second, &info);
      if (devices) {
        (*devices)[placement.plugin] = {placement.plugin, info.name, info.vendor,
                                        info.driver_version};
      }
    }
    if (!plugin || !plugin->has_describe_node()) continue;
    std::optional<TuneTask> task =
        describe_task(graph, detail::node_index(graph, placement.node), *plugin, device);
    if (!task) continue;
    const auto key = std::make_pair(placement.plugin, task->workload);
    const auto it = by_key.find(key);
    if (it != by_key.end()) {
      tasks[it->second].weight += 1;
      continue;
    }
    task->id = static_cast<int>(tasks.size());
    task->plugin = placement.plugin;
    task->target = target;
    task->op = placement.op_type;
    task->node = placement.node;
    task->weight = 1;
    by_key[key] = tasks.size();
    tasks.push_back(std::move(*task));
  }
  return tasks;
}

}  // namespace tessera::tune
