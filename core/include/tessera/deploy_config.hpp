// The deployment YAML (configs/*.yaml) as typed structs, and its strict loader.
//
// The schema, with every key, default and range, is documented in configs/SCHEMA.md. Paths in the
// file are relative to the file's own directory and come back absolute.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/mixed_precision.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// Where a plugin keeps tensors on its device: OpenCL buffers or image2d textures.
enum class MemoryKind { kBuffer, kImage };
// Numeric precision of the deployment: fp32, fp16 storage and arithmetic, or fp16 storage with
// fp32 accumulation.
enum class Precision { kFp32, kFp16, kFp16Acc32 };
// How tuned packs are found: auto = schedules/ beside the plugins (hierarchical selection),
// files = only the listed files, none = the schedules' built-in heuristics only.
enum class PackMode { kAuto, kFiles, kNone };

const char* memory_kind_name(MemoryKind kind);    // "buffer" | "image"
const char* precision_name(Precision precision);  // "fp32" | "fp16" | "fp16-acc32"
// The Precision `name` names (one of precision_name's answers), or nullopt: the one check of a
// precision string, for deployments, `--precision` and the C API alike.
std::optional<Precision> parse_precision(const std::string& name);
const char* pack_mode_name(PackMode mode);  // "auto" | "files" | "none"

// One model input whose shape/dtype the deployment fixes (overrides the model's own).
struct InputSpec {
  std::string name;
  Shape shape;                    // every dim >= 1
  DType dtype = DType::kFloat32;  // spelled as numpy does: float32, float16, int64, ...
};

// `zoo:` instead of `model:`: generate this zoo network (tools/zoo) into the cache directory if
// it is not there yet. Core only validates the spelling; the tool knows the list of names.
struct ZooModelSpec {
  std::string name;   // e.g. "mobilenet_v2"
  int64_t batch = 1;  // [1, 4096]
  uint64_t seed = 0;
};

// A plugin-specific option, passed through to the plugin, which validates it. Kept as text
// because only the plugin knows its options' types.
struct TargetOption {
  std::string name;
  std::string value;
};

// One entry of `targets:`, in priority order (earlier = asked first by the partitioner).
struct TargetSpec {
  std::string plugin;          // plugin name, e.g. "cpu", "mali", "reference"
  std::string device = "any";  // "any", a device index ("0"), or text the device name contains
  int threads = 0;             // 0 = the plugin's default
  MemoryKind memory = MemoryKind::kBuffer;
  std::vector<TargetOption> options;
  int line = 0;  // 1-based line in the YAML, for later messages
};

struct PackSettings {
  PackMode mode = PackMode::kAuto;
  std::vector<std::string> files;  // absolute; only with mode == kFiles
};

struct PartitionSettings {
  int min_island_nodes = 1;  // islands smaller than this merge back into a neighbour
  // A named target that cannot run, or a region that fails to compile on one, moves on to the
  // next target (true) or is an error naming the target and the reason (false).
  bool allow_fallback = false;
};

struct DeployConfig {
  std::string source_path;          // absolute path of the YAML file
  std::string model_path;           // absolute; empty when `zoo` is set
  std::optional<ZooModelSpec> zoo;  // set instead of model_path
  std::vector<InputSpec> inputs;
  std::vector<TargetSpec> targets;  // never empty
  Precision precision = Precision::kFp32;
  // `mixed_precision:` (needs precision fp16 / fp16-acc32): enabled, and op types moved onto
  // the always / follow / never lists.
  MixedPrecisionSettings mixed_precision;
  std::vector<std::string> plugin_dirs;  // absolute, existing directories
  bool allow_plugin_shadowing = false;   // TESSERA_PLUGIN_PATH may replace a bundled plugin
  PackSettings packs;
  std::string cache_dir;  // absolute; empty = the tool's default
  PartitionSettings partition;
  // `trusted_keys:` as key texts ("ed25519:<hex>"; entries naming a .pub file, relative to this
  // file, are read when the file loads). Given, packages and packs must be signed by one of them
  // (SessionOptions::trusted_keys).
  std::vector<std::string> trusted_keys;
};

// The default when a file has no `targets:`: the reference plugin, which runs everywhere.
TargetSpec default_target();

// Reads and validates a deployment YAML. Throws tessera::Error whose message starts with
// "file:line:col: key.path: " and says what would fix it: unknown keys (with a suggestion for a
// likely typo), wrong types, out-of-range values, missing model/pack files or plugin dirs, YAML
// syntax errors, and pathological files (nesting deeper than 64, alias bombs).
DeployConfig load_deploy_config(const std::string& path);
// Same from text; `path` names the file in messages and its directory anchors relative paths.
DeployConfig parse_deploy_config(const std::string& text, const std::string& path);

}  // namespace tessera
