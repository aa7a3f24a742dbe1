#include "trace.hpp"

#include <cstdio>
#include <map>

#include "cli.hpp"

namespace tessera::cli {
namespace {

// One complete ("X") event.
std::string complete_event(const std::string& name, const std::string& category, int tid, double ts,
                           double dur, const std::string& args) {
  return "{\"name\": " + json_string(name) + ", \"cat\": " + json_string(category) +
         ", \"ph\": \"X\", \"pid\": 1, \"tid\": " + std::to_string(tid) +
         ", \"ts\": " + json_number(ts) + ", \"dur\": " + json_number(dur) + ", \"args\": {" +
         args + "}}";
}

std::string metadata_event(const char* what, int tid, const std::string& name) {
  return std::string("{\"name\": \"") + what +
         "\", \"ph\": \"M\", \"pid\": 1, \"tid\": " + std::to_string(tid) +
         ", \"args\": {\"name\": " + json_string(name) + "}}";
}

}  // namespace

std::string chrome_trace(const ExecutionPlan& plan, const std::vector<TracedRun>& runs,
                         const TraceInfo& info) {
  std::map<std::string, const NodePlacement*> node_of;
  for (const NodePlacement& n : plan.nodes) node_of[n.node] = &n;
  // Track 0 holds the runs; each plugin gets its own track (its device's queue), in the order
  // the regions first use them.
  std::map<std::string, int> track_of;
  std::vector<std::string> events = {
      metadata_event("process_name", 0, "tessera bench " + info.model),
      metadata_event("thread_name", 0, "runs")};
  for (const RegionPlacement& r : plan.regions) {
    if (track_of.count(r.plugin)) continue;
    const int tid = static_cast<int>(track_of.size()) + 1;
    track_of[r.plugin] = tid;
    events.push_back(metadata_event("thread_name", tid, r.plugin + " (" + r.device + ")"));
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const TracedRun& run = runs[i];
    events.push_back(complete_event("run " + std::to_string(i + 1), "run", 0, run.start_us,
                                    run.duration_us,
                                    "\"regions\": " + std::to_string(run.regions.size())));
    for (const RegionProfile& rp : run.regions) {
      if (rp.region < 0 || static_cast<size_t>(rp.region) >= plan.regions.size()) continue;
      const RegionPlacement& region = plan.regions[static_cast<size_t>(rp.region)];
      const int tid = track_of[region.plugin];
      const double start = run.start_us + rp.start_us;
      events.push_back(complete_event(
          "region " + std::to_string(region.id) + " (" + region.plugin + ")", "region", tid, start,
          rp.time_us,
          "\"plugin\": " + json_string(region.plugin) + ", \"device\": " +
              json_string(region.device) + ", \"nodes\": " + std::to_string(region.nodes.size()) +
              ", \"estimated_us\": " + json_number(region.estimated_us) +
              ", \"inputs_from_host\": " + json_string_list(region.inputs) +
              ", \"outputs_to_host\": " + json_string_list(region.outputs)));
      // Node times come from the plugin, in region order, one after another inside the region.
      double at = start;
      for (size_t n = 0; n < rp.node_times_us.size() && n < region.nodes.size(); ++n) {
        const auto it = node_of.find(region.nodes[n]);
        std::string args = "\"region\": " + std::to_string(region.id);
        if (it != node_of.end()) {
          const NodePlacement& p = *it->second;
          args += ", \"op\": " + json_string(p.op_type) +
                  ", \"placement\": " + json_string(p.reason) +
                  ", \"estimate\": " + json_string(p.estimate) +
                  ", \"config\": " + json_string(p.config.empty() ? "none" : p.config);
        }
        events.push_back(
            complete_event(region.nodes[n], "node", tid, at, rp.node_times_us[n], args));
        at += rp.node_times_us[n];
      }
    }
  }
  std::vector<std::string> packs;
  for (const DevicePackPlan& p : plan.packs) {
    packs.push_back(p.target + ": " + (p.pack_file.empty() ? "none" : p.pack_file) + " (" +
                    p.level + ")");
  }
  std::string out =
      "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"model\": " + json_string(info.model) +
      ", \"workload\": " + json_string(info.description) +
      ", \"precision\": " + json_string(info.precision) +
      ", \"threads\": " + std::to_string(info.threads) +
      ", \"targets\": " + json_string_list(plan.targets) +
      ", \"packs\": " + json_string_list(packs) +
      ", \"warnings\": " + json_string_list(plan.warnings) + "},\n\"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) out += (i ? ",\n" : "") + events[i];
  return out + "\n]}\n";
}

}  // namespace tessera::cli
