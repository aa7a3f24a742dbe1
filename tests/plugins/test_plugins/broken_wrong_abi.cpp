// Broken test plugin: claims ABI major TESSERA_PLUGIN_ABI_MAJOR + 1.
#include "raw_stubs.hpp"

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t, uint32_t) {
  static tsr_plugin t = [] {
    tsr_plugin p = raw_stubs::table("wrongabi");
    p.abi_major = TESSERA_PLUGIN_ABI_MAJOR + 1;
    return p;
  }();
  return &t;
}
