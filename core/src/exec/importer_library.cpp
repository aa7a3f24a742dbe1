// Opening libtessera on demand (see importer_library.hpp).
#include "exec/importer_library.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#ifndef TESSERA_CORE_LIBRARY
#define TESSERA_CORE_LIBRARY "libtessera.so"
#endif

namespace tessera::detail {

ImporterHooks& importer_hooks() {
  static ImporterHooks hooks;
  return hooks;
}

std::string load_importer_library() {
  static std::once_flag once;
  static std::string outcome;
  std::call_once(once, [] {
    std::string tried;
    Dl_info self{};
    if (dladdr(reinterpret_cast<const void*>(&load_importer_library), &self) != 0 &&
        self.dli_fname != nullptr) {
      const std::string beside =
          (std::filesystem::path(self.dli_fname).parent_path() / TESSERA_CORE_LIBRARY).string();
      // Kept open for the life of the process: its registrations point into it.
      if (dlopen(beside.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) return;
      tried = dlerror();
    }
    if (dlopen(TESSERA_CORE_LIBRARY, RTLD_NOW | RTLD_GLOBAL) != nullptr) return;
    const char* error = dlerror();
    outcome = std::string(TESSERA_CORE_LIBRARY) + " could not be opened (" +
              (error != nullptr ? error : "unknown error") +
              (tried.empty() ? "" : "; beside libtessera-runtime: " + tried) + ")";
  });
  return outcome;
}

}  // namespace tessera::detail
