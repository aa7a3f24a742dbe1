// Conv (2-D, float32) on the adreno plugin, texture in and out, weights packed into an image.
// Schedules: 1x1 (group 1, stride 1, no pads), depthwise (group == C == M), direct (group 1) and
// grouped (any other group count). Bias is fused; weights and bias must be constants. The weight
// image layouts are described next to each kernel in kernels/conv.cl.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

struct Shape {
  int64_t C, M, KH, KW, group, Cg, Mg;
};

Shape shape_of(const NodeView& node) {
  const tsr_tensor& w = node.input(1);
  Shape s{};
  s.C = node.input(0).dims[1];
  s.M = w.dims[0];
  s.KH = w.dims[2];
  s.KW = w.dims[3];
  s.group = node.attr_int("group", 1);
  s.Cg = w.dims[1];
  s.Mg = s.group > 0 ? s.M / s.group : 0;
  return s;
}

bool is_depthwise(const Shape& s) {
  return s.group > 1 && s.group == s.C && s.group == s.M && s.Cg == 1;
}

// Width and height of the packed weight image.
std::array<int64_t, 2> weight_extent(const Shape& s) {
  const int64_t m4 = (s.M + 3) / 4;
  if (s.group == 1) return {s.KH * s.KW * ((s.C + 3) / 4) * 4, m4};
  if (is_depthwise(s)) return {s.KH * s.KW, m4};
  return {s.KH * s.KW * s.Cg, m4};
}

std::string check(const NodeView& node, const Device& device) {
  std::string r = check_image_io(node, device);
  if (!r.empty()) return r;
  r = check_constant(node, 1, "weight");
  if (!r.empty()) return r;
  if (node.input(1).rank != 4) return "only 2-D convolution (rank-4 weight) is implemented";
  if (node.num_inputs() > 2 && node.has_input(2)) {
    r = check_constant(node, 2, "bias");
    if (!r.empty()) return r;
  }
  const Shape s = shape_of(node);
  if (s.group < 1 || s.C % s.group != 0 || s.M % s.group != 0 || s.Cg * s.group != s.C) {
    return "group does not divide the channels";
  }
  if (node.attr_ints("strides", {1, 1}).size() != 2 ||
      node.attr_ints("dilations", {1, 1}).size() != 2) {
    return "strides/dilations must have 2 values";
  }
  const auto e = weight_extent(s);
  return check_extent("packed weight of " + node.describe(), e[0], e[1], device.limits);
}

// Weight texels (x, m4) in the layout the chosen kernel reads.
std::vector<float> pack_weights(const NodeView& node, const Shape& s) {
  const float* w = constant_floats(node, 1);
  const auto e = weight_extent(s);
  std::vector<float> img(static_cast<size_t>(e[0] * e[1] * 4), 0.0f);
  const int64_t C4x4 = (s.C + 3) / 4 * 4;
  for (int64_t m = 0; m < s.M; ++m) {
    for (int64_t cg = 0; cg < s.Cg; ++cg) {
      for (int64_t ky = 0; ky < s.KH; ++ky) {
        for (int64_t kx = 0; kx < s.KW; ++kx) {
          const float v = w[((m * s.Cg + cg) * s.KH + ky) * s.KW + kx];
          int64_t x = 0;
          if (s.group == 1) {
            x = (ky * s.KW + kx) * C4x4 + cg;
          } else if (is_depthwise(s)) {
            x = ky * s.KW + kx;
          } else {
            x = (ky * s.KW + kx) * s.Cg + cg;
          }
          img[static_cast<size_t>(((m / 4) * e[0] + x) * 4 + m % 4)] = v;
        }
      }
    }
  }
  return img;
}

// 4 outputs per work-item amortise each weight texel over a strip; narrow outputs get 1.
int32_t default_opw(int64_t width) {
  return width >= 8 ? 4 : 1;
}

const char* conv_schedule(const NodeView& node) {
  const Shape sh = shape_of(node);
  const auto [k, s, d, pads] = opencl::support::window_2d(node, {sh.KH, sh.KW});
  if (sh.group == 1) {
    const bool pointwise = k[0] == 1 && k[1] == 1 && s[0] == 1 && s[1] == 1 && pads[0] == 0 &&
                           pads[1] == 0 && pads[2] == 0 && pads[3] == 0;
    return pointwise ? "conv2d.image.1x1" : "conv2d.image.direct";
  }
  return is_depthwise(sh) ? "conv2d.image.depthwise" : "conv2d.image.grouped";
}

std::optional<std::pair<int64_t, int64_t>> gemm_group(const Config& c,
                                                      const opencl::DeviceInfo& device) {
  return opencl::support::split_group(c.get("wg_x"), c.get("k_split"),
                                      c.get("blocks_per_item") * c.get("opw") * 16, device);
}

// The gemm schedule's heuristic: a 2-texel x 4-pixel tile where the shape has them, and the
// reduction split until the launch fills the device (opencl::support::default_split), halved
// while its partial sums do not fit the device (as mali's).
Config gemm_default_config(const NodeView& node, const opencl::DeviceInfo& device) {
  const tsr_tensor& y = node.output(0);
  const int64_t plane = y.dims[2] * y.dims[3];
  const int64_t C4 = (node.input(0).dims[1] + 3) / 4, M4 = (y.dims[1] + 3) / 4;
  const int32_t opw = plane >= 4 ? 4 : 1;
  const int32_t bpi = M4 >= 4 ? 2 : 1;
  const int64_t columns = (plane + opw - 1) / opw;
  const int32_t ks =
      opencl::support::default_split(columns * y.dims[0] * ((M4 + bpi - 1) / bpi), C4, device);
  Config c = default_config("conv2d.image.gemm", device, columns,
                            {{"opw", opw}, {"blocks_per_item", bpi}, {"k_split", ks}});
  c.set("wg_x", columns < std::max(1, 64 / ks) ? default_wg_x(*c.schedule, device, columns) : 0);
  while (!gemm_group(c, device) && c.get("k_split") > 1) c.set("k_split", c.get("k_split") / 2);
  return c;
}

// The shape's schedule (the weight image layout depends on it); group-1 convolutions also have
// the gemm schedule (same weight image), first on a GPU, whose many compute units the direct
// kernels leave idle on late layers with small planes. Every knob is tunable.
std::vector<Config> conv_options(const NodeView& node, const Device& device) {
  const int64_t width = node.output(0).dims[3];
  const int32_t opw = default_opw(width);
  std::vector<Config> out = {
      device.config(conv_schedule(node), (width + opw - 1) / opw, {{"opw", opw}})};
  if (shape_of(node).group == 1) {
    Config gemm = gemm_default_config(node, device.info);
    if (device.info.kind == "gpu") {
      out.insert(out.begin(), gemm);
    } else {
      out.push_back(gemm);
    }
  }
  return out;
}

// Binds what every conv kernel takes: input, packed weights, bias, output and the geometry (the
// gemm kernel takes its __local scratch after them).
opencl::KernelArgs bind_conv(Lowering& lw, const NodeView& node, int32_t index,
                             const opencl::Kernel& kernel) {
  const Shape sh = shape_of(node);
  const auto [k, s, d, pads] = opencl::support::window_2d(node, {sh.KH, sh.KW});
  std::vector<float> bias(static_cast<size_t>(sh.M), 0.0f);
  if (node.num_inputs() > 2 && node.has_input(2)) {
    const float* b = constant_floats(node, 2);
    bias.assign(b, b + sh.M);
  }
  const auto e = weight_extent(sh);
  const auto in = blocked_dims(node.input(0), node);
  const auto out = blocked_dims(node.output(0), node);
  opencl::KernelArgs args = kernel.args();
  args.buffer(lw.image(node.input_index(0)))
      .buffer(lw.constant_image(e[0], e[1], pack_weights(node, sh)))
      .buffer(lw.constant_buffer(pad_channels(bias)))
      .buffer(lw.image(node.output_index(0)))
      .i32x4(in[0], in[1], in[2], in[3])
      .i32x4(out[0], out[1], out[2], out[3])
      .i32x4(to_i32(k[0], node), to_i32(k[1], node), to_i32(sh.Cg, node), to_i32(sh.Mg, node))
      .i32x4(to_i32(s[0], node), to_i32(s[1], node), to_i32(pads[0], node), to_i32(pads[1], node))
      .i32x4(to_i32(d[0], node), to_i32(d[1], node), to_i32(sh.C, node), to_i32(sh.M, node));
  return args;
}

void lower_gemm(Lowering& lw, const NodeView& node, int32_t index, const Config& config,
                const std::pair<int64_t, int64_t>& group) {
  const tsr_tensor& y = node.output(0);
  const int64_t opw = config.get("opw"), bpi = config.get("blocks_per_item");
  const int64_t plane = y.dims[2] * y.dims[3];
  const int64_t blocks = (y.dims[1] + 3) / 4;
  const opencl::support::SplitLaunch l = opencl::support::split_launch(
      group, bpi * opw * 16, (plane + opw - 1) / opw, y.dims[0] * ((blocks + bpi - 1) / bpi));
  opencl::Kernel kernel = lw.kernel(config);
  bind_conv(lw, node, index, kernel).local(l.scratch_bytes);
  lw.add_step(index, std::move(kernel), l.global, l.local, config);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& y = node.output(0);
  Config config = choose_config(lw, index, lw.forced(conv_options(node, lw.op_device())));
  if (std::string(config.schedule->id) == "conv2d.image.gemm") {
    auto group = gemm_group(config, lw.device());
    // A requested k_split whose partial sums cannot fit this device: the heuristic's gemm.
    if (!group) {
      config = lw.forced({gemm_default_config(node, lw.device())}).front();
      group = gemm_group(config, lw.device());
    }
    if (group) {
      lower_gemm(lw, node, index, config, *group);
      return;
    }
    const int32_t opw = default_opw(y.dims[3]);
    config = lw.config_for(conv_schedule(node), (y.dims[3] + opw - 1) / opw, {{"opw", opw}});
  }
  // The config's opw, not the heuristic's: a `knob.opw` target option may have forced another.
  const int64_t items = (y.dims[3] + config.get("opw") - 1) / config.get("opw");
  opencl::Kernel kernel = lw.kernel(config);
  bind_conv(lw, node, index, kernel);
  lw.add_step(index, std::move(kernel),
              {static_cast<size_t>(items), static_cast<size_t>(y.dims[0] * y.dims[2]),
               static_cast<size_t>((y.dims[1] + 3) / 4)},
              config);
}

}  // namespace
TESSERA_ADRENO_OP("Conv", check, lower);
static const TuningRegistrar kConvTuning("Conv", conv_options);
}  // namespace tessera::adreno
