// The standard preparation run after import.
#include "tessera/passes.hpp"

namespace tessera {

void prepare_graph(Graph& graph) {
  graph.topological_sort();
  fold_constants(graph);  // infers every shape as it goes
  graph.remove_dead_nodes();
}

}  // namespace tessera
