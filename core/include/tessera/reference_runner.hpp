// Runs a prepared graph (or one of its nodes) with the reference kernels, in the calling thread.
// This is the oracle for tests and the tuner; the plugin-based Session is what applications use.
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

// Runs one node of a prepared graph with its reference kernel (the oracle a tuner's measuring
// worker checks a candidate against). `inputs` holds one tensor per node input, in node.inputs
// order: nullptr where an optional input is absent, graph.value(id).constant for a constant.
// Returns one tensor per node output, shaped as the graph says (empty for an absent output).
// Throws naming the node on error.
std::vector<Tensor> run_reference_node(const Graph& graph, const Node& node,
                                       const std::vector<const Tensor*>& inputs);

}  // namespace tessera
