// Minimal raw-C slots shared by the deliberately broken test plugins (no helper involved).
#pragma once

#include <cstring>

#include "tessera/plugin_abi.h"

namespace raw_stubs {

inline void say(tsr_message m, const char* text) {
  if (m.text && m.capacity > 0) {
    std::strncpy(m.text, text, m.capacity - 1);
    m.text[m.capacity - 1] = '\0';
  }
}

// Stateless stubs: every instance is the same non-null token.
inline tsr_status create_token(const tsr_host_api*, const tsr_target_option*, int32_t,
                               tsr_instance* instance, tsr_message) {
  static char token;
  *instance = reinterpret_cast<tsr_instance>(&token);
  return TSR_OK;
}

inline void destroy_nothing(tsr_instance) {}

inline tsr_status probe_one(tsr_instance, const char*, tsr_device_info* out, int32_t capacity,
                            int32_t* count, tsr_message) {
  if (capacity < 1) return TSR_INVALID_ARGUMENT;
  out[0] = tsr_device_info{};
  out[0].struct_size = sizeof(tsr_device_info);
  out[0].id = "stub0";
  out[0].vendor = "tests";
  out[0].name = "stub";
  out[0].kind = "cpu";
  out[0].score = 1;
  *count = 1;
  return TSR_OK;
}

inline tsr_status query_never(tsr_instance, const char*, const tsr_region*, int32_t,
                              tsr_support* s) {
  s->supported = 0;
  std::strcpy(s->reason, "stub supports nothing");
  return TSR_OK;
}

inline tsr_status compile_never(tsr_instance, const char*, const tsr_region*,
                                const tsr_compile_options*, tsr_region_handle*, tsr_message m) {
  say(m, "stub compiles nothing");
  return TSR_UNSUPPORTED;
}

inline tsr_status execute_never(tsr_region_handle, const void* const*, void* const*,
                                tsr_message m) {
  say(m, "stub executes nothing");
  return TSR_ERROR;
}

inline void release_nothing(tsr_region_handle) {}

inline tsr_plugin table(const char* name) {
  return tsr_plugin{sizeof(tsr_plugin),
                    TESSERA_PLUGIN_ABI_MAJOR,
                    TESSERA_PLUGIN_ABI_MINOR,
                    name,
                    "0",
                    "broken test plugin",
                    create_token,
                    destroy_nothing,
                    probe_one,
                    query_never,
                    compile_never,
                    execute_never,
                    release_nothing,
                    nullptr,
                    nullptr,
                    nullptr,
                    nullptr,
                    nullptr,
                    nullptr,
                    nullptr};
}

}  // namespace raw_stubs
