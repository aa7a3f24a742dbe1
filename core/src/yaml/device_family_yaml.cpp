// Device family descriptors (targets/devices/*.yaml): strict loading of one file and of a
// directory of them.
#include <algorithm>
#include <filesystem>
#include <set>

#include "tessera/device_family.hpp"
#include "tessera/error.hpp"
#include "yaml/yaml_doc.hpp"

namespace tessera {
namespace fs = std::filesystem;
using config::MapReader;

namespace {

void check_pattern(const MapReader& r, const std::string& key, const std::string& text) {
  const std::string problem = family_pattern_problem(text);
  if (!problem.empty()) r.fail(key, problem);
}

}  // namespace

DeviceFamily load_device_family(const std::string& path) {
  const config::YamlDoc doc = config::load_yaml_file(path);
  MapReader root(path, doc.root, "",
                 {"schema_version", "id", "description", "kind", "priority", "match", "params"});
  root.integer("schema_version", 1, 1, 1);
  DeviceFamily f;
  f.source_file = path;
  f.id = root.require_str("id");
  f.description = root.str("description", "");
  f.kind =
      root.choice("kind", "gpu", {"cpu", "gpu"}) == "cpu" ? DeviceKind::kCpu : DeviceKind::kGpu;
  f.priority = static_cast<int>(root.integer("priority", 0, -1000, 1000));
  if (!root.has("match")) root.fail("match", "required key 'match' is missing");
  MapReader m(path, root.map("match"), "match", {"vendor", "name", "compute_units", "driver"});
  f.vendor_pattern = m.require_str("vendor");
  f.name_pattern = m.str("name", "");
  check_pattern(m, "vendor", f.vendor_pattern);
  check_pattern(m, "name", f.name_pattern);
  if (m.has("compute_units")) {
    MapReader cu(path, m.map("compute_units"), m.key_path("compute_units"), {"min", "max"});
    f.min_compute_units = cu.integer("min", 0, 0, 1 << 20);
    f.max_compute_units = cu.integer("max", 0, 0, 1 << 20);
    if (f.max_compute_units != 0 && f.max_compute_units < f.min_compute_units) {
      cu.fail("max", "max is below min");
    }
  }
  if (m.has("driver")) {
    try {
      f.driver = VersionRange::parse(m.str("driver", ""));
    } catch (const Error& e) {
      m.fail("driver", e.what());
    }
  }
  if (root.has("params")) {
    MapReader p(path, root.map("params"), "params",
                {"preferred_vector_width", "max_work_group_size", "local_memory_bytes",
                 "subgroup_size", "fp16", "image_support", "gflops_per_unit", "memory_gbps",
                 "launch_us", "transfer_gbps"});
    HardwareParams& hw = f.params;
    hw.preferred_vector_width =
        static_cast<int>(p.integer("preferred_vector_width", hw.preferred_vector_width, 1, 64));
    hw.max_work_group_size =
        static_cast<int>(p.integer("max_work_group_size", hw.max_work_group_size, 1, 1 << 16));
    hw.local_memory_bytes = p.integer("local_memory_bytes", hw.local_memory_bytes, 0, 1 << 30);
    hw.subgroup_size = static_cast<int>(p.integer("subgroup_size", hw.subgroup_size, 1, 1024));
    hw.fp16 = p.boolean("fp16", hw.fp16);
    hw.image_support = p.boolean("image_support", hw.image_support);
    hw.gflops_per_unit = p.number("gflops_per_unit", hw.gflops_per_unit, 0, 1e6);
    hw.memory_gbps = p.number("memory_gbps", hw.memory_gbps, 0, 1e5);
    hw.launch_us = p.number("launch_us", hw.launch_us, 0, 1e6);
    hw.transfer_gbps = p.number("transfer_gbps", hw.transfer_gbps, 0, 1e5);
  }
  return f;
}

std::vector<DeviceFamily> load_device_families(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error("device descriptor directory '" + dir + "' does not exist");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<DeviceFamily> families;
  std::set<std::string> ids;
  for (const std::string& file : files) {
    DeviceFamily f = load_device_family(file);
    if (!ids.insert(f.id).second) {
      throw Error(file + ": family id '" + f.id + "' is also used by another file in " + dir);
    }
    families.push_back(std::move(f));
  }
  return families;
}
}  // namespace tessera
