// Broken test plugin: built for plugin ABI 1.2, as a plugin compiled against the 1.x headers
// behaves. Its entry refuses any other host major (returns NULL) and, asked as a 1.x host, answers
// a 1.x table. Only the leading fields every ABI shares are declared here; core must read no more
// of it and refuse the plugin with a reason that says how to port it.
#include <cstdint>

#include "tessera/plugin_abi.h"

namespace {
struct LegacyTableHead {
  uint32_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;
  const char* version;
  const char* description;
};
const LegacyTableHead kTable = {sizeof(LegacyTableHead),     1, 2, "legacy", "0.9",
                                "a plugin built for ABI 1.2"};
}  // namespace

// Declared with the entry's real type (core calls it through that type); the 1.x table is
// handed out as the pointer type this ABI names, as a 1.x plugin's entry would.
extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t host_abi_major,
                                                                        uint32_t) {
  return host_abi_major == 1 ? reinterpret_cast<const tsr_plugin*>(&kTable) : nullptr;
}
