// ConvTranspose, 1-D and 2-D (decoder and segmentation heads, upsampling), NCHW: one invocation
// per output element gathers the taps that reach it (shaders/conv_transpose.comp). Core writes
// pads out explicitly (passes.hpp normalise_window_attributes); where it cannot (output_shape
// beyond the full output: a negative begin pad) the pad comes from the output shape as ONNX
// splits it. Groups, dilations, output_padding (in the output shape), constant or computed
// weights, optional bias, and an activation read only by the node in the epilogue.
#include "ops/op.hpp"

namespace tessera::vulkan {
namespace {

int64_t floor_half(int64_t v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

// Begin pad of spatial axis i of `spatial`.
int64_t begin_pad(const NodeView& node, int32_t i, int32_t spatial) {
  const tsr_tensor& x = *node.input(0);
  const tsr_tensor& w = *node.input(1);
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && node.attr_ints("output_shape", {}).empty()) {
    if (auto_pad != "NOTSET") return 0;  // VALID
    return node.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0))[i];
  }
  const int64_t stride = node.attr_ints("strides", std::vector<int64_t>(spatial, 1))[i];
  const int64_t dilation = node.attr_ints("dilations", std::vector<int64_t>(spatial, 1))[i];
  const int64_t out_pad = node.attr_ints("output_padding", std::vector<int64_t>(spatial, 0))[i];
  const int64_t total = stride * (x.dims[2 + i] - 1) + out_pad + (w.dims[2 + i] - 1) * dilation +
                        1 - node.output(0)->dims[2 + i];
  return auto_pad == "SAME_UPPER" ? floor_half(total) : total - floor_half(total);
}

std::string check(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(1);
  if (x == nullptr || w == nullptr) return "expects input and weight";
  if (x->rank != 3 && x->rank != 4) return "1-D and 2-D transposed convolutions only";
  if (w->rank != x->rank) return "weight rank differs from the input's";
  const int64_t group = node.attr_int("group", 1);
  if (group <= 0 || x->dims[1] % group != 0 || w->dims[0] != x->dims[1]) return "bad group";
  if (node.output(0)->dims[1] != w->dims[1] * group)
    return "output channels not weight dim 1 x group";
  for (const char* a : {"strides", "dilations"}) {
    for (int64_t v : node.attr_ints(a, {})) {
      if (v <= 0) return std::string(a) + " must be positive";
    }
  }
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const tsr_tensor& w = *node.input(1);
  const tsr_tensor& y = *node.output(0);
  const int32_t spatial = x.rank - 2;
  const std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> dilations =
      node.attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  auto n32 = [&node](int64_t v) { return narrow(v, node, "a shape"); };
  // Spatial axis k of 2 (H, W): 1-D runs as 2-D with H = 1 and H's stride, dilation, pad the
  // identity (`one`).
  auto hw = [&](int32_t k, int64_t v, int64_t one) {
    return n32(spatial == 1 && k == 0 ? one : v);
  };
  auto axis = [&](int32_t k) { return spatial == 1 ? 0 : k; };
  std::vector<int32_t> c = {n32(x.dims[0]), n32(x.dims[1])};
  for (int32_t k = 0; k < 2; ++k) c.push_back(hw(k, x.dims[2 + axis(k)], 1));
  c.push_back(n32(y.dims[1]));
  for (int32_t k = 0; k < 2; ++k) c.push_back(hw(k, y.dims[2 + axis(k)], 1));
  for (int32_t k = 0; k < 2; ++k) c.push_back(hw(k, w.dims[2 + axis(k)], 1));
  for (int32_t k = 0; k < 2; ++k) c.push_back(hw(k, strides[axis(k)], 1));
  for (int32_t k = 0; k < 2; ++k) c.push_back(hw(k, begin_pad(node, axis(k), spatial), 0));
  for (int32_t k = 0; k < 2; ++k) c.push_back(hw(k, dilations[axis(k)], 1));
  c.push_back(n32(node.attr_int("group", 1)));
  int32_t out = node.output_index(0);
  const Activation act = fuse_activation(lowering, node, out);
  const bool has_bias = node.input(2) != nullptr;
  c.insert(c.end(), {has_bias ? 1 : 0, act.code, float_bits(act.a), float_bits(act.b)});
  lowering.dispatch(node, linear_kernel("conv_transpose", plugin::tensor_numel(y), 64, c),
                    {&lowering.buffer(node.input_index(0)), &lowering.buffer(node.input_index(1)),
                     has_bias ? &lowering.buffer(node.input_index(2)) : &lowering.dummy()},
                    {&lowering.buffer(out)});
}

}  // namespace

TESSERA_VULKAN_OP(ConvTranspose, check, lower);

}  // namespace tessera::vulkan
