// Plugin discovery and loading with Boost.DLL; every refusal is kept with its reason.
#include "tessera/plugin_host.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "plugins/abi_arrays.hpp"
#include "plugins/plugin_file_check.hpp"
#include "plugins/plugin_text.hpp"
#include "plugins/region_desc.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace fs = std::filesystem;

struct LoadedPlugin::Library {
  boost::dll::shared_library lib;
};

namespace {

constexpr const char* kPrefix = "libtessera-plugin-";
constexpr const char* kSuffix = ".so";
constexpr int32_t kMaxDevices = 32;

template <typename Field>
bool has_slot(const tsr_plugin& table, Field tsr_plugin::*field, size_t offset) {
  return table.struct_size >= offset + sizeof(Field) && table.*field != nullptr;
}

std::string str_or_empty(const char* s) {
  return s ? s : "";
}

// "" when `id` may name a plugin or a device (tsr_device_info::id), else why not: 1 to 63
// characters of [A-Za-z0-9._-], which target specs ("mali:gpu0"), file names and printed plans
// take as they are.
std::string identifier_problem(const std::string& id) {
  if (id.empty()) return "is empty";
  if (id.size() > 63) return "is longer than 63 characters";
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return "has a character outside [A-Za-z0-9._-]";
  }
  return "";
}

// The device as core keeps it. The id is checked by the caller, the other strings are shown
// (`tessera info`, plans, errors) and so get their control characters escaped.
PluginDeviceInfo to_device_info(const tsr_device_info& d) {
  PluginDeviceInfo info;
  info.id = str_or_empty(d.id);
  info.vendor = detail::plugin_text(d.vendor);
  info.name = detail::plugin_text(d.name);
  info.driver_version = detail::plugin_text(d.driver_version);
  info.kind = detail::plugin_text(d.kind);
  info.compute_units = d.compute_units;
  info.memory_bytes = d.memory_bytes;
  info.features = detail::plugin_text(d.features);
  info.score = d.score;
  info.unusable_reason = detail::plugin_text(d.unusable_reason);
  return info;
}

// "" and `devices` filled, or why the probe failed.
std::string call_probe(const tsr_plugin& table, tsr_instance instance, const char* selector,
                       std::vector<PluginDeviceInfo>& devices) {
  // Laid out at the plugin's size of tsr_device_info; each element's struct_size is that stride
  // (plugin_abi.h, "Arrays of structs") and the rest of it defaults.
  const uint32_t stride = detail::element_sizes_for_minor(table.abi_minor).device_info;
  detail::StridedArray infos(kMaxDevices, stride);
  tsr_device_info blank{};
  blank.struct_size = stride;
  for (size_t i = 0; i < infos.size(); ++i) infos.put(i, blank);
  int32_t count = 0;
  char text[512] = {0};
  tsr_status status;
  try {
    status = table.probe_devices(instance, selector, infos.data<tsr_device_info>(), kMaxDevices,
                                 &count, tsr_message{text, sizeof(text)});
  } catch (const std::exception& e) {
    return "probe threw a C++ exception across the C boundary: " + escaped(e.what());
  } catch (...) {
    return "probe threw a C++ exception across the C boundary";
  }
  if (status != TSR_OK) {
    return "probe failed (status " + std::to_string(status) + "): " + detail::plugin_message(text);
  }
  if (count < 0 || count > kMaxDevices) {
    return "probe returned an invalid device count " + std::to_string(count);
  }
  devices.clear();
  for (int32_t i = 0; i < count; ++i) {
    PluginDeviceInfo info = to_device_info(infos.get<tsr_device_info>(static_cast<size_t>(i)));
    if (std::string why = identifier_problem(info.id); !why.empty()) {
      return "probe answered a device ('" + info.name + "') whose id '" + escaped(info.id) + "' " +
             why;
    }
    for (const PluginDeviceInfo& other : devices) {
      if (other.id == info.id) {
        return "probe answered two devices with the id '" + info.id + "' ('" + other.name + "', '" +
               info.name + "')";
      }
    }
    devices.push_back(std::move(info));
  }
  return "";
}

fs::path core_library_dir() {
  std::error_code ec;
  fs::path self = boost::dll::this_line_location(ec);
  if (ec) return {};
  return fs::canonical(self, ec).parent_path();
}

// Why a plugin of an older ABI major is refused, and how its author ports it.
std::string porting_reason(uint32_t major, uint32_t minor) {
  return "built for plugin ABI " + std::to_string(major) + "." + std::to_string(minor) +
         "; this core speaks " + plugin_abi_version() +
         " and no longer loads it. To port it: rebuild against this core's plugin.hpp (slots take "
         "the instance create() returns; devices are ids the plugin chooses; options arrive at "
         "create, not per compile); see 'Porting a 1.x plugin' in "
         "core/include/tessera/README.md";
}

// Calls `create` of `table`; "" and `*instance` set, or why it failed.
std::string call_create(const tsr_plugin& table, const TargetOptions& options,
                        tsr_instance* instance) {
  std::vector<tsr_target_option> list;
  for (const auto& [name, value] : options) list.push_back({name.c_str(), value.c_str()});
  const uint32_t stride = detail::element_sizes_for_minor(table.abi_minor).target_option;
  detail::StridedArray raw = detail::StridedArray::of(list, stride);
  const tsr_host_api host{sizeof(tsr_host_api), TESSERA_PLUGIN_ABI_MAJOR, TESSERA_PLUGIN_ABI_MINOR,
                          stride};
  char text[512] = {0};
  *instance = nullptr;
  tsr_status status;
  try {
    status = table.create(&host, raw.data<tsr_target_option>(), static_cast<int32_t>(raw.size()),
                          instance, tsr_message{text, sizeof(text)});
  } catch (...) {
    return "create threw a C++ exception across the C boundary";
  }
  if (status == TSR_INVALID_ARGUMENT && !options.empty()) {
    return "refused its options: " + detail::plugin_message(text);
  }
  if (status != TSR_OK) {
    return "create failed (status " + std::to_string(status) + "): " + detail::plugin_message(text);
  }
  if (*instance == nullptr) return "create answered OK but no instance";
  return "";
}

void call_destroy(const tsr_plugin& table, tsr_instance instance) {
  try {
    table.destroy(instance);
  } catch (...) {
    // Nothing sensible to do: the instance is gone either way.
  }
}

}  // namespace

std::string plugin_abi_version() {
  return std::to_string(TESSERA_PLUGIN_ABI_MAJOR) + "." + std::to_string(TESSERA_PLUGIN_ABI_MINOR);
}

LoadedPlugin::~LoadedPlugin() {
  library_.reset();  // dlclose: only unmapped when no other host maps it any more
}

bool LoadedPlugin::has_last_profile() const {
  return has_slot(*table_, &tsr_plugin::last_profile, offsetof(tsr_plugin, last_profile));
}

bool LoadedPlugin::has_describe_node() const {
  return has_slot(*table_, &tsr_plugin::describe_node, offsetof(tsr_plugin, describe_node));
}

std::shared_ptr<PluginInstance> LoadedPlugin::create_instance(const TargetOptions& options) {
  std::shared_ptr<PluginInstance> instance(new PluginInstance());
  instance->plugin_ = shared_from_this();
  instance->options_ = options;
  tsr_instance handle = nullptr;
  if (std::string why = call_create(*table_, options, &handle); !why.empty()) {
    throw Error("plugin '" + name_ + "' " + why);
  }
  instance->handle_ = handle;
  return instance;
}

std::vector<PluginDeviceInfo> LoadedPlugin::probe(const std::string& selector) {
  return create_instance()->probe(selector);
}

bool PluginInstance::has_query_subgraph() const {
  return has_slot(table(), &tsr_plugin::query_subgraph, offsetof(tsr_plugin, query_subgraph));
}

std::string PluginInstance::buffer_domain(const std::string& device) const {
  const tsr_plugin& t = table();
  const bool has =
      has_slot(t, &tsr_plugin::buffer_kind, offsetof(tsr_plugin, buffer_kind)) &&
      has_slot(t, &tsr_plugin::alloc_buffer, offsetof(tsr_plugin, alloc_buffer)) &&
      has_slot(t, &tsr_plugin::free_buffer, offsetof(tsr_plugin, free_buffer)) &&
      has_slot(t, &tsr_plugin::execute_region_io, offsetof(tsr_plugin, execute_region_io));
  if (!has) return "";
  std::lock_guard<std::mutex> lock(calls_);
  tsr_buffer_kind kind{};
  kind.struct_size = sizeof(kind);
  try {
    if (t.buffer_kind(handle_, device.c_str(), &kind) != TSR_OK) return "";
  } catch (...) {
    return "";
  }
  return str_or_empty(kind.domain);
}

tsr_buffer PluginInstance::alloc_buffer(const std::string& device, uint64_t bytes) const {
  std::lock_guard<std::mutex> lock(calls_);
  char text[512] = {0};
  tsr_buffer buffer = nullptr;
  tsr_status status;
  try {
    status = table().alloc_buffer(handle_, device.c_str(), bytes, &buffer,
                                  tsr_message{text, sizeof(text)});
  } catch (...) {
    throw Error("plugin '" + name() +
                "' threw a C++ exception across the C boundary in "
                "alloc_buffer");
  }
  if (status != TSR_OK || buffer == nullptr) {
    throw Error("plugin '" + name() + "' could not allocate a " + std::to_string(bytes) +
                "-byte buffer on device '" + device + "' (status " + std::to_string(status) +
                "): " + detail::plugin_message(text));
  }
  return buffer;
}

void PluginInstance::free_buffer(tsr_buffer buffer) const {
  std::lock_guard<std::mutex> lock(calls_);
  try {
    table().free_buffer(handle_, buffer);
  } catch (...) {
    // Nothing sensible to do: the buffer is gone either way.
  }
}

PluginInstance::~PluginInstance() {
  if (handle_ != nullptr) call_destroy(plugin_->table(), handle_);
}

std::vector<PluginDeviceInfo> PluginInstance::probe(const std::string& selector) const {
  std::lock_guard<std::mutex> lock(calls_);
  std::vector<PluginDeviceInfo> devices;
  const std::string reason =
      call_probe(table(), handle_, selector.empty() ? nullptr : selector.c_str(), devices);
  if (!reason.empty()) throw Error("plugin '" + name() + "' (" + plugin_->path() + "): " + reason);
  return devices;
}

namespace {

// Node `node` of `region`, read at the region's node stride.
tsr_node region_node(const tsr_region* region, int32_t node) {
  const uint32_t declared = TSR_HAS_FIELD(region, tsr_region, node_size) ? region->node_size : 0;
  const uint32_t stride =
      detail::array_stride(declared, detail::v2_2_element_sizes().node, "region nodes");
  return detail::read_element<tsr_node>(region->nodes, static_cast<size_t>(node), stride);
}

// The schedules of a describe_node answer, read at the strides the plugin gave (a plugin of 2.2
// or before lays them out at the 2.2 sizes and sets none). Throws Error starting with `who`.
std::vector<PluginSchedule> copy_schedules(const tsr_node_tuning& tuning, uint32_t plugin_minor,
                                           const std::string& who) {
  const detail::ElementSizes v2_2 = detail::v2_2_element_sizes();
  const bool has_strides = plugin_minor >= 3;
  const uint32_t schedule_stride = detail::array_stride(
      has_strides ? tuning.schedule_size : 0, v2_2.schedule, (who + ": schedules").c_str());
  const uint32_t space_stride = detail::array_stride(
      has_strides ? tuning.knob_space_size : 0, v2_2.knob_space, (who + ": knob spaces").c_str());
  const uint32_t knob_stride = detail::array_stride(has_strides ? tuning.knob_size : 0, v2_2.knob,
                                                    (who + ": default configs").c_str());
  std::vector<PluginSchedule> out;
  for (int32_t i = 0; i < tuning.num_schedules; ++i) {
    const auto d = detail::read_element<tsr_schedule_desc>(tuning.schedules, static_cast<size_t>(i),
                                                           schedule_stride);
    PluginSchedule schedule;
    schedule.name = str_or_empty(d.name);
    if (d.num_knobs < 0 || (d.num_knobs > 0 && d.knobs == nullptr)) {
      throw Error(who + ": schedule '" + escaped(schedule.name) + "' has a malformed knob list");
    }
    for (int32_t k = 0; k < d.num_knobs; ++k) {
      const auto space =
          detail::read_element<tsr_knob_space>(d.knobs, static_cast<size_t>(k), space_stride);
      PluginKnobSpace knob;
      knob.name = str_or_empty(space.name);
      if (space.num_values > 0 && space.values != nullptr) {
        knob.values.assign(space.values, space.values + space.num_values);
      }
      if (d.default_config != nullptr) {
        knob.default_value =
            detail::read_element<tsr_knob>(d.default_config, static_cast<size_t>(k), knob_stride)
                .value;
      }
      schedule.knobs.push_back(std::move(knob));
    }
    out.push_back(std::move(schedule));
  }
  return out;
}

}  // namespace

PluginNodeTuning PluginInstance::describe_node(const std::string& device, const tsr_region* region,
                                               int32_t node) const {
  PluginNodeTuning out;
  if (!has_describe_node()) return out;
  const std::string who = "plugin '" + name() + "' describe_node for node " + std::to_string(node) +
                          " ('" + escaped(str_or_empty(region_node(region, node).name)) + "')";
  std::lock_guard<std::mutex> lock(calls_);
  // The 2.3 strides start at 0 (the 2.2 sizes) for a plugin that does not set them.
  tsr_node_tuning tuning{};
  tuning.struct_size = sizeof(tsr_node_tuning);
  char text[512] = {0};
  tsr_status status;
  try {
    status = table().describe_node(handle_, device.c_str(), region, node, &tuning,
                                   tsr_message{text, sizeof(text)});
  } catch (...) {
    throw Error(who + ": threw a C++ exception across the C boundary");
  }
  if (status != TSR_OK) {
    throw Error(who + " failed (status " + std::to_string(status) +
                "): " + detail::plugin_message(text));
  }
  // Copy before the lock goes: the plugin's storage lives until the next call on this thread.
  out.workload_key = str_or_empty(tuning.workload_key);
  out.flops = tuning.flops;
  if (tuning.num_schedules < 0 || (tuning.num_schedules > 0 && tuning.schedules == nullptr)) {
    throw Error(who + ": malformed answer (" + std::to_string(tuning.num_schedules) +
                " schedules)");
  }
  if (tuning.num_schedules > 0 &&
      (tuning.default_schedule < 0 || tuning.default_schedule >= tuning.num_schedules)) {
    throw Error(who + ": default_schedule " + std::to_string(tuning.default_schedule) +
                " is out of range");
  }
  out.default_schedule = tuning.default_schedule;
  out.schedules = copy_schedules(tuning, plugin_->abi_minor(), who);
  return out;
}

PluginNodeTuning PluginInstance::describe_node(const std::string& device, const Graph& graph,
                                               int node) const {
  if (node < 0 || static_cast<size_t>(node) >= graph.nodes.size()) {
    throw Error("describe_node: node index " + std::to_string(node) + " is not in " +
                (graph.source.empty() ? "the graph" : graph.source));
  }
  const detail::RegionDesc region(graph, {node}, detail::value_consumers(graph),
                                  detail::element_sizes_for_minor(plugin_->abi_minor()));
  return describe_node(device, region.get(), 0);
}

std::vector<PluginDir> PluginHost::default_dirs() {
  std::vector<PluginDir> dirs;
  const fs::path lib_dir = core_library_dir();
  if (lib_dir.empty()) return dirs;
  // libtessera.so is in <prefix>/<libdir> and the plugin dir is <libdir>/tessera/plugins relative
  // to the prefix; libdir may have several components (lib/x86_64-linux-gnu).
  const fs::path relative_plugin_dir(TESSERA_PLUGIN_INSTALL_DIR);
  fs::path prefix = lib_dir;
  for (const auto& part : relative_plugin_dir.parent_path().parent_path()) {
    (void)part;
    prefix = prefix.parent_path();
  }
  fs::path install = (prefix / relative_plugin_dir).lexically_normal();
  dirs.push_back({install.string(), "install", ""});
  // In a build tree libtessera.so is <build>/core/libtessera.so and plugins are in
  // <build>/plugins/lib.
  fs::path build = (lib_dir.parent_path() / "plugins" / "lib").lexically_normal();
  if (build != install) dirs.push_back({build.string(), "build tree", ""});
  return dirs;
}

std::vector<PluginDir> default_data_dirs(const std::string& sub) {
  std::vector<PluginDir> dirs;
  const fs::path lib_dir = core_library_dir();
  if (lib_dir.empty()) return dirs;
  // Same prefix arithmetic as for the plugin dir: libtessera.so is in <prefix>/<libdir>.
  fs::path prefix = lib_dir;
  for (const auto& part : fs::path(TESSERA_PLUGIN_INSTALL_DIR).parent_path().parent_path()) {
    (void)part;
    prefix = prefix.parent_path();
  }
  dirs.push_back(
      {(prefix / TESSERA_DATA_INSTALL_DIR / sub).lexically_normal().string(), "install", ""});
  // A build tree (<build>/core/libtessera.so next to <build>/CMakeCache.txt) reads the data from
  // the source tree it was configured from, so packs edited there apply without installing.
  std::error_code ec;
  if (fs::exists(lib_dir.parent_path() / "CMakeCache.txt", ec)) {
    dirs.push_back(
        {(fs::path(TESSERA_SOURCE_DIR) / sub).lexically_normal().string(), "source tree", ""});
  }
  return dirs;
}

namespace {

// libtessera-plugin-NAME.so -> NAME, or "" for any other file name.
std::string plugin_name_of_file(const std::string& file) {
  const size_t plen = std::char_traits<char>::length(kPrefix);
  const size_t slen = std::char_traits<char>::length(kSuffix);
  if (file.size() <= plen + slen || file.compare(0, plen, kPrefix) != 0 ||
      file.compare(file.size() - slen, slen, kSuffix) != 0) {
    return "";
  }
  return file.substr(plen, file.size() - plen - slen);
}

}  // namespace

PluginHost::PluginHost(const PluginHostOptions& options)
    : allow_shadowing_(options.allow_shadowing), options_only_(options.only) {
  // The bundled plugins' names, so that one on TESSERA_PLUGIN_PATH cannot silently replace them.
  for (const PluginDir& d : default_dirs()) {
    std::error_code ec;
    for (fs::directory_iterator it(d.path, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = plugin_name_of_file(it->path().filename().string());
      if (!name.empty()) bundled_.emplace(name, d.path);
    }
  }
  std::vector<PluginDir> wanted;
  for (const std::string& d : options.dirs) wanted.push_back({d, "caller", ""});
  if (options.use_environment) {
    if (const char* env = std::getenv("TESSERA_PLUGIN_PATH")) {
      std::stringstream ss(env);
      std::string item;
      while (std::getline(ss, item, ':')) {
        if (!item.empty()) wanted.push_back({item, "TESSERA_PLUGIN_PATH", ""});
      }
    }
  }
  if (options.use_default_dirs) {
    for (PluginDir& d : default_dirs()) wanted.push_back(std::move(d));
  }
  for (PluginDir& dir : wanted) {
    bool seen = false;
    for (const PluginDir& d : dirs_)
      seen =
          seen || (d.path == dir.path && !d.status.empty() && d.status.rfind("searched", 0) == 0);
    if (seen) {
      dir.status = "already searched";
    } else if (!fs::path(dir.path).is_absolute()) {
      // The working directory is never searched: a relative entry would depend on it.
      dir.status = "refused: relative path (plugin directories must be absolute)";
    } else {
      std::error_code ec;
      if (!fs::is_directory(dir.path, ec)) {
        dir.status = "not found";
      } else if (std::string why = plugin_checks::dir_problem(dir.path); !why.empty()) {
        dir.status = "refused: " + why;
      } else {
        search_dir(dir);
        continue;  // search_dir records it
      }
    }
    dirs_.push_back(dir);
  }
}

void PluginHost::search_dir(const PluginDir& dir) {
  std::vector<std::pair<std::string, std::string>> candidates;  // path, name from the file name
  std::error_code ec;
  for (fs::directory_iterator it(dir.path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = plugin_name_of_file(it->path().filename().string());
    if (name.empty()) continue;
    if (!options_only_.empty() &&
        std::find(options_only_.begin(), options_only_.end(), name) == options_only_.end())
      continue;
    candidates.emplace_back(it->path().string(), name);
  }
  std::sort(candidates.begin(), candidates.end());
  PluginDir searched = dir;
  searched.status = ec ? "error listing: " + ec.message()
                       : "searched (" + std::to_string(candidates.size()) + " candidates)";
  dirs_.push_back(searched);
  for (const auto& [path, name] : candidates) load_candidate(dir, path, name);
}

namespace {

// Loads the library at `path` into `lib` and asks its entry for this host's function table: the
// table, or nullptr with `why` saying what the file is instead.
const tsr_plugin* open_table(boost::dll::shared_library& lib, const std::string& path,
                             std::string& why) {
  std::error_code ec;
  ::dlerror();
  lib.load(path, ec, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (ec || !lib.is_loaded()) {
    const char* detail = ::dlerror();
    why = "not loadable: " + (detail ? std::string(detail) : ec.message());
    return nullptr;
  }
  if (!lib.has(TESSERA_PLUGIN_ENTRY_NAME)) {
    why = std::string("not a plugin: no entry symbol '") + TESSERA_PLUGIN_ENTRY_NAME + "'";
    return nullptr;
  }
  auto entry = lib.get<const tsr_plugin*(uint32_t, uint32_t)>(TESSERA_PLUGIN_ENTRY_NAME);
  const tsr_plugin* table = nullptr;
  try {
    table = entry(TESSERA_PLUGIN_ABI_MAJOR, TESSERA_PLUGIN_ABI_MINOR);
  } catch (...) {
    why = "entry threw a C++ exception across the C boundary";
    return nullptr;
  }
  if (table == nullptr) {
    // A plugin built for ABI 1 refuses a major-2 host in its entry; ask it as a 1.x host would, to
    // tell the user what it is and how to port it (only its leading version fields are read).
    const tsr_plugin* old = nullptr;
    try {
      old = entry(1, 2);
    } catch (...) {
    }
    why = old != nullptr && old->abi_major == 1
              ? porting_reason(old->abi_major, old->abi_minor)
              : "entry returned NULL (the plugin refused host ABI " + plugin_abi_version() + ")";
    return nullptr;
  }
  if (table->abi_major != TESSERA_PLUGIN_ABI_MAJOR) {
    why = table->abi_major < TESSERA_PLUGIN_ABI_MAJOR
              ? porting_reason(table->abi_major, table->abi_minor)
              : "ABI major mismatch: plugin built for " + std::to_string(table->abi_major) + "." +
                    std::to_string(table->abi_minor) + ", host is " + plugin_abi_version() +
                    " (use a core of that ABI)";
    return nullptr;
  }
  if (table->struct_size < offsetof(tsr_plugin, last_profile)) {
    why = "function table too small (struct_size " + std::to_string(table->struct_size) + ")";
    return nullptr;
  }
  return table;
}

}  // namespace

void PluginHost::load_candidate(const PluginDir& dir, const std::string& path,
                                const std::string& name) {
  // Refusals are shown by `tessera info` and in errors; file names and whatever the plugin
  // answered may hold control characters.
  auto refuse = [&](const std::string& reason) {
    refusals_.push_back({escaped(path), escaped(name), escaped(reason)});
  };
  if (std::string why = identifier_problem(name); !why.empty()) {
    refuse("the plugin name in its file name " + why);
    return;
  }
  // Decided on the name the file gives, before any of its code runs; a loaded plugin's table
  // gives the same name (checked below), so this is the name it would have replaced.
  std::error_code same_ec;
  if (auto b = bundled_.find(name); b != bundled_.end() && dir.origin == "TESSERA_PLUGIN_PATH" &&
                                    !allow_shadowing_ &&
                                    !fs::equivalent(dir.path, b->second, same_ec)) {
    refuse("shadows the bundled plugin '" + name + "' in " + b->second +
           "; to use this one instead, set allow_plugin_shadowing: true in the deployment");
    return;
  }
  // dlopen maps whatever it is given: a truncated file dies with SIGBUS inside the loader.
  if (std::string why = plugin_checks::file_problem(path); !why.empty()) {
    refuse("not loadable: " + why);
    return;
  }
  auto library = std::make_unique<LoadedPlugin::Library>();
  std::string why;
  const tsr_plugin* table = open_table(library->lib, path, why);
  if (table == nullptr) {
    refuse(why);
    return;
  }
  // A plugin is known by its file name before it is loaded (the shadowing check, `only`, the
  // bundled set); a table calling itself otherwise would take another plugin's place unseen.
  const std::string table_name = str_or_empty(table->name);
  if (table_name.empty()) {
    refuse("function table has no name");
    return;
  }
  if (table_name != name) {
    refuse("its function table names it '" + escaped(table_name) +
           "', but its file is named for '" + name +
           "'; a plugin's table name must match its file name, libtessera-plugin-" + name +
           kSuffix);
    return;
  }
  if (!table->create || !table->destroy || !table->probe_devices || !table->query_node ||
      !table->compile_region || !table->execute_region || !table->release_region) {
    refuse("a required slot of the function table is NULL");
    return;
  }
  if (std::shared_ptr<LoadedPlugin> other = find(name)) {
    refuse("duplicate name '" + name + "' (already loaded from " + other->path() + ")");
    return;
  }
  std::shared_ptr<LoadedPlugin> plugin(new LoadedPlugin());
  plugin->library_ = std::move(library);
  plugin->table_ = table;
  plugin->name_ = name;
  plugin->version_ = detail::plugin_text(table->version);
  plugin->description_ = detail::plugin_text(table->description);
  plugin->path_ = path;
  // The load-time probe runs in an instance of its own, destroyed before the plugin is kept: the
  // devices a plugin lists by default are what `tessera info` and default targets see.
  {
    tsr_instance instance = nullptr;
    std::string reason = call_create(*table, {}, &instance);
    if (reason.empty()) {
      reason = call_probe(*table, instance, nullptr, plugin->devices_);
      call_destroy(*table, instance);
    }
    if (!reason.empty()) {
      refuse(reason);
      return;
    }
  }
  plugins_.push_back(std::move(plugin));
}

std::shared_ptr<LoadedPlugin> PluginHost::find(const std::string& name) const {
  for (const auto& p : plugins_) {
    if (p->name() == name) return p;
  }
  return nullptr;
}

}  // namespace tessera
