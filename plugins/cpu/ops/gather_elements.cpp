// GatherElements over data of any 1-, 2-, 4- or 8-byte element type, indices int32/int64 known
// at build time or only at run time (a top-k selection of tokens, a detection head's picks):
// output element a = data at a with its `axis` coordinate replaced by indices[a]. Each index is
// checked against the axis as it is read, so a bad one is an error naming the node, never a read
// outside the data.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstring>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

namespace {

// The geometry of one node: output rows (every dimension but the last) and the data offset
// of each row's first element without the axis term.
struct GatherElementsPlan {
  int64_t rank = 0, axis = 0, rows = 0, cols = 0;
  int64_t out_dims[TESSERA_MAX_RANK] = {};
  int64_t data_strides[TESSERA_MAX_RANK] = {};  // in elements
  int64_t e = 0;                                // data's extent along the axis
};

template <class E, class I>
void gather_elements_rows(const GatherElementsPlan& p, const E* data, const I* idx, E* out,
                          int64_t r0, int64_t r1, const std::string& node) {
  // The row's coordinates, counted up from r0 (the last dimension is the column).
  int64_t coord[TESSERA_MAX_RANK] = {};
  for (int64_t r = r0, d = p.rank - 2; d >= 0; --d) {
    coord[d] = r % p.out_dims[d];
    r /= p.out_dims[d];
  }
  const int64_t last = p.rank - 1;
  for (int64_t r = r0; r < r1; ++r) {
    int64_t base = 0;
    for (int64_t d = 0; d < last; ++d) {
      if (d != p.axis) base += coord[d] * p.data_strides[d];
    }
    const I* ir = idx + r * p.cols;
    E* yr = out + r * p.cols;
    for (int64_t c = 0; c < p.cols; ++c) {
      const int64_t i = checked_index(static_cast<int64_t>(ir[c]), p.e, node);
      const int64_t col = p.axis == last ? 0 : c * p.data_strides[last];
      yr[c] = data[base + col + i * p.data_strides[p.axis]];
    }
    for (int64_t d = last - 1; d >= 0; --d) {
      if (++coord[d] < p.out_dims[d]) break;
      coord[d] = 0;
    }
  }
}

template <class E>
Step gather_elements_step(const GatherElementsPlan& p, bool wide, int32_t in, int32_t ii,
                          int32_t out, const std::string& node) {
  return [=](std::vector<float*>& v) {
    const E* data = reinterpret_cast<const E*>(v[in]);
    E* y = reinterpret_cast<E*>(v[out]);
    // Rows of at least ~16K elements per task.
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, p.cols));
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, p.rows, grain),
                      [&](const tbb::blocked_range<int64_t>& r) {
                        if (wide) {
                          gather_elements_rows(p, data, reinterpret_cast<const int64_t*>(v[ii]), y,
                                               r.begin(), r.end(), node);
                        } else {
                          gather_elements_rows(p, data, reinterpret_cast<const int32_t*>(v[ii]), y,
                                               r.begin(), r.end(), node);
                        }
                      });
  };
}

}  // namespace

std::string query_gather_elements(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* idx = node.input(1);
  if (copy_element_bytes(x, node.output(0)) == 0) return "data and output dtypes differ";
  if (idx == nullptr || (idx->dtype != TSR_DTYPE_INT64 && idx->dtype != TSR_DTYPE_INT32)) {
    return "indices must be int64 or int32";
  }
  if (x->rank < 1 || idx->rank != x->rank) return "indices and data ranks differ";
  const int64_t axis = normalize_axis(node.attr_int("axis", 0), x->rank);
  if (axis < 0) return "axis out of range";
  for (int32_t d = 0; d < x->rank; ++d) {
    if (d != axis && idx->dims[d] > x->dims[d]) {
      return "indices dimension " + std::to_string(d) + " exceeds the data's";
    }
  }
  if (x->dims[axis] == 0 && numel(*idx) > 0) return "gathers from an empty axis";
  return "";
}

Step build_gather_elements(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const tsr_tensor* idx = ctx.node.input(1);
  GatherElementsPlan p;
  p.rank = x->rank;
  p.axis = normalize_axis(ctx.node.attr_int("axis", 0), x->rank);
  p.e = x->dims[p.axis];
  int64_t stride = 1;
  for (int64_t d = p.rank - 1; d >= 0; --d) {
    p.data_strides[d] = stride;
    stride *= x->dims[d];
    p.out_dims[d] = idx->dims[d];
  }
  p.cols = idx->dims[p.rank - 1];
  p.rows = p.cols == 0 ? 0 : numel(*idx) / p.cols;
  const bool wide = idx->dtype == TSR_DTYPE_INT64;
  const int32_t in = ctx.node.input_index(0), ii = ctx.node.input_index(1), out = ctx.output;
  const std::string node = ctx.node.describe();
  switch (copy_element_bytes(x, ctx.node.output(0))) {
    case 1:
      return gather_elements_step<uint8_t>(p, wide, in, ii, out, node);
    case 2:
      return gather_elements_step<uint16_t>(p, wide, in, ii, out, node);
    case 8:
      return gather_elements_step<uint64_t>(p, wide, in, ii, out, node);
    default:
      return gather_elements_step<uint32_t>(p, wide, in, ii, out, node);
  }
}

}  // namespace tessera::cpu
