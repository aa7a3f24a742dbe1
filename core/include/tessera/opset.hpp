// The opsets of the default ONNX domain Tessera implements: the importer refuses a model outside
// them, and the package reader a package whose graph claims one (the op files' semantics are
// those of these opsets).
#pragma once

#include <cstdint>

namespace tessera {

constexpr int64_t kMinOpset = 7;
// Opsets 19-21 changed none of the supported ops' semantics beyond what the op files implement
// (Pad wrap, AveragePool dilations, Resize half_pixel_symmetric/antialias) or new element types,
// which import rejects by name; the ONNX node tests at those opsets run and pass.
constexpr int64_t kMaxOpset = 21;

}  // namespace tessera
