// GatherND over data of any 1-, 2-, 4- or 8-byte element type with int64 indices constant or fed
// at run time: the indices' last dimension (k) addresses data's dims [b, b + k) after the b =
// batch_dims leading dims both share, and each tuple copies one slice of the remaining dims.
// Every index is checked as it is read: one out of range is an error naming the node, never a
// read outside the data.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstring>

#include "ops/op.hpp"

namespace tessera::cpu {

namespace {

struct GatherNdPlan {
  int64_t batch = 1;                       // product of the batch dims
  int64_t tuples = 0;                      // index tuples per batch
  int64_t k = 0;                           // entries per tuple
  int64_t dims[TESSERA_MAX_RANK] = {};     // data dims [b, b + k)
  int64_t strides[TESSERA_MAX_RANK] = {};  // their strides in slices
  int64_t per_batch = 0;                   // slices of data per batch
  int64_t slice_bytes = 0;
};

}  // namespace

std::string query_gather_nd(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* idx = node.input(1);
  if (copy_element_bytes(x, node.output(0)) == 0) return "data and output dtypes differ";
  if (idx == nullptr || idx->dtype != TSR_DTYPE_INT64) return "indices must be int64";
  const int64_t b = node.attr_int("batch_dims", 0);
  if (x->rank < 1 || idx->rank < 1 || b < 0 || b >= std::min(x->rank, idx->rank)) {
    return "batch_dims out of range";
  }
  for (int64_t d = 0; d < b; ++d) {
    if (x->dims[d] != idx->dims[d]) return "batch dims of data and indices differ";
  }
  const int64_t k = idx->dims[idx->rank - 1];
  if (k < 1 || b + k > x->rank) return "the indices' last dim is out of range";
  return "";
}

Step build_gather_nd(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const tsr_tensor* idx = ctx.node.input(1);
  const int64_t b = ctx.node.attr_int("batch_dims", 0);
  GatherNdPlan p;
  p.k = idx->dims[idx->rank - 1];
  for (int64_t d = 0; d < b; ++d) p.batch *= x->dims[d];
  p.tuples = numel(*idx) / p.k / std::max<int64_t>(1, p.batch);
  int64_t slice = 1;
  for (int64_t d = b + p.k; d < x->rank; ++d) slice *= x->dims[d];
  int64_t stride = 1;
  for (int64_t j = p.k - 1; j >= 0; --j) {
    p.dims[j] = x->dims[b + j];
    p.strides[j] = stride;
    stride *= p.dims[j];
  }
  p.per_batch = stride;
  p.slice_bytes = slice * copy_element_bytes(x, ctx.node.output(0));
  const int32_t in = ctx.node.input_index(0), ii = ctx.node.input_index(1), out = ctx.output;
  const std::string node = ctx.node.describe();
  return [=](std::vector<float*>& v) {
    const auto* data = reinterpret_cast<const unsigned char*>(v[in]);
    const auto* indices = reinterpret_cast<const int64_t*>(v[ii]);
    auto* y = reinterpret_cast<unsigned char*>(v[out]);
    const int64_t items = p.batch * p.tuples;
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, items, 64), [&](const tbb::blocked_range<int64_t>& r) {
          for (int64_t item = r.begin(); item < r.end(); ++item) {
            const int64_t* t = indices + item * p.k;
            int64_t at = (item / std::max<int64_t>(1, p.tuples)) * p.per_batch;
            for (int64_t j = 0; j < p.k; ++j) {
              at += checked_index(t[j], p.dims[j], node) * p.strides[j];
            }
            std::memcpy(y + item * p.slice_bytes, data + at * p.slice_bytes,
                        static_cast<size_t>(p.slice_bytes));
          }
        });
  };
}

}  // namespace tessera::cpu
