// `tessera compile MODEL.onnx|DEPLOY.yaml -o MODEL.tsp [options]`: plans and compiles the model
// for its targets as `tessera run` would, then writes the result as a package (the prepared
// graph, each node's target, precision and schedule config with its source, the targets as
// resolved, and the weights) that `tessera run|bench MODEL.tsp` and the C API load without the
// ONNX importer, YAML or packs.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli.hpp"
#include "run_common.hpp"
#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/package.hpp"
#include "tessera/passes.hpp"
#include "tessera/session.hpp"

namespace tessera::cli {

int cmd_compile(int argc, char** argv) {
  Args args(argc, argv,
            {"targets", "input-shape", "plugin-dir", "pack", "precision", "output", "sign",
             "trusted-key", kMemoryLimitOption},
            {"no-packs", "allow-fallback", "mixed-precision", "force", "json", "help"});
  const std::string out = args.get("output");
  if (args.flag("help") || args.positionals().size() != 1 || out.empty()) {
    return print_usage(
        "usage: tessera compile MODEL.onnx|DEPLOY.yaml -o MODEL.tsp [options]\n"
        "  -o, --output FILE     the package to write (an existing file needs --force)\n"
        "  --targets LIST        plugin priority, e.g. mali:any,cpu (default: all usable, or\n"
        "                        the deployment's)\n"
        "  --input-shape NAME=D0,D1,...  fix a symbolic input shape (a package's shapes are\n"
        "                        fixed)\n"
        "  --plugin-dir DIR      also search this absolute plugin directory (repeatable)\n"
        "  --pack FILE           take tuned configs from exactly this pack (repeatable)\n"
        "  --no-packs            no tuned packs: the schedules' heuristics only\n"
        "  --precision P         fp32 (default), fp16 or fp16-acc32\n"
        "  --mixed-precision     with fp16/fp16-acc32: keep the pass's fp32 nodes in fp32\n"
        "  --allow-fallback      move work a named target cannot compile to the next target\n"
        "  --force               replace an existing output file\n"
        "  --json                print one JSON object describing the package\n"
        "  --memory-limit BYTES  refuse models needing more (e.g. 4G)\n"
        "  --sign KEY.key        sign the package with this secret key (tessera keygen)\n"
        "  --trusted-key KEY     use only packs signed by KEY (ed25519:<hex> or an absolute\n"
        "                        .pub file; repeatable)\n"
        "The package runs where it was planned: on another device, driver or plugin version\n"
        "`tessera run MODEL.tsp` refuses it with the reason unless told to plan it again.\n",
        args.flag("help"));
  }
  apply_memory_limit_option(args);
  // The key is read before the work, so a wrong path fails at once.
  std::optional<SecretKey> key;
  if (args.has("sign")) {
    const std::string key_file = args.get("sign");
    key = parse_secret_key(read_file(key_file, "secret key", 4096), key_file);
  }
  const std::string source = args.positionals()[0];
  if (is_package_file(source)) {
    throw Error(source +
                " is already a package; compile the ONNX model or deployment it was "
                "made from");
  }
  Workload workload = load_workload(source, args.get("targets", ""),
                                    parse_input_shapes(args.get_all("input-shape")));
  apply_model_options(workload, args);
  // A package runs the shapes it was planned for, so an open dim is never fixed silently (to
  // the placeholder 1 of a symbolic batch): the user names the size.
  std::string open;
  for (ValueId id : workload.graph.inputs) {
    const Value& v = workload.graph.value(id);
    if (v.open_dims.empty() || workload.input_shapes.count(v.name)) continue;
    open += (open.empty() ? "'" : ", '") + v.name + "' " + open_shape_str(v);
  }
  if (!open.empty()) {
    throw Error(source + ": input(s) " + open +
                " have open dimensions ('?'), and a package is planned for fixed shapes: give "
                "each its shape with --input-shape NAME=D0,D1,... (or the deployment's inputs:)");
  }
  if (!workload.graph.value_inputs.empty()) {
    throw Error(source + ": its shapes depend on the values of inputs (" +
                workload.graph.input_names() +
                "), so it cannot be compiled to fixed shapes; run the ONNX model instead");
  }
  const SessionOptions options = session_options(workload);
  const std::unique_ptr<Session> session = make_session(workload, options);
  Package package = package_from_session(*session);
  package.source_model = workload.model_path;
  std::string command = "tessera";
  for (int i = 0; i < argc; ++i) command += std::string(" ") + argv[i];
  package.created_by = command;
  if (key) sign_package(package, *key);
  write_package(package, out, args.flag("force"));

  std::map<std::string, int> configs;  // "pack", "heuristic"
  for (const PackageNode& n : package.nodes)
    ++configs[n.config.schedule.empty() ? "heuristic" : "tuned"];
  int64_t weight_bytes = 0;
  for (const Value& v : package.graph.values) {
    if (v.constant) weight_bytes += static_cast<int64_t>(v.constant->nbytes());
  }
  if (args.flag("json")) {
    std::string targets;
    for (const PackageTarget& t : package.targets) {
      targets += std::string(targets.empty() ? "" : ", ") + "{\"spec\": " + json_string(t.spec) +
                 ", \"plugin\": " + json_string(t.plugin) +
                 ", \"plugin_version\": " + json_string(t.plugin_version) +
                 ", \"device\": " + json_string(t.device) +
                 ", \"pack\": " + json_string(t.pack_file) + "}";
    }
    std::printf(
        "{\"package\": %s, \"model\": %s, \"precision\": %s, \"nodes\": %zu, \"tuned_nodes\": %d, "
        "\"weight_bytes\": %lld, \"targets\": [%s], \"nodes_by_plugin\": %s}\n",
        json_string(out).c_str(), json_string(workload.model_path).c_str(),
        json_string(package.precision).c_str(), package.nodes.size(), configs["tuned"],
        static_cast<long long>(weight_bytes), targets.c_str(),
        json_string(nodes_per_plugin_text(session->plan())).c_str());
    return 0;
  }
  std::printf("wrote %s: %zu nodes (%s), precision %s, %.1f MB of weights\n", out.c_str(),
              package.nodes.size(), nodes_per_plugin_text(session->plan()).c_str(),
              package.precision.c_str(), static_cast<double>(weight_bytes) / 1e6);
  if (key) std::printf("  signed with %s\n", key->public_key().text().c_str());
  for (const PackageTarget& t : package.targets) {
    std::printf("  target %s: %s %s on '%s' (driver %s), configs from %s\n", t.spec.c_str(),
                t.plugin.c_str(), t.plugin_version.c_str(), t.device.c_str(), t.driver.c_str(),
                t.pack_file.empty() ? "the schedules' heuristics" : t.pack_file.c_str());
  }
  std::printf("  %d node(s) with a tuned config, %d on the plugins' heuristics\n", configs["tuned"],
              configs["heuristic"]);
  for (const std::string& w : session->plan().warnings) std::printf("warning: %s\n", w.c_str());
  return 0;
}

}  // namespace tessera::cli
