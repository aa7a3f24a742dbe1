// ONNX import: a ModelProto (file or bytes) becomes a Graph with shapes inferred and
// shape-computation subgraphs folded to constants.
#pragma once

#include <map>
#include <string>

#include "tessera/graph.hpp"

namespace tessera {

struct ImportOptions {
  // Fixes symbolic or unknown input dimensions: input name -> full shape. Inputs not listed must
  // have fully static shapes in the model, except that a symbolic first (batch) dim becomes 1.
  std::map<std::string, Shape> input_shapes;
  // Run shape inference and constant folding after parsing (off only for tests of the parser).
  bool prepare = true;
};

// Reads `path`. External data files are resolved relative to the model's directory and must stay
// inside it. Throws tessera::Error naming the file (and node, where one is involved).
Graph import_onnx_file(const std::string& path, const ImportOptions& options = {});

// The ONNX model at `path` as one self-contained file's bytes: tensors kept in external data files
// (torch's exporter writes large weights beside the model) are read, checked as import checks
// them, and moved into the model; a model without external data comes back byte for byte. For
// shipping a model to another machine (the tuning farm's agents).
std::string self_contained_onnx(const std::string& path);

// Parses serialized ModelProto bytes. `source` names the model in messages; `base_dir` is where
// external data lives ("" forbids external data).
Graph import_onnx_bytes(const std::string& bytes, const std::string& source,
                        const std::string& base_dir, const ImportOptions& options = {});

// Reads one serialized TensorProto file (the input_0.pb / output_0.pb files of ONNX test data
// sets). Raw and typed data are accepted; external data is not. Throws tessera::Error naming the
// file.
Tensor read_onnx_tensor_file(const std::string& path);

}  // namespace tessera
