// Fuzz harness: ONNX model bytes through what `tessera plan` does before it asks any plugin:
// import (protobuf parse, graph checks, initializers and external data) and the standard
// preparation (shape inference, constant folding with the reference kernels, dead-node removal).
#include <string>

#include "fuzz_target.hpp"
#include "tessera/onnx_import.hpp"

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR must name the source tree (tests/fuzz/CMakeLists.txt sets it)"
#endif

namespace {
// The model "lives" in tests/fuzz/external/, which holds one small weights.bin, so external-data
// references (location, offset, length, the stay-inside-the-directory check) are exercised on
// a real file that never changes.
const std::string kModelDir = TESSERA_SOURCE_DIR "/tests/fuzz/external";
}  // namespace

TESSERA_FUZZ_TARGET(onnx) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  return tessera::fuzz::run_input([&] {
    const tessera::Graph graph =
        tessera::import_onnx_bytes(bytes, kModelDir + "/model.onnx", kModelDir);
    (void)graph;
  });
}
