// Test plugin whose every free-text answer holds control characters: an ESC sequence and a
// newline in its version, description, device vendor, name, driver and features, in the reason
// it refuses a node for and in its compile failure message. It loads (its name is a plain
// identifier); core must keep and print that text escaped. It claims Relu, so a session compiles
// a region on it.
#include "raw_stubs.hpp"

namespace {

tsr_status probe_odd(tsr_instance, const char*, tsr_device_info* out, int32_t capacity,
                     int32_t* count, tsr_message) {
  if (capacity < 1) return TSR_INVALID_ARGUMENT;
  out[0] = tsr_device_info{};
  out[0].struct_size = sizeof(tsr_device_info);
  out[0].id = "odd0";
  out[0].vendor = "vendor\x1b[2J";
  out[0].name = "device\nname";
  out[0].driver_version = "driver\x1b]0;title\x07";
  out[0].kind = "cpu";
  out[0].features = "f1\rf2";
  out[0].score = 5;
  *count = 1;
  return TSR_OK;
}

tsr_status query_relu(tsr_instance, const char*, const tsr_region* region, int32_t node,
                      tsr_support* s) {
  s->supported = std::strcmp(region->nodes[node].op_type, "Relu") == 0 ? 1 : 0;
  s->cost_us = 0.001;
  std::strcpy(s->reason, s->supported ? "" : "\x1b[1Anot\nmine");
  return TSR_OK;
}

tsr_status compile_fails_oddly(tsr_instance, const char*, const tsr_region*,
                               const tsr_compile_options*, tsr_region_handle*, tsr_message m) {
  raw_stubs::say(m, "\x1b[31mred\nforged line");
  return TSR_COMPILE_FAILED;
}

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t, uint32_t) {
  static const tsr_plugin t = [] {
    tsr_plugin p = raw_stubs::table("controltext");
    p.version = "1\x1b[0m";
    p.description = "first line\nsecond line";
    p.probe_devices = probe_odd;
    p.query_node = query_relu;
    p.compile_region = compile_fails_oddly;
    return p;
  }();
  return &t;
}
