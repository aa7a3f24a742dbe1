// x86 micro-architecture names from CPUID's vendor, family and model (as /proc/cpuinfo prints
// them). The cpu plugin appends the name to its device name, so a pack tuned on one generation is
// not applied to another behind the same model string: virtual machines report "AMD EPYC" for
// Zen 4 and Zen 5 alike, which differ in 512-bit FMA ports.
#pragma once

#include <string>

namespace tessera::cpu {

// "Zen 5", "Emerald Rapids", ...; "family F model M" for a part (or vendor) not in the table. ARM
// CPUs print no family, so the plugin names them from their implementer and part instead.
std::string x86_microarchitecture(const std::string& vendor, long family, long model);

}  // namespace tessera::cpu
