// Applying tuned packs: where packs and device-family descriptors are found, which pack each
// target device gets (family match + hierarchical selection), and per node which config of the
// pack is passed to the plugin, after checking it against the node's knob space and the device's
// work-group limit.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/device_family.hpp"
#include "tessera/pack.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"

namespace tessera::detail {

// Everything pack selection reads, loaded once per Session.
struct PackSources {
  PackMode mode = PackMode::kAuto;
  std::vector<DeviceFamily> families;
  std::vector<std::string> family_dirs;     // searched, in order
  std::vector<std::string> schedules_dirs;  // kAuto: searched, in order
  std::vector<Pack> file_packs;             // kFiles
  std::vector<std::string> warnings;        // descriptor directories that failed to load
  // SessionOptions::trusted_keys: scanned packs no trusted key signed are left out.
  std::vector<std::string> trusted_keys;
  // kAuto: the packs of one plugin in one schedules directory (scan_packs).
  std::function<PackScan(const std::string& dir, const std::string& plugin)> scan;
};

// Reads the sources from YAML (core/src/yaml/pack_sources.cpp, in libtessera). Throws
// tessera::Error naming the file and key for a bad pack file in kFiles mode.
PackSources load_pack_sources(const SessionOptions& options);

// The sources libtessera's loader finds (exec/importer_library.hpp: the runtime reads no YAML).
// Without libtessera: none, with a warning; --pack files are then an error.
PackSources pack_sources_for(const SessionOptions& options);

// The selection for one target device.
struct DevicePacks {
  DevicePackPlan plan;
  std::optional<Pack> pack;
  int64_t max_work_group_size = 0;         // from the matched family; 0 = unchecked
  std::map<std::string, size_t> entry_of;  // workload key -> index into pack->entries
};

DevicePacks select_device_packs(const PackSources& sources, const std::string& target_spec,
                                const std::string& plugin, const PluginDeviceInfo& device);

// The config for one node and the text saying where it came from; `warning` is set when the
// pack had an entry for the node that could not be used.
struct NodeConfigOutcome {
  std::optional<NodeConfigChoice> choice;
  std::string text;
  std::string warning;
};

NodeConfigOutcome choose_node_config(const DevicePacks& packs, const NodeConfigRequest& request,
                                     const std::string& node_name);

// Knobs whose product is the work-group size: by convention their names start with "wg_".
bool is_work_group_knob(const std::string& name);

}  // namespace tessera::detail
