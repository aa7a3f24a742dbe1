// Broken test plugin: its probe names two devices with one id, so core could not tell them apart
// when it passes the id back; core refuses the plugin naming the id.
#include "raw_stubs.hpp"

namespace {
tsr_status probe_twins(tsr_instance instance, const char* selector, tsr_device_info* out,
                       int32_t capacity, int32_t* count, tsr_message m) {
  if (capacity < 2) return TSR_INVALID_ARGUMENT;
  const tsr_status st = raw_stubs::probe_one(instance, selector, out, capacity, count, m);
  out[1] = out[0];
  out[1].name = "stub twin";
  *count = 2;
  return st;
}
}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t, uint32_t) {
  static tsr_plugin t = [] {
    tsr_plugin p = raw_stubs::table("twinids");
    p.probe_devices = probe_twins;
    return p;
  }();
  return &t;
}
