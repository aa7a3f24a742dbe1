// The adreno plugin's schedules: each kernel variant with its knob space, described once as data
// (schedules.cpp). Compile reads them through default_config(); a tuner would enumerate them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera_opencl/plugin_support.hpp"

namespace tessera::adreno {

using opencl::support::Config;
using opencl::support::Knob;
using opencl::support::Schedule;

const std::vector<Schedule>& all_schedules();
// Throws tessera::Error naming the id if unknown.
const Schedule& schedule(const std::string& id);

// Default knob values: wg_x from the device limits and the work along dim 0, every other knob
// from `overrides` or its first candidate. Then $TESSERA_ADRENO_KNOBS ("opw=2,wg_x=8") forces
// knobs of every schedule that has them, for experiments and for tests that sweep the knob
// spaces; a value that is not a candidate throws.
Config default_config(const std::string& schedule_id, const opencl::DeviceInfo& device,
                      int64_t work_dim0,
                      const std::vector<std::pair<const char*, int32_t>>& overrides = {});

}  // namespace tessera::adreno
