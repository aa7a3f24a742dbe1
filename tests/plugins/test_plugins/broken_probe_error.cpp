// Broken test plugin: probe_devices returns an error status with a message.
#include "raw_stubs.hpp"

namespace {
tsr_status probe_fails(tsr_instance, const char*, tsr_device_info*, int32_t, int32_t* count,
                       tsr_message m) {
  *count = 0;
  raw_stubs::say(m, "no driver found (test)");
  return TSR_ERROR;
}
}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t, uint32_t) {
  static tsr_plugin t = [] {
    tsr_plugin p = raw_stubs::table("probeerror");
    p.probe_devices = probe_fails;
    return p;
  }();
  return &t;
}
