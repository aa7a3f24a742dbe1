// Splitting a graph whose shapes depend on a value computed at run time (ValueNeededAtRun) into
// two stages a Session runs one after the other.
//
// The first stage is the nodes the needed value depends on. The second is every other node,
// with the first stage's results as inputs and the needed value among its value inputs, so that
// preparing it for a run's values folds the data-dependent node (NonZero, NonMaxSuppression,
// TopK with k from data, an If on activations) to constants and infers every shape after it.
// Either stage may need staging again; a Session built on it does that itself.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera::detail {

struct StageSplit {
  std::string needed;  // the value whose contents decide shapes
  // First stage: the nodes `needed` depends on; empty when `needed` is a graph input.
  Graph first;
  bool has_first = false;
  // The original graph and, per node, whether it runs in the second stage.
  Graph origin;
  std::vector<char> in_rest;
  // The original graph's outputs each stage produces, by name.
  std::vector<std::string> outputs;
};

// Splits `graph` (unprepared, topologically sorted) at `needed`: the first stage is the nodes
// `needed` depends on. Throws tessera::Error naming the value when the graph has none of that
// name.
StageSplit split_stages(const Graph& graph, const std::string& needed);

// Splits a graph whose inputs are fixed, swept by passes::mark_dynamic: the first stage is every
// node that is not dynamic (so the whole network before its post-processing runs planned),
// the second the dynamic ones, `needed` the first value found that decides shapes.
StageSplit split_static(const Graph& graph, const std::vector<char>& dynamic,
                        const std::string& needed);

// The second stage's graph, once the first stage has run: its inputs are the original graph's
// inputs that its nodes read (as declared) and the first stage's results it reads (dtype and
// rank of `first_results`, every dimension open, sized by each run), `needed` a value input.
Graph rest_stage(const StageSplit& split, const std::map<std::string, Tensor>& first_results);

}  // namespace tessera::detail
