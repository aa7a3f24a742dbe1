// Axis helpers shared by op files: negative-axis normalization with a range check that names
// the node and attribute. Header-only for the same reason as broadcast.hpp.
#pragma once

#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/graph.hpp"

namespace tessera::ops {

// "node 'conv1' (Conv)": for messages from compute functions, which have no InferContext.
inline std::string node_where(const Node& node) {
  return "node '" + node.name + "' (" + node.op_type + ")";
}

// Maps axis in [-rank, rank-1] to [0, rank-1]; `what` names it in the error ("attribute 'axis'").
inline int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& where,
                              const std::string& what = "attribute 'axis'") {
  if (axis < -rank || axis >= rank) {
    throw Error(where + ": " + what + " = " + std::to_string(axis) + " is out of range [" +
                std::to_string(-rank) + ", " + std::to_string(rank - 1) + "] for rank " +
                std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

// Normalizes every axis and rejects duplicates (after normalization, so 1 and -2 at rank 3 clash).
inline std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                           const std::string& where,
                                           const std::string& what = "attribute 'axes'") {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(a, rank, where, what);
    if (seen[static_cast<size_t>(n)]) {
      throw Error(where + ": " + what + " names axis " + std::to_string(n) + " more than once");
    }
    seen[static_cast<size_t>(n)] = true;
    out.push_back(n);
  }
  return out;
}

}  // namespace tessera::ops
