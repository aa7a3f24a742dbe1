// The adreno plugin's schedules: each kernel variant with its knob space, described once as data
// (schedules.cpp). Compile reads them through default_config(); a tuner would enumerate them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera_opencl/lowering.hpp"

namespace tessera::adreno {

using opencl::support::Config;
using opencl::support::Knob;
using opencl::support::Schedule;

const std::vector<Schedule>& all_schedules();
// Throws tessera::Error naming the id if unknown.
const Schedule& schedule(const std::string& id);

// Default knob values: wg_x from the device limits and the work along dim 0, every other knob
// from `overrides` or its first candidate.
Config default_config(const std::string& schedule_id, const opencl::DeviceInfo& device,
                      int64_t work_dim0, const opencl::ConfigOverrides& overrides = {});

using opencl::apply_forced_knobs;
using opencl::ForcedKnobs;
using opencl::kKnobOptionPrefix;
// "" when target option `name` = `value` forces a knob some adreno schedule has to one of its
// candidates, else why not (naming the option).
std::string check_knob_option(const std::string& name, const std::string& value);

}  // namespace tessera::adreno
