// Index-space helpers shared by the cpu plugin's data-movement and broadcasting ops: a shape is
// turned into a few merged loops once at compile time, so a step runs contiguous runs through the
// SIMD kernels instead of walking elements one index at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/plugin_abi.h"

namespace tessera::cpu {

// An output index space as merged outer loops and one inner run. Each operand has a stride per
// outer loop (0 where it is broadcast) and a step along the run (0 or 1).
struct BroadcastPlan {
  std::vector<int64_t> outer;                     // extents of the merged outer loops
  std::vector<std::vector<int64_t>> strides;      // per operand, per outer loop
  std::vector<int64_t> step;                      // per operand: 0 (broadcast) or 1
  int64_t run = 1;                                // elements of the inner run
  int64_t outer_count() const;
  // Offset of each operand's first run element at outer index o (row-major over `outer`).
  void offsets(int64_t o, int64_t* out) const;
};

// Plans numpy (multidirectional) broadcasting of `inputs` to `out`: inputs are aligned to the
// right, each dim either equal to out's or 1. Returns an empty message when it fits, else why not.
std::string plan_broadcast(const std::vector<int64_t>& out,
                           const std::vector<std::vector<int64_t>>& inputs, BroadcastPlan* plan);

// Runs body(o, offsets) for every outer index in parallel; with few outer indices and a long run,
// the run is split in chunks as well (body then gets the chunk's first element and length).
// body(const int64_t* offsets, int64_t out_offset, int64_t length).
template <class Body>
void for_each_run(const BroadcastPlan& plan, const Body& body);

// A strided copy of a row-major view: dims (merged), source strides in elements, destination
// contiguous. Transpose, Slice, Split, Gather-by-range and channel shuffles are all this.
struct CopyPlan {
  std::vector<int64_t> dims;     // output extents, merged where contiguous in both
  std::vector<int64_t> strides;  // source stride per dim
  int64_t offset = 0;            // source offset of the first element
};
// Merges adjacent dims whose source strides chain (stride[d] == stride[d+1] * dims[d+1]) and
// drops extent-1 dims.
CopyPlan merge_copy_plan(std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t offset);
// dst[0, prod(dims)) = the view of src; parallel over outer rows; runs with unit stride are
// memcpy'd.
void strided_copy(const CopyPlan& plan, const float* src, float* dst);
// The same for elements of 1, 2, 4 or 8 bytes (any dtype: the copy moves bits); false for
// another size.
bool strided_copy(const CopyPlan& plan, const void* src, void* dst, int64_t element_bytes);

// Row-major strides of a shape.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);
// Axis in [-rank, rank) normalised to [0, rank), or -1 when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank);

}  // namespace tessera::cpu

#include "ops/loops_inl.hpp"
