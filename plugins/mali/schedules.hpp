// The mali plugin's schedules: each kernel variant with its knob space, described once as data.
// Compile reads them (through the default heuristic or a given config); the tuner and the tests
// enumerate the same tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera_opencl/runtime.hpp"

namespace tessera::mali {

struct Knob {
  const char* name;
  std::vector<int32_t> candidates;
  // True when the knob is a build-time define (a new value means a new program build).
  bool build_time;
};

struct Schedule {
  const char* id;           // "conv2d.nchw.direct"
  const char* kernel_file;  // kernels/<file>
  const char* kernel_name;  // entry point in that file
  std::vector<Knob> knobs;
};

// One choice of knob values for a schedule, in the schedule's knob order.
struct Config {
  const Schedule* schedule = nullptr;
  std::vector<int32_t> values;
  int32_t get(const std::string& knob) const;  // throws if the schedule has no such knob
  std::string str() const;                     // "conv2d.nchw.direct{wg_x=16,outputs_per_item=4}"
};

// Every schedule of the plugin.
const std::vector<Schedule>& all_schedules();
// Throws tessera::Error naming the id if unknown.
const Schedule& schedule(const std::string& id);

// The default work-group width: the largest candidate of `wg_x` that divides into the device and
// kernel limits and does not exceed the work available along dim 0 (0 = let the driver pick).
int32_t default_wg_x(const Schedule& s, const opencl::DeviceInfo& device, int64_t work_dim0);

// The default of the `vec` knob (floats per work-item): 4, one 128-bit load, when a candidate
// (Mali's load/store units move 128 bits per lane and cycle); else the smallest candidate. 0 when
// the schedule has no `vec` knob. Every candidate is correct for every size (the kernels handle
// tails), so the default needs no shape check.
int32_t default_vec(const Schedule& s);

// Global size rounded up to a multiple of `local` (kernels guard against the overhang).
size_t round_up(size_t global, size_t local);

}  // namespace tessera::mali
