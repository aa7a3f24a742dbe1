// The mali plugin's schedules: each kernel variant with its knob space, described once as data.
// Compile reads them (through the default heuristic or a given config); the tuner and the tests
// enumerate the same tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera_opencl/plugin_support.hpp"

namespace tessera::mali {

// The schedule description types shared by the OpenCL plugins.
using opencl::support::Config;
using opencl::support::default_wg_x;
using opencl::support::Knob;
using opencl::support::round_up;
using opencl::support::Schedule;

// Every schedule of the plugin.
const std::vector<Schedule>& all_schedules();
// Throws tessera::Error naming the id if unknown.
const Schedule& schedule(const std::string& id);

// The default of the `vec` knob (floats per work-item): 4, one 128-bit load, when a candidate
// (Mali's load/store units move 128 bits per lane and cycle); else the smallest candidate. 0 when
// the schedule has no `vec` knob. Every candidate is correct for every size (the kernels handle
// tails), so the default needs no shape check.
int32_t default_vec(const Schedule& s);

}  // namespace tessera::mali
