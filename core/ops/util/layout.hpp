// Shared pieces of the data-movement op files (DepthToSpace, SpaceToDepth, Tile): an element
// copy driven by an output-to-input index map, for any dtype (copied by element size), and the
// blocksize attribute check. Header-only for the same reason as broadcast.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {

// out[multi-index o] = in[flat index src(o)] for every element of out, in row-major order of o.
template <typename SourceIndex>
void gather_elements(const Tensor& in, Tensor& out, SourceIndex src) {
  const size_t size = dtype_size(in.dtype());
  const auto* from = static_cast<const std::byte*>(in.raw());
  auto* to = static_cast<std::byte*>(out.raw());
  const Shape& dims = out.shape();
  std::vector<int64_t> o(dims.size(), 0);
  for (int64_t i = 0; i < out.numel(); ++i, next_index(o, dims)) {
    std::memcpy(to + static_cast<size_t>(i) * size, from + static_cast<size_t>(src(o)) * size,
                size);
  }
}

// The 'blocksize' attribute of DepthToSpace / SpaceToDepth: required and positive.
inline int64_t attr_blocksize(const InferContext& ctx) {
  if (!ctx.node.attrs.has("blocksize")) ctx.fail("required attribute 'blocksize' is missing");
  const int64_t b = attr_int(ctx, "blocksize", 0);
  if (b <= 0) ctx.fail("attribute 'blocksize' = " + std::to_string(b) + " must be positive");
  return b;
}

// Fails unless input 0 is a rank-4 tensor (N, C, H, W) of a dtype the copy handles.
inline void expect_nchw4(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  if (x.size() != 4) {
    ctx.fail("input 0 has shape " + shape_str(x) + "; expected rank 4 (N, C, H, W)");
  }
  if (ctx.input(0).dtype == DType::kUndefined) ctx.fail("input 0 has no dtype");
}

}  // namespace tessera::ops
