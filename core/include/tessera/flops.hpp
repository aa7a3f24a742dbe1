// FLOP counts of the nodes whose work is dominated by multiply-adds, computed by core from the
// graph so that a count means the same for every plugin: the partitioner's cost estimates price
// work with it, and the tuner shows GFLOPS with it (a plugin's own count, from describe_node, is
// only used where core knows none).
#pragma once

#include "tessera/graph.hpp"

namespace tessera {

// Multiply-adds x 2 of a Conv (2*N*M*OH*OW*C/group*KH*KW), ConvTranspose, Gemm or MatMul
// (2*M*N*K) with known shapes; 0 for every other op and for unknown shapes.
double node_flops(const Graph& graph, const Node& node);

}  // namespace tessera
