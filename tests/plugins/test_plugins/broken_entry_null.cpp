// Broken test plugin: the entry refuses to load (returns NULL).
#include "tessera/plugin_abi.h"

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t, uint32_t) {
  return nullptr;
}
