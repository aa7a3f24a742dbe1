// Writes an in-memory tessera::Graph (a differential case) as an ONNX model file, so that a peer
// runtime (ONNX Runtime) can compute the case's values independently of Tessera's kernels.
#pragma once

#include <string>

#include "tessera/graph.hpp"

namespace tessera::test {

// Graph inputs become ONNX inputs, constants without a producing node become initializers, graph
// outputs keep their inferred dtype and shape. Throws tessera::Error naming the node and
// attribute for anything ONNX cannot express, and the path when the file cannot be written.
void write_graph_as_onnx(const Graph& graph, const std::string& path);

}  // namespace tessera::test
