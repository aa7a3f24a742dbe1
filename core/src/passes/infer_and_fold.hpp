// Internal to the passes: the single topological sweep behind infer_shapes and fold_constants.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera::passes {

// Infers each node's outputs in order and, when `fold` is set, immediately replaces foldable
// nodes by constants, so later nodes (Reshape's shape input, say) see those constants during
// their own inference. Folded nodes are removed from graph.nodes.
void infer_and_fold(Graph& graph, bool fold, int64_t max_elements);

// Prepares `graph` as far as its shapes follow from constants and input shapes (static If
// branches inlined, constants folded) and returns, per node of the result, whether it is
// dynamic: it needs a value computed at run time (NonZero's input, an If condition on data), or
// reads a dynamic node's output. Dynamic nodes are left as they were, uninferred.
std::vector<char> mark_dynamic(Graph& graph);

// The nodes that replace If node `node` when its condition is `condition`: the branch's nodes
// (renamed "<if>/<node>", their values "<if>/<value>"), reading the If's captures and writing
// the If's outputs (through an Identity where the branch output is not computed by a branch
// node). New values are added to `graph`. Throws naming the node when the branch does not match.
std::vector<Node> inline_if_branch(Graph& graph, const Node& node, bool condition);

// The nodes that replace Loop node `node` whose trip count and condition are known: when it has
// run `trip_count` iterations or `condition` is false, Identity nodes for the carried values and
// Unsqueeze + Concat for the scan outputs; else the body's nodes for the next iteration followed
// by the Loop node one iteration on (kLoopIterationsDone), reading the body's results.
std::vector<Node> unroll_loop_step(Graph& graph, const Node& node, int64_t trip_count,
                                   bool condition);

}  // namespace tessera::passes
