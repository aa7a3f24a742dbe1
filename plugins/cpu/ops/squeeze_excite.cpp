// Squeeze-excitation as exporters write it (mobilenet_v3, efficientnet, regnet_y, mnasnet-a):
// GlobalAveragePool (or ReduceMean over H and W) -> 1x1 Conv -> activation -> 1x1 Conv ->
// Sigmoid / HardSigmoid -> Mul onto the pooled tensor, as one step: a pass for the channel means,
// two small matrix-vector products with their activations on the calling thread, and a pass
// scaling every channel. As five nodes it was five parallel steps, three of them a few hundred
// multiply-adds each behind a thread hand-off.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "kernels/elementwise.hpp"
#include "kernels/kernels.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

namespace {

// W [rows x cols] (row-major) as W^T, so a product y += W x adds one contiguous row of W^T per
// element of x (a loop the compiler vectorises, summing in the reference's order).
std::shared_ptr<std::vector<float>> transposed(const float* w, int64_t rows, int64_t cols) {
  auto t = std::make_shared<std::vector<float>>(static_cast<size_t>(rows * cols));
  transpose_2d(w, cols, t->data(), rows, rows, cols);
  return t;
}

// The conv's bias, or zeros where it has none.
std::shared_ptr<std::vector<float>> bias_of(const NodeView& conv, int64_t n) {
  auto b = std::make_shared<std::vector<float>>(static_cast<size_t>(n), 0.0f);
  if (const float* v = constant_f32(conv.input(2))) std::copy(v, v + n, b->begin());
  return b;
}

// y = b + W x with W^T given ([n_in x n_out]).
void product(const std::vector<float>& wt, const std::vector<float>& b, const float* x,
             int64_t n_in, int64_t n_out, float* y) {
  std::copy(b.begin(), b.end(), y);
  for (int64_t j = 0; j < n_in; ++j) {
    const float* row = wt.data() + j * n_out;
    const float a = x[j];
    for (int64_t i = 0; i < n_out; ++i) y[i] += row[i] * a;
  }
}

}  // namespace

bool squeeze_excite_fc(const RegionView& region, const NodeView& conv, int64_t in_channels) {
  if (conv.op_type() != "Conv" || !query_conv(region, conv).empty()) return false;
  const tsr_tensor* w = conv.input(1);
  const tsr_tensor* y = conv.output(0);
  if (w == nullptr || y == nullptr || constant_f32(w) == nullptr || w->rank != 4 ||
      w->dims[1] != in_channels || w->dims[2] != 1 || w->dims[3] != 1 ||
      conv.attr_int("group", 1) != 1 || y->rank != 4 || y->dims[2] != 1 || y->dims[3] != 1) {
    return false;
  }
  // A pad would make the 1x1 output read padding (the bias alone) at stride 2 or more.
  for (const int64_t pad : conv.attr_ints("pads", {})) {
    if (pad != 0) return false;
  }
  const bool bias = conv.num_inputs() > 2 && conv.input_index(2) >= 0;
  return !bias || constant_f32(conv.input(2)) != nullptr;
}

Step build_squeeze_excite(BuildContext& ctx, const SqueezeExcite& se) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t batch = x->dims[0], c = x->dims[1], hw = x->dims[2] * x->dims[3];
  const int64_t r = se.fc1->output(0)->dims[1];
  const auto w1t = transposed(constant_f32(se.fc1->input(1)), r, c);
  const auto w2t = transposed(constant_f32(se.fc2->input(1)), c, r);
  const auto b1 = bias_of(*se.fc1, r), b2 = bias_of(*se.fc2, c);
  const UnaryFn act1 = se.act1, gate = se.gate;
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  // About 16K floats per task in the scaling pass: a 7x7 map of 576 channels is two tasks.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, hw));
  return [=](std::vector<float*>& v) {
    std::vector<float> s0(static_cast<size_t>(c)), s1(static_cast<size_t>(r));
    std::vector<float> scale(static_cast<size_t>(c));
    for (int64_t n = 0; n < batch; ++n) {
      const float* xn = v[in] + n * c * hw;
      float* yn = v[out] + n * c * hw;
      const float inf = std::numeric_limits<float>::infinity();
      global_average_pool(xn, c, hw, -inf, inf, s0.data());
      product(*w1t, *b1, s0.data(), c, r, s1.data());
      unary_run(act1, s1.data(), s1.data(), r);
      product(*w2t, *b2, s1.data(), r, c, scale.data());
      unary_run(gate, scale.data(), scale.data(), c);
      tbb::parallel_for(
          tbb::blocked_range<int64_t>(0, c, grain), [&](const tbb::blocked_range<int64_t>& b) {
            for (int64_t ch = b.begin(); ch < b.end(); ++ch) {
              scale_shift_run(xn + ch * hw, hw, scale[static_cast<size_t>(ch)], 0.0f, yn + ch * hw);
            }
          });
    }
  };
}

}  // namespace tessera::cpu
