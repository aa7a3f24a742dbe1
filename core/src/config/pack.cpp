// Packs without YAML: the engine version, hierarchical selection of a pack for a device, knob
// limit checks and merging (what the runtime needs; core/src/yaml/pack_yaml.cpp reads and writes
// the files).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "tessera/error.hpp"
#include "tessera/pack.hpp"

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "0.0.0"
#endif

namespace tessera {

namespace {

bool iequals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string engine_version() {
  return TESSERA_VERSION;
}

const char* pack_level_name(PackLevel level) {
  switch (level) {
    case PackLevel::kDeviceDriver:
      return "device+driver";
    case PackLevel::kDevice:
      return "device";
    case PackLevel::kFamily:
      return "family";
    case PackLevel::kVendor:
      return "vendor";
    default:
      return "none";
  }
}

PackSelection select_pack(const std::vector<Pack>& candidates, const std::string& plugin,
                          const DeviceIdentity& device, const std::string& family_id,
                          const std::string& engine_version_text) {
  PackSelection sel;
  const Version engine =
      Version::parse(engine_version_text.empty() ? engine_version() : engine_version_text);
  const Pack* best = nullptr;
  std::string best_why;
  size_t considered = 0;
  for (const Pack& p : candidates) {
    if (p.plugin != plugin) continue;
    ++considered;
    const std::string name = "pack " + p.file;
    if (p.schema_version != kPackSchemaVersion) {
      sel.warnings.push_back(name + " ignored: schema_version " + std::to_string(p.schema_version) +
                             " is not supported by this engine (reads " +
                             std::to_string(kPackSchemaVersion) + ")");
      continue;
    }
    if (!p.engine_version.contains(engine)) {
      sel.warnings.push_back(name + " ignored: made for engine versions '" +
                             p.engine_version.text() + "', this is " + engine.str() +
                             " (re-tune with this version)");
      continue;
    }
    const PackMatch& m = p.match;
    if (!m.device.empty() && m.device != device.name) {
      sel.notes.push_back(name + " ignored: it is for device '" + m.device + "', this device is '" +
                          device.name + "'");
      continue;
    }
    if (!m.family.empty() && m.family != family_id) {
      sel.notes.push_back(
          name + " ignored: it is for family '" + m.family + "', this device is " +
          (family_id.empty() ? std::string("of no known family") : "family '" + family_id + "'"));
      continue;
    }
    if (!m.vendor.empty() && !iequals(m.vendor, device.vendor)) {
      sel.notes.push_back(name + " ignored: it is for vendor '" + m.vendor +
                          "', this device's is '" + device.vendor + "'");
      continue;
    }
    PackLevel level;
    std::string why;
    if (!m.device.empty()) {
      if (!m.driver.is_any() && m.driver.contains(device.driver)) {
        level = PackLevel::kDeviceDriver;
        why = "device '" + device.name + "' and driver '" + device.driver + "' in '" +
              m.driver.text() + "'";
      } else {
        level = PackLevel::kDevice;
        why = "device '" + device.name + "'";
        if (!m.driver.is_any()) {
          sel.warnings.push_back(name + " was measured with driver '" + m.driver.text() +
                                 "', this device has '" + device.driver +
                                 "': used at device level only");
          why += " (driver differs)";
        }
      }
    } else if (!m.family.empty()) {
      level = PackLevel::kFamily;
      why = "family '" + family_id + "'";
    } else {
      level = PackLevel::kVendor;
      why = "vendor '" + device.vendor + "'";
    }
    if (best == nullptr || level < sel.level) {
      best = &p;
      sel.level = level;
      best_why = why;
    } else if (level == sel.level) {
      sel.warnings.push_back(name + " ignored: " + best->file + " matches at the same level (" +
                             pack_level_name(level) + ") and comes first");
    }
  }
  if (best == nullptr) {
    sel.level = PackLevel::kNone;
    sel.reason = "no pack for plugin '" + plugin + "' matches device '" + device.name + "' (" +
                 std::to_string(considered) + " candidate(s) for this plugin" +
                 (considered ? ", see warnings" : "") +
                 "); using the schedules' default heuristics";
    return sel;
  }
  sel.pack = *best;
  sel.reason = "pack " + best->file + " chosen at level " + pack_level_name(sel.level) + ": " +
               best_why + "; " + std::to_string(best->entries.size()) + " tuned workload(s)";
  return sel;
}

std::optional<std::string> check_knobs(const PackEntry& entry, const KnobLimits& limits) {
  auto find = [&](const std::string& knob) -> const Knob* {
    for (const Knob& k : entry.knobs) {
      if (k.name == knob) return &k;
    }
    return nullptr;
  };
  const std::string who = "workload '" + entry.workload + "' (schedule " + entry.schedule + ")";
  for (const std::string& r : limits.required_knobs) {
    if (!find(r)) return who + ": knob '" + r + "' is missing";
  }
  for (const KnobBound& b : limits.bounds) {
    const Knob* k = find(b.knob);
    if (k && (k->value < b.min || k->value > b.max)) {
      return who + ": knob '" + b.knob + "' = " + std::to_string(k->value) + " is outside [" +
             std::to_string(b.min) + ", " + std::to_string(b.max) + "]";
    }
  }
  auto product_check = [&](const std::vector<std::string>& knobs, int64_t limit,
                           const char* what) -> std::optional<std::string> {
    if (limit <= 0 || knobs.empty()) return std::nullopt;
    int64_t product = 1;
    std::string names;
    for (const std::string& n : knobs) {
      const Knob* k = find(n);
      if (!k) continue;
      // Once above the limit the answer is known; stopping there also rules out overflow.
      if (product <= limit) product *= std::max<int64_t>(k->value, 1);
      names += (names.empty() ? "" : "*") + n;
    }
    if (product > limit) {
      return who + ": knob '" + names + "' gives " + what + " " + std::to_string(product) +
             ", above the device limit " + std::to_string(limit);
    }
    return std::nullopt;
  };
  if (auto e =
          product_check(limits.work_group_knobs, limits.max_work_group_size, "work-group size"))
    return e;
  if (auto e =
          product_check(limits.local_memory_knobs, limits.local_memory_bytes, "local memory bytes"))
    return e;
  return std::nullopt;
}

std::vector<std::string> filter_pack_entries(
    Pack& pack, const std::function<const KnobLimits*(const std::string& schedule)>& limits_for) {
  std::vector<std::string> warnings;
  std::vector<PackEntry> kept;
  for (PackEntry& e : pack.entries) {
    const KnobLimits* limits = limits_for(e.schedule);
    std::optional<std::string> problem;
    if (limits == nullptr) {
      problem = "workload '" + e.workload + "': schedule '" + e.schedule +
                "' is unknown to plugin '" + pack.plugin + "'";
    } else {
      problem = check_knobs(e, *limits);
    }
    if (problem) {
      warnings.push_back(pack.file + (e.line ? ":" + std::to_string(e.line) : std::string()) +
                         ": " + *problem +
                         "; entry ignored, the schedule's heuristic is used for it");
    } else {
      kept.push_back(std::move(e));
    }
  }
  pack.entries = std::move(kept);
  return warnings;
}

Pack merge_packs(const std::vector<Pack>& packs, std::vector<std::string>* notes) {
  if (packs.empty()) throw Error("pack merge: no packs given");
  const Pack& first = packs.front();
  for (const Pack& p : packs) {
    if (p.schema_version != kPackSchemaVersion) {
      throw Error("pack merge: " + p.file + " has schema_version " +
                  std::to_string(p.schema_version) + ", this engine reads " +
                  std::to_string(kPackSchemaVersion));
    }
    auto differs = [&](const std::string& what, const std::string& a, const std::string& b) {
      if (a != b) {
        throw Error("pack merge: " + p.file + " has " + what + " '" + b + "' but " + first.file +
                    " has '" + a + "'; only packs for the same plugin and device can be merged");
      }
    };
    differs("plugin", first.plugin, p.plugin);
    differs("match.device", first.match.device, p.match.device);
    differs("match.driver", first.match.driver.text(), p.match.driver.text());
    differs("match.family", first.match.family, p.match.family);
    differs("match.vendor", first.match.vendor, p.match.vendor);
    differs("engine_version", first.engine_version.text(), p.engine_version.text());
  }
  Pack out;
  out.plugin = first.plugin;
  out.match = first.match;
  out.engine_version = first.engine_version;
  out.measured.how = "tessera pack merge";
  out.measured.tool_version = engine_version();
  std::map<std::string, size_t> index;
  std::map<std::string, std::string> winner_file;
  for (const Pack& p : packs) {
    out.measured.how += " " + p.file;
    if (p.measured.when > out.measured.when) out.measured.when = p.measured.when;
    for (const PackEntry& e : p.entries) {
      auto it = index.find(e.workload);
      if (it == index.end()) {
        index.emplace(e.workload, out.entries.size());
        winner_file[e.workload] = p.file;
        out.entries.push_back(e);
        continue;
      }
      PackEntry& kept = out.entries[it->second];
      const bool replace = e.time_us < kept.time_us;
      if (notes) {
        std::ostringstream n;
        n << e.workload << ": kept " << (replace ? p.file : winner_file[e.workload]) << " ("
          << std::min(e.time_us, kept.time_us) << " us) over "
          << (replace ? winner_file[e.workload] : p.file) << " ("
          << std::max(e.time_us, kept.time_us) << " us)";
        notes->push_back(n.str());
      }
      if (replace) {
        kept = e;
        winner_file[e.workload] = p.file;
      }
    }
  }
  for (PackEntry& e : out.entries) e.line = 0;
  return out;
}

}  // namespace tessera
