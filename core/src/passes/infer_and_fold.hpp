// Internal to the passes: the single topological sweep behind infer_shapes and fold_constants.
#pragma once

#include <cstdint>

#include "tessera/graph.hpp"

namespace tessera::passes {

// Infers each node's outputs in order and, when `fold` is set, immediately replaces foldable
// nodes by constants, so later nodes (Reshape's shape input, say) see those constants during
// their own inference. Folded nodes are removed from graph.nodes.
void infer_and_fold(Graph& graph, bool fold, int64_t max_elements);

}  // namespace tessera::passes
