// Einsum (opset 12+): sums of products over subscripted axes (util/einsum.hpp parses the
// equation), any number of inputs of one numeric dtype; float inputs accumulate in double. The
// naive kernel walks every combination of output and summed subscripts. Two-operand einsums whose
// shapes are known are lowered to Transpose / Reshape / MatMul before any plugin sees them
// (passes/lower_einsum.cpp).
#include <cstring>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/einsum.hpp"
#include "util/elementwise.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

void infer_einsum(InferContext& ctx) {
  expect_opset_at_least(ctx, 12);
  if (ctx.num_inputs() < 1) ctx.fail("expects at least 1 input");
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    ctx.expect_dtype(i, kNumericDTypes);
    if (ctx.input(i).dtype != ctx.input(0).dtype) {
      ctx.fail("input " + std::to_string(i) + " has dtype " + dtype_name(ctx.input(i).dtype) +
               ", input 0 " + dtype_name(ctx.input(0).dtype) + "; all inputs share one dtype");
    }
    shapes.push_back(ctx.input(i).shape);
  }
  if (!ctx.node.attrs.has("equation")) ctx.fail("required attribute 'equation' is missing");
  const EinsumSpec spec = parse_einsum(attr_string(ctx, "equation", ""), shapes, ctx.where);
  ctx.outputs[0] = {ctx.input(0).dtype, einsum_output_shape(spec)};
}

void compute_einsum(ComputeContext& ctx) {
  const std::string where = node_where(ctx.node);
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) shapes.push_back(ctx.input(i).shape());
  const EinsumSpec spec =
      parse_einsum(ctx.node.attrs.get_string("equation"), shapes, where);  // checked by infer
  // The walk's subscripts: the output's, then the summed ones.
  std::vector<int> order = spec.output;
  std::vector<bool> in_order(spec.dims.size(), false);
  for (int id : order) in_order[static_cast<size_t>(id)] = true;
  for (const std::vector<int>& term : spec.inputs) {
    for (int id : term) {
      if (!in_order[static_cast<size_t>(id)]) {
        in_order[static_cast<size_t>(id)] = true;
        order.push_back(id);
      }
    }
  }
  const size_t walk = order.size();
  std::vector<int64_t> extent(walk);
  for (size_t w = 0; w < walk; ++w) extent[w] = spec.dims[static_cast<size_t>(order[w])];
  // Per input, the element stride of each walk subscript (0 where it broadcasts or is absent; a
  // subscript repeated in one term adds its strides, walking the diagonal).
  std::vector<std::vector<int64_t>> strides(ctx.inputs.size(), std::vector<int64_t>(walk, 0));
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const Shape& s = shapes[i];
    int64_t stride = 1;
    for (size_t axis = s.size(); axis-- > 0;) {
      const int id = spec.inputs[i][axis];
      const size_t w =
          static_cast<size_t>(std::find(order.begin(), order.end(), id) - order.begin());
      if (s[axis] != 1 || extent[w] == 1) strides[i][w] += stride;
      stride *= s[axis];
    }
  }
  const size_t out_rank = spec.output.size();
  int64_t outer = 1, inner = 1;
  for (size_t w = 0; w < walk; ++w) (w < out_rank ? outer : inner) *= extent[w];
  dispatch_numeric(ctx.input(0).dtype(), where, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    using Acc = std::conditional_t<std::is_floating_point_v<C>, double, C>;
    std::vector<const T*> data;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) data.push_back(ctx.input(i).data<T>());
    T* out = ctx.outputs[0].data<T>();
    std::vector<int64_t> index(walk, 0);
    for (int64_t o = 0; o < outer; ++o) {
      // index[0, out_rank) = the output element's coordinates (row-major).
      int64_t rest = o;
      for (size_t w = out_rank; w-- > 0;) {
        index[w] = rest % extent[w];
        rest /= extent[w];
      }
      for (size_t w = out_rank; w < walk; ++w) index[w] = 0;
      Acc sum{};
      for (int64_t k = 0; k < inner; ++k) {
        Acc product{1};
        for (size_t i = 0; i < data.size(); ++i) {
          int64_t at = 0;
          for (size_t w = 0; w < walk; ++w) at += index[w] * strides[i][w];
          product = static_cast<Acc>(product * static_cast<Acc>(to_compute(data[i][at])));
        }
        sum = static_cast<Acc>(sum + product);
        for (size_t w = walk; w-- > out_rank;) {  // next summed combination
          if (++index[w] < extent[w]) break;
          index[w] = 0;
        }
      }
      out[o] = from_compute<T>(static_cast<C>(sum));
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("Einsum", infer_einsum, compute_einsum);

}  // namespace tessera::ops
