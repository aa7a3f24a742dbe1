// Input loading/generation and the Runner used by `run` and `bench`.
#include "run_common.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>

#include "cli.hpp"
#include "tessera/deploy_config.hpp"
#include "tessera/deployment.hpp"
#include "tessera/integrity.hpp"
#include "tessera/npy.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/passes.hpp"
#include "tessera/session.hpp"
#include "zoo.hpp"

namespace tessera::cli {

std::map<std::string, Tensor> load_or_generate_inputs(const Graph& graph,
                                                      const std::vector<std::string>& specs,
                                                      uint64_t seed) {
  std::map<std::string, Tensor> inputs;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error("--input expects NAME=FILE.npy, got '" + spec + "'");
    }
    const std::string name = spec.substr(0, eq);
    const std::string file = spec.substr(eq + 1);
    const ValueId id = graph.find_value(name);
    bool is_input = false;
    for (ValueId in : graph.inputs) is_input = is_input || in == id;
    if (!is_input) {
      throw Error("--input " + spec + ": the model has no input named '" + name +
                  "' (its inputs: " + graph.input_names() + ")");
    }
    Tensor t = read_npy(file);
    const Value& v = graph.value(id);
    // Dims the model leaves open may take another size: the session plans for it.
    if (!input_accepts(v, t.dtype(), t.shape())) {
      throw Error("--input " + spec + ": " + file + " holds " + dtype_name(t.dtype()) + " " +
                  shape_str(t.shape()) + " but input '" + name + "' is " + dtype_name(v.dtype) +
                  " " + open_shape_str(v) +
                  (v.open_dims.empty() ? "" : " ('?' = a dimension the model leaves open)"));
    }
    inputs[name] = t;
  }
  std::mt19937_64 rng(seed);
  bool generated = false;
  for (ValueId id : graph.inputs) {
    const Value& v = graph.value(id);
    if (inputs.count(v.name)) continue;
    if (std::find(graph.value_inputs.begin(), graph.value_inputs.end(), id) !=
        graph.value_inputs.end()) {
      throw Error("input '" + v.name + "' decides shapes (its values are read when the graph is " +
                  "planned), so random values would not do: give it with --input " + v.name +
                  "=FILE.npy");
    }
    if (std::find(graph.unsized_inputs.begin(), graph.unsized_inputs.end(), id) !=
        graph.unsized_inputs.end()) {
      throw Error("input '" + v.name + "' has open dimensions " + open_shape_str(v) +
                  " with no size to make random data of: give it with --input " + v.name +
                  "=FILE.npy (its shape is then planned), or a shape with --input-shape " +
                  v.name + "=D0,D1,...");
    }
    generated = true;
    Tensor t(v.dtype, v.shape);
    if (v.dtype == DType::kFloat32) {
      std::normal_distribution<float> dist(0.0f, 1.0f);
      float* p = t.data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
    } else if (v.dtype == DType::kInt64) {
      std::uniform_int_distribution<int64_t> dist(0, 9);
      int64_t* p = t.data<int64_t>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
    } else if (v.dtype == DType::kInt32) {
      std::uniform_int_distribution<int32_t> dist(0, 9);
      int32_t* p = t.data<int32_t>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
    } else {
      throw Error("input '" + v.name + "' has dtype " + dtype_name(v.dtype) +
                  "; give it with --input NAME=FILE.npy");
    }
    inputs[v.name] = t;
  }
  if (generated) {
    std::fprintf(stderr, "inputs not given were filled with seeded random data (seed %llu)\n",
                 static_cast<unsigned long long>(seed));
  }
  return inputs;
}

std::string safe_file_name(const std::string& name) {
  std::string out = name.empty() ? "output" : name;
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  if (out == "." || out == "..") out = "_" + out;
  return out;
}

std::vector<std::string> output_file_names(const std::vector<std::string>& value_names,
                                           std::vector<std::string>& notes) {
  // 255 bytes is the usual limit of one path component; room is left for ".NNN.npy".
  constexpr size_t kMaxStem = 200;
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::set<std::string> taken;  // lower-cased file names
  std::vector<std::string> files;
  for (const std::string& name : value_names) {
    std::string stem = safe_file_name(name);
    if (stem.size() > kMaxStem) stem.resize(kMaxStem);
    std::string file = stem + ".npy";
    for (int n = 2; taken.count(lower(file)) != 0; ++n)
      file = stem + "." + std::to_string(n) + ".npy";
    if (file != stem + ".npy" || stem != name) {
      notes.push_back("output '" + name + "' is written as '" + file + "'" +
                      (file != stem + ".npy"
                           ? " (another output already maps to '" + stem + ".npy')"
                           : " (characters unsafe in file names replaced)"));
    }
    taken.insert(lower(file));
    files.push_back(file);
  }
  return files;
}

std::string default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return (std::filesystem::path(xdg) / "tessera").string();
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return (std::filesystem::path(home) / ".cache" / "tessera").string();
  }
  return (std::filesystem::temp_directory_path() / "tessera-cache").string();
}

namespace {

// The targets of a --targets list, with the options of entries that carry them.
void set_target_override(Workload& w, const std::string& list) {
  w.targets.clear();
  w.target_settings.clear();
  for (const TargetListEntry& e : parse_target_entries(list)) {
    w.targets.push_back(e.spec);
    if (e.options.empty()) continue;
    TargetSettings& settings = w.target_settings[e.spec];
    settings.options = e.options;
    settings.origin = "--targets";
  }
}

}  // namespace

bool is_deployment_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

Workload load_workload(const std::string& path, const std::string& targets_override,
                       const std::map<std::string, Shape>& input_shapes) {
  Workload w;
  ImportOptions import_options;
  import_options.input_shapes = input_shapes;
  if (is_package_file(path)) {
    if (!input_shapes.empty()) {
      throw Error(path +
                  ": a package's input shapes were fixed when it was compiled; pass "
                  "--input-shape to `tessera compile` instead");
    }
    auto package = std::make_shared<const Package>(read_package(path));
    w.graph = package->graph;
    w.model_path = path;
    w.precision = package->precision;
    set_target_override(w, targets_override);
    std::string targets;
    for (const PackageTarget& t : package->targets)
      targets += (targets.empty() ? "" : ", ") + t.spec;
    w.description =
        "package " + path + " (compiled from " + package->source_model + " for " + targets + ")";
    w.package = std::move(package);
    return w;
  }
  if (!is_deployment_file(path)) {
    w.input_shapes = import_options.input_shapes;
    w.graph = import_onnx_file(path, import_options);
    w.model_path = path;
    set_target_override(w, targets_override);
    w.description = "model " + path;
    return w;
  }
  const DeployConfig config = load_deploy_config(path);
  w.cache_dir = config.cache_dir.empty() ? default_cache_dir() : config.cache_dir;
  std::string model = config.model_path;
  if (config.zoo) {
    const ZooModelSpec& z = *config.zoo;
    model = (std::filesystem::path(w.cache_dir) / "zoo" /
             (z.name + "-b" + std::to_string(z.batch) + "-s" + std::to_string(z.seed) + ".onnx"))
                .string();
    if (!std::filesystem::exists(model)) {
      std::filesystem::create_directories(std::filesystem::path(model).parent_path());
      zoo::ZooOptions options;
      options.batch = z.batch;
      options.seed = z.seed;
      try {
        zoo::write_zoo_model(z.name, options, model, /*overwrite=*/false);
      } catch (const Error& e) {
        throw Error(path + ": " + e.what());  // e.what() starts with "zoo: "
      }
      // stderr, like the other notices, so `bench --json` keeps one object on stdout.
      std::fprintf(stderr, "generated zoo network %s into %s\n", z.name.c_str(), model.c_str());
    }
  }
  for (const InputSpec& in : config.inputs) {
    if (!import_options.input_shapes.count(in.name))
      import_options.input_shapes[in.name] = in.shape;
  }
  w.input_shapes = import_options.input_shapes;
  // The model as the deployment gives it (the zoo network generated above in its place), with
  // --input-shape over the deployment's inputs.
  DeployConfig resolved = config;
  resolved.zoo.reset();
  resolved.model_path = model;
  w.graph = import_deployment_model(resolved, import_options);
  w.model_path = model;
  // The deployment's session options, through the one mapping core defines.
  const SessionOptions o = from_deployment(resolved);
  if (!targets_override.empty()) {
    set_target_override(w, targets_override);
  } else {
    w.targets = o.targets;
    w.target_settings = o.target_settings;
  }
  w.precision = o.precision;
  w.mixed_precision = o.mixed_precision;
  w.min_island_nodes = o.min_island_nodes;
  w.allow_fallback = o.allow_fallback;
  w.plugin_dirs = o.plugin_dirs;
  w.allow_plugin_shadowing = o.allow_plugin_shadowing;
  w.pack_mode = o.pack_mode;
  w.pack_files = o.pack_files;
  w.trusted_keys = o.trusted_keys;
  w.description = "deployment " + path + " (model " + model + ")";
  return w;
}

std::optional<PackMode> pack_mode_from_options(const std::vector<std::string>& pack_files,
                                               bool no_packs) {
  if (no_packs && !pack_files.empty()) {
    throw Error("--pack and --no-packs contradict each other; give one of them");
  }
  if (no_packs) return PackMode::kNone;
  if (!pack_files.empty()) return PackMode::kFiles;
  return std::nullopt;
}

void apply_pack_options(Workload& workload, const std::vector<std::string>& pack_files,
                        bool no_packs) {
  if (const std::optional<PackMode> mode = pack_mode_from_options(pack_files, no_packs)) {
    workload.pack_mode = *mode;
    workload.pack_files = pack_files;
  }
}

struct Runner::Impl {
  std::unique_ptr<Session> session;
  bool mixed_precision = false;
  std::string precision;
};

void apply_fallback_option(Workload& workload, bool allow_fallback) {
  if (allow_fallback) workload.allow_fallback = true;
}

void apply_precision_option(Workload& workload, const std::string& precision) {
  if (precision.empty()) return;
  if (!parse_precision(precision)) {
    throw Error("--precision must be fp32, fp16 or fp16-acc32, got '" + precision + "'");
  }
  workload.precision = precision;
}

void apply_mixed_precision_option(Workload& workload, bool enable) {
  if (enable) workload.mixed_precision.enabled = true;
}

SessionOptions session_options(const Workload& workload) {
  SessionOptions options;
  options.targets = workload.targets;
  options.threads = workload.threads;
  options.target_settings = workload.target_settings;
  if (workload.threads > 0) {
    for (auto& [spec, settings] : options.target_settings) settings.threads = 0;
  }
  options.precision = workload.precision;
  options.plugin_dirs = workload.plugin_dirs;
  options.allow_plugin_shadowing = workload.allow_plugin_shadowing;
  options.cache_dir = workload.cache_dir;
  options.pack_mode = workload.pack_mode;
  options.pack_files = workload.pack_files;
  options.min_island_nodes = workload.min_island_nodes;
  options.allow_fallback = workload.allow_fallback;
  options.profile_nodes = workload.profile_nodes;
  options.mixed_precision = workload.mixed_precision;
  options.trusted_keys = workload.trusted_keys;
  return options;
}

void apply_model_options(Workload& workload, const Args& args) {
  for (const std::string& dir : args.get_all("plugin-dir")) {
    workload.plugin_dirs.push_back(checked_plugin_dir(dir));
  }
  apply_pack_options(workload, args.get_all("pack"), args.flag("no-packs"));
  apply_precision_option(workload, args.get("precision"));
  apply_mixed_precision_option(workload, args.flag("mixed-precision"));
  apply_fallback_option(workload, args.flag("allow-fallback"));
  workload.replan_package = args.flag("replan");
  // --trusted-key: a key text or a .pub file; given, it replaces the deployment's list.
  std::vector<std::string> keys;
  for (const std::string& key : args.get_all("trusted-key"))
    keys.push_back(read_trusted_key(key, "--trusted-key").text());
  if (!keys.empty()) workload.trusted_keys = std::move(keys);
}

std::unique_ptr<Session> make_session(Workload& workload, const SessionOptions& options) {
  if (!workload.package) return std::make_unique<Session>(std::move(workload.graph), options);
  if (options.pack_mode != PackMode::kAuto) {
    throw Error(workload.model_path +
                ": --pack and --no-packs do not apply to a package: its configs were chosen "
                "when it was compiled (pass them to `tessera compile`)");
  }
  if (options.mixed_precision.enabled) {
    throw Error(workload.model_path +
                ": --mixed-precision does not apply to a package: each node's precision was "
                "chosen when it was compiled (pass it to `tessera compile`)");
  }
  SessionOptions o = options;
  o.replan_package = workload.replan_package;
  return std::make_unique<Session>(*workload.package, o);
}

Runner::Runner(Workload workload) : impl_(std::make_unique<Impl>()) {
  const SessionOptions options = session_options(workload);
  impl_->mixed_precision = options.mixed_precision.enabled;
  impl_->precision = options.precision;
  impl_->session = make_session(workload, options);
}

Runner::~Runner() = default;

std::vector<Tensor> Runner::run(const std::map<std::string, Tensor>& inputs) {
  return impl_->session->run(inputs);
}

namespace {

// A node's reason up to the answer of the target that took it: "cpu: unsupported: op X not
// implemented" out of "cpu: unsupported: op X not implemented -> reference: supported, est 3 us".
std::string why_not_earlier(const std::string& reason) {
  const size_t last = reason.rfind(" -> ");
  return last == std::string::npos ? reason : reason.substr(0, last);
}

}  // namespace

void Runner::print_placement(Verbosity verbosity) const {
  const ExecutionPlan& plan = impl_->session->plan();
  const bool verbose = verbosity == Verbosity::kVerbose;
  const auto print_warnings = [&] {
    for (const std::string& w : plan.warnings) std::printf("warning: %s\n", w.c_str());
    // Packs written for other devices, families or vendors are expected on any machine; they
    // are for --verbose and `tessera info`, not every run.
    if (verbose) {
      for (const DevicePackPlan& p : plan.packs) {
        for (const std::string& n : p.notes) std::printf("note: packs: %s\n", n.c_str());
      }
    }
  };
  if (verbosity == Verbosity::kQuiet) {
    print_warnings();
    return;
  }
  std::printf("targets:\n");
  for (const std::string& t : plan.targets) std::printf("  %s\n", t.c_str());
  for (const DevicePackPlan& p : plan.packs) {
    if (verbose) {
      std::printf("  pack for %s: %s\n", p.target.c_str(), p.reason.c_str());
    } else {
      std::printf("  pack for %s: %s\n", p.target.c_str(),
                  p.pack_file.empty() ? "none (the schedules' heuristics)"
                                      : (p.pack_file + " (" + p.level + ")").c_str());
    }
  }
  const Graph& graph = impl_->session->graph();
  const bool open = std::any_of(graph.inputs.begin(), graph.inputs.end(),
                                [&](ValueId id) { return !graph.value(id).open_dims.empty(); });
  if (!plan.value_inputs.empty()) {
    std::printf("planned for inputs: %s\n  (values of %s decide shapes: other values plan again)\n",
                plan.input_signature.c_str(), plan.value_inputs.c_str());
  } else if (open && !plan.input_signature.empty()) {
    std::printf("planned for inputs: %s\n  (dims the model leaves open: other sizes plan again)\n",
                plan.input_signature.c_str());
  }
  std::printf("placement (%zu nodes, %zu regions):\n", plan.nodes.size(), plan.regions.size());
  if (impl_->mixed_precision) {
    std::printf("mixed precision: kept in fp32 %s\n",
                fp32_nodes_text(plan, impl_->precision).c_str());
  }
  if (verbose) {
    for (const NodePlacement& n : plan.nodes) {
      std::printf("  %-32s %-20s -> %-10s region %d%s\n", n.node.c_str(), n.op_type.c_str(),
                  n.plugin.c_str(), n.region,
                  impl_->mixed_precision ? (" " + n.precision).c_str() : "");
    }
  } else if (!plan.nodes.empty()) {
    // Only what did not land on the first target the user listed, grouped by where it went and
    // its op, with the first such node's reason: the question a placement table is read for.
    // (plan.packs holds one entry per resolved target, in target order.)
    const std::string first = plan.packs.empty() ? "" : plan.packs[0].plugin;
    std::map<std::pair<std::string, std::string>, std::pair<int, std::string>> moved;
    for (const NodePlacement& n : plan.nodes) {
      if (n.plugin == first) continue;
      auto& entry = moved[{n.plugin, n.op_type}];
      if (entry.first++ == 0) entry.second = why_not_earlier(n.reason);
    }
    for (const auto& [key, entry] : moved) {
      std::printf("  %d %s -> %s (e.g. %s)\n", entry.first, key.second.c_str(), key.first.c_str(),
                  entry.second.c_str());
    }
  }
  std::printf("nodes by plugin: %s\n", nodes_per_plugin_text(plan).c_str());
  print_warnings();
}

std::string plan_json_members(const ExecutionPlan& plan, const std::string& model,
                              const std::string& precision) {
  std::string out = "\"model\": " + json_string(model) +
                    ", \"precision\": " + json_string(precision) +
                    ", \"targets\": " + json_string_list(plan.targets) + ", \"packs\": [";
  for (size_t i = 0; i < plan.packs.size(); ++i) {
    const DevicePackPlan& p = plan.packs[i];
    out += std::string(i ? ", " : "") + "{\"target\": " + json_string(p.target) +
           ", \"device\": " + json_string(p.device) + ", \"pack\": " + json_string(p.pack_file) +
           ", \"level\": " + json_string(p.level) + ", \"family\": " + json_string(p.family) +
           ", \"reason\": " + json_string(p.reason) +
           ", \"warnings\": " + json_string_list(p.warnings) +
           ", \"notes\": " + json_string_list(p.notes) + "}";
  }
  out += "], \"regions\": [";
  for (size_t i = 0; i < plan.regions.size(); ++i) {
    const RegionPlacement& r = plan.regions[i];
    out += std::string(i ? ", " : "") + "{\"id\": " + std::to_string(r.id) +
           ", \"plugin\": " + json_string(r.plugin) + ", \"device\": " + json_string(r.device) +
           ", \"nodes\": " + std::to_string(r.nodes.size()) +
           ", \"precision\": " + json_string(r.precision) +
           ", \"estimated_us\": " + json_number(r.estimated_us) +
           ", \"inputs_from_host\": " + json_string_list(r.inputs) +
           ", \"outputs_to_host\": " + json_string_list(r.outputs) + "}";
  }
  out += "], \"nodes_by_plugin\": {";
  bool first = true;
  for (const auto& [plugin, count] : nodes_per_plugin(plan)) {
    out += std::string(first ? "" : ", ") + json_string(plugin) + ": " + std::to_string(count);
    first = false;
  }
  out += "}, \"fp32_nodes\": " + json_string_list(fp32_nodes(plan, precision));
  // Which input shapes this plan is for; a session keeps one plan per input signature.
  out += ", \"input_signature\": " + json_string(plan.input_signature) +
         ", \"plan_number\": " + std::to_string(plan.plan_number);
  return out + ", \"warnings\": " + json_string_list(plan.warnings);
}

std::vector<std::string> fp32_nodes(const ExecutionPlan& plan, const std::string& precision) {
  std::vector<std::string> out;
  if (precision == "fp32") return out;
  for (const NodePlacement& n : plan.nodes) {
    if (n.precision == "fp32") out.push_back(n.node);
  }
  return out;
}

std::string fp32_nodes_text(const ExecutionPlan& plan, const std::string& precision) {
  std::map<std::string, int> by_op;
  int total = 0;
  for (const NodePlacement& n : plan.nodes) {
    if (precision != "fp32" && n.precision == "fp32") {
      ++by_op[n.op_type];
      ++total;
    }
  }
  if (total == 0) return "none (every node runs " + precision + ")";
  std::string text = std::to_string(total) + " of " + std::to_string(plan.nodes.size()) + " (";
  bool first = true;
  for (const auto& [op, count] : by_op) {
    text += (first ? "" : ", ") + op + " x" + std::to_string(count);
    first = false;
  }
  return text + ")";
}

std::map<std::string, int> nodes_per_plugin(const ExecutionPlan& plan) {
  std::map<std::string, int> counts;
  for (const NodePlacement& n : plan.nodes) ++counts[n.plugin];
  return counts;
}

std::string nodes_per_plugin_text(const ExecutionPlan& plan) {
  std::string text;
  for (const auto& [plugin, count] : nodes_per_plugin(plan)) {
    text += (text.empty() ? "" : " ") + plugin + "=" + std::to_string(count);
  }
  return text;
}

std::map<std::string, int> Runner::nodes_per_plugin() const {
  return cli::nodes_per_plugin(impl_->session->plan());
}

const Graph& Runner::graph() const {
  return impl_->session->graph();
}

const ExecutionPlan& Runner::plan() const {
  return impl_->session->plan();
}

int Runner::plans_held() const {
  return impl_->session->plans_held();
}

std::vector<RegionProfile> Runner::profile() const {
  return impl_->session->profile();
}

RunStats Runner::last_run_stats() const {
  return impl_->session->last_run_stats();
}

}  // namespace tessera::cli
