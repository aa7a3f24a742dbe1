// Where packs and device-family descriptors come from (schedules and descriptor directories,
// --pack files), read as YAML; registered with the runtime's pack selection when libtessera
// loads, so sessions of a process that links libtessera read packs.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "exec/importer_library.hpp"
#include "plugins/pack_apply.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace fs = std::filesystem;

namespace {

void add_unique(std::vector<std::string>& dirs, const std::string& dir) {
  if (!dir.empty() && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
}

std::vector<std::string> env_dirs(const char* name) {
  std::vector<std::string> out;
  if (const char* env = std::getenv(name)) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':')) {
      if (!item.empty()) out.push_back(item);
    }
  }
  return out;
}

}  // namespace

PackSources load_pack_sources(const SessionOptions& options) {
  PackSources sources;
  sources.mode = options.pack_mode;
  sources.scan = &scan_packs;
  sources.trusted_keys = options.trusted_keys;
  if (options.pack_mode == PackMode::kNone) return sources;

  for (const std::string& d : options.device_family_dirs) add_unique(sources.family_dirs, d);
  if (options.use_default_data_dirs) {
    for (const PluginDir& d : default_data_dirs("targets/devices")) {
      add_unique(sources.family_dirs, d.path);
    }
  }
  std::set<std::string> ids;
  for (const std::string& dir : sources.family_dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    try {
      for (DeviceFamily& f : load_device_families(dir)) {
        if (ids.insert(f.id).second) sources.families.push_back(std::move(f));
      }
    } catch (const Error& e) {
      // A broken descriptor costs family-level packs, not the whole run.
      sources.warnings.push_back("device families in " + dir + " not loaded: " + e.what());
    }
  }

  if (options.pack_mode == PackMode::kFiles) {
    for (const std::string& file : options.pack_files) {
      Pack pack = load_pack(file);  // errors name the file, line and key
      if (const auto problem = pack_trust_problem(pack, options.trusted_keys))
        throw Error(file + ": refused: " + *problem);
      if (pack.schema_version != kPackSchemaVersion) {
        throw Error(file + ": schema_version " + std::to_string(pack.schema_version) +
                    " is not one this engine reads (" + std::to_string(kPackSchemaVersion) +
                    "); re-tune or convert the pack");
      }
      sources.file_packs.push_back(std::move(pack));
    }
    return sources;
  }
  for (const std::string& d : options.schedules_dirs) add_unique(sources.schedules_dirs, d);
  if (options.use_schedules_environment) {
    for (const std::string& d : env_dirs("TESSERA_SCHEDULES_PATH")) {
      add_unique(sources.schedules_dirs, d);
    }
  }
  if (options.use_default_data_dirs) {
    for (const PluginDir& d : default_data_dirs("schedules")) {
      add_unique(sources.schedules_dirs, d.path);
    }
  }
  return sources;
}

namespace {

// libtessera's static initialisation: the runtime's sessions read packs from here on.
const bool kLoaderRegistered = (importer_hooks().load_pack_sources = &load_pack_sources, true);

}  // namespace

}  // namespace tessera::detail
