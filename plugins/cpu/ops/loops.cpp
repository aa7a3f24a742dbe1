// Broadcast and strided-copy planning (ops/loops.hpp).
#include "ops/loops.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/elementwise.hpp"

namespace tessera::cpu {

int64_t BroadcastPlan::outer_count() const {
  int64_t n = 1;
  for (int64_t e : outer) n *= e;
  return n;
}

void BroadcastPlan::offsets(int64_t o, int64_t* out) const {
  for (size_t i = 0; i < strides.size(); ++i) out[i] = 0;
  for (size_t d = outer.size(); d-- > 0;) {
    const int64_t idx = o % outer[d];
    o /= outer[d];
    for (size_t i = 0; i < strides.size(); ++i) out[i] += idx * strides[i][d];
  }
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return -1;
  return axis < 0 ? axis + rank : axis;
}

std::string plan_broadcast(const std::vector<int64_t>& out,
                           const std::vector<std::vector<int64_t>>& inputs, BroadcastPlan* plan) {
  const size_t rank = out.size(), k = inputs.size();
  if (k == 0 || k > 8) return "broadcasting takes 1 to 8 operands";
  // Each operand's dims aligned right to the output's rank, with its own row-major strides.
  std::vector<std::vector<int64_t>> aligned(k, std::vector<int64_t>(rank, 1));
  std::vector<std::vector<int64_t>> own(k);
  for (size_t i = 0; i < k; ++i) {
    if (inputs[i].size() > rank) return "an input has a higher rank than the output";
    const size_t lead = rank - inputs[i].size();
    for (size_t d = 0; d < inputs[i].size(); ++d) aligned[i][lead + d] = inputs[i][d];
    own[i] = row_major_strides(aligned[i]);
    for (size_t d = 0; d < rank; ++d) {
      if (aligned[i][d] != out[d] && aligned[i][d] != 1) {
        return "input dim " + std::to_string(aligned[i][d]) + " does not broadcast to " +
               std::to_string(out[d]);
      }
    }
  }
  // Merged loops: consecutive output dims (extent > 1) with the same broadcast pattern chain
  // their strides and become one loop.
  struct Loop {
    int64_t extent;
    std::vector<int64_t> stride;  // per operand, 0 = broadcast
  };
  std::vector<Loop> loops;
  std::vector<bool> last_pattern;
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    std::vector<bool> pattern(k);
    for (size_t i = 0; i < k; ++i) pattern[i] = aligned[i][d] != 1;
    if (!loops.empty() && pattern == last_pattern) {
      Loop& l = loops.back();
      l.extent *= out[d];
      for (size_t i = 0; i < k; ++i) l.stride[i] = pattern[i] ? own[i][d] : 0;
    } else {
      Loop l{out[d], std::vector<int64_t>(k)};
      for (size_t i = 0; i < k; ++i) l.stride[i] = pattern[i] ? own[i][d] : 0;
      loops.push_back(std::move(l));
    }
    last_pattern = pattern;
  }
  plan->outer.clear();
  plan->strides.assign(k, {});
  plan->step.assign(k, 0);
  plan->run = 1;
  if (loops.empty()) return "";
  const Loop inner = loops.back();
  loops.pop_back();
  plan->run = inner.extent;
  for (size_t i = 0; i < k; ++i) plan->step[i] = inner.stride[i] == 0 ? 0 : 1;
  for (const Loop& l : loops) {
    plan->outer.push_back(l.extent);
    for (size_t i = 0; i < k; ++i) plan->strides[i].push_back(l.stride[i]);
  }
  return "";
}

CopyPlan merge_copy_plan(std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t offset) {
  CopyPlan plan;
  plan.offset = offset;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!plan.dims.empty() && plan.strides.back() == strides[d] * dims[d]) {
      plan.dims.back() *= dims[d];
      plan.strides.back() = strides[d];
    } else {
      plan.dims.push_back(dims[d]);
      plan.strides.push_back(strides[d]);
    }
  }
  if (plan.dims.empty()) {
    plan.dims = {1};
    plan.strides = {1};
  }
  return plan;
}

namespace {

// Copies rows [first, last) of a copy plan (a row: the innermost dim). The source offset is
// computed once per chunk and then stepped like an odometer: short runs (mobilevit's patch unfold
// copies runs of 2 floats) would otherwise spend more on a div/mod per dim and a memcpy call per
// row than on the copy.
// T is the element as copied: float for every 4-byte type (bit copies), or an unsigned integer
// of the element's width.
template <typename T>
void copy_rows(const CopyPlan& plan, const T* src, T* dst, int64_t first, int64_t last) {
  const size_t rank = plan.dims.size();
  const int64_t run = plan.dims.back(), run_stride = plan.strides.back();
  if (rank == 1) {
    if (run_stride == 1) {
      std::memcpy(dst + first, src + plan.offset + first,
                  static_cast<size_t>(last - first) * sizeof(T));
    } else {
      for (int64_t j = first; j < last; ++j) dst[j] = src[plan.offset + j * run_stride];
    }
    return;
  }
  int64_t index[8] = {};  // odometer over dims [0, rank - 1); merged plans have few dims
  std::vector<int64_t> big_index;
  int64_t* idx = rank - 1 <= 8 ? index : (big_index.resize(rank - 1), big_index.data());
  int64_t off = plan.offset;
  for (int64_t o = first, d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
    idx[d] = o % plan.dims[static_cast<size_t>(d)];
    o /= plan.dims[static_cast<size_t>(d)];
    off += idx[d] * plan.strides[static_cast<size_t>(d)];
  }
  const size_t inner = rank - 2;  // the dim stepped once per row
  const int64_t inner_dim = plan.dims[inner], inner_stride = plan.strides[inner];
  T* t = dst + first * run;
  for (int64_t row = first; row < last;) {
    // A stretch of rows along the inner dim: no odometer work between them.
    const int64_t stretch = std::min(last - row, inner_dim - idx[inner]);
    const T* s = src + off;
    if (run_stride != 1) {
      for (int64_t r = 0; r < stretch; ++r, s += inner_stride, t += run) {
        for (int64_t j = 0; j < run; ++j) t[j] = s[j * run_stride];
      }
    } else if (run < 16) {
      for (int64_t r = 0; r < stretch; ++r, s += inner_stride, t += run) {
        for (int64_t j = 0; j < run; ++j) t[j] = s[j];
      }
    } else {
      for (int64_t r = 0; r < stretch; ++r, s += inner_stride, t += run) {
        std::memcpy(t, s, static_cast<size_t>(run) * sizeof(T));
      }
    }
    row += stretch;
    off += stretch * inner_stride;
    idx[inner] += stretch;
    // Carry into the outer dims.
    for (size_t d = inner; d > 0 && idx[d] == plan.dims[d]; --d) {
      off -= idx[d] * plan.strides[d];
      idx[d] = 0;
      ++idx[d - 1];
      off += plan.strides[d - 1];
    }
  }
}

}  // namespace

namespace {

// The copy of a plan whose innermost output dim reads the source with a stride while an outer
// dim `a` reads it with stride 1: per index of the other dims, a 2-D transpose of dims[a] x
// dims.back() (attention's [B, N, H, D] -> [B, H, D, N], NCHW <-> NHWC). Element by element
// along the output rows, each read touched a new source cache line (levit's and pvt's
// Transposes took 2.4x ONNX Runtime's time); tiles of kTile x kTile read kTile lines once each
// and write kTile contiguous runs.
constexpr int64_t kTile = 16;

void transpose_tiles(const CopyPlan& plan, size_t a, const float* src, float* dst) {
  const size_t rank = plan.dims.size();
  const int64_t ni = plan.dims[a], nj = plan.dims.back(), sj = plan.strides.back();
  // Output strides: dst is contiguous in output order.
  std::vector<int64_t> out_stride(rank, 1);
  for (size_t d = rank - 1; d > 0; --d) out_stride[d - 1] = out_stride[d] * plan.dims[d];
  const int64_t oi = out_stride[a];
  // The other dims, outermost first.
  std::vector<size_t> other;
  for (size_t d = 0; d + 1 < rank; ++d) {
    if (d != a) other.push_back(d);
  }
  int64_t outer = 1;
  for (size_t d : other) outer *= plan.dims[d];
  const int64_t i_tiles = (ni + kTile - 1) / kTile;
  // Tasks of whole tile rows, at least ~16K floats each.
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, kTile * nj));
  // One task: the tile row [i0, i0 + kTile) of outer index o, all of j.
  auto tile_row = [&](int64_t t) {
    int64_t o = t / i_tiles;
    const int64_t i0 = (t % i_tiles) * kTile, i1 = std::min(ni, i0 + kTile);
    int64_t s_off = plan.offset, d_off = 0;
    for (size_t k = other.size(); k-- > 0;) {
      const int64_t idx = o % plan.dims[other[k]];
      o /= plan.dims[other[k]];
      s_off += idx * plan.strides[other[k]];
      d_off += idx * out_stride[other[k]];
    }
    // Source rows are j (stride sj), columns i (stride 1); output rows i, columns j.
    for (int64_t j0 = 0; j0 < nj; j0 += kTile) {
      const int64_t j1 = std::min(nj, j0 + kTile);
      transpose_2d(src + s_off + i0 + j0 * sj, sj, dst + d_off + i0 * oi + j0, oi, j1 - j0,
                   i1 - i0);
    }
  };
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, outer * i_tiles, grain),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      for (int64_t t = r.begin(); t < r.end(); ++t) tile_row(t);
                    });
}

template <typename T>
void strided_copy_of(const CopyPlan& plan, const T* src, T* dst) {
  const size_t rank = plan.dims.size();
  const int64_t run = plan.dims.back();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= plan.dims[d];
  if (std::is_same_v<T, float> && rank >= 2 && plan.strides.back() != 1 && run >= 4) {
    for (size_t a = rank - 1; a-- > 0;) {
      if (plan.strides[a] == 1 && plan.dims[a] >= 4) {
        return transpose_tiles(plan, a, reinterpret_cast<const float*>(src),
                               reinterpret_cast<float*>(dst));
      }
    }
  }
  if (rank == 1) {  // one strided run: chunks of it
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, run, 16384),
                      [&](const tbb::blocked_range<int64_t>& r) {
                        copy_rows(plan, src, dst, r.begin(), r.end());
                      });
    return;
  }
  // Chunks of at least 16K floats: below that a task costs more than it copies.
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, run));
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, rows, grain),
      [&](const tbb::blocked_range<int64_t>& r) { copy_rows(plan, src, dst, r.begin(), r.end()); });
}

}  // namespace

void strided_copy(const CopyPlan& plan, const float* src, float* dst) {
  strided_copy_of(plan, src, dst);
}

bool strided_copy(const CopyPlan& plan, const void* src, void* dst, int64_t element_bytes) {
  switch (element_bytes) {
    case 1:
      strided_copy_of(plan, static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst));
      return true;
    case 2:
      strided_copy_of(plan, static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst));
      return true;
    case 4:
      strided_copy_of(plan, static_cast<const float*>(src), static_cast<float*>(dst));
      return true;
    case 8:
      strided_copy_of(plan, static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst));
      return true;
    default:
      return false;
  }
}

}  // namespace tessera::cpu
