// Device families: targets/devices/*.yaml map a probed device (vendor, name, driver, compute
// units) to a family id and its hardware parameters, which cost models and schedule heuristics
// read. Also the version/range type shared with packs (driver and engine versions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

// What a plugin's probe reports about one device; the key for family matching and pack selection.
struct DeviceIdentity {
  std::string vendor;         // e.g. "ARM", "Qualcomm", "The pocl project", "NVIDIA Corporation"
  std::string name;           // e.g. "Mali-G78", "QUALCOMM Adreno(TM) 650", "NVIDIA H100 80GB HBM3"
  std::string driver;         // driver version text as the API reports it
  int64_t compute_units = 0;  // 0 = unknown
};

// A version is the sequence of the numbers found in a version string: "535.104.05" -> 535.104.5,
// "r32p1" -> 32.1, "5.0+debian" -> 5.0. Missing trailing parts count as 0.
struct Version {
  std::vector<int64_t> parts;
  static Version parse(const std::string& text);
  int compare(const Version& other) const;  // <0, 0, >0
  std::string str() const;                  // "535.104.5"
};

// Comma-separated constraints, all of which must hold: ">=0.1,<0.2", "==535.104.05", "*" or ""
// (anything). A bare version "535.104.05" means "==535.104.05".
class VersionRange {
 public:
  VersionRange() = default;
  // Throws tessera::Error naming the text when it cannot be parsed.
  static VersionRange parse(const std::string& text);
  bool contains(const Version& version) const;
  bool contains(const std::string& version_text) const {
    return contains(Version::parse(version_text));
  }
  bool is_any() const { return constraints_.empty(); }
  const std::string& text() const { return text_; }

 private:
  enum class Op { kEq, kLt, kLe, kGt, kGe };
  struct Constraint {
    Op op;
    Version version;
  };
  std::vector<Constraint> constraints_;
  std::string text_;
};

enum class DeviceKind { kCpu, kGpu };

// Hardware parameters of a family, for cost models and default schedules.
struct HardwareParams {
  int preferred_vector_width = 4;  // float lanes per vector instruction / preferred OpenCL width
  int max_work_group_size = 256;   // work-items per work-group (1 for plain CPU threads)
  int64_t local_memory_bytes = 0;  // fast on-chip local/shared memory per work-group
  int subgroup_size = 1;           // warp / wave / SIMD width, 1 = not applicable
  bool fp16 = false;               // native half-precision arithmetic
  bool image_support = false;      // image2d textures usable for tensors
  // Throughput, for the partitioner's estimates (core/src/partition/cost_model.hpp); 0 = not
  // given, and then the plugin's own estimate is used.
  double gflops_per_unit = 0;  // fp32 peak GFLOP/s of one compute unit (core, shader core, CU)
  double memory_gbps = 0;      // memory bandwidth the device reaches, GB/s
  double launch_us = 0;        // fixed cost of one node: a kernel launch, a task dispatch
  double transfer_gbps = 0;    // host <-> device copies, GB/s; 0 = the device uses host memory
};

// One targets/devices/<family>.yaml. Patterns are ECMAScript regexes searched case-insensitively.
struct DeviceFamily {
  std::string id;  // e.g. "mali-valhall"; packs name families by it
  std::string description;
  DeviceKind kind = DeviceKind::kGpu;
  std::string vendor_pattern;
  std::string name_pattern;
  int64_t min_compute_units = 0;  // inclusive; checked only when the device reports them
  int64_t max_compute_units = 0;  // 0 = no upper bound
  VersionRange driver;            // any when absent
  int priority = 0;               // a more specific family beats a catch-all on ties
  HardwareParams params;
  std::string source_file;
};

struct FamilyMatch {
  std::optional<DeviceFamily> family;  // empty when no descriptor matched
  std::string reason;                  // why this family (or why none)
};

// Parses one descriptor file; errors name the file, line and key path.
DeviceFamily load_device_family(const std::string& path);
// Every *.yaml in `dir`, sorted by file name. Throws on the first bad file (a shipped descriptor
// that does not load is a bug worth stopping for) and on two files with the same id.
std::vector<DeviceFamily> load_device_families(const std::string& dir);

// The matching family with the highest priority (ties: earlier in `families`). The reason names
// the family and what matched, or for no match why the closest candidates did not.
// Why `pattern` is not a valid family pattern (ECMAScript, case-insensitive), or "".
std::string family_pattern_problem(const std::string& pattern);

FamilyMatch match_family(const std::vector<DeviceFamily>& families, const DeviceIdentity& device);

}  // namespace tessera
