// PluginRegion: one region compiled by a plugin, executed through the C table.
#include <algorithm>
#include <cstddef>
#include <optional>

#include "plugins/abi_arrays.hpp"
#include "plugins/plugin_text.hpp"
#include "plugins/region_desc.hpp"
#include "tessera/plugin_host.hpp"

namespace tessera {

namespace {

// Node configs for compile_region and the arrays they point to, laid out at a plugin's element
// sizes; alive as long as the object.
struct NodeConfigArrays {
  std::vector<NodeConfigChoice> choices;
  std::vector<detail::StridedArray> knobs;  // one per choice
  detail::StridedArray configs;
};

// Describes each region node, lets settings.choose_config choose, and lays the chosen configs
// out at `sizes`.
void choose_configs(const PluginInstance& plugin, const std::string& device,
                    const detail::RegionDesc& desc, const std::vector<int>& nodes,
                    const RegionCompileSettings& settings, const detail::ElementSizes& sizes,
                    NodeConfigArrays& out) {
  std::vector<int32_t> chosen_nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeConfigRequest request;
    request.graph_node = nodes[i];
    request.region_node = static_cast<int>(i);
    PluginNodeTuning tuning;
    if (plugin.has_describe_node()) {
      try {
        tuning = plugin.describe_node(device, desc.get(), static_cast<int32_t>(i));
        request.tuning = &tuning;
      } catch (const Error& e) {
        request.describe_error = e.what();
      }
    }
    if (std::optional<NodeConfigChoice> choice = settings.choose_config(request)) {
      out.choices.push_back(std::move(*choice));
      chosen_nodes.push_back(static_cast<int32_t>(i));
    }
  }
  std::vector<tsr_node_config> configs;
  for (size_t c = 0; c < out.choices.size(); ++c) {
    std::vector<tsr_knob> knobs;
    for (const Knob& k : out.choices[c].knobs) knobs.push_back({k.name.c_str(), k.value});
    out.knobs.push_back(detail::StridedArray::of(knobs, sizes.knob));
    tsr_node_config config{};
    config.struct_size = std::min<uint32_t>(sizes.node_config, sizeof(tsr_node_config));
    config.node = chosen_nodes[c];
    config.schedule = out.choices[c].schedule.c_str();
    config.num_knobs = static_cast<int32_t>(knobs.size());
    config.knobs = out.knobs.back().data<tsr_knob>();
    configs.push_back(config);
  }
  out.configs = detail::StridedArray::of(configs, sizes.node_config);
}

}  // namespace

std::shared_ptr<PluginRegion> PluginRegion::compile(std::shared_ptr<PluginInstance> instance,
                                                    const std::string& device, const Graph& graph,
                                                    const std::vector<int>& nodes,
                                                    const RegionCompileSettings& settings) {
  if (!instance) throw Error("PluginRegion::compile: no plugin instance given");
  std::shared_ptr<PluginRegion> region(new PluginRegion());
  region->instance_ = std::move(instance);
  const PluginInstance& p = *region->instance_;
  const detail::ElementSizes sizes = detail::element_sizes_for_minor(p.plugin().abi_minor());
  region->desc_ =
      std::make_unique<detail::RegionDesc>(graph, nodes, detail::value_consumers(graph), sizes);
  region->num_nodes_ = static_cast<int32_t>(nodes.size());
  tsr_compile_options options{};
  options.struct_size = sizeof(tsr_compile_options);
  options.num_threads = settings.num_threads;
  options.precision = settings.precision.empty() ? nullptr : settings.precision.c_str();
  options.cache_dir = settings.cache_dir.empty() ? nullptr : settings.cache_dir.c_str();
  options.pack_path = settings.pack_path.empty() ? nullptr : settings.pack_path.c_str();
  options.dump_dir = settings.dump_dir.empty() ? nullptr : settings.dump_dir.c_str();
  options.profile = settings.profile ? 1 : 0;
  options.node_config_size = sizes.node_config;
  options.knob_size = sizes.knob;
  // Kept alive for the compile call.
  NodeConfigArrays configs;
  if (settings.choose_config) {
    choose_configs(p, device, *region->desc_, nodes, settings, sizes, configs);
  }
  options.num_node_configs = static_cast<int32_t>(configs.configs.size());
  options.node_configs = configs.configs.data<tsr_node_config>();
  char text[1024] = {0};
  tsr_region_handle handle = nullptr;
  tsr_status status;
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
  const uint32_t io_size = desc_->get()->io_size;
  if (io_size != sizeof(tsr_io)) {
    // The plugin's minor knows another tsr_io: lay both arrays out at its size.
    const size_t ins = desc_->input_values().size(), outs = desc_->output_values().size();
    const detail::StridedArray in =
        detail::StridedArray::of(std::vector<tsr_io>(inputs, inputs + ins), io_size);
    const detail::StridedArray out =
        detail::StridedArray::of(std::vector<tsr_io>(outputs, outputs + outs), io_size);
    checked_execute(*instance_, [&](tsr_message message) {
      return instance_->table().execute_region_io(handle_, in.data<tsr_io>(), out.data<tsr_io>(),
                                                  message);
    });
    return;
  }
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
