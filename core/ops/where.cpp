// Where: out = condition ? x : y elementwise, all three broadcast together (numpy rules).
// condition is bool; x and y share any dtype.
#include <cstring>

#include "op.hpp"
#include "util/broadcast.hpp"

namespace tessera::ops {
namespace {

void infer_where(InferContext& ctx) {
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(0, {DType::kBool});
  const InputInfo& x = ctx.input(1);
  const InputInfo& y = ctx.input(2);
  if (x.dtype != y.dtype) {
    ctx.fail(std::string("inputs 'X' and 'Y' have different dtypes (") + dtype_name(x.dtype) +
             " and " + dtype_name(y.dtype) + ")");
  }
  ctx.outputs[0] = {x.dtype, broadcast_shapes({ctx.input(0).shape, x.shape, y.shape}, ctx.where)};
}

void compute_where(ComputeContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  Tensor& out = ctx.outputs[0];
  const BroadcastIndexer ic(cond.shape(), out.shape());
  const BroadcastIndexer ix(x.shape(), out.shape());
  const BroadcastIndexer iy(y.shape(), out.shape());
  const bool* c = cond.data<bool>();
  const size_t size = dtype_size(out.dtype());
  const auto* px = static_cast<const std::byte*>(x.raw());
  const auto* py = static_cast<const std::byte*>(y.raw());
  auto* dst = static_cast<std::byte*>(out.raw());
  for (int64_t i = 0; i < out.numel(); ++i) {
    const std::byte* src = c[ic.offset(i)] ? px + static_cast<size_t>(ix.offset(i)) * size
                                           : py + static_cast<size_t>(iy.offset(i)) * size;
    std::memcpy(dst + static_cast<size_t>(i) * size, src, size);
  }
}

}  // namespace

TESSERA_REGISTER_OP("Where", infer_where, compute_where);

}  // namespace tessera::ops
