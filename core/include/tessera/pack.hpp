// Tuned parameter packs: schedules/<plugin>/<device-or-family>.yaml. A pack maps canonical
// workload keys to a schedule and knob values measured on one device (or family, or vendor).
// Loading validates strictly; selection picks the most specific compatible pack for a device
// (exact device+driver > device > family > vendor > none = the schedules' heuristics) and says why.
// The format is documented in schedules/README.md.
//
// Integrity (tessera/integrity.hpp): a pack's `sha256:` is the SHA-256 of its content in a
// canonical encoding of what was read (pack_content_digest: header and entries, numbers as the
// doubles and integers they read as), so comments and layout may change but no value may. The
// writers (`tessera tune`, `pack build`, `pack merge`) write it; `tessera pack seal` adds it to a
// pack written by hand, without touching anything else in the file. A pack whose hash differs
// is refused; one without a hash loads with a warning. `signatures:` sign the hash.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/device_family.hpp"
#include "tessera/integrity.hpp"

namespace tessera {

constexpr int kPackSchemaVersion = 1;

// Which devices a pack is for. Empty fields do not constrain; at least one must be set.
struct PackMatch {
  std::string device;   // exact device name as probed
  VersionRange driver;  // driver version or range; only meaningful with `device`
  std::string family;   // a targets/devices family id
  std::string vendor;   // exact vendor string (case-insensitive)
};

struct PackMeasured {
  std::string how;           // command line that produced it
  std::string when;          // ISO-8601 date
  std::string tool_version;  // tessera version that measured it
};

struct Knob {
  std::string name;
  int64_t value = 0;
};

struct PackEntry {
  std::string workload;  // canonical key, e.g. "conv2d|in=1x32x112x112|w=64x32x1x1|...|f32|nchw"
  std::string schedule;  // schedule name, e.g. "conv2d.nchw4c.direct"
  std::vector<Knob> knobs;
  double time_us = 0;  // measured time, > 0
  int line = 0;        // 1-based line in the file (0 when built in memory)
};

struct Pack {
  std::string file;  // where it was loaded from (messages only)
  int schema_version = kPackSchemaVersion;
  std::string plugin;
  PackMatch match;
  VersionRange engine_version;  // engine versions the knob meanings are valid for
  PackMeasured measured;
  std::vector<PackEntry> entries;  // empty when schema_version is not one this engine reads
  std::string sha256;              // as read and checked: 64 hex digits; "" = the pack has none
  std::vector<Signature> signatures;  // as read (checked only against trusted keys)
};

// The SHA-256 of a pack's content (schema version, plugin, match, engine version, measured,
// entries in order), the same however the YAML was laid out.
Sha256Digest pack_content_digest(const Pack& pack);
// Why `pack` is not trusted under `trusted_keys` (see trust_problem), or nullopt. A pack without
// a sha256 cannot be trusted under keys: its signatures sign a hash it does not state.
std::optional<std::string> pack_trust_problem(const Pack& pack,
                                              const std::vector<std::string>& trusted_keys);

// `text`, the content of pack file `file`, with its top-level `sha256:` set to the hash of its
// content and its `signatures:` set to `signatures` (none: the key is left out), both as the
// last lines. Every other line is kept as it was (and where it was: messages cite entries by
// line), so measured numbers are not rewritten. Throws tessera::Error naming the file
// when the pack does not load, or is not in block style at its top level.
std::string seal_pack_text(const std::string& text, const std::string& file,
                           const std::vector<Signature>& signatures);

// Reads a pack. Throws tessera::Error "file:line:col: key.path: ..." for anything malformed.
// A pack with a different schema_version loads its header only (plugin, match) so that selection
// can skip it with a warning instead of failing the whole run.
Pack load_pack(const std::string& path);
Pack parse_pack(const std::string& text, const std::string& file);
// Deterministic YAML text for a pack (entries in the given order).
std::string serialize_pack(const Pack& pack);
// serialize_pack with its sha256 sealed in, then the text parsed back as `tessera pack validate`
// reads it: throws
// tessera::Error naming `output` and the problem when a reader would refuse the pack (a knob
// name or workload a log carried that the schema does not allow), so what a writer puts on disk
// always loads.
std::string serialize_validated_pack(const Pack& pack, const std::string& output);

// Packs found for one plugin, and why others were not loaded.
struct PackScan {
  std::vector<Pack> packs;            // sorted by file name
  std::vector<std::string> warnings;  // one per file that failed to load (with its error)
};
// Loads every *.yaml in `schedules_dir`/`plugin`/ (a missing folder is not an error: no packs).
// A malformed pack becomes a warning, not a failure, so one bad file cannot stop a deployment;
// `tessera pack validate` is where it fails loudly.
PackScan scan_packs(const std::string& schedules_dir, const std::string& plugin);

enum class PackLevel { kDeviceDriver, kDevice, kFamily, kVendor, kNone };
const char* pack_level_name(PackLevel level);  // "device+driver", "device", ...

struct PackSelection {
  std::optional<Pack> pack;  // empty: use the schedules' heuristics
  PackLevel level = PackLevel::kNone;
  std::string reason;                 // which pack and why, or why none
  // Candidates left out for a reason the user may need to act on (schema or engine version, a
  // driver other than the one measured, another pack at the same level), and why.
  std::vector<std::string> warnings;
  // Candidates for another device, family or vendor: expected wherever packs for several
  // devices are installed, so information rather than a warning.
  std::vector<std::string> notes;
};

// Picks among `candidates` for `plugin` on `device`. `family_id` is match_family()'s result ("" =
// none). `engine_version` defaults to this build's version. Packs for another plugin are skipped
// silently; packs for another device, or with an incompatible schema or engine version, are
// skipped with a warning. Among packs at the same level the first in `candidates` wins.
PackSelection select_pack(const std::vector<Pack>& candidates, const std::string& plugin,
                          const DeviceIdentity& device, const std::string& family_id,
                          const std::string& engine_version = "");

// The compiled-in engine version ("0.1.0").
std::string engine_version();

// Limits a schedule's knobs must respect on a device, in typed form.
struct KnobBound {
  std::string knob;
  int64_t min = 0;
  int64_t max = 0;
};
struct KnobLimits {
  std::vector<KnobBound> bounds;                // each named knob must lie in [min, max]
  std::vector<std::string> work_group_knobs;    // their product is the work-group size
  int64_t max_work_group_size = 0;              // 0 = unchecked
  std::vector<std::string> local_memory_knobs;  // product = bytes of local memory used
  int64_t local_memory_bytes = 0;               // 0 = unchecked
  std::vector<std::string> required_knobs;      // must be present
};

// Why `entry` breaks `limits` (naming workload and knob), or nullopt when it respects them.
std::optional<std::string> check_knobs(const PackEntry& entry, const KnobLimits& limits);
// Removes from `pack` every entry that breaks its schedule's limits and returns one warning per
// removed entry. `limits_for` returns the limits of a schedule, or nullptr for an unknown
// schedule (the entry is then removed too, with a warning).
std::vector<std::string> filter_pack_entries(
    Pack& pack, const std::function<const KnobLimits*(const std::string& schedule)>& limits_for);

// Merges packs for the same plugin and match: per workload the entry with the smaller time_us is
// kept. Throws if the headers disagree (plugin, match, schema). `notes` gets one line per
// workload where entries competed.
Pack merge_packs(const std::vector<Pack>& packs, std::vector<std::string>* notes = nullptr);

}  // namespace tessera
