// Graph passes run after import.
#pragma once

#include "tessera/graph.hpp"

namespace tessera {

// Infers dtype and shape of every value in topological order; throws naming the node on error.
void infer_shapes(Graph& graph);

// Evaluates every node whose inputs are all constant with the reference kernels (Shape nodes
// count as constant once their input shape is known) and replaces it by constants. This is what
// folds the Shape -> Gather -> Concat -> Reshape chains PyTorch's exporter emits.
// Nodes whose outputs would exceed `max_elements` per output are left in place.
void fold_constants(Graph& graph, int64_t max_elements = int64_t{1} << 24);

// infer_shapes + fold_constants + remove_dead_nodes, the standard preparation after import.
void prepare_graph(Graph& graph);

}  // namespace tessera
