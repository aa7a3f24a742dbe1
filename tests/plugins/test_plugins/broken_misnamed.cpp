// Broken test plugin: its table gives another name than its file does. Built as
// libtessera-plugin-impostor.so calling itself "cpu" (it would replace the bundled cpu plugin,
// past the shadowing check, which runs on file names), and as libtessera-plugin-escname.so with
// an ESC sequence in its name (it would recolour every line that prints it). Core refuses both.
#include "raw_stubs.hpp"

#ifdef MISNAMED_WITH_ESCAPE
#define MISNAMED_TABLE_NAME "esc\x1b[31mname"
#endif

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t, uint32_t) {
  static const tsr_plugin t = raw_stubs::table(MISNAMED_TABLE_NAME);
  return &t;
}
