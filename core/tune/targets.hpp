// What task extraction and the measuring worker must agree on: how a target spec ("mali:any")
// splits into plugin and selector, which device of the plugin a Session would use, and which
// graph node a task's name refers to.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "tessera/graph.hpp"
#include "tessera/plugin_host.hpp"

namespace tessera::tune::detail {

// "mali:any" -> {"mali", "any"}; "cpu" -> {"cpu", ""}.
std::pair<std::string, std::string> split_target(const std::string& target);

// The id of the device a Session would pick: the best score > 0 of the instance's probe with
// `selector`. Throws tessera::Error when the plugin has no usable device.
std::string pick_device(const PluginInstance& plugin, const std::string& selector,
                        PluginDeviceInfo* info);

// The index of the node called `name`. Throws tessera::Error naming the model when there is none.
int node_index(const Graph& graph, const std::string& name);

}  // namespace tessera::tune::detail
