// Broken test plugin: a raw C slot that lets a C++ exception escape (undefined by the ABI; the
// host's last-resort try/catch must still turn it into a refusal).
#include <stdexcept>

#include "raw_stubs.hpp"

namespace {
tsr_status probe_throws(tsr_instance, const char*, tsr_device_info*, int32_t, int32_t*,
                        tsr_message) {
  throw std::runtime_error("raw probe exploded");
}
}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t, uint32_t) {
  static tsr_plugin t = [] {
    tsr_plugin p = raw_stubs::table("rawthrow");
    p.probe_devices = probe_throws;
    return p;
  }();
  return &t;
}
