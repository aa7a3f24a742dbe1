// PluginRegion: one region compiled by a plugin, executed through the C table.
#include <cstddef>
#include <optional>

#include "plugins/plugin_text.hpp"
#include "plugins/region_desc.hpp"
#include "tessera/plugin_host.hpp"

namespace tessera {

std::shared_ptr<PluginRegion> PluginRegion::compile(std::shared_ptr<PluginInstance> instance,
                                                    const std::string& device, const Graph& graph,
                                                    const std::vector<int>& nodes,
                                                    const RegionCompileSettings& settings) {
  if (!instance) throw Error("PluginRegion::compile: no plugin instance given");
  std::shared_ptr<PluginRegion> region(new PluginRegion());
  region->instance_ = std::move(instance);
  region->desc_ =
      std::make_unique<detail::RegionDesc>(graph, nodes, detail::value_consumers(graph));
  region->num_nodes_ = static_cast<int32_t>(nodes.size());
  tsr_compile_options options{};
  options.struct_size = sizeof(tsr_compile_options);
  options.num_threads = settings.num_threads;
  options.precision = settings.precision.empty() ? nullptr : settings.precision.c_str();
  options.cache_dir = settings.cache_dir.empty() ? nullptr : settings.cache_dir.c_str();
  options.pack_path = settings.pack_path.empty() ? nullptr : settings.pack_path.c_str();
  options.dump_dir = settings.dump_dir.empty() ? nullptr : settings.dump_dir.c_str();
  options.profile = settings.profile ? 1 : 0;
  // Node configs: describe each node, let the caller choose, and keep the C arrays
  // alive for the compile call.
  std::vector<NodeConfigChoice> choices;
  std::vector<tsr_node_config> configs;
  std::vector<std::vector<tsr_knob>> knob_arrays;
  if (settings.choose_config) {
    const PluginInstance& p = *region->instance_;
    std::vector<int32_t> chosen_nodes;
    for (size_t i = 0; i < nodes.size(); ++i) {
      NodeConfigRequest request;
      request.graph_node = nodes[i];
      request.region_node = static_cast<int>(i);
      PluginNodeTuning tuning;
      if (p.has_describe_node()) {
        try {
          tuning = p.describe_node(device, region->desc_->get(), static_cast<int32_t>(i));
          request.tuning = &tuning;
        } catch (const Error& e) {
          request.describe_error = e.what();
        }
      }
      if (std::optional<NodeConfigChoice> choice = settings.choose_config(request)) {
        choices.push_back(std::move(*choice));
        chosen_nodes.push_back(static_cast<int32_t>(i));
      }
    }
    for (size_t c = 0; c < choices.size(); ++c) {
      std::vector<tsr_knob> knobs;
      for (const Knob& k : choices[c].knobs) knobs.push_back({k.name.c_str(), k.value});
      knob_arrays.push_back(std::move(knobs));
    }
    for (size_t c = 0; c < choices.size(); ++c) {
      tsr_node_config config{};
      config.struct_size = sizeof(tsr_node_config);
      config.node = chosen_nodes[c];
      config.schedule = choices[c].schedule.c_str();
      config.num_knobs = static_cast<int32_t>(knob_arrays[c].size());
      config.knobs = knob_arrays[c].empty() ? nullptr : knob_arrays[c].data();
      configs.push_back(config);
    }
  }
  options.num_node_configs = static_cast<int32_t>(configs.size());
  options.node_configs = configs.empty() ? nullptr : configs.data();
  char text[1024] = {0};
  tsr_region_handle handle = nullptr;
  tsr_status status;
  const PluginInstance& p = *region->instance_;
  {
    std::lock_guard<std::mutex> lock(p.call_mutex());
    try {
      status = p.table().compile_region(p.handle(), device.c_str(), region->desc_->get(), &options,
                                        &handle, tsr_message{text, sizeof(text)});
    } catch (...) {
      throw RegionCompileError(
          "plugin '" + p.name() + "' threw a C++ exception across the C boundary in compile",
          TSR_ERROR);
    }
  }
  if (status != TSR_OK || handle == nullptr) {
    throw RegionCompileError(
        detail::plugin_message(text) + " (status " + std::to_string(status) + ")",
        status == TSR_OK ? TSR_ERROR : status);
  }
  region->handle_ = handle;
  return region;
}

PluginRegion::~PluginRegion() {
  if (handle_ != nullptr) {
    try {
      instance_->table().release_region(handle_);
    } catch (...) {
      // Nothing sensible to do; the instance is destroyed when instance_ goes below.
    }
  }
}

const std::vector<ValueId>& PluginRegion::input_values() const {
  return desc_->input_values();
}
const std::vector<ValueId>& PluginRegion::output_values() const {
  return desc_->output_values();
}

namespace {

// Calls one of the execute slots through `call(message)` and turns its failure into an Error
// naming the plugin.
template <class Call>
void checked_execute(const PluginInstance& instance, const Call& call) {
  char text[1024] = {0};
  tsr_status status;
  try {
    status = call(tsr_message{text, sizeof(text)});
  } catch (...) {
    throw Error("plugin '" + instance.name() +
                "' threw a C++ exception across the C boundary in execute");
  }
  if (status != TSR_OK) {
    throw Error("plugin '" + instance.name() + "' failed to execute a region (status " +
                std::to_string(status) + "): " + detail::plugin_message(text));
  }
}

}  // namespace

void PluginRegion::execute(const void* const* inputs, void* const* outputs) {
  checked_execute(*instance_, [&](tsr_message message) {
    return instance_->table().execute_region(handle_, inputs, outputs, message);
  });
}

void PluginRegion::execute(const tsr_io* inputs, const tsr_io* outputs) {
  checked_execute(*instance_, [&](tsr_message message) {
    return instance_->table().execute_region_io(handle_, inputs, outputs, message);
  });
}

std::vector<double> PluginRegion::last_profile() const {
  if (!instance_->has_last_profile()) return {};
  std::vector<double> times(static_cast<size_t>(num_nodes_));
  int32_t count = 0;
  try {
    if (instance_->table().last_profile(handle_, times.data(), num_nodes_, &count) != TSR_OK) {
      return {};
    }
  } catch (...) {
    return {};
  }
  times.resize(static_cast<size_t>(std::max<int32_t>(0, std::min(count, num_nodes_))));
  return times;
}

}  // namespace tessera
