// PluginRegion: one region compiled by a plugin, executed through the C table.
#include <cstddef>

#include "plugins/region_desc.hpp"
#include "tessera/plugin_host.hpp"

namespace tessera {

std::shared_ptr<PluginRegion> PluginRegion::compile(std::shared_ptr<LoadedPlugin> plugin,
                                                    int32_t device, const Graph& graph,
                                                    const std::vector<int>& nodes,
                                                    const RegionCompileSettings& settings) {
  if (!plugin) throw Error("PluginRegion::compile: no plugin given");
  std::shared_ptr<PluginRegion> region(new PluginRegion());
  region->plugin_ = std::move(plugin);
  region->desc_ =
      std::make_unique<detail::RegionDesc>(graph, nodes, detail::value_consumers(graph));
  region->num_nodes_ = static_cast<int32_t>(nodes.size());
  tsr_compile_options options{};
  options.struct_size = sizeof(tsr_compile_options);
  options.num_threads = settings.num_threads;
  options.precision = settings.precision.empty() ? nullptr : settings.precision.c_str();
  options.cache_dir = settings.cache_dir.empty() ? nullptr : settings.cache_dir.c_str();
  options.pack_path = settings.pack_path.empty() ? nullptr : settings.pack_path.c_str();
  char text[1024] = {0};
  tsr_region_handle handle = nullptr;
  tsr_status status;
  const LoadedPlugin& p = *region->plugin_;
  {
    std::lock_guard<std::mutex> lock(p.call_mutex());
    try {
      status = p.table().compile_region(device, region->desc_->get(), &options, &handle,
                                        tsr_message{text, sizeof(text)});
    } catch (...) {
      throw RegionCompileError(
          "plugin '" + p.name() + "' threw a C++ exception across the C boundary in compile",
          TSR_ERROR);
    }
  }
  if (status != TSR_OK || handle == nullptr) {
    throw RegionCompileError(
        std::string(text[0] ? text : "no message") + " (status " + std::to_string(status) + ")",
        status == TSR_OK ? TSR_ERROR : status);
  }
  region->handle_ = handle;
  return region;
}

PluginRegion::~PluginRegion() {
  if (handle_ != nullptr) {
    try {
      plugin_->table().release_region(handle_);
    } catch (...) {
      // Nothing sensible to do; the plugin stays loaded until plugin_ goes below.
    }
  }
}

const std::vector<ValueId>& PluginRegion::input_values() const {
  return desc_->input_values();
}
const std::vector<ValueId>& PluginRegion::output_values() const {
  return desc_->output_values();
}

void PluginRegion::execute(const void* const* inputs, void* const* outputs) {
  char text[1024] = {0};
  tsr_status status;
  try {
    status =
        plugin_->table().execute_region(handle_, inputs, outputs, tsr_message{text, sizeof(text)});
  } catch (...) {
    throw Error("plugin '" + plugin_->name() +
                "' threw a C++ exception across the C boundary in execute");
  }
  if (status != TSR_OK) {
    throw Error("plugin '" + plugin_->name() + "' failed to execute a region (status " +
                std::to_string(status) + "): " + (text[0] ? text : "no message"));
  }
}

std::vector<double> PluginRegion::last_profile() const {
  if (!plugin_->has_last_profile()) return {};
  std::vector<double> times(static_cast<size_t>(num_nodes_));
  int32_t count = 0;
  try {
    if (plugin_->table().last_profile(handle_, times.data(), num_nodes_, &count) != TSR_OK) {
      return {};
    }
  } catch (...) {
    return {};
  }
  times.resize(static_cast<size_t>(std::max<int32_t>(0, std::min(count, num_nodes_))));
  return times;
}

}  // namespace tessera
