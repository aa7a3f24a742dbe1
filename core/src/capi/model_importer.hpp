// How the C API (in libtessera-runtime) opens an ONNX model: through the importer libtessera
// registers when it loads. A process with the runtime alone opens packages only.
#pragma once

#include <string>

#include "tessera/graph.hpp"

namespace tessera::detail {

using ModelImporter = Graph (*)(const std::string& path);
void set_model_importer(ModelImporter importer);
ModelImporter model_importer();  // nullptr when no importer is loaded

}  // namespace tessera::detail
