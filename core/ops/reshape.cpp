// Reshape: new shape from the constant input 'shape' (attribute 'shape' before opset 5). A 0
// copies the input's dim at that position (unless allowzero=1, opset 14, where 0 means an empty
// dim); one -1 is inferred from the element count. Any dtype; the kernel returns a view.
#include "op.hpp"
#include "util/checked.hpp"

namespace tessera::ops {
namespace {

void infer_reshape(InferContext& ctx) {
  std::vector<int64_t> requested;
  if (ctx.opset < 5) {
    ctx.expect_inputs(1, 1);
    requested = ctx.node.attrs.get_ints("shape");
  } else {
    ctx.expect_inputs(2, 2);
    ctx.expect_dtype(1, {DType::kInt64});
    const Tensor& shape = ctx.constant_input(1);
    if (shape.rank() != 1) ctx.fail("input 'shape' must be 1-D, got " + shape_str(shape.shape()));
    requested = shape.to_int64_vector();
  }
  const bool allowzero = ctx.opset >= 14 && ctx.node.attrs.get_int("allowzero", 0) != 0;
  const Shape& in = ctx.input(0).shape;
  const int64_t numel = shape_numel(in);

  Shape out(requested.size());
  int64_t inferred = -1;  // index of the -1 entry
  int64_t known = 1;      // product of the other dims
  bool has_zero = false;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t r = requested[i];
    if (r == -1) {
      if (inferred >= 0) ctx.fail("'shape' " + shape_str(requested) + " has more than one -1");
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (r < -1) {
      ctx.fail("'shape' " + shape_str(requested) + " has invalid dim " + std::to_string(r));
    }
    if (r == 0 && !allowzero) {
      if (i >= in.size()) {
        ctx.fail("'shape' " + shape_str(requested) + " has 0 (copy input dim) at position " +
                 std::to_string(i) + " but the input " + shape_str(in) + " has no such dim");
      }
      out[i] = in[i];
    } else {
      has_zero = has_zero || r == 0;
      out[i] = r;
    }
    known = checked_mul(ctx, known, out[i], "the product of 'shape' " + shape_str(requested));
  }
  if (allowzero && has_zero && inferred >= 0) {
    ctx.fail("'shape' " + shape_str(requested) +
             " has both 0 and -1, which is invalid with allowzero=1");
  }
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0) {
      ctx.fail("cannot reshape input " + shape_str(in) + " (" + std::to_string(numel) +
               " elements) to " + shape_str(requested) + ": -1 cannot be inferred");
    }
    out[static_cast<size_t>(inferred)] = numel / known;
  }
  if (shape_numel(out) != numel) {
    ctx.fail("cannot reshape input " + shape_str(in) + " (" + std::to_string(numel) +
             " elements) to " + shape_str(out) + " (" + std::to_string(shape_numel(out)) +
             " elements)");
  }
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

void compute_reshape(ComputeContext& ctx) {
  ctx.outputs[0] = ctx.input(0).reshaped(ctx.outputs[0].shape());
}

}  // namespace

TESSERA_REGISTER_OP("Reshape", infer_reshape, compute_reshape);

}  // namespace tessera::ops
