// `tessera plan MODEL.onnx [--targets LIST] [--pack FILE | --no-packs] [--json]
// [--dump-kernels DIR] [--dump-clml DIR]`: where each node runs and why, which tuned pack each
// device uses (level and reason) and where each node's schedule config comes from, the regions,
// and any fallback warnings, without running the model; optionally the OpenCL C sources the plan
// builds and each CLML subgraph as JSON (both through the compile's dump directory).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "cli.hpp"
#include "run_common.hpp"
#include "tessera/error.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/passes.hpp"
#include "tessera/session.hpp"

namespace tessera::cli {
namespace {

// Why nodes are not on the first target (the one the user put first, usually the GPU): one group
// per distinct reason that target gave, with the count and the op types, so that what keeps a
// model off the GPU reads as a short list instead of a scan of every node's line.
struct WhyNotGroup {
  std::string reason;
  int nodes = 0;
  std::set<std::string> ops;
};
struct WhyNotFirst {
  std::string target;  // "" when the plan has one target or every node is on the first
  int nodes = 0;
  std::vector<WhyNotGroup> groups;  // most nodes first
};

WhyNotFirst why_not_first(const ExecutionPlan& plan) {
  WhyNotFirst out;
  if (plan.targets.size() < 2) return out;
  const std::string first = plan.targets.front().substr(0, plan.targets.front().find(" -> "));
  std::map<std::string, WhyNotGroup> by_reason;
  for (const NodePlacement& n : plan.nodes) {
    if (n.target == first) continue;
    // The reason starts with the first target's verdict: "mali:any: <why> -> next: ...".
    std::string why = n.reason.substr(0, n.reason.find(" -> "));
    if (why.rfind(first + ": ", 0) == 0) why = why.substr(first.size() + 2);
    if (why.find("but this island") != std::string::npos) {
      why = "supported, but its island was merged back: with the boundary transfers it costs "
            "more there than on the next target";
    }
    WhyNotGroup& g = by_reason[why];
    g.reason = why;
    ++g.nodes;
    g.ops.insert(n.op_type);
    ++out.nodes;
  }
  if (out.nodes == 0) return out;
  out.target = first;
  for (auto& [why, g] : by_reason) out.groups.push_back(std::move(g));
  std::stable_sort(out.groups.begin(), out.groups.end(),
                   [](const WhyNotGroup& a, const WhyNotGroup& b) { return a.nodes > b.nodes; });
  return out;
}

std::string ops_text(const std::set<std::string>& ops) {
  std::string text;
  for (const std::string& op : ops) text += (text.empty() ? "" : ", ") + op;
  return text;
}

void print_why_not_first(const ExecutionPlan& plan) {
  const WhyNotFirst w = why_not_first(plan);
  if (w.target.empty()) return;
  std::printf("not on %s (the first target): %d of %zu node(s)\n", w.target.c_str(), w.nodes,
              plan.nodes.size());
  for (const WhyNotGroup& g : w.groups) {
    std::printf("  %4d  %s [%s]\n", g.nodes, g.reason.c_str(), ops_text(g.ops).c_str());
  }
}

std::string why_not_first_json(const ExecutionPlan& plan) {
  const WhyNotFirst w = why_not_first(plan);
  std::string groups;
  for (const WhyNotGroup& g : w.groups) {
    std::string ops;
    for (const std::string& op : g.ops) ops += (ops.empty() ? "" : ", ") + json_string(op);
    groups += std::string(groups.empty() ? "" : ", ") + "{\"reason\": " + json_string(g.reason) +
              ", \"nodes\": " + std::to_string(g.nodes) + ", \"ops\": [" + ops + "]}";
  }
  return "\"not_on_first_target\": {\"target\": " + json_string(w.target) +
         ", \"nodes\": " + std::to_string(w.nodes) + ", \"reasons\": [" + groups + "]}";
}

// One JSON object: the plan's summary (plan_json_members) and "nodes", one object per node on
// a line of its own (so a line-oriented tool can pick a node out).
void print_json(const ExecutionPlan& plan, const std::string& model, const std::string& precision) {
  std::printf("{%s, %s,\n\"nodes\": [\n", plan_json_members(plan, model, precision).c_str(),
              why_not_first_json(plan).c_str());
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const NodePlacement& n = plan.nodes[i];
    std::printf(
        "  {\"name\": %s, \"op_type\": %s, \"plugin\": %s, \"device\": %s, "
        "\"region\": %d, \"reason\": %s, \"config\": %s, \"estimate_us\": %.3f, "
        "\"estimate\": %s}%s\n",
        json_string(n.node).c_str(), json_string(n.op_type).c_str(), json_string(n.plugin).c_str(),
        json_string(n.device).c_str(), n.region, json_string(n.reason).c_str(),
        json_string(n.config).c_str(), n.estimate_us, json_string(n.estimate).c_str(),
        i + 1 < plan.nodes.size() ? "," : "");
  }
  std::printf("]}\n");
}

void print_table(const ExecutionPlan& plan) {
  std::printf("targets:\n");
  for (const std::string& t : plan.targets) std::printf("  %s\n", t.c_str());
  std::printf("\npacks:\n");
  for (const DevicePackPlan& p : plan.packs) {
    std::printf("  %s (%s):\n", p.target.c_str(), p.device.c_str());
    std::printf("    family: %s (%s)\n", p.family.empty() ? "none" : p.family.c_str(),
                p.family_reason.c_str());
    std::printf("    pack:   %s, level %s\n", p.pack_file.empty() ? "none" : p.pack_file.c_str(),
                p.level.c_str());
    std::printf("    why:    %s\n", p.reason.c_str());
  }
  std::printf("\n%-28s %-18s %-12s %6s  %s\n", "node", "op", "plugin", "region", "reason");
  for (const NodePlacement& n : plan.nodes) {
    std::printf("%-28s %-18s %-12s %6d  %s\n", n.node.c_str(), n.op_type.c_str(), n.plugin.c_str(),
                n.region, n.reason.c_str());
    if (!n.estimate.empty()) std::printf("%-28s estimate: %s\n", "", n.estimate.c_str());
    if (!n.config.empty()) std::printf("%-28s config: %s\n", "", n.config.c_str());
  }
  std::printf("\nregions: %zu\n", plan.regions.size());
  for (const RegionPlacement& r : plan.regions) {
    std::printf(
        "  region %d on %s (%s), %s: %zu node(s), %zu input(s), %zu output(s), est %.1f us\n", r.id,
        r.plugin.c_str(), r.device.c_str(), r.precision.c_str(), r.nodes.size(), r.inputs.size(),
        r.outputs.size(), r.estimated_us);
  }
  double total_us = 0;
  for (const RegionPlacement& r : plan.regions) total_us += r.estimated_us;
  std::printf(
      "estimated total: %.0f us (node estimates: work against each device family's "
      "throughput, targets/devices/*.yaml)\n",
      total_us);
  std::printf(
      "boundary values: %d in %d buffer(s), %zu bytes; %d of them device-resident in %d "
      "device buffer(s), %zu bytes\n",
      plan.boundary_values, plan.buffers, plan.buffer_bytes, plan.device_values,
      plan.device_buffers, plan.device_buffer_bytes);
  std::printf("nodes by plugin: %s\n", nodes_per_plugin_text(plan).c_str());
  print_why_not_first(plan);
  for (const std::string& w : plan.warnings) std::printf("warning: %s\n", w.c_str());
}

// The dumped files in `dir` (names only): kernel sources (.cl) and CLML subgraphs (.json).
std::set<std::string> dump_files(const std::filesystem::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string ext = entry.path().extension().string();
    if (ext == ".cl" || ext == ".json") names.insert(entry.path().filename().string());
  }
  return names;
}

// Creates DIR (made absolute: plugins get an absolute path) and returns it; `option` names the
// flag in errors.
std::filesystem::path prepare_dump_dir(const std::string& option, const std::string& arg) {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(arg, ec).lexically_normal();
  if (ec) throw Error(option + " " + arg + ": cannot make the path absolute: " + ec.message());
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw Error(option + " " + arg + ": cannot create directory '" + dir.string() +
                "': " + (ec ? ec.message() : "a file of that name exists") +
                " (pass a writable directory path)");
  }
  return dir;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  Args args(argc, argv,
            {"targets", "input-shape", "plugin-dir", "pack", "precision", "dump-kernels",
             "dump-clml", kMemoryLimitOption},
            {"json", "no-packs", "allow-fallback", "mixed-precision", "help"});
  if (args.flag("help") || args.positionals().size() != 1) {
    return print_usage(
        "usage: tessera plan MODEL.onnx|DEPLOY.yaml [options]\n"
        "  --targets LIST        plugin priority, e.g. mali:any,reference (default: all usable);\n"
        "                        target options in brackets: 'mali:any[layout=nchw],reference'\n"
        "  --input-shape NAME=D0,D1,...  fix a symbolic input shape\n"
        "  --plugin-dir DIR      also search this absolute plugin directory (repeatable)\n"
        "  --pack FILE           use exactly this tuned pack (repeatable)\n"
        "  --no-packs            no tuned packs: the schedules' heuristics only\n"
        "  --precision P         fp32 (default), fp16 or fp16-acc32\n"
        "  --mixed-precision     with fp16/fp16-acc32: the mixed-precision pass keeps some\n"
        "                        nodes in fp32 (shown per region and in --json fp32_nodes)\n"
        "  --allow-fallback      skip a named target that cannot run, or move work that fails\n"
        "                        to compile on it to the next target (default: an error)\n"
        "  --json                print one JSON object: model, precision, targets, packs,\n"
        "                        regions, nodes_by_plugin, warnings and nodes (one per line)\n"
        "  --memory-limit BYTES  refuse models needing more (e.g. 4G; default: physical memory)\n"
        "  --dump-kernels DIR    write the OpenCL C source of every kernel program the plan\n"
        "                        builds (mali, adreno) into DIR as <kernel>.cl; an existing\n"
        "                        different file is kept and the new one named <kernel>.2.cl\n"
        "  --dump-clml DIR       write each CLML subgraph the plan compiles (clml target) into\n"
        "                        DIR as clml-subgraph-<k>.json: its ops with their attributes,\n"
        "                        tensor shapes and layouts (k: the first number not taken)\n",
        args.flag("help"));
  }
  apply_memory_limit_option(args);
  Workload workload = load_workload(args.positionals()[0], args.get("targets", ""),
                                    parse_input_shapes(args.get_all("input-shape")));
  apply_model_options(workload, args);
  // `run` and `bench` plan such a graph from their inputs; a plan without inputs needs sizes.
  std::string unsized;
  for (ValueId id : workload.graph.unsized_inputs) {
    const Value& v = workload.graph.value(id);
    unsized += (unsized.empty() ? "'" : ", '") + v.name + "' " + open_shape_str(v);
  }
  if (!unsized.empty()) {
    throw Error(args.positionals()[0] + ": input(s) " + unsized +
                " have open dimensions ('?') with no size to plan for: give each a shape with "
                "--input-shape NAME=D0,D1,...");
  }
  SessionOptions options = session_options(workload);
  const std::string model = workload.model_path, precision = workload.precision;
  std::filesystem::path dump_dir;
  std::set<std::string> before;
  // Both dumps travel in the compile's one dump directory; each plugin writes its own kind.
  for (const char* option : {"dump-kernels", "dump-clml"}) {
    if (args.get(option).empty()) continue;
    const std::filesystem::path dir =
        prepare_dump_dir(std::string("--") + option, args.get(option));
    if (!dump_dir.empty() && dir != dump_dir) {
      throw Error("--dump-kernels and --dump-clml name different directories ('" +
                  dump_dir.string() + "', '" + dir.string() + "'); give both the same one");
    }
    dump_dir = dir;
  }
  if (!dump_dir.empty()) {
    options.dump_kernels_dir = dump_dir.string();
    before = dump_files(dump_dir);
  }
  const std::unique_ptr<Session> made = make_session(workload, options);
  const Session& session = *made;
  if (args.flag("json")) {
    print_json(session.plan(), model, precision);
  } else {
    print_table(session.plan());
  }
  if (!dump_dir.empty()) {
    // Plugins never rewrite a file, so the new names are exactly what this plan wrote; sources
    // already there with identical content are reused silently.
    std::FILE* out = args.flag("json") ? stderr : stdout;
    std::vector<std::string> written;
    for (const std::string& name : dump_files(dump_dir)) {
      if (!before.count(name)) written.push_back((dump_dir / name).string());
    }
    std::fprintf(out, "%sdumped: %zu new file(s) in %s%s\n", args.flag("json") ? "" : "\n",
                 written.size(), dump_dir.string().c_str(),
                 written.empty() ? " (none new: identical kernel sources were already there, or "
                                   "no target builds OpenCL programs or CLML subgraphs)"
                                 : "");
    for (const std::string& path : written) std::fprintf(out, "  %s\n", path.c_str());
  }
  return 0;
}

}  // namespace tessera::cli
