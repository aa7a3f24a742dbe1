// Conv (2-D, NCHW): depthwise (one input channel per group) as a direct window per output
// element (shaders/conv2d_depthwise.comp), every other convolution, 1x1 and grouped included, as
// an implicit GEMM with shared-memory tiles (shaders/conv2d_gemm.comp, schedule conv2d.gemm).
// Bias and an activation read only by the conv run in the kernel's epilogue.
#include "ops/op.hpp"
#include "schedules.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(1);
  if (x == nullptr || w == nullptr || x->rank != 4 || w->rank != 4) return "2-D convolutions only";
  if (node.attr_string("auto_pad", "NOTSET") != "NOTSET") return "auto_pad other than NOTSET";
  const int64_t group = node.attr_int("group", 1);
  if (group <= 0 || x->dims[1] % group != 0 || w->dims[0] % group != 0) return "bad group";
  return "";
}

struct Geometry {
  int64_t n, c, h, w, k, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, group;
};

Geometry geometry(const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const tsr_tensor& w = *node.input(1);
  const tsr_tensor& y = *node.output(0);
  const std::vector<int64_t> strides = node.attr_ints("strides", {1, 1});
  const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
  const std::vector<int64_t> dilations = node.attr_ints("dilations", {1, 1});
  return {x.dims[0], x.dims[1],    x.dims[2],    x.dims[3],
          w.dims[0], y.dims[2],    y.dims[3],    w.dims[2],
          w.dims[3], strides[0],   strides[1],   pads[0],
          pads[1],   dilations[0], dilations[1], node.attr_int("group", 1)};
}

// When the conv's only reader is an Add of a same-shaped value computed before the conv (a
// residual connection), the Add runs in the conv's epilogue: fuses it, returns the other value
// and sets `out` to the Add's output; otherwise -1.
int32_t fuse_residual(Lowering& lowering, const NodeView& node, int32_t& out) {
  const int32_t reader = lowering.sole_reader(node.output_index(0));
  if (reader < 0) return -1;
  const NodeView add = lowering.region().node(reader);
  if (add.op_type() != "Add" || add.num_inputs() != 2 || !float_only(add).empty()) return -1;
  const int32_t conv_out = node.output_index(0);
  const int32_t other = add.input_index(0) == conv_out ? add.input_index(1) : add.input_index(0);
  if (other == conv_out || other < 0 || lowering.producer(other) > node.index()) return -1;
  const tsr_tensor& o = lowering.region().value(other);
  if (o.dtype != TSR_DTYPE_FLOAT32 || shape_of(o) != shape_of(*node.output(0))) return -1;
  lowering.fuse(reader);
  out = add.output_index(0);
  return other;
}

void lower(Lowering& lowering, const NodeView& node) {
  const Geometry g = geometry(node);
  int32_t out = node.output_index(0);
  const int32_t residual = fuse_residual(lowering, node, out);
  const Activation act =
      residual >= 0 ? fuse_activation(lowering, lowering.region().node(lowering.producer(out)), out)
                    : fuse_activation(lowering, node, out);
  const bool has_bias = node.input(2) != nullptr;
  const Buffer& x = lowering.buffer(node.input_index(0));
  const Buffer& w = lowering.buffer(node.input_index(1));
  const Buffer& bias = has_bias ? lowering.buffer(node.input_index(2)) : lowering.dummy();
  const Buffer& y = lowering.buffer(out);
  auto n32 = [&node](int64_t v) { return narrow(v, node, "a shape"); };
  const std::vector<int32_t> window = {n32(g.kh), n32(g.kw), n32(g.sh), n32(g.sw),
                                       n32(g.ph), n32(g.pw), n32(g.dh), n32(g.dw)};
  const std::vector<int32_t> epilogue = {has_bias ? 1 : 0, residual >= 0 ? 1 : 0, act.code,
                                         float_bits(act.a), float_bits(act.b)};
  Kernel k;
  if (g.group == g.c && g.c > 1) {
    k = linear_kernel("conv2d_depthwise", g.n * g.k * g.oh * g.ow, 64,
                      {n32(g.n), n32(g.c), n32(g.h), n32(g.w), n32(g.k), n32(g.oh), n32(g.ow)});
    k.constants.insert(k.constants.end(), window.begin(), window.end());
  } else {
    const int64_t kg = g.k / g.group;
    const int64_t pixels = g.oh * g.ow;
    const int32_t tile = gemm_tile(lowering.config(node.index()), "conv2d.gemm", kg, pixels);
    k.shader = "conv2d_gemm";
    k.constants = {tile, n32(g.c), n32(g.h), n32(g.w), n32(g.k), n32(g.oh), n32(g.ow)};
    k.constants.insert(k.constants.end(), window.begin(), window.end());
    k.constants.push_back(n32(g.group));
    k.groups[0] = static_cast<uint32_t>((pixels + tile - 1) / tile);
    k.groups[1] = static_cast<uint32_t>((kg + tile - 1) / tile);
    k.groups[2] = static_cast<uint32_t>(g.n * g.group);
  }
  k.constants.insert(k.constants.end(), epilogue.begin(), epilogue.end());
  const Buffer& res = residual >= 0 ? lowering.buffer(residual) : lowering.dummy();
  lowering.dispatch(node, k, {&x, &w, &bias, &res}, {&y});
}

}  // namespace

TESSERA_VULKAN_OP(Conv, check, lower);

}  // namespace tessera::vulkan
