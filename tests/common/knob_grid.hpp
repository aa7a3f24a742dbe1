// Knob grids of the tests that run a kernel or schedule at many configs. In CI each grid runs a
// sample in which every value of every knob appears at least once: as many configs as its longest
// knob has values instead of their product. The slow set (tools/run-tests.sh --slow) runs the
// same tests with $TESSERA_FULL_GRID=1, every config of the grid (tessera_add_full_grid_test in
// tests/CMakeLists.txt). A grid that comes out empty fails the test that asked for it: a loop
// over nothing would pass with nothing checked.
//
//   for (const auto& p : tessera_test::knob_grid_indices("tile x blocking",
//                                                        {tiles.size(), blockings.size()})) {
//     const GemmTile& tile = tiles[p[0]];
//     const GemmBlocking& blocking = blockings[p[1]];
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

namespace tessera_test {

// $TESSERA_FULL_GRID=1: every config of every grid (the slow set); otherwise a sample.
inline bool full_knob_grid() {
  const char* env = std::getenv("TESSERA_FULL_GRID");
  return env != nullptr && std::string(env) == "1";
}

// Every combination: one point per element of the product, the first knob varying slowest.
template <typename T>
std::vector<std::vector<T>> cartesian_product(const std::vector<std::vector<T>>& values) {
  std::vector<std::vector<T>> points = {{}};
  for (const std::vector<T>& v : values) {
    std::vector<std::vector<T>> next;
    for (const std::vector<T>& p : points) {
      for (const T& x : v) {
        next.push_back(p);
        next.back().push_back(x);
      }
    }
    points = std::move(next);
  }
  return points;
}

// Point i takes value i (mod its count) of each knob: every value appears at least once. Empty
// when any knob has no values.
template <typename T>
std::vector<std::vector<T>> each_value_once(const std::vector<std::vector<T>>& values) {
  size_t longest = values.empty() ? 1 : 0;
  for (const std::vector<T>& v : values) {
    if (v.empty()) return {};
    longest = std::max(longest, v.size());
  }
  std::vector<std::vector<T>> points(longest);
  for (size_t i = 0; i < longest; ++i) {
    for (const std::vector<T>& v : values) points[i].push_back(v[i % v.size()]);
  }
  return points;
}

// The grid over `values` (one list of candidates per knob) this run checks: all of it under
// $TESSERA_FULL_GRID=1, else each_value_once. Fails the calling test, naming `what`, when it is
// empty.
template <typename T>
std::vector<std::vector<T>> knob_grid(const std::string& what,
                                      const std::vector<std::vector<T>>& values) {
  std::vector<std::vector<T>> points =
      full_knob_grid() ? cartesian_product(values) : each_value_once(values);
  if (points.empty()) ADD_FAILURE() << "the grid of " << what << " is empty: nothing to check";
  return points;
}

// knob_grid over the indices 0..counts[k]-1 of each knob: for grids whose knobs are lists of
// structs (tiles, blockings) rather than integers.
inline std::vector<std::vector<size_t>> knob_grid_indices(const std::string& what,
                                                          const std::vector<size_t>& counts) {
  std::vector<std::vector<size_t>> values;
  for (size_t n : counts) {
    values.emplace_back();
    for (size_t i = 0; i < n; ++i) values.back().push_back(i);
  }
  return knob_grid(what, values);
}

}  // namespace tessera_test
