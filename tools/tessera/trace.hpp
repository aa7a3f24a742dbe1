// `bench --trace FILE.json`: the measured runs as a Chrome trace (the JSON "Trace Event Format"
// that chrome://tracing and ui.perfetto.dev open), so a user can see where a run's time goes.
#pragma once

#include <string>
#include <vector>

#include "tessera/session.hpp"

namespace tessera::cli {

// One measured run: when it began (us from the first run's start), how long it took, and its
// regions' profile (Session::profile()).
struct TracedRun {
  double start_us = 0.0;
  double duration_us = 0.0;
  std::vector<RegionProfile> regions;
};

// What the trace says about the run as a whole (its metadata).
struct TraceInfo {
  std::string model, description, precision;
  int threads = 0;
};

// The trace as JSON text: one track per plugin (its device queue), a complete event per run,
// per region (args: plugin, device, node count, the partitioner's estimate) and per node where
// the plugin times nodes (args: op, the placement reason, the schedule config and whether it
// came from a pack), laid out at their measured times; the plan's targets, packs and warnings in
// the trace's metadata.
std::string chrome_trace(const ExecutionPlan& plan, const std::vector<TracedRun>& runs,
                         const TraceInfo& info);

}  // namespace tessera::cli
