// Transpose: output dim k is input dim perm[k]; perm defaults to reversing the dims. Any dtype
// (elements are copied by size).
#include <cstring>

#include "op.hpp"

namespace tessera::ops {
namespace {

std::vector<int64_t> get_perm(const Node& node, size_t rank) {
  std::vector<int64_t> reversed;
  for (size_t d = rank; d-- > 0;) reversed.push_back(static_cast<int64_t>(d));
  return node.attrs.get_ints("perm", reversed);
}

void infer_transpose(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  const Shape& in = ctx.input(0).shape;
  const std::vector<int64_t> perm = get_perm(ctx.node, in.size());
  if (perm.size() != in.size()) {
    ctx.fail("attribute 'perm' " + shape_str(perm) + " has " + std::to_string(perm.size()) +
             " entries but the input " + shape_str(in) + " has rank " + std::to_string(in.size()));
  }
  std::vector<bool> seen(in.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[static_cast<size_t>(p)]) {
      ctx.fail("attribute 'perm' " + shape_str(perm) + " is not a permutation of 0.." +
               std::to_string(static_cast<int64_t>(in.size()) - 1));
    }
    seen[static_cast<size_t>(p)] = true;
    out.push_back(in[static_cast<size_t>(p)]);
  }
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

void compute_transpose(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.outputs[0];
  const std::vector<int64_t> perm = get_perm(ctx.node, x.shape().size());
  const std::vector<int64_t> in_strides = shape_strides(x.shape());
  const std::vector<int64_t> out_strides = shape_strides(y.shape());
  const size_t size = dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw());
  auto* dst = static_cast<std::byte*>(y.raw());
  for (int64_t i = 0; i < y.numel(); ++i) {
    // Output coordinate k walks input dim perm[k].
    int64_t offset = 0;
    for (size_t k = 0; k < perm.size(); ++k) {
      const int64_t coord = (i / out_strides[k]) % y.shape()[k];
      offset += coord * in_strides[static_cast<size_t>(perm[k])];
    }
    std::memcpy(dst + static_cast<size_t>(i) * size, src + static_cast<size_t>(offset) * size,
                size);
  }
}

}  // namespace

TESSERA_REGISTER_OP("Transpose", infer_transpose, compute_transpose);

}  // namespace tessera::ops
