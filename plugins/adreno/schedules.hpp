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
// from `overrides` or its first candidate.
Config default_config(const std::string& schedule_id, const opencl::DeviceInfo& device,
                      int64_t work_dim0,
                      const std::vector<std::pair<const char*, int32_t>>& overrides = {});

// Knob values a target forces on every schedule that has the knob (the options `knob.<name>`,
// e.g. `knob.opw: 2`), for experiments and for tests that sweep the knob spaces.
using ForcedKnobs = std::vector<std::pair<std::string, int32_t>>;
inline constexpr const char* kKnobOptionPrefix = "knob.";
// "" when target option `name` = `value` forces a knob some schedule has to one of its
// candidates, else why not (naming the option).
std::string check_knob_option(const std::string& name, const std::string& value);
// `config` with the forced knobs it has; a value that is not a candidate of its schedule throws
// tessera::Error naming the option and the schedule.
Config apply_forced_knobs(Config config, const ForcedKnobs& forced);

}  // namespace tessera::adreno
