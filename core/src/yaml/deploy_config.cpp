// Deployment YAML loading: strict schema, typed result, paths resolved against the file's dir.
#include "tessera/deploy_config.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <set>

#include "op.hpp"
#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/integrity.hpp"
#include "tessera/plugin_host.hpp"
#include "yaml/yaml_doc.hpp"

namespace tessera {
namespace fs = std::filesystem;
using config::MapReader;

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 31;

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return false;
  }
  return true;
}

std::string resolve(const fs::path& base_dir, const std::string& p) {
  fs::path path(p);
  if (!path.is_absolute()) path = base_dir / path;
  return path.lexically_normal().string();
}

DType parse_dtype(const MapReader& r, const std::string& key) {
  static const DType kAll[] = {DType::kFloat32, DType::kFloat16, DType::kInt8, DType::kUInt8,
                               DType::kInt32,   DType::kInt64,   DType::kBool};
  std::vector<std::string> names;
  for (DType d : kAll) names.push_back(dtype_name(d));
  const std::string value = r.choice(key, "float32", names);
  for (DType d : kAll) {
    if (value == dtype_name(d)) return d;
  }
  return DType::kFloat32;
}

std::vector<InputSpec> parse_inputs(const MapReader& root) {
  std::vector<InputSpec> inputs;
  const YAML::Node list = root.seq("inputs");
  if (!list) return inputs;
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = "inputs[" + std::to_string(i) + "]";
    MapReader r(root.file(), list[i], path, {"name", "shape", "dtype"});
    InputSpec in;
    in.name = r.require_str("name");
    if (!names.insert(in.name).second) r.fail("name", "input '" + in.name + "' is listed twice");
    const YAML::Node shape = r.seq("shape");
    if (!shape) r.fail("shape", "required key 'shape' is missing (e.g. shape: [1, 3, 224, 224])");
    for (size_t d = 0; d < shape.size(); ++d) {
      in.shape.push_back(config::scalar_int(
          root.file(), shape[d], r.key_path("shape") + "[" + std::to_string(d) + "]", 1, kMaxDim));
    }
    in.dtype = parse_dtype(r, "dtype");
    inputs.push_back(std::move(in));
  }
  return inputs;
}

TargetSpec parse_target(const std::string& file, const YAML::Node& node, const std::string& path) {
  TargetSpec t;
  t.line = node.Mark().is_null() ? 0 : node.Mark().line + 1;
  if (node.IsScalar()) {
    // Shorthand "plugin" or "plugin:device".
    const std::string text = node.Scalar();
    const size_t colon = text.find(':');
    t.plugin = text.substr(0, colon);
    if (colon != std::string::npos) t.device = text.substr(colon + 1);
  } else {
    MapReader r(file, node, path, {"plugin", "device", "threads", "memory", "options"});
    t.plugin = r.require_str("plugin");
    t.device = r.str("device", "any");
    t.threads = static_cast<int>(r.integer("threads", 0, 0, kMaxThreads));
    t.memory = r.choice("memory", "buffer", {"buffer", "image"}) == "image" ? MemoryKind::kImage
                                                                            : MemoryKind::kBuffer;
    const YAML::Node options = r.map("options");
    if (options) {
      for (const auto& kv : options) {
        TargetOption o;
        o.name = config::scalar_str(file, kv.first, r.key_path("options"));
        o.value = config::scalar_str(file, kv.second, r.key_path("options") + "." + o.name);
        t.options.push_back(std::move(o));
      }
    }
  }
  if (!is_identifier(t.plugin)) {
    config::fail_at(file, node, path + ".plugin",
                    "plugin name '" + t.plugin +
                        "' must be lower-case letters, digits, '_' or '-' (e.g. cpu, mali)");
  }
  if (t.device.empty()) t.device = "any";
  return t;
}

std::vector<TargetSpec> parse_targets(const MapReader& root) {
  const YAML::Node list = root.seq("targets");
  if (!list) return {default_target()};
  if (list.size() == 0) root.fail("targets", "the list is empty; name at least one plugin");
  std::vector<TargetSpec> targets;
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = "targets[" + std::to_string(i) + "]";
    TargetSpec t = parse_target(root.file(), list[i], path);
    if (!seen.insert(t.plugin + ":" + t.device).second) {
      config::fail_at(root.file(), list[i], path,
                      "target " + t.plugin + ":" + t.device + " is listed twice");
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

// An op type on a mixed_precision list must be one the op table knows: the lists match node
// op types exactly, so a misspelling ("softmax") would change nothing, silently.
void check_registered_op(const MapReader& m, const std::string& key, size_t index,
                         const std::string& op) {
  if (ops::find_op(op) != nullptr) return;
  auto same_ignoring_case = [](const std::string& a, const std::string& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  // A case difference wins over any other near name: "softmax" means Softmax.
  std::string closest;
  size_t best = 0;
  for (const std::string& name : ops::registered_ops()) {
    const size_t d = same_ignoring_case(op, name) ? 0 : 1 + config::edit_distance(op, name);
    if (closest.empty() || d < best) {
      closest = name;
      best = d;
    }
  }
  const std::string index_path = m.key_path(key) + "[" + std::to_string(index) + "]";
  config::fail_at(m.file(), m.node(key)[index], index_path,
                  "op type '" + op + "' is not a registered op (op types are ONNX names, " +
                      "matched exactly); the closest registered op type is '" + closest + "'");
}

// `mixed_precision:`: the lists (each op type a registered one, on one list at most) over the
// defaults, for a deployment whose precision is reduced.
MixedPrecisionSettings parse_mixed_precision(const MapReader& m, Precision precision) {
  MixedPrecisionSettings mp;
  mp.enabled = m.boolean("enabled", true);
  if (m.has("accuracy_budget")) {
    mp.accuracy_budget = m.number("accuracy_budget", 0.0, 1e-12, 1e6);
  }
  if (mp.enabled && precision == Precision::kFp32) {
    m.fail("enabled",
           "mixed precision keeps some nodes in fp32 and runs the rest in the deployment's "
           "precision, which is fp32: set precision: fp16 or fp16-acc32, or enabled: false");
  }
  const std::pair<const char*, MixedPrecisionClass> lists[] = {
      {"always", MixedPrecisionClass::kAlways},
      {"follow", MixedPrecisionClass::kFollow},
      {"never", MixedPrecisionClass::kNever}};
  std::map<std::string, std::string> seen;  // op type -> the list that named it
  for (const auto& [key, cls] : lists) {
    const std::vector<std::string> ops = m.str_list(key);
    for (size_t i = 0; i < ops.size(); ++i) {
      const std::string& op = ops[i];
      check_registered_op(m, key, i, op);
      const auto [it, fresh] = seen.emplace(op, key);
      if (!fresh) {
        m.fail(key, "op type '" + op + "' is on both '" + it->second + "' and '" + key + "'");
      }
      mp.overrides[op] = cls;
    }
  }
  return mp;
}

// `trusted_keys:`: each a key ("ed25519:<hex>") or a .pub file (relative to the YAML file's
// directory), checked now so a typo fails here, not at the first package; returned as key texts.
std::vector<std::string> parse_trusted_keys(const MapReader& root, const fs::path& base_dir) {
  std::vector<std::string> keys;
  const std::vector<std::string> entries = root.str_list("trusted_keys");
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string path = "trusted_keys[" + std::to_string(i) + "]";
    const YAML::Node node = root.node("trusted_keys")[i];
    const std::string& e = entries[i];
    const std::string entry = e.rfind("ed25519:", 0) == 0 ? e : resolve(base_dir, e);
    try {
      keys.push_back(read_trusted_key(entry, path).text());
    } catch (const Error& err) {
      config::fail_at(root.file(), node, path, err.what());
    }
  }
  return keys;
}

}  // namespace

DeployConfig parse_deploy_config(const std::string& text, const std::string& path) {
  const config::YamlDoc doc = config::load_yaml_text(text, path);
  const std::string& file = doc.file;
  if (!doc.root.IsMap()) {
    config::fail_at(
        file, doc.root, "",
        std::string("a deployment file is a map of keys (model:, targets:, ...), got ") +
            config::node_kind(doc.root));
  }
  MapReader root(file, doc.root, "",
                 {"schema_version", "model", "zoo", "inputs", "targets", "precision", "plugin_dirs",
                  "allow_plugin_shadowing", "packs", "cache_dir", "partition", "mixed_precision",
                  "trusted_keys"});
  root.integer("schema_version", 1, 1, 1);

  DeployConfig cfg;
  const fs::path abs_file = fs::absolute(fs::path(path)).lexically_normal();
  const fs::path base_dir = abs_file.parent_path();
  cfg.source_path = abs_file.string();

  if (root.has("model") && root.has("zoo")) {
    root.fail("zoo",
              "give either 'model:' (an ONNX file) or 'zoo:' (a generated network), not both");
  }
  if (!root.has("model") && !root.has("zoo")) {
    config::fail_at(file, doc.root, "model",
                    "required key 'model' is missing: give 'model: path/to/model.onnx' "
                    "(relative to this file) or 'zoo: mobilenet_v2'");
  }
  if (root.has("model")) {
    const std::string model = root.str("model", "");
    cfg.model_path = resolve(base_dir, model);
    std::error_code ec;
    if (!fs::is_regular_file(cfg.model_path, ec)) {
      root.fail("model", "model file '" + cfg.model_path +
                             "' does not exist (paths are relative "
                             "to the directory of this YAML file)");
    }
  } else {
    const YAML::Node zoo = root.node("zoo");
    ZooModelSpec spec;
    if (zoo.IsScalar()) {
      spec.name = zoo.Scalar();
    } else {
      MapReader z(file, zoo, "zoo", {"name", "batch", "seed"});
      spec.name = z.require_str("name");
      spec.batch = z.integer("batch", 1, 1, 4096);
      spec.seed =
          static_cast<uint64_t>(z.integer("seed", 0, 0, std::numeric_limits<int64_t>::max()));
    }
    // Zoo names are identifiers that may hold dots after the first character
    // (squeezenet_v1.1); never a path.
    std::string undotted = spec.name;
    std::replace(undotted.begin() + (undotted.empty() ? 0 : 1), undotted.end(), '.', '_');
    if (!is_identifier(undotted)) {
      config::fail_at(file, zoo, "zoo",
                      "zoo network name '" + spec.name +
                          "' is not a plain name like mobilenet_v2 "
                          "(`tessera zoo --list` shows them)");
    }
    cfg.zoo = spec;
  }

  cfg.inputs = parse_inputs(root);
  cfg.targets = parse_targets(root);

  const std::string precision = root.choice("precision", "fp32", {"fp32", "fp16", "fp16-acc32"});
  cfg.precision = precision == "fp16"         ? Precision::kFp16
                  : precision == "fp16-acc32" ? Precision::kFp16Acc32
                                              : Precision::kFp32;

  const std::vector<std::string> dirs = root.str_list("plugin_dirs");
  for (size_t i = 0; i < dirs.size(); ++i) {
    const std::string dir = resolve(base_dir, dirs[i]);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      config::fail_at(file, root.node("plugin_dirs")[i], "plugin_dirs[" + std::to_string(i) + "]",
                      "plugin directory '" + dir + "' does not exist");
    }
    cfg.plugin_dirs.push_back(dir);
  }

  cfg.allow_plugin_shadowing = root.boolean("allow_plugin_shadowing", false);
  cfg.trusted_keys = parse_trusted_keys(root, base_dir);

  if (root.has("packs")) {
    MapReader p(file, root.map("packs"), "packs", {"mode", "files"});
    const std::string mode = p.choice("mode", "auto", {"auto", "files", "none"});
    cfg.packs.mode = mode == "files"  ? PackMode::kFiles
                     : mode == "none" ? PackMode::kNone
                                      : PackMode::kAuto;
    const std::vector<std::string> files = p.str_list("files");
    if (cfg.packs.mode == PackMode::kFiles && files.empty()) {
      p.fail("files", "mode 'files' needs a non-empty 'files:' list of pack YAMLs");
    }
    if (cfg.packs.mode != PackMode::kFiles && !files.empty()) {
      p.fail("files",
             std::string("'files:' is only used with 'mode: files' (mode is '") + mode + "')");
    }
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string f = resolve(base_dir, files[i]);
      std::error_code ec;
      if (!fs::is_regular_file(f, ec)) {
        config::fail_at(file, p.node("files")[i], "packs.files[" + std::to_string(i) + "]",
                        "pack file '" + f + "' does not exist");
      }
      cfg.packs.files.push_back(f);
    }
  }

  if (root.has("cache_dir")) cfg.cache_dir = resolve(base_dir, root.str("cache_dir", ""));

  if (root.has("mixed_precision")) {
    cfg.mixed_precision = parse_mixed_precision(
        MapReader(file, root.map("mixed_precision"), "mixed_precision",
                  {"enabled", "always", "follow", "never", "accuracy_budget"}),
        cfg.precision);
  }

  if (root.has("partition")) {
    MapReader p(file, root.map("partition"), "partition", {"min_island_nodes", "allow_fallback"});
    cfg.partition.min_island_nodes =
        static_cast<int>(p.integer("min_island_nodes", cfg.partition.min_island_nodes, 1, 100000));
    cfg.partition.allow_fallback = p.boolean("allow_fallback", cfg.partition.allow_fallback);
  }
  return cfg;
}

DeployConfig load_deploy_config(const std::string& path) {
  return parse_deploy_config(read_file(path, "deployment YAML", kMaxYamlFileBytes), path);
}

}  // namespace tessera
