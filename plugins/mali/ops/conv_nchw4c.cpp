// NCHW4c Conv (see conv_nchw4c.hpp). Weights are repacked once, at compile time, as
// [MB][CBW][KH][KW][4 in][4 out] (depthwise: [CB][KH][KW][4]) so a work-item's weight reads for
// one (input block, tap) are 64 contiguous bytes, in the order its float4 mads use them.
#include "ops/conv_nchw4c.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "ops/shared.hpp"

namespace tessera::mali {

ConvGeometry conv_geometry(const NodeView& node) {
  const tsr_tensor& w = node.input(1);
  const std::array<int64_t, 4> w4 = opencl::support::nchw_dims(w);
  const opencl::support::Window2d window = opencl::support::window_2d(node, {w4[2], w4[3]});
  ConvGeometry g;
  g.group = node.attr_int("group", 1);
  g.s = window.strides;
  g.d = window.dilations;
  g.k = window.kernel;
  g.pads = window.pads;
  return g;
}

bool is_depthwise(const NodeView& node, const ConvGeometry& g) {
  return g.group == node.input(0).dims[1] && g.group == node.output(0).dims[1] &&
         node.input(1).dims[1] == 1;
}

bool is_pointwise(const ConvGeometry& g) {
  return g.group == 1 && g.k[0] == 1 && g.k[1] == 1 && g.s[0] == 1 && g.s[1] == 1 &&
         g.pads[0] == 0 && g.pads[1] == 0 && g.pads[2] == 0 && g.pads[3] == 0;
}

Config conv_default_config(const NodeView& node, const Device& device, const char* id) {
  const std::string s = id;
  const std::array<int64_t, 4> y = opencl::support::nchw_dims(node.output(0));
  // The 1x1 kernels walk H*W as one row.
  const bool flat = s == "conv2d.nchw.1x1" || s == "conv2d.nchw4c.1x1";
  const int64_t width = flat ? y[2] * y[3] : y[3];
  // Outputs per work-item: 4 amortises each weight load over a float4-wide strip; narrow outputs
  // get 1 so no lane idles (2 for the 3x3 tile, whose row reuse needs two columns). Few values
  // keep the number of programs a model builds small.
  const int32_t opw = width >= 4 ? 4 : (s == "conv2d.nchw4c.3x3s1" ? 2 : 1);
  return device.config(id, (width + opw - 1) / opw,
                       {{"outputs_per_item", opw}, {"rows_per_item", 1}, {"blocks_per_item", 1}});
}

namespace {

const char* specialised_schedule(const NodeView& node, const ConvGeometry& g) {
  const bool unit_stride = g.s[0] == 1 && g.s[1] == 1;
  if (is_pointwise(g)) return "conv2d.nchw4c.1x1";
  if (is_depthwise(node, g)) return "conv2d.nchw4c.depthwise";
  if (g.group == 1 && g.k[0] == 3 && g.k[1] == 3 && unit_stride && g.d[0] == 1 && g.d[1] == 1) {
    return "conv2d.nchw4c.3x3s1";
  }
  return "conv2d.nchw4c.direct";
}

bool is(const Config& c, const char* id) {
  return std::string(c.schedule->id) == id;
}

// Group handling of the packed weights: output block mb reads `cbw` input blocks from
// cb0 = (mb * 4 / gm) * gc. Groups whose channel counts are multiples of 4 read only their own
// blocks; any other group count reads every block (zero weights outside the group).
struct GroupBlocks {
  int64_t gm, gc, cbw;
};

GroupBlocks group_blocks(int64_t channels, int64_t outputs, int64_t group) {
  const int64_t cpg = channels / group, mpg = outputs / group;
  if (group > 1 && cpg % 4 == 0 && mpg % 4 == 0) return {mpg, cpg / 4, cpg / 4};
  const int64_t blocks = (channels + 3) / 4;
  return {(outputs + 3) / 4 * 4 + 4, 0, blocks};
}

// `pad_to`: the number of output blocks is rounded up to a multiple of it (zero blocks).
std::vector<float> pack_weights(const NodeView& node, const ConvGeometry& g, const GroupBlocks& gb,
                                int64_t pad_to) {
  const tsr_tensor& wt = node.input(1);
  const float* w = constant_floats(node, 1);
  const int64_t M = wt.dims[0], cpg = wt.dims[1], KH = g.k[0], KW = g.k[1];
  const int64_t C = node.input(0).dims[1];
  const int64_t MB = (M + 3) / 4;
  const int64_t mpg = M / g.group;
  const int64_t padded_blocks = (MB + pad_to - 1) / pad_to * pad_to;
  std::vector<float> packed(static_cast<size_t>(padded_blocks * gb.cbw * KH * KW * 16), 0.0f);
  for (int64_t mb = 0; mb < MB; ++mb) {
    const int64_t cb0 = (mb * 4 / gb.gm) * gb.gc;
    for (int64_t j = 0; j < gb.cbw; ++j) {
      for (int64_t tap = 0; tap < KH * KW; ++tap) {
        float* dst = &packed[static_cast<size_t>(((mb * gb.cbw + j) * KH * KW + tap) * 16)];
        for (int64_t i = 0; i < 4; ++i) {
          const int64_t c = (cb0 + j) * 4 + i;
          for (int64_t o = 0; o < 4; ++o) {
            const int64_t m = mb * 4 + o;
            if (m >= M || c >= C) continue;
            const int64_t first = m / mpg * cpg;  // first input channel of m's group
            if (c < first || c >= first + cpg) continue;
            dst[i * 4 + o] = w[(m * cpg + c - first) * KH * KW + tap];
          }
        }
      }
    }
  }
  return packed;
}

std::vector<float> pack_depthwise(const NodeView& node, const ConvGeometry& g) {
  const int64_t C = node.input(0).dims[1], taps = g.k[0] * g.k[1];
  const float* w = constant_floats(node, 1);
  std::vector<float> packed(static_cast<size_t>((C + 3) / 4 * 4 * taps), 0.0f);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t tap = 0; tap < taps; ++tap) {
      packed[static_cast<size_t>(((c / 4) * taps + tap) * 4 + c % 4)] = w[c * taps + tap];
    }
  }
  return packed;
}

// The gemm launch's work-group (shared split_group): nullopt when the config's partial sums
// cannot fit this device.
std::optional<std::pair<int64_t, int64_t>> gemm_group(const Config& c, const Device& device) {
  return opencl::support::split_group(c.get("wg_x"), c.get("k_split"),
                                      c.get("blocks_per_item") * c.get("outputs_per_item") * 16,
                                      device.info);
}

// The gemm schedule's heuristic: a 2-block x 4-pixel tile where the shape has them, and the
// reduction split until the launch has enough work-items to fill the device, keeping at least
// four input blocks per slice.
Config gemm_default_config(const NodeView& node, const Device& device) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  const int64_t plane = y.dims[2] * y.dims[3];
  const int64_t CB = (x.dims[1] + 3) / 4, MB = (y.dims[1] + 3) / 4;
  const int32_t opw = plane >= 4 ? 4 : 1;
  const int32_t bpi = MB >= 4 ? 2 : 1;
  const int64_t items = (plane + opw - 1) / opw * y.dims[0] * ((MB + bpi - 1) / bpi);
  const int32_t ks = opencl::support::default_split(items, CB, device.info);
  Config c = device.config("conv2d.nchw4c.gemm", (plane + opw - 1) / opw,
                           {{"outputs_per_item", opw}, {"blocks_per_item", bpi}, {"k_split", ks}});
  // wg_x 0 (64 / k_split along the pixels) unless the plane is narrower than that.
  const int64_t columns = (plane + opw - 1) / opw;
  c.set("wg_x",
        columns < std::max(1, 64 / ks) ? default_wg_x(*c.schedule, device.info, columns) : 0);
  while (!gemm_group(c, device) && c.get("k_split") > 1) c.set("k_split", c.get("k_split") / 2);
  return c;
}

// Whether the gemm schedule is the heuristic's first choice: on a GPU for every group-1
// convolution (its reduction split fills the device where the direct kernels leave late, small
// planes to a few work-items); on a CPU device the direct kernels, whose per-item loops its
// cores run well, stay first.
bool prefer_gemm(const Device& device) {
  return device.info.kind == "gpu";
}

}  // namespace

std::vector<Config> conv_nchw4c_options(const NodeView& node, const Device& device) {
  const ConvGeometry g = conv_geometry(node);
  const char* id = specialised_schedule(node, g);
  std::vector<Config> out;
  const bool gemm = g.group == 1;
  if (gemm && prefer_gemm(device)) out.push_back(gemm_default_config(node, device));
  out.push_back(conv_default_config(node, device, id));
  if (std::string(id) != "conv2d.nchw4c.direct") {
    out.push_back(conv_default_config(node, device, "conv2d.nchw4c.direct"));
  }
  if (gemm && !prefer_gemm(device)) out.push_back(gemm_default_config(node, device));
  return out;
}

void lower_conv_nchw4c(Lowering& lw, const NodeView& node, int32_t index, const Config& requested) {
  Config config = requested;
  if (is(config, "conv2d.nchw4c.gemm")) {
    auto group = gemm_group(config, lw.op_device());
    // A requested k_split whose partial sums cannot fit this device: the heuristic's config.
    if (!group) {
      config = gemm_default_config(node, lw.op_device());
      group = gemm_group(config, lw.op_device());
    }
    if (!group) config = conv_default_config(node, lw.op_device(), "conv2d.nchw4c.direct");
  }
  const bool gemm = is(config, "conv2d.nchw4c.gemm");
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  const ConvGeometry g = conv_geometry(node);
  const int64_t C = x.dims[1], M = y.dims[1];
  const int64_t CB = (C + 3) / 4, MB = (M + 3) / 4;
  const bool depthwise = is(config, "conv2d.nchw4c.depthwise");
  const GroupBlocks gb = group_blocks(C, M, g.group);
  // Output blocks per work-item (1x1 and gemm); weights and bias padded to whole groups of them.
  const int64_t bpi = is(config, "conv2d.nchw4c.1x1") || gemm ? config.get("blocks_per_item") : 1;
  const int64_t item_groups = (MB + bpi - 1) / bpi;
  std::vector<float> bias(static_cast<size_t>(item_groups * bpi * 4), 0.0f);
  if (node.num_inputs() > 2 && node.has_input(2)) {
    const float* b = constant_floats(node, 2);
    std::copy(b, b + M, bias.begin());
  }
  const int64_t opw = config.get("outputs_per_item");
  const bool tiled = is(config, "conv2d.nchw4c.3x3s1");
  const int32_t rows = tiled ? config.get("rows_per_item") : 1;
  const bool flat = is(config, "conv2d.nchw4c.1x1");
  const int64_t width = flat ? y.dims[2] * y.dims[3] : y.dims[3];
  const FusedActivation act = fuse_activation(lw, node);
  opencl::Kernel kernel = lw.kernel(config);
  opencl::KernelArgs args = kernel.args();
  args.buffer(lw.buffer(node.input_index(0)))
      .buffer(
          lw.constant_buffer(depthwise ? pack_depthwise(node, g) : pack_weights(node, g, gb, bpi)))
      .buffer(lw.constant_buffer(bias))
      .buffer(lw.buffer(act.output))
      .i32x4(to_i32(x.dims[0], node), to_i32(CB, node), to_i32(x.dims[2], node),
             to_i32(x.dims[3], node))
      .i32x4(to_i32(y.dims[0], node), to_i32(MB, node), to_i32(y.dims[2], node),
             to_i32(y.dims[3], node))
      .i32x4(to_i32(g.k[0], node), to_i32(g.k[1], node), to_i32(gb.cbw, node), to_i32(M, node))
      .i32x4(to_i32(g.s[0], node), to_i32(g.s[1], node), to_i32(g.pads[0], node),
             to_i32(g.pads[1], node))
      .i32x4(to_i32(g.d[0], node), to_i32(g.d[1], node), act.code, 0)
      .i32x4(to_i32(gb.gm, node), to_i32(gb.gc, node), 0, 0)
      .f32(act.a)
      .f32(act.b);
  if (gemm) {
    const int64_t plane = y.dims[2] * y.dims[3];
    const opencl::support::SplitLaunch l =
        opencl::support::split_launch(*gemm_group(config, lw.op_device()), bpi * opw * 16,
                                      (plane + opw - 1) / opw, y.dims[0] * item_groups);
    args.local(l.scratch_bytes);
    lw.add_step(index, std::move(kernel), l.global, l.local, config);
    return;
  }
  const size_t grid_y = flat ? 1 : static_cast<size_t>((y.dims[2] + rows - 1) / rows);
  lw.add_step(index, std::move(kernel),
              {static_cast<size_t>((width + opw - 1) / opw), grid_y,
               static_cast<size_t>(y.dims[0] * item_groups)},
              {static_cast<size_t>(config.get("wg_x")), 1, 1}, config);
}

}  // namespace tessera::mali
