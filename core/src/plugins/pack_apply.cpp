// Pack application: per-device selection from the sources the registered loader found
// (core/src/yaml/pack_sources.cpp), and per-node config choice with knob-space checks.
#include "plugins/pack_apply.hpp"

#include "exec/importer_library.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "tessera/error.hpp"

namespace tessera::detail {

namespace {

std::string knobs_text(const std::vector<Knob>& knobs) {
  std::string out = "{";
  for (size_t i = 0; i < knobs.size(); ++i) {
    out += (i ? "," : "") + knobs[i].name + "=" + std::to_string(knobs[i].value);
  }
  return out + "}";
}

std::string values_text(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "}";
}

// Why `entry` cannot be used for a node whose schedules are `tuning`, or nullopt.
std::optional<std::string> check_entry(const PackEntry& entry, const PluginNodeTuning& tuning,
                                       int64_t max_work_group_size) {
  const std::string who = "workload '" + entry.workload + "' (schedule " + entry.schedule + ")";
  const PluginSchedule* schedule = tuning.find_schedule(entry.schedule);
  if (schedule == nullptr) {
    std::string names;
    for (const PluginSchedule& s : tuning.schedules) names += (names.empty() ? "" : ", ") + s.name;
    return who + ": the plugin has no schedule '" + entry.schedule + "' for this node (it has " +
           names + ")";
  }
  KnobLimits limits;
  limits.max_work_group_size = max_work_group_size;
  for (const PluginKnobSpace& k : schedule->knobs) {
    limits.required_knobs.push_back(k.name);
    if (!k.values.empty()) {
      const auto [lo, hi] = std::minmax_element(k.values.begin(), k.values.end());
      limits.bounds.push_back({k.name, *lo, *hi});
    }
    if (is_work_group_knob(k.name)) limits.work_group_knobs.push_back(k.name);
  }
  for (const Knob& k : entry.knobs) {
    auto it = std::find_if(schedule->knobs.begin(), schedule->knobs.end(),
                           [&](const PluginKnobSpace& s) { return s.name == k.name; });
    if (it == schedule->knobs.end()) {
      return who + ": knob '" + k.name + "' is not a knob of schedule '" + schedule->name + "'";
    }
  }
  if (std::optional<std::string> problem = check_knobs(entry, limits)) return problem;
  // Bounds are not enough: the plugin only implements its candidate values.
  for (const Knob& k : entry.knobs) {
    for (const PluginKnobSpace& s : schedule->knobs) {
      if (s.name == k.name && !s.values.empty() &&
          std::find(s.values.begin(), s.values.end(), k.value) == s.values.end()) {
        return who + ": knob '" + k.name + "' = " + std::to_string(k.value) +
               " is not among its candidate values " + values_text(s.values);
      }
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_work_group_knob(const std::string& name) {
  return name.rfind("wg_", 0) == 0;
}

PackSources pack_sources_for(const SessionOptions& options) {
  const ImporterHooks& hooks = importer_hooks();
  if (hooks.load_pack_sources == nullptr && options.pack_mode != PackMode::kNone) {
    load_importer_library();  // fills the hook when libtessera is installed
  }
  if (hooks.load_pack_sources != nullptr) return hooks.load_pack_sources(options);
  PackSources sources;
  sources.mode = PackMode::kNone;
  if (options.pack_mode == PackMode::kFiles) {
    throw Error(
        "packs: pack files were given (`pack_files`), but libtessera-runtime reads no "
        "YAML: " +
        load_importer_library() +
        " (install libtessera beside it, or compile the model to a package with its "
        "packs)");
  }
  if (options.pack_mode == PackMode::kAuto) {
    sources.warnings.push_back("packs: libtessera-runtime reads no YAML packs (" +
                               load_importer_library() +
                               "), so the schedules' heuristics run; a package carries its tuned "
                               "configs");
  }
  return sources;
}

DevicePacks select_device_packs(const PackSources& sources, const std::string& target_spec,
                                const std::string& plugin, const PluginDeviceInfo& device) {
  DevicePacks out;
  DevicePackPlan& plan = out.plan;
  plan.target = target_spec;
  plan.plugin = plugin;
  plan.device = device.name;
  plan.level = pack_level_name(PackLevel::kNone);
  if (sources.mode == PackMode::kNone) {
    plan.family_reason = "not matched (packs disabled)";
    plan.reason = "packs disabled (pack mode none); using the schedules' default heuristics";
    return out;
  }
  const DeviceIdentity identity{device.vendor, device.name, device.driver_version,
                                device.compute_units};
  const FamilyMatch family = match_family(sources.families, identity);
  plan.family_reason = sources.families.empty() && sources.family_dirs.empty()
                           ? "no device-family directory configured"
                           : family.reason;
  if (family.family) {
    plan.family = family.family->id;
    out.max_work_group_size = family.family->params.max_work_group_size;
  }
  std::vector<Pack> candidates;
  if (sources.mode == PackMode::kFiles) {
    candidates = sources.file_packs;
  } else {
    for (const std::string& dir : sources.schedules_dirs) {
      PackScan scan = sources.scan(dir, plugin);
      for (std::string& w : scan.warnings) plan.warnings.push_back(std::move(w));
      for (Pack& p : scan.packs) {
        if (const auto problem = pack_trust_problem(p, sources.trusted_keys)) {
          plan.warnings.push_back("pack " + p.file + " refused: " + *problem);
          continue;
        }
        candidates.push_back(std::move(p));
      }
    }
  }
  PackSelection selection = select_pack(candidates, plugin, identity, plan.family);
  for (std::string& w : selection.warnings) plan.warnings.push_back(std::move(w));
  // A --pack file the user named is not "another device's pack among many": ignoring it is
  // worth a warning.
  if (sources.mode == PackMode::kFiles) {
    for (std::string& n : selection.notes) plan.warnings.push_back(std::move(n));
  } else {
    plan.notes = std::move(selection.notes);
  }
  plan.level = pack_level_name(selection.level);
  plan.reason = selection.reason;
  if (sources.mode == PackMode::kFiles && !selection.pack) {
    plan.reason += " (only the given pack files were considered)";
  }
  if (selection.pack) {
    plan.pack_file = selection.pack->file;
    out.pack = std::move(selection.pack);
    for (size_t i = 0; i < out.pack->entries.size(); ++i) {
      out.entry_of.emplace(out.pack->entries[i].workload, i);
    }
  }
  return out;
}

NodeConfigOutcome choose_node_config(const DevicePacks& packs, const NodeConfigRequest& request,
                                     const std::string& node_name) {
  NodeConfigOutcome out;
  if (!packs.pack) {
    out.text = packs.plan.level == pack_level_name(PackLevel::kNone) &&
                       packs.plan.reason.rfind("packs disabled", 0) == 0
                   ? "heuristic (packs disabled)"
                   : "heuristic (no pack selected for this device)";
    return out;
  }
  if (!request.describe_error.empty()) {
    out.text = "heuristic (describe_node failed)";
    out.warning =
        "node '" + node_name + "': " + request.describe_error + "; its schedule heuristic is used";
    return out;
  }
  if (request.tuning == nullptr) {
    out.text = "heuristic (plugin '" + packs.plan.plugin + "' describes no schedules)";
    return out;
  }
  const PluginNodeTuning& tuning = *request.tuning;
  if (tuning.schedules.empty()) {
    out.text = "heuristic (nothing tunable for this node)";
    return out;
  }
  auto it = packs.entry_of.find(tuning.workload_key);
  if (it == packs.entry_of.end()) {
    out.text = "heuristic (no pack entry for workload '" + tuning.workload_key + "')";
    return out;
  }
  const Pack& pack = *packs.pack;
  const PackEntry& entry = pack.entries[it->second];
  if (std::optional<std::string> problem = check_entry(entry, tuning, packs.max_work_group_size)) {
    out.text = "heuristic (pack entry refused: " + *problem + ")";
    out.warning = pack.file + (entry.line ? ":" + std::to_string(entry.line) : std::string()) +
                  ": node '" + node_name + "': " + *problem +
                  "; entry ignored for this node, its schedule heuristic is used";
    return out;
  }
  NodeConfigChoice choice;
  choice.schedule = entry.schedule;
  choice.knobs = entry.knobs;
  out.text = entry.schedule + knobs_text(entry.knobs) + " from pack " + pack.file + " (" +
             packs.plan.level + " match)";
  out.choice = std::move(choice);
  return out;
}

}  // namespace tessera::detail
