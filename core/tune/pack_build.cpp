// pack_from_logs: `tessera pack build` turns tuner JSON-lines logs into one tuned pack (one plugin,
// one device), keeping the fastest ok record per workload.
#include <algorithm>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/tuner.hpp"

namespace tessera::tune {
namespace {

// Where a header value was first seen, so a mix can name both sides.
struct Seen {
  std::string value, log;
};

void check_same(const char* what, Seen& seen, const std::string& value, const std::string& log) {
  if (value.empty()) return;
  if (seen.value.empty()) {
    seen = {value, log};
    return;
  }
  if (seen.value != value) {
    throw Error(std::string("pack build: the logs mix ") + what + "s '" + seen.value + "' (" +
                seen.log + ") and '" + value + "' (" + log + "); a pack is for one plugin and " +
                "device: build one pack per " + what + " from the matching logs");
  }
}

}  // namespace

Pack pack_from_logs(const std::vector<std::string>& log_paths) {
  if (log_paths.empty()) throw Error("pack build: give at least one tuner log (LOG.jsonl)");
  std::vector<LogRecord> records;
  Seen plugin, device, driver;
  std::vector<std::string> commands;
  std::string how = "tessera pack build";
  for (const std::string& path : log_paths) {
    try {
      const InputFile log_file(path, "tuner log",
                               kMaxTuneLogBytes);  // a regular file, not too large
    } catch (const Error& e) {
      throw Error(std::string("pack build: ") + e.what());
    }
    std::vector<LogRecord> log = read_log(path);
    if (log.empty()) {
      throw Error("pack build: tuner log '" + path +
                  "' holds no record (one JSON object per line, as `tessera tune --log` writes)");
    }
    for (const LogRecord& r : log) {
      check_same("plugin", plugin, r.plugin, path);
      check_same("device", device, r.device, path);
      check_same("driver", driver, r.driver, path);
      if (!r.command.empty() &&
          std::find(commands.begin(), commands.end(), r.command) == commands.end()) {
        commands.push_back(r.command);
      }
    }
    records.insert(records.end(), log.begin(), log.end());
    how += " " + path;
  }
  for (const std::string& c : commands) how += "; tuned with: " + c;
  DeviceDesc desc;
  desc.plugin = plugin.value;
  desc.name = device.value;
  desc.driver = driver.value;
  Pack pack = pack_from_records(records, plugin.value, desc, how);
  if (pack.entries.empty()) {
    throw Error(
        "pack build: no record with status ok (and a positive median_us) in the logs of "
        "plugin '" +
        plugin.value + "'; nothing to put in a pack");
  }
  return pack;
}

}  // namespace tessera::tune
