// libtessera-runtime reads no ONNX and no YAML; libtessera does, and registers its importer and
// pack loader with the runtime as it loads. A process that linked the runtime alone, or whose
// linker dropped libtessera as unused (it only called runtime symbols), gets it here: the first
// time a session wants packs or the C API an ONNX model, the runtime opens libtessera from its
// own directory (then the loader's search path), if it is installed.
#pragma once

#include <string>

namespace tessera {
class Graph;
struct SessionOptions;
}  // namespace tessera

namespace tessera::detail {

struct PackSources;  // plugins/pack_apply.hpp

// What libtessera lends the runtime; each of its parts fills its entry as the library loads.
struct ImporterHooks {
  PackSources (*load_pack_sources)(const SessionOptions& options) = nullptr;  // src/yaml
  Graph (*import_model)(const std::string& path) = nullptr;                   // src/onnx
};
ImporterHooks& importer_hooks();

// Opens libtessera once per process (later calls return at once), which fills the hooks.
// Returns "" when it is loaded, else why not (for messages).
std::string load_importer_library();

}  // namespace tessera::detail
