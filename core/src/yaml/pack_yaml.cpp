// Pack files as YAML: strict loading (every key checked, errors naming file, line and key),
// serialization that loads back the same, and the scan of a schedules directory.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/pack.hpp"
#include "yaml/yaml_doc.hpp"

namespace tessera {
using config::MapReader;

namespace {

// Why `s` is not an ISO date (YYYY-MM-DD, optionally followed by a time "T12:00:00Z"), or "".
// The day must exist in that month of the proleptic Gregorian calendar: 2026-02-31 is refused,
// 2028-02-29 is a date.
std::string iso_date_problem(const std::string& s) {
  const std::string form = "is not an ISO date (YYYY-MM-DD)";
  if (s.size() < 10 || (s.size() > 10 && s[10] != 'T')) return form;
  for (size_t i = 0; i < 10; ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(s[i])) != 0;
    if ((i == 4 || i == 7) ? s[i] != '-' : !digit) return form;
  }
  const int year = std::stoi(s.substr(0, 4));
  const int month = std::stoi(s.substr(5, 2));
  const int day = std::stoi(s.substr(8, 2));
  if (month < 1 || month > 12) return "has month " + s.substr(5, 2) + " (months are 01 to 12)";
  static const char* const kMonths[] = {"January",   "February", "March",    "April",
                                        "May",       "June",     "July",     "August",
                                        "September", "October",  "November", "December"};
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int days = kDays[month - 1] + (month == 2 && leap ? 1 : 0);
  if (day < 1 || day > days) {
    return "is not a calendar date: " + std::string(kMonths[month - 1]) + " " + s.substr(0, 4) +
           " has " + std::to_string(days) + " days";
  }
  return "";
}

// A canonical workload key: "<op>|field|field..." with no spaces.
std::string workload_problem(const std::string& key) {
  if (key.empty()) return "is empty";
  if (key.find_first_of(" \t\r\n") != std::string::npos) return "contains white space";
  const size_t bar = key.find('|');
  const std::string op = key.substr(0, bar);
  if (op.empty()) return "does not start with an op name";
  for (char c : op) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return "op name '" + op + "' is not lower-case letters, digits and '_'";
  }
  return "";
}

// Schedule and knob names are identifiers the plugins register ("conv2d.nchw.winograd",
// "tile_m"); anything else (white space, control characters) cannot match a plugin and
// would not survive a YAML round trip unchanged, so it is refused at load.
std::string identifier_problem(const std::string& name) {
  if (name.empty()) return "is empty";
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || c == '.' || c == '-') continue;
    char shown[8];
    std::snprintf(shown, sizeof shown, std::isgraph(u) ? "'%c'" : "0x%02x", c);
    return std::string("contains ") + shown + ": use letters, digits, '_', '.' and '-'";
  }
  return "";
}

VersionRange read_range(const MapReader& r, const std::string& key) {
  try {
    return VersionRange::parse(r.str(key, ""));
  } catch (const Error& e) {
    r.fail(key, e.what());
  }
}

PackMatch read_match(const MapReader& root) {
  if (!root.has("match"))
    root.fail("match", "required key 'match' is missing (device/family/vendor)");
  MapReader m(root.file(), root.map("match"), "match", {"device", "driver", "family", "vendor"});
  PackMatch match;
  match.device = m.str("device", "");
  match.driver = read_range(m, "driver");
  match.family = m.str("family", "");
  match.vendor = m.str("vendor", "");
  if (match.device.empty() && match.family.empty() && match.vendor.empty()) {
    config::fail_at(root.file(), root.node("match"), "match",
                    "name at least one of device, family or vendor");
  }
  if (!match.driver.is_any() && match.device.empty()) {
    m.fail("driver", "a driver constraint needs 'device:' too (drivers are per device)");
  }
  return match;
}

std::vector<Signature> read_signatures(const MapReader& root) {
  std::vector<Signature> out;
  const YAML::Node list = root.seq("signatures");
  if (!list) return out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = "signatures[" + std::to_string(i) + "]";
    MapReader r(root.file(), list[i], path, {"key", "signature"});
    Signature sig;
    const std::string where = config::location(root.file(), list[i]) + ": " + path;
    sig.key = parse_public_key(r.require_str("key"), where + ".key");
    const auto bytes = from_hex(r.require_str("signature"));
    if (!bytes || bytes->size() != sig.bytes.size())
      r.fail("signature", "must be 128 hex digits (an ed25519 signature; tessera sign writes it)");
    std::copy(bytes->begin(), bytes->end(), sig.bytes.begin());
    out.push_back(sig);
  }
  return out;
}

// `sha256:` checked against the content just read, and `signatures:` read.
void read_integrity(const MapReader& root, Pack& pack) {
  pack.signatures = read_signatures(root);
  if (!root.has("sha256")) return;
  pack.sha256 = root.require_str("sha256");
  const auto bytes = from_hex(pack.sha256);
  if (!bytes || bytes->size() != 32) {
    root.fail("sha256", "'" + escaped(pack.sha256) +
                            "' is not a SHA-256 (64 hex digits; tessera pack seal writes it)");
  }
  const std::string content = to_hex(pack_content_digest(pack));
  if (to_hex(bytes->data(), bytes->size()) != content) {
    root.fail("sha256", "the pack's content does not match its sha256 (content sha256:" + content +
                            "): it was changed after it was written; if the change is meant, "
                            "`tessera pack seal " +
                            pack.file + "` records the new hash");
  }
}

}  // namespace

Pack parse_pack(const std::string& text, const std::string& file) {
  const config::YamlDoc doc = config::load_yaml_text(text, file);
  if (!doc.root.IsMap()) {
    config::fail_at(file, doc.root, "",
                    std::string("a pack is a map (plugin:, match:, entries:, ...), got ") +
                        config::node_kind(doc.root));
  }
  Pack pack;
  pack.file = file;
  {
    // Read the version first with no key check: a newer schema may have keys this one lacks.
    const YAML::Node& root_node = doc.root;
    const YAML::Node v = root_node["schema_version"];
    if (!v)
      config::fail_at(file, doc.root, "schema_version",
                      "required key 'schema_version' is missing (1)");
    pack.schema_version =
        static_cast<int>(config::scalar_int(file, v, "schema_version", 1, 1000000));
    if (pack.schema_version != kPackSchemaVersion) {
      const YAML::Node plugin = root_node["plugin"];
      if (plugin && plugin.IsScalar()) pack.plugin = plugin.Scalar();
      return pack;
    }
  }
  MapReader root(file, doc.root, "",
                 {"schema_version", "plugin", "match", "engine_version", "measured", "entries",
                  "sha256", "signatures"});
  pack.plugin = root.require_str("plugin");
  pack.match = read_match(root);
  if (!root.has("engine_version")) {
    root.fail("engine_version", "required key 'engine_version' is missing (e.g. \">=0.1,<0.2\")");
  }
  pack.engine_version = read_range(root, "engine_version");
  if (!root.has("measured")) {
    root.fail("measured",
              "required key 'measured' is missing: say how (command), when (ISO date) "
              "and with which tool_version the pack was measured");
  }
  MapReader m(file, root.map("measured"), "measured", {"how", "when", "tool_version"});
  pack.measured.how = m.require_str("how");
  pack.measured.when = m.require_str("when");
  if (const std::string problem = iso_date_problem(pack.measured.when); !problem.empty()) {
    m.fail("when", "'" + pack.measured.when + "' " + problem);
  }
  pack.measured.tool_version = m.require_str("tool_version");

  const YAML::Node entries = root.seq("entries");
  if (!entries)
    root.fail("entries", "required key 'entries' is missing (a list, may be empty: [])");
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string path = "entries[" + std::to_string(i) + "]";
    MapReader e(file, entries[i], path, {"workload", "schedule", "knobs", "time_us"});
    PackEntry entry;
    entry.line = entries[i].Mark().is_null() ? 0 : entries[i].Mark().line + 1;
    entry.workload = e.require_str("workload");
    const std::string problem = workload_problem(entry.workload);
    if (!problem.empty()) e.fail("workload", "workload key '" + entry.workload + "' " + problem);
    auto [it, inserted] = seen.emplace(entry.workload, i);
    if (!inserted) {
      e.fail("workload", "workload '" + entry.workload + "' already has an entry (entries[" +
                             std::to_string(it->second) +
                             "]); keep one (tessera pack merge keeps the faster)");
    }
    entry.schedule = e.require_str("schedule");
    const std::string schedule_problem = identifier_problem(entry.schedule);
    if (!schedule_problem.empty())
      e.fail("schedule", "schedule name '" + escaped(entry.schedule) + "' " + schedule_problem);
    const YAML::Node knobs = e.map("knobs");
    if (knobs) {
      std::set<std::string> names;
      for (const auto& kv : knobs) {
        Knob k;
        k.name = config::scalar_str(file, kv.first, e.key_path("knobs"));
        const std::string knob_problem = identifier_problem(k.name);
        if (!knob_problem.empty())
          e.fail("knobs", "knob name '" + escaped(k.name) + "' " + knob_problem);
        k.value = config::scalar_int(file, kv.second, e.key_path("knobs") + "." + k.name, INT32_MIN,
                                     INT32_MAX);
        names.insert(k.name);
        entry.knobs.push_back(std::move(k));
      }
    }
    if (!e.has("time_us"))
      e.fail("time_us", "required key 'time_us' is missing (measured microseconds)");
    entry.time_us = e.number("time_us", 0, 1e-6, 1e12);
    pack.entries.push_back(std::move(entry));
  }
  read_integrity(root, pack);
  return pack;
}

Pack load_pack(const std::string& path) {
  return parse_pack(read_file(path, "pack", kMaxYamlFileBytes), path);
}

std::string serialize_validated_pack(const Pack& pack, const std::string& output) {
  std::string text;
  try {
    text = seal_pack_text(serialize_pack(pack), output, {});
  } catch (const Error& e) {
    throw Error("the pack for '" + output + "' would not load, so it is not written: " + e.what());
  }
  Pack back;
  try {
    back = parse_pack(text, output);
  } catch (const Error& e) {
    throw Error("the pack for '" + output + "' would not load, so it is not written: " + e.what());
  }
  if (back.schema_version != kPackSchemaVersion || back.entries.size() != pack.entries.size()) {
    throw Error("the pack for '" + output + "' reads back with schema_version " +
                std::to_string(back.schema_version) + " and " +
                std::to_string(back.entries.size()) + " of its " +
                std::to_string(pack.entries.size()) + " entries, so it is not written");
  }
  return text;
}

PackScan scan_packs(const std::string& schedules_dir, const std::string& plugin) {
  namespace fs = std::filesystem;
  PackScan scan;
  const fs::path dir = fs::path(schedules_dir) / plugin;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return scan;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".yaml") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    try {
      Pack p = load_pack(f);
      if (p.plugin != plugin) {
        scan.warnings.push_back("pack " + f + " ignored: it says plugin '" + p.plugin +
                                "' but lies in the folder of plugin '" + plugin + "'");
        continue;
      }
      if (p.sha256.empty() && p.schema_version == kPackSchemaVersion) {
        scan.warnings.push_back("pack " + f +
                                " has no sha256, so a change to it would go unnoticed (`tessera "
                                "pack seal " +
                                f + "` adds one)");
      }
      scan.packs.push_back(std::move(p));
    } catch (const Error& e) {
      scan.warnings.push_back(std::string("pack ignored: ") + e.what());
    }
  }
  return scan;
}

std::string serialize_pack(const Pack& pack) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "schema_version" << YAML::Value << pack.schema_version;
  out << YAML::Key << "plugin" << YAML::Value << pack.plugin;
  out << YAML::Key << "match" << YAML::Value << YAML::BeginMap;
  if (!pack.match.device.empty()) out << YAML::Key << "device" << YAML::Value << pack.match.device;
  if (!pack.match.driver.is_any()) {
    out << YAML::Key << "driver" << YAML::Value << YAML::DoubleQuoted << pack.match.driver.text();
  }
  if (!pack.match.family.empty()) out << YAML::Key << "family" << YAML::Value << pack.match.family;
  if (!pack.match.vendor.empty()) out << YAML::Key << "vendor" << YAML::Value << pack.match.vendor;
  out << YAML::EndMap;
  out << YAML::Key << "engine_version" << YAML::Value << YAML::DoubleQuoted
      << (pack.engine_version.text().empty() ? std::string("*") : pack.engine_version.text());
  out << YAML::Key << "measured" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "how" << YAML::Value << YAML::DoubleQuoted << pack.measured.how;
  out << YAML::Key << "when" << YAML::Value << YAML::DoubleQuoted << pack.measured.when;
  out << YAML::Key << "tool_version" << YAML::Value << YAML::DoubleQuoted
      << pack.measured.tool_version;
  out << YAML::EndMap;
  out << YAML::Key << "entries" << YAML::Value << YAML::BeginSeq;
  for (const PackEntry& e : pack.entries) {
    out << YAML::BeginMap;
    out << YAML::Key << "workload" << YAML::Value << YAML::DoubleQuoted << e.workload;
    out << YAML::Key << "schedule" << YAML::Value << e.schedule;
    out << YAML::Key << "knobs" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const Knob& k : e.knobs) out << YAML::Key << k.name << YAML::Value << k.value;
    out << YAML::EndMap;
    // The shortest text that reads back as the same double: 147.859, not 147.85900000000001.
    char t[32];
    const auto written = std::to_chars(t, t + sizeof(t), e.time_us);
    out << YAML::Key << "time_us" << YAML::Value << std::string(t, written.ptr);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace tessera
