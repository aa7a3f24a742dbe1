// LayerNormalization (opset 17) on float32 as one kernel per row: mean, variance, normalise,
// scale and bias over the trailing axes from `axis`, rows in parallel. Exported LayerNorm2d
// (Transpose to NHWC -> LayerNormalization over the last axis [-> Transpose back]) runs as one
// pass over the NCHW tensor (fusion.cpp fuses the chain; build_channel_layer_norm).
#include <tbb/parallel_for.h>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_layer_norm(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) return "the Mean and InvStdDev outputs are not implemented";
  }
  const int64_t axis = normalize_axis(node.attr_int("axis", -1), x->rank);
  if (axis < 0) return "axis out of range";
  int64_t row = 1;
  for (int64_t d = axis; d < x->rank; ++d) row *= x->dims[d];
  for (int32_t i = 1; i <= 2; ++i) {
    const tsr_tensor* t = node.input(i);
    if (t == nullptr) continue;
    if (!is_f32(t) || numel(*t) != row) {
      return "scale and bias must be float32 with one value per normalised element";
    }
  }
  if (row == 0) return "empty rows";
  return "";
}

Step build_layer_norm(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t axis = normalize_axis(ctx.node.attr_int("axis", -1), x->rank);
  int64_t row = 1;
  for (int64_t d = axis; d < x->rank; ++d) row *= x->dims[d];
  const int64_t rows = numel(*x) / row;
  const float eps = ctx.node.attr_float("epsilon", 1e-5f);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int32_t scale = ctx.node.input_index(1), bias = ctx.node.input_index(2);
  return [=](std::vector<float*>& v) {
    const float* s = scale >= 0 ? v[scale] : nullptr;
    const float* b = bias >= 0 ? v[bias] : nullptr;
    tbb::parallel_for(int64_t{0}, rows, [&](int64_t r) {
      layer_norm_run(v[in] + r * row, row, s, b, eps, v[out] + r * row);
    });
  };
}

bool is_transpose(const NodeView& node, const std::vector<int64_t>& perm) {
  const tsr_tensor* x = node.input(0);
  return node.op_type() == "Transpose" && x != nullptr && x->rank == 4 && is_f32(x) &&
         is_f32(node.output(0)) && node.attr_ints("perm", {}) == perm;
}

bool channel_layer_norm_fusable(const RegionView& region, const NodeView& transpose,
                                const NodeView& ln) {
  if (!is_transpose(transpose, {0, 2, 3, 1}) || ln.op_type() != "LayerNormalization" ||
      ln.input_index(0) != transpose.output_index(0) || !query_layer_norm(region, ln).empty()) {
    return false;
  }
  // Only the channels (the last axis after the transpose) are normalised, with constant
  // per-channel scale and bias.
  if (normalize_axis(ln.attr_int("axis", -1), 4) != 3) return false;
  for (int32_t i = 1; i <= 2; ++i) {
    if (ln.input(i) != nullptr && constant_f32(ln.input(i)) == nullptr) return false;
  }
  return true;
}

Step build_channel_layer_norm(BuildContext& ctx) {
  const NodeView& ln = *ctx.channel_ln;
  const tsr_tensor* x = ctx.node.input(0);  // the NCHW tensor the first Transpose reads
  const int64_t batch = x->dims[0], c = x->dims[1], hw = x->dims[2] * x->dims[3];
  // Written in the LayerNormalization's NHWC layout unless the Transpose back was fused too.
  const bool nhwc = ctx.output == ln.output_index(0);
  auto copy = [&](int32_t i) {
    const float* v = constant_f32(ln.input(i));
    return v != nullptr ? std::make_shared<const std::vector<float>>(v, v + c) : nullptr;
  };
  const std::shared_ptr<const std::vector<float>> scale = copy(1), bias = copy(2);
  const float eps = ln.attr_float("epsilon", 1e-5f);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t tile_floats = channel_layer_norm_tile_floats(c);
  // Blocks of 256 pixels per task: a task's columns (c x 256 floats) stay in L2 over its three
  // passes.
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (hw + kBlock - 1) / kBlock;
  ctx.notes->push_back(std::string(ctx.node.name()) + ": LayerNorm over NCHW channels" +
                       (nhwc ? ", written NHWC" : ""));
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, batch * blocks, [&](int64_t task) {
      const int64_t n = task / blocks, p0 = (task % blocks) * kBlock;
      channel_layer_norm(v[in] + n * c * hw, c, hw, p0, std::min(hw, p0 + kBlock),
                         scale ? scale->data() : nullptr, bias ? bias->data() : nullptr, eps, nhwc,
                         v[out] + n * c * hw,
                         thread_scratch<struct ChannelLayerNormTile>(tile_floats));
    });
  };
}

}  // namespace tessera::cpu
