// Conv (NCHW, float32): depthwise with the direct kernel, grouped 3x3 convs of a few channels per
// group with the direct grouped kernel (f32_gconv2d_chw_3x3), everything else as the packed GEMM
// with B packed panel by panel inside each task (a strided copy for 1x1 stride 1, im2col
// otherwise), on phase planes, on flattened planes, or as Winograd.
// Weights are packed once at compile time; a following BatchNormalization is folded into them and a
// following Relu/Clip runs in the GEMM epilogue.
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

struct ConvAttrs {
  ConvGeometry g;
  int64_t batch = 1;
  // The first window row and column g keeps of the weights (drop_dead_taps), and their full
  // extents.
  int64_t ky0 = 0, kx0 = 0, kh_full = 1, kw_full = 1;
};

// First and last kernel taps along one axis that read the input for some output position; a tap
// reading only padding (ASPP's rate-24 and rate-36 3x3 convs on a 14x14 map: every tap but the
// centre) contributes nothing. Returns false when no tap reads the input.
bool live_taps(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t dilation, int64_t taps,
               int64_t* first, int64_t* last) {
  *first = -1;
  for (int64_t k = 0; k < taps; ++k) {
    int64_t lo, hi;
    tap_output_range(in, out, stride, pad, k * dilation, &lo, &hi);
    if (hi > lo) {
      if (*first < 0) *first = k;
      *last = k;
    }
  }
  return *first >= 0;
}

// Shrinks the window to its live taps (the pads move with it), so a dilated conv whose outer taps
// only ever read padding runs as the smaller conv it is; a window left 1 tap wide drops its
// dilation, and a 1x1 result takes the direct GEMM path.
void drop_dead_taps(ConvAttrs* a) {
  ConvGeometry& g = a->g;
  int64_t y0, y1, x0, x1;
  if (!live_taps(g.h, g.oh, g.sh, g.pt, g.dil_h, g.kh, &y0, &y1) ||
      !live_taps(g.w, g.ow, g.sw, g.pl, g.dil_w, g.kw, &x0, &x1)) {
    return;
  }
  a->ky0 = y0;
  a->kx0 = x0;
  g.pt -= y0 * g.dil_h;
  g.pl -= x0 * g.dil_w;
  g.kh = y1 - y0 + 1;
  g.kw = x1 - x0 + 1;
  if (g.kh == 1) g.dil_h = 1;
  if (g.kw == 1) g.dil_w = 1;
}

// Throws plugin::Failure when the node is outside what the kernels do.
ConvAttrs conv_attrs(const NodeView& node) {
  auto fail = [&](const std::string& why) {
    throw plugin::Failure(TSR_UNSUPPORTED, node.describe() + ": " + why);
  };
  check_conv_operands(node, {3, 4},
                      "only 1-D, 2-D and 3-D convolution (rank 3 to 5) is implemented");
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(1);
  const tsr_tensor* y = node.output(0);
  // A 1-D conv (ECA attention over channels, audio front ends) is the 2-D conv of height 1: NCL
  // is NC1L in memory, so only the geometry changes.
  const bool one_d = x->rank == 3;
  const size_t axes = one_d ? 1 : 2;
  // Per-axis attributes with the height axis (1-D: height 1, no stride, no padding) in front.
  auto per_axis = [&](const char* name, int64_t fallback, size_t values) {
    std::vector<int64_t> v = node.attr_ints(name, std::vector<int64_t>(values, fallback));
    if (v.size() != values) {
      fail(std::string(name) + " must have " + std::to_string(values) + " values");
    }
    if (one_d) v.insert(v.begin() + static_cast<std::ptrdiff_t>(values / 2), values / 2, fallback);
    if (one_d) v.insert(v.begin(), fallback);
    return v;
  };
  const std::vector<int64_t> dilations = per_axis("dilations", 1, axes);
  if (dilations[0] < 1 || dilations[1] < 1) fail("dilations must be >= 1");
  ConvAttrs a;
  ConvGeometry& g = a.g;
  g.dil_h = dilations[0];
  g.dil_w = dilations[1];
  a.batch = x->dims[0];
  g.c = x->dims[1];
  g.h = one_d ? 1 : x->dims[2];
  g.w = x->dims[x->rank - 1];
  g.oc = y->dims[1];
  g.oh = one_d ? 1 : y->dims[2];
  g.ow = y->dims[y->rank - 1];
  g.kh = one_d ? 1 : w->dims[2];
  g.kw = w->dims[w->rank - 1];
  g.group = node.attr_int("group", 1);
  if (g.group <= 0 || g.c % g.group != 0 || g.oc % g.group != 0 || w->dims[1] * g.group != g.c ||
      w->dims[0] != g.oc) {
    fail("weights shape does not match input channels and group");
  }
  const std::vector<int64_t> strides = per_axis("strides", 1, axes);
  g.sh = strides[0];
  g.sw = strides[1];
  // Core writes the pads out (auto_pad never reaches a plugin).
  const std::vector<int64_t> pads = per_axis("pads", 0, 2 * axes);
  g.pt = pads[0];
  g.pl = pads[1];
  a.kh_full = g.kh;
  a.kw_full = g.kw;
  drop_dead_taps(&a);
  return a;
}

// Dilated convs with fewer live (tap, output) pairs than this run as tap GEMMs: deeplabv3's ASPP
// (18% live) measured 7.5 ms by im2col, 2.8 ms by taps. The bound itself was chosen, not swept:
// near full windows im2col's single GEMM is expected to win over one GEMM per tap.
constexpr double kTapRegionsBelowLiveShare = 0.7;

bool is_depthwise(const ConvGeometry& g) {
  return g.group == g.c && g.group == g.oc;
}

// The GEMM-path heuristic: C is output channels per group x output pixels, K = (c, ky, kx).
Config im2col_heuristic(const ConvGeometry& g, int64_t threads) {
  return default_conv_config(g.oc / g.group, g.oh * g.ow, (g.c / g.group) * g.kh * g.kw, threads);
}

Config winograd_heuristic(const ConvGeometry& g, int64_t threads) {
  return default_winograd_config(g.oc, g.c, ((g.oh + 1) / 2) * ((g.ow + 1) / 2), threads);
}

// Where Winograd F(2x2,3x3) measured faster than the im2col GEMM (see README).
bool prefer_winograd(const ConvGeometry& g) {
  // Measured (README): 1.5-1.7x on resnet-18's 56x56..14x14 layers and squeezenet's 13x13 and
  // 27x27 expand3x3, even at C = 16 on 55x55; at 7x7 (16 tiles, 512 channels) it ties or loses,
  // as 16 transformed weight matrices (16 MiB) stream from memory per task.
  return winograd_applies(g) && g.c >= 16 && g.oh * g.ow >= 13 * 13;
}

Config flat_heuristic(const ConvGeometry& g, int64_t threads) {
  return default_flat_config(g.oc, (g.oh - 1) * (g.ow + g.extent_w() - 1) + g.ow, threads);
}

// Where the flattened-plane GEMM measured faster than Winograd and im2col (see README): 3x3 convs
// with at most half as many output channels as input channels (densenet's 128 -> 32: Winograd's
// input transform over 128 channels outweighed its 32-row products), with at least 4x as many
// (squeezenet's expand3x3), and maps too small for Winograd (7x7, where im2col ran).
// Dilated convs keep im2col by default: FCN's 3x3 256 -> 256 at rate 2 on 28x28 measured 9.0 ms
// flat against 6.2 ms im2col (best of the tuner's trials, this Xeon): the padded planes (1 MiB)
// leave L2, where im2col's panels stay in it. Flat stays a schedule the tuner may pick.
bool prefer_phase(const ConvGeometry& g);

// Also stride-1 convs of few input channels where phase planes do not apply (3 -> 32 3x3 at
// 224x224: 612 against im2col's 821 us; 3 -> 16 9x9 at 136x136: 541 against 1,230), on rows as
// wide as those measured (24 or more).
bool prefer_flat(const ConvGeometry& g) {
  if (g.dilated() || !flat_gemm_conv_applies(g)) return false;
  if (g.c < 16) return g.ow >= 24 && !prefer_phase(g);
  return g.kh == 3 && g.kw == 3 && (2 * g.oc <= g.c || g.oc >= 4 * g.c || !prefer_winograd(g));
}

// Where phase planes measured faster than im2col panels (Zen 4, one thread, conv alone): the
// stride-2 stems, K = 27 (mobilenet_v2, squeezenet: 268 vs 401 us, 494 vs 675 us) and K = 147
// (resnet's 7x7: 2.31 vs 3.54 ms), and resnet's 3x3 stride-2 convs at K = 576 (1.55 vs 1.67 ms).
// A tile reads all K rows of B in one pass (no K blocking), so larger K stays on im2col. Tiles
// never straddle output rows, so rows narrower than 24 waste most of a tile (resnet's 1x1
// stride-2 shortcut at 7x7: 320 vs 177 us), and 1x1 stride-2 convs lost at 28 wide as well (215
// vs 170 us): one phase plane of four is a strided copy like im2col's, without its packing gain.
// Stride-1 convs of few input channels (under 16: image-to-image stems, ESPCN, U-Net heads) read
// B in place as well: im2col's panels of K = 9..243 rows cost more to pack than they save (3 ->
// 16 3x3 at 128x128: 122 against 197 us; 1 -> 32 5x5 at 96x96: 90 against 150; 8 -> 16 at
// 56x56: 54 against 103; the tuner's trials on a Xeon, 2 threads).
bool prefer_phase(const ConvGeometry& g) {
  return phase_gemm_applies(g) && (g.sh == 2 || (g.sh == 1 && g.c < 16)) && g.kh * g.kw > 1 &&
         g.ow >= 24 && g.c * g.kh * g.kw <= 1000;
}

// The schedules a conv can run, the heuristic's first (empty for depthwise: nothing to tune).
// One group of a grouped conv as a group-1 conv (input and output channels of the group).
ConvGeometry group_geometry(const ConvGeometry& g) {
  ConvGeometry one = g;
  one.c = g.c / g.group;
  one.oc = g.oc / g.group;
  one.group = 1;
  return one;
}

// Grouped convs with few channels per group (regnet's group width 8) on phase planes, group by
// group: B rows are read in place, where im2col packed each B panel for only oc / group rows of
// A (regnet_y_400mf's 3x3 convs ran at ~5 GMAC/s).
bool prefer_grouped_phase(const ConvGeometry& g) {
  const ConvGeometry one = group_geometry(g);
  return g.group > 1 && phase_gemm_applies(one) && one.oc <= 64 && one.ow >= 7 &&
         one.c * one.kh * one.kw <= 1000;
}

// Grouped 3x3 convs (2 groups or more) of kGconvMinChannels..kGconvMaxChannels channels per
// group in and out (regnet's group width 8) run the direct kernel: as per-group GEMMs, 8 rows of C
// filled a third of each 6-row tile pair and 7- or 14-wide rows a fraction of each 16-column tile
// (regnet_y_400mf's 3x3 convs ran ~2x ONNX Runtime's time). Group-1 convs that narrow keep the
// GEMM schedules, whose choice among im2col, phase planes and Winograd is measured.
bool prefer_gconv(const ConvGeometry& g) {
  return g.group > 1 && f32_gconv2d_chw_3x3_applies(g);
}

std::vector<Config> conv_configs(const ConvGeometry& g, int64_t threads) {
  if (is_depthwise(g)) return {};
  std::vector<Config> out = {im2col_heuristic(g, threads)};
  if (prefer_gconv(g))
    out.insert(out.begin(), Config{&schedule("conv2d.nchw.gconv3x3_direct"), {}});
  if (prefer_grouped_phase(g)) {
    const ConvGeometry one = group_geometry(g);
    out.insert(out.begin() + (prefer_gconv(g) ? 1 : 0), default_phase_config(one.oc, one.ow));
  }
  if (phase_gemm_applies(g)) {
    out.push_back(default_phase_config(g.oc, g.ow));
    if (prefer_phase(g) && !prefer_gconv(g)) std::swap(out[0], out.back());
  }
  if (winograd_applies(g)) {
    out.push_back(winograd_heuristic(g, threads));
    if (prefer_winograd(g) && !prefer_gconv(g)) std::swap(out[0], out.back());
  }
  if (flat_gemm_conv_applies(g)) {
    out.push_back(flat_heuristic(g, threads));
    if (prefer_flat(g) && !prefer_gconv(g)) std::swap(out[0], out.back());
  }
  return out;
}

}  // namespace

std::vector<Config> tunable_conv(const RegionView& region, const NodeView& node, int64_t threads) {
  (void)region;
  try {
    return conv_configs(conv_attrs(node).g, threads);
  } catch (const plugin::Failure&) {
    return {};
  }
}

namespace {

// The pool's window over one image (the fused conv step loops over the batch): its channels as
// planes, not batch x channels.
ConvGeometry image_pool_geometry(const NodeView& pool) {
  ConvGeometry g = pool_geometry(pool);
  g.c = g.oc = pool.input(0)->dims[1];
  return g;
}

}  // namespace

bool conv_pool_fusable(const NodeView& conv, const NodeView& pool) {
  try {
    const ConvGeometry g = conv_attrs(conv).g;
    // phase_gemm_pool_applies checks group 1 and that the pool has the conv's channels. The
    // fused conv runs phase planes, so a conv Winograd takes stays apart: googlenet's 64 -> 192
    // 3x3 at 56x56 ran 5.9 ms fused on phase planes (Emerald Rapids, 2 threads; ORT 3.6 ms).
    return !is_depthwise(g) && !prefer_winograd(g) &&
           phase_gemm_pool_applies(g, image_pool_geometry(pool));
  } catch (const plugin::Failure&) {
    return false;
  }
}

std::string query_conv(const RegionView& region, const NodeView& node) {
  if (is_conv3d(node)) return query_conv3d(region, node);
  try {
    conv_attrs(node);
  } catch (const plugin::Failure& e) {
    return e.what();
  }
  return "";
}

namespace {

// A conv's effective weights and bias, with a following BatchNormalization (or nullptr) folded
// in: y = s * (conv(x) + b - mean) + beta, s = gamma / sqrt(var + eps).
struct FoldedWeights {
  std::shared_ptr<std::vector<float>> weights, bias;
};

FoldedWeights fold_weights(const NodeView& node, const NodeView* bn, const ConvAttrs& attrs) {
  const ConvGeometry& g = attrs.g;
  const tsr_tensor* wt = node.input(1);
  const int64_t k_per_group = (g.c / g.group) * g.kh * g.kw;
  FoldedWeights f;
  // The live window [ky0, ky0 + kh) x [kx0, kx0 + kw) of each [oc, c / group] filter.
  const float* w = static_cast<const float*>(wt->data);
  f.weights = std::make_shared<std::vector<float>>();
  f.weights->reserve(static_cast<size_t>(g.oc * k_per_group));
  for (int64_t f_c = 0; f_c < g.oc * (g.c / g.group); ++f_c) {
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const float* row = w + (f_c * attrs.kh_full + attrs.ky0 + ky) * attrs.kw_full + attrs.kx0;
      f.weights->insert(f.weights->end(), row, row + g.kw);
    }
  }
  f.bias = std::make_shared<std::vector<float>>(static_cast<size_t>(g.oc), 0.0f);
  if (const float* b = constant_f32(node.input(2))) std::copy(b, b + g.oc, f.bias->begin());
  if (bn != nullptr) fold_batch_norm(*bn, g.oc, k_per_group, f.weights->data(), f.bias->data());
  return f;
}

}  // namespace

bool conv_depthwise_fusable(const NodeView& conv, const NodeView& depthwise) {
  try {
    const ConvAttrs c = conv_attrs(conv), dw = conv_attrs(depthwise);
    const ConvGeometry& g = c.g;
    // Rows narrower than 28 keep the whole-plane depthwise kernel (its flat vectors waste less
    // of a vector on 7- and 14-wide rows than rows of vectors would). A stride-2 stem on phase
    // planes (mobilenet_v2's, 3 -> 32 at 112x112) fused with its depthwise conv measured no
    // faster than the two apart (1 thread: 333-419 us against 208 + 116), so only 1x1 convs fuse.
    return c.batch == dw.batch && is_depthwise(dw.g) && g.ow >= 28 &&
           pointwise_depthwise_applies(g, dw.g);
  } catch (const plugin::Failure&) {
    return false;
  }
}

namespace {

// A conv fused with the depthwise conv after it (fusion.cpp): ctx.dw and its folded
// BatchNormalization and activation.
Step build_conv_depthwise(BuildContext& ctx, const ConvGeometry& g, int64_t batch,
                          const FoldedWeights& conv) {
  const ConvAttrs dw_attrs = conv_attrs(*ctx.dw);
  const ConvGeometry dg = dw_attrs.g;
  const FoldedWeights dw = fold_weights(*ctx.dw, ctx.dw_bn, dw_attrs);
  // The conv runs on rows (its B rows read in place), so its tile is the phase schedule's; a
  // config the tuner or a pack gives for the node is used where it names it.
  Config heuristic = default_phase_config(g.oc, g.ow);
  const Config config = choose_config(ctx, heuristic, "conv2d fused with depthwise as ");
  const int64_t k = g.c * g.kh * g.kw;
  auto a = std::make_shared<PackedMatrix>();
  pack_a(conv.weights->data(), g.oc, k, k, 1, a.get(), tile_rows(config));
  const int64_t nr = config.get("tile_cols");
  const Activation act = ctx.act, dact = ctx.dw_act;
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t out_plane = dg.oc * dg.oh * dg.ow;
  return [=](std::vector<float*>& v) {
    const Epilogue e = bias_clamp(conv.bias->data(), act);
    for (int64_t n = 0; n < batch; ++n) {
      pointwise_depthwise_conv(v[in] + n * g.c * g.h * g.w, g, *a, e, nr, dg, dw.weights->data(),
                               dw.bias->data(), dact.lo, dact.hi, v[out] + n * out_plane);
    }
  };
}

}  // namespace

namespace {

// What every 2-D conv schedule's step needs: the geometry, the weights and bias with a fused BN
// folded in, and the epilogue's activation and residual (a fused residual Add, fusion.cpp:
// y = act(conv(x) + bias + v[res]), v[res] shaped like y).
struct ConvStep {
  ConvGeometry g;
  int64_t batch, k_per_group, oc_per_group, out_plane;
  std::shared_ptr<std::vector<float>> weights, bias;
  Activation act;
  int32_t in, out, res;

  // Image n of the input and the output, and of the residual (nullptr without one).
  const float* x(const std::vector<float*>& v, int64_t n) const {
    return v[in] + n * g.c * g.h * g.w;
  }
  float* y(const std::vector<float*>& v, int64_t n) const { return v[out] + n * out_plane; }
  const float* residual(const std::vector<float*>& v, int64_t n) const {
    return res >= 0 ? v[res] + n * out_plane : nullptr;
  }
};

// The step of a schedule whose kernel takes a whole epilogue: conv(x, e, y) once per image of
// the batch, e holding the bias, the clamp, the fused post op and that image's residual.
template <class Conv>
Step per_image(BuildContext& ctx, const ConvStep& c, Conv conv) {
  const std::shared_ptr<const UnaryFn> post = take_post(ctx);
  return [=](std::vector<float*>& v) {
    Epilogue e = bias_clamp(c.bias->data(), c.act);
    e.post = post.get();
    for (int64_t n = 0; n < c.batch; ++n) {
      e.residual = c.residual(v, n);
      conv(c.x(v, n), e, c.y(v, n));
    }
  };
}

Step depthwise_step(BuildContext& ctx, const ConvStep& c) {
  choose_config(ctx, Config{&schedule("conv2d.nchw.depthwise_direct"), {}});
  // The depthwise kernels have no residual input: it is added in a second pass, and a post op
  // then runs after that pass (in region.cpp).
  const float inf = std::numeric_limits<float>::infinity();
  const std::shared_ptr<const UnaryFn> post = c.res >= 0 ? nullptr : take_post(ctx);
  return [=](std::vector<float*>& v) {
    for (int64_t n = 0; n < c.batch; ++n) {
      float* y = c.y(v, n);
      depthwise_conv(c.x(v, n), c.weights->data(), c.bias->data(), c.g,
                     c.res >= 0 ? -inf : c.act.lo, c.res >= 0 ? inf : c.act.hi, y, post.get());
      if (c.res >= 0) add_clamp(y, c.residual(v, n), y, c.out_plane, c.act.lo, c.act.hi);
    }
  };
}

// The heuristic's schedule, or the other one where a node config names it (phase planes when a
// MaxPool is fused: the schedule that computes whole rows).
Config choose_conv_config(BuildContext& ctx, const ConvGeometry& g, bool direct) {
  const std::vector<Config> configs = conv_configs(g, ctx.threads);
  Config heuristic = configs.front();
  for (const Config& c : configs) {
    if (ctx.config != nullptr && ctx.config->schedule == c.schedule->id) heuristic = c;
  }
  if (ctx.pool != nullptr) {
    for (const Config& c : configs) {
      if (std::string(c.schedule->id) == "conv2d.nchw.phase_gemm") heuristic = c;
    }
  }
  return choose_config(ctx, heuristic, direct ? "conv2d 1x1 as " : "");
}

Step gconv_step(BuildContext& ctx, const ConvStep& c) {
  auto packed = std::make_shared<GconvWeights>();
  f32_gconv2d_chw_3x3_pack(c.weights->data(), c.g, packed.get());
  const ConvGeometry g = c.g;
  return per_image(ctx, c, [=](const float* x, const Epilogue& e, float* y) {
    f32_gconv2d_chw_3x3(x, g, *packed, e, y);
  });
}

Step flat_gemm_step(BuildContext& ctx, const ConvStep& c, const Config& config) {
  auto packed = std::make_shared<FlatConvWeights>();
  flat_gemm_conv_pack(c.weights->data(), c.g, config.get("mc"), tile_rows(config), packed.get());
  const int64_t nc = config.get("nc"), nr = config.get("tile_cols");
  const ConvGeometry g = c.g;
  return per_image(ctx, c, [=](const float* x, const Epilogue& e, float* y) {
    flat_gemm_conv(x, g, *packed, e, nc, nr, y);
  });
}

Step winograd_step(const ConvStep& c, const Config& config) {
  auto u = std::make_shared<WinogradWeights>();
  winograd_weights(c.weights->data(), c.g.oc, c.g.c, config.get("tile_rows"), u.get());
  const WinogradBlocking wb{config.get("tiles"), config.get("tile_cols")};
  return [=](std::vector<float*>& v) {
    for (int64_t n = 0; n < c.batch; ++n) {
      winograd_conv(c.x(v, n), c.g, *u, c.bias->data(), c.residual(v, n), c.act.lo, c.act.hi, wb,
                    c.y(v, n));
    }
  };
}

// Group by group on phase planes (prefer_grouped_phase). With groups enough to keep every
// thread busy (regnet's later stages: 55 groups on a 7x7 map) each group is one task run
// entirely on its thread, so its phase planes stay in that thread's scratch; otherwise the
// groups run one after another, each parallel over its rows (two parallel loops per group
// had cost more than the 8x72 GEMMs themselves on the small maps).
Step grouped_phase_step(BuildContext& ctx, const ConvStep& c, const Config& config) {
  const ConvGeometry g = c.g, one = group_geometry(g);
  auto packed = std::make_shared<std::vector<PackedMatrix>>(static_cast<size_t>(g.group));
  for (int64_t grp = 0; grp < g.group; ++grp) {
    pack_a(c.weights->data() + grp * c.oc_per_group * c.k_per_group, c.oc_per_group, c.k_per_group,
           c.k_per_group, 1, &(*packed)[static_cast<size_t>(grp)], tile_rows(config));
  }
  const int64_t nr = config.get("tile_cols"), cols = g.oh * g.ow;
  const std::shared_ptr<const UnaryFn> post = take_post(ctx);
  return [=](std::vector<float*>& v) {
    const bool by_group = g.group >= 2 * tbb::this_task_arena::max_concurrency();
    for (int64_t n = 0; n < c.batch; ++n) {
      const float* x = c.x(v, n);
      float* y = c.y(v, n);
      auto run_group = [&](int64_t grp) {
        Epilogue e = bias_clamp(c.bias->data() + grp * c.oc_per_group, c.act);
        e.post = post.get();
        e.residual = c.res >= 0 ? c.residual(v, n) + grp * c.oc_per_group * cols : nullptr;
        phase_gemm_conv(x + grp * one.c * g.h * g.w, one, (*packed)[static_cast<size_t>(grp)], e,
                        nr, y + grp * c.oc_per_group * cols, !by_group);
      };
      if (by_group) {
        tbb::parallel_for(int64_t{0}, g.group, run_group);
      } else {
        for (int64_t grp = 0; grp < g.group; ++grp) run_group(grp);
      }
    }
  };
}

// Phase planes, group 1; with a fused MaxPool the conv's rows are pooled while in cache.
Step phase_step(BuildContext& ctx, const ConvStep& c, const Config& config) {
  auto a = std::make_shared<PackedMatrix>();
  pack_a(c.weights->data(), c.g.oc, c.k_per_group, c.k_per_group, 1, a.get(), tile_rows(config));
  const int64_t nr = config.get("tile_cols");
  const ConvGeometry g = c.g;
  if (ctx.pool != nullptr) {
    const ConvGeometry pg = image_pool_geometry(*ctx.pool);
    const int64_t pooled = g.oc * pg.oh * pg.ow;
    return [=](std::vector<float*>& v) {
      const Epilogue e = bias_clamp(c.bias->data(), c.act);
      for (int64_t n = 0; n < c.batch; ++n) {
        phase_gemm_conv_pool(c.x(v, n), g, *a, e, nr, pg, v[c.out] + n * pooled);
      }
    };
  }
  return per_image(ctx, c, [=](const float* x, const Epilogue& e, float* y) {
    phase_gemm_conv(x, g, *a, e, nr, y);
  });
}

// A dilated conv whose taps mostly read padding as one GEMM per live tap region; an empty Step
// where that does not apply or would not pay.
Step tap_region_step(BuildContext& ctx, const ConvStep& c, const Config& config,
                     const GemmBlocking& blocking) {
  const ConvGeometry g = c.g;
  if (!g.dilated() || !tap_regions_apply(g)) return {};
  auto plan = std::make_shared<TapRegionPlan>(plan_tap_regions(g));
  if (plan->live_share >= kTapRegionsBelowLiveShare) return {};
  ctx.notes->push_back(std::string(ctx.node.name()) + ": dilated conv as " +
                       std::to_string(plan->taps.size()) + " tap GEMMs (" +
                       std::to_string(static_cast<int>(plan->live_share * 100 + 0.5)) +
                       "% of taps read the input)");
  auto a = std::make_shared<std::vector<PackedMatrix>>(
      pack_tap_weights(c.weights->data(), g, *plan, tile_rows(config)));
  const std::shared_ptr<const UnaryFn> post = take_post(ctx);
  return [=](std::vector<float*>& v) {
    for (int64_t n = 0; n < c.batch; ++n) {
      float* y = c.y(v, n);
      tap_region_conv(c.x(v, n), g, *plan, *a, c.bias->data(), blocking, y);
      if (c.res >= 0) {
        add_clamp(y, c.residual(v, n), y, c.out_plane, c.act.lo, c.act.hi);
      } else if (c.act.lo > -std::numeric_limits<float>::infinity() ||
                 c.act.hi < std::numeric_limits<float>::infinity()) {
        clamp_inplace(y, c.out_plane, c.act.lo, c.act.hi);
      }
      if (post != nullptr) unary_parallel(*post, y, y, c.out_plane);
    }
  };
}

// The packed GEMM over im2col panels (1x1 stride 1: the input read in place as B), one packed A
// per group (tile_rows-row panels): rows = output channels of the group, K = (c, ky, kx).
Step im2col_step(BuildContext& ctx, const ConvStep& c, const Config& config,
                 const GemmBlocking& blocking, bool direct) {
  const ConvGeometry g = c.g;
  const int64_t k_per_group = c.k_per_group, oc_per_group = c.oc_per_group;
  auto packed = std::make_shared<std::vector<PackedMatrix>>(static_cast<size_t>(g.group));
  for (int64_t grp = 0; grp < g.group; ++grp) {
    pack_a(c.weights->data() + grp * oc_per_group * k_per_group, oc_per_group, k_per_group,
           k_per_group, 1, &(*packed)[static_cast<size_t>(grp)], tile_rows(config));
  }
  const std::shared_ptr<const UnaryFn> post = take_post(ctx);
  // Grouped convs (regnet's group width 8: 26 groups of 8 rows) run their groups as parallel
  // tasks, each GEMM inside them parallel as well: one group alone is too little work to spread
  // over the threads. A whole-B GEMM keeps its packed B in a per-thread buffer across a wait, which
  // a thread stealing another group's task would overwrite, so grouped convs pack B by panel.
  GemmBlocking group_blocking = blocking;
  if (g.group > 1 && blocking.b_whole) {
    group_blocking.b_whole = false;
    ctx.notes->push_back(std::string(ctx.node.name()) +
                         ": groups run in parallel, B packed by panel (b_whole off)");
  }
  const int64_t nr = blocking.nr, cols = g.oh * g.ow;
  return [=](std::vector<float*>& v) {
    const int64_t cpg = g.c / g.group;
    for (int64_t n = 0; n < c.batch; ++n) {
      const float* x = c.x(v, n);
      float* y = c.y(v, n);
      tbb::parallel_for(int64_t{0}, g.group, [&](int64_t grp) {
        PanelPacker pack;
        const float* b = direct ? x + grp * cpg * cols : nullptr;
        if (direct) {
          pack = [=](int64_t j0, float* panel) {
            copy_panel(b, k_per_group, cols, cols, j0, panel, nr);
          };
        } else {
          pack = [=](int64_t j0, float* panel) {
            im2col_panel(x, g, grp * cpg, cpg, j0, panel, nr);
          };
        }
        Epilogue e = bias_clamp(c.bias->data() + grp * oc_per_group, c.act);
        e.post = post.get();
        e.residual = c.res >= 0 ? c.residual(v, n) + grp * oc_per_group * cols : nullptr;
        sgemm_panels((*packed)[static_cast<size_t>(grp)], cols, pack, y + grp * oc_per_group * cols,
                     cols, e, group_blocking, b, cols);
      });
    }
  };
}

}  // namespace

Step build_conv(BuildContext& ctx) {
  if (is_conv3d(ctx.node)) return build_conv3d(ctx);
  const ConvAttrs attrs = conv_attrs(ctx.node);
  const ConvGeometry g = attrs.g;
  const FoldedWeights folded = fold_weights(ctx.node, ctx.bn, attrs);
  if (ctx.dw != nullptr) return build_conv_depthwise(ctx, g, attrs.batch, folded);
  const ConvStep c{g,
                   attrs.batch,
                   (g.c / g.group) * g.kh * g.kw,
                   g.oc / g.group,
                   g.oc * g.oh * g.ow,
                   folded.weights,
                   folded.bias,
                   ctx.act,
                   ctx.node.input_index(0),
                   ctx.output,
                   ctx.residual};
  if (is_depthwise(g)) return depthwise_step(ctx, c);
  const bool direct = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 &&
                      g.oh == g.h && g.ow == g.w;
  const Config config = choose_conv_config(ctx, g, direct);
  const std::string id = config.schedule->id;
  if (id == "conv2d.nchw.gconv3x3_direct") return gconv_step(ctx, c);
  if (id == "conv2d.nchw.flat_gemm") return flat_gemm_step(ctx, c, config);
  if (id == "conv2d.nchw.winograd") return winograd_step(c, config);
  if (id == "conv2d.nchw.phase_gemm" && g.group > 1) return grouped_phase_step(ctx, c, config);
  if (id == "conv2d.nchw.phase_gemm") return phase_step(ctx, c, config);
  const GemmBlocking blocking = gemm_blocking(config);
  if (Step taps = tap_region_step(ctx, c, config, blocking)) return taps;
  return im2col_step(ctx, c, config, blocking, direct);
}

}  // namespace tessera::cpu
