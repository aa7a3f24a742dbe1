// Runs a prepared graph node by node with the reference kernels, in the calling thread.
// This is the oracle for tests; the plugin-based Session is what applications use.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera {

// `inputs` maps graph input names to tensors whose dtype and shape must match the graph, except
// where the graph can be prepared for them (open dimensions, value inputs: see
// prepare_for_inputs).
// Returns the graph outputs in graph.outputs order. Throws naming the input or node on error.
std::vector<Tensor> run_reference(const Graph& graph, const std::map<std::string, Tensor>& inputs);

}  // namespace tessera
