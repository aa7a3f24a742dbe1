// Constant folding: nodes computable at load time become constant values.
#include "passes/infer_and_fold.hpp"
#include "tessera/passes.hpp"

namespace tessera {

// Shapes are (re)inferred in the same sweep: a node's inference may need a constant that only
// exists once an earlier node was folded (see infer_shapes.cpp).
void fold_constants(Graph& graph, int64_t max_elements) {
  passes::infer_and_fold(graph, true, max_elements);
}

}  // namespace tessera
