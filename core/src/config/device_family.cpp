// Device families without YAML: version ranges and matching a device to its family (the
// descriptors are read by core/src/yaml/device_family_yaml.cpp).
#include "tessera/device_family.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <mutex>
#include <regex>
#include <sstream>

#include "tessera/error.hpp"

namespace tessera {
namespace fs = std::filesystem;


Version Version::parse(const std::string& text) {
  Version v;
  size_t i = 0;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    int64_t value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      // Saturate rather than overflow on absurd digit runs (commit hashes, build ids).
      if (value < (int64_t{1} << 58)) value = value * 10 + (text[i] - '0');
      ++i;
    }
    v.parts.push_back(value);
  }
  return v;
}

int Version::compare(const Version& other) const {
  const size_t n = std::max(parts.size(), other.parts.size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = i < parts.size() ? parts[i] : 0;
    const int64_t b = i < other.parts.size() ? other.parts[i] : 0;
    if (a != b) return a < b ? -1 : 1;
  }
  return 0;
}

std::string Version::str() const {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "." : "") + std::to_string(parts[i]);
  return out.empty() ? "0" : out;
}

VersionRange VersionRange::parse(const std::string& text) {
  VersionRange range;
  range.text_ = text;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty() || item == "*") continue;
    Constraint c{Op::kEq, {}};
    size_t skip = 0;
    if (item.rfind(">=", 0) == 0)
      c.op = Op::kGe, skip = 2;
    else if (item.rfind("<=", 0) == 0)
      c.op = Op::kLe, skip = 2;
    else if (item.rfind("==", 0) == 0)
      c.op = Op::kEq, skip = 2;
    else if (item.rfind(">", 0) == 0)
      c.op = Op::kGt, skip = 1;
    else if (item.rfind("<", 0) == 0)
      c.op = Op::kLt, skip = 1;
    else if (item.rfind("=", 0) == 0)
      c.op = Op::kEq, skip = 1;
    const std::string rest = item.substr(skip);
    if (rest.find_first_of("0123456789") == std::string::npos ||
        rest.find_first_of("<>=") != std::string::npos) {
      throw Error("version range '" + text + "': cannot read '" + item +
                  "' (write e.g. '>=0.1,<0.2', '==535.104.05' or '*')");
    }
    c.version = Version::parse(rest);
    range.constraints_.push_back(std::move(c));
  }
  return range;
}

bool VersionRange::contains(const Version& version) const {
  for (const Constraint& c : constraints_) {
    const int cmp = version.compare(c.version);
    bool ok = false;
    switch (c.op) {
      case Op::kEq:
        ok = cmp == 0;
        break;
      case Op::kLt:
        ok = cmp < 0;
        break;
      case Op::kLe:
        ok = cmp <= 0;
        break;
      case Op::kGt:
        ok = cmp > 0;
        break;
      case Op::kGe:
        ok = cmp >= 0;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

namespace {

// libstdc++'s regex scanner fills the locale's ctype<char> narrow() cache lazily, and two threads
// compiling patterns at once (two sessions created together) write the same cache bytes (GCC bug
// 77704: benign, but a data race ThreadSanitizer rightly reports). Patterns are compiled only
// while device families load and match, so one lock costs nothing and keeps the race out of
// Tessera.
std::mutex& regex_mutex() {
  static std::mutex m;
  return m;
}

bool search(const std::string& pattern, const std::string& text) {
  std::lock_guard<std::mutex> lock(regex_mutex());
  return std::regex_search(text, std::regex(pattern, std::regex::ECMAScript | std::regex::icase));
}

}  // namespace

std::string family_pattern_problem(const std::string& pattern) {
  try {
    std::lock_guard<std::mutex> lock(regex_mutex());
    std::regex(pattern, std::regex::ECMAScript | std::regex::icase);
  } catch (const std::regex_error& e) {
    return "invalid regular expression '" + pattern + "': " + e.what();
  }
  return "";
}

FamilyMatch match_family(const std::vector<DeviceFamily>& families, const DeviceIdentity& device) {
  FamilyMatch result;
  const DeviceFamily* best = nullptr;
  std::vector<std::string> misses;  // families whose vendor matched but something else did not
  std::vector<std::string> also;
  const Version driver = Version::parse(device.driver);
  for (const DeviceFamily& f : families) {
    if (!search(f.vendor_pattern, device.vendor)) continue;
    std::string why_not;
    if (!f.name_pattern.empty() && !search(f.name_pattern, device.name)) {
      why_not = "name does not match /" + f.name_pattern + "/";
    } else if (device.compute_units > 0 &&
               (device.compute_units < f.min_compute_units ||
                (f.max_compute_units > 0 && device.compute_units > f.max_compute_units))) {
      why_not = std::to_string(device.compute_units) + " compute units outside [" +
                std::to_string(f.min_compute_units) + ", " +
                (f.max_compute_units ? std::to_string(f.max_compute_units) : "any") + "]";
    } else if (!f.driver.contains(driver)) {
      why_not = "driver '" + device.driver + "' outside " + f.driver.text();
    }
    if (!why_not.empty()) {
      misses.push_back(f.id + ": " + why_not);
      continue;
    }
    if (best == nullptr || f.priority > best->priority) {
      if (best) also.push_back(best->id);
      best = &f;
    } else {
      also.push_back(f.id);
    }
  }
  const std::string who = "'" + device.name + "' (vendor '" + device.vendor + "')";
  if (best == nullptr) {
    result.reason = "no device family matches " + who;
    if (misses.empty()) {
      result.reason += ": no descriptor's vendor pattern matches";
    } else {
      result.reason += ": ";
      for (size_t i = 0; i < misses.size(); ++i) result.reason += (i ? "; " : "") + misses[i];
    }
    return result;
  }
  result.family = *best;
  result.reason = who + " is family '" + best->id + "' (" +
                  fs::path(best->source_file).filename().string() + ": vendor /" +
                  best->vendor_pattern + "/, name /" + best->name_pattern + "/";
  if (device.compute_units > 0)
    result.reason += ", " + std::to_string(device.compute_units) + " compute units";
  result.reason += ")";
  if (!also.empty()) {
    result.reason += "; also matched with lower priority:";
    for (const std::string& id : also) result.reason += " " + id;
  }
  return result;
}

}  // namespace tessera
