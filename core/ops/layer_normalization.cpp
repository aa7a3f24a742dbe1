// LayerNormalization (ONNX opset 17) on float32: each slice X[i0, ..., i(axis-1), :, ..., :] is
// normalized over the dims from `axis` on, then y = normalized * Scale + B, where Scale and B
// broadcast (numpy rules, one direction) to X.shape[axis:]. The optional outputs Mean and
// InvStdDev have X's shape with the normalized dims set to 1.
#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/broadcast.hpp"
#include "util/normalization.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

// Fails unless parameter input i broadcasts to `normalized` without growing it.
void expect_broadcasts_to(const InferContext& ctx, size_t i, const std::string& name,
                          const Shape& normalized) {
  ctx.expect_dtype(i, {DType::kFloat32});
  const Shape& s = ctx.input(i).shape;
  bool ok = s.size() <= normalized.size();
  for (size_t d = 0; ok && d < s.size(); ++d) {
    const int64_t target = normalized[normalized.size() - s.size() + d];
    ok = s[d] == target || s[d] == 1;
  }
  if (!ok) {
    ctx.fail("input " + std::to_string(i) + " ('" + name + "') has shape " + shape_str(s) +
             " which does not broadcast to the normalized dims " + shape_str(normalized) +
             " (X.shape[axis:])");
  }
}

void infer_layer_normalization(InferContext& ctx) {
  ctx.expect_inputs(2, 3);
  ctx.expect_dtype(0, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) ctx.fail("input 0 ('X') is a scalar; LayerNormalization needs rank >= 1");
  const int64_t axis = normalize_axis(attr_int(ctx, "axis", -1), rank, ctx.where);
  attr_epsilon(ctx);
  check_stash_type(ctx);
  const Shape normalized(x.begin() + axis, x.end());
  expect_broadcasts_to(ctx, 1, "Scale", normalized);
  if (ctx.has_input(2)) expect_broadcasts_to(ctx, 2, "B", normalized);
  if (ctx.outputs.size() > 3) {
    ctx.fail("has " + std::to_string(ctx.outputs.size()) +
             " outputs; LayerNormalization has at most 3 (Y, Mean, InvStdDev)");
  }
  ctx.outputs.at(0) = {DType::kFloat32, x};
  Shape stats = x;
  for (int64_t d = axis; d < rank; ++d) stats[static_cast<size_t>(d)] = 1;
  for (size_t i = 1; i < ctx.outputs.size(); ++i) ctx.outputs[i] = {DType::kFloat32, stats};
}

void compute_layer_normalization(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis =
      normalize_axis(ctx.node.attrs.get_int("axis", -1), rank, node_where(ctx.node));
  const double epsilon = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const Shape normalized(x.begin() + axis, x.end());
  const int64_t len = shape_numel(normalized);
  const int64_t rows = len == 0 ? 0 : xt.numel() / len;

  float* y = ctx.outputs[0].data<float>();
  const bool want_mean = ctx.outputs.size() > 1 && ctx.node.outputs[1] != kNoValue;
  const bool want_inv = ctx.outputs.size() > 2 && ctx.node.outputs[2] != kNoValue;
  normalize_rows(xt.data<float>(), y, rows, len, epsilon,
                 want_mean ? ctx.outputs[1].data<float>() : nullptr,
                 want_inv ? ctx.outputs[2].data<float>() : nullptr);

  const Tensor& scale = ctx.input(1);
  const BroadcastIndexer scale_index(scale.shape(), normalized);
  const float* s = scale.data<float>();
  const float* b = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  const BroadcastIndexer bias_index(b ? ctx.input(2).shape() : Shape{}, normalized);
  for (int64_t i = 0; i < len; ++i) {
    const float si = s[scale_index.offset(i)];
    const float bi = b ? b[bias_index.offset(i)] : 0.0f;
    for (int64_t r = 0; r < rows; ++r) y[r * len + i] = y[r * len + i] * si + bi;
  }
}

}  // namespace

TESSERA_REGISTER_OP("LayerNormalization", infer_layer_normalization, compute_layer_normalization);

}  // namespace tessera::ops
