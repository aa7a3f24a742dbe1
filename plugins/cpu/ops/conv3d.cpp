// 3-D Conv (NCDHW, float32): video networks (torchvision's r3d, mc3, r2plus1d) and 3-D stems.
// Each output depth slice is one packed GEMM per group over the 2-D im2col panels of the (input
// channel, depth tap) planes it reads: K = (c, kd, ky, kx), N = OH x OW, and a depth tap that
// falls in padding packs zero rows. The slices' GEMMs run in parallel with each other, and the
// BatchNormalization, residual Add, Relu/Clip and post op fusion.cpp fuses into a Conv run in
// the GEMM epilogue as they do for 2-D convs.
#include <tbb/parallel_for.h>

#include <cmath>
#include <memory>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

struct Conv3dAttrs {
  ConvGeometry g;  // one depth slice: c, h, w, oc, oh, ow, kh, kw, strides, pads, dilations, group
  int64_t batch = 1;
  int64_t d = 1, od = 1, kd = 1, sd = 1, pd = 0, dd = 1;  // depth: input, output, taps, stride...
};

Conv3dAttrs conv3d_attrs(const NodeView& node) {
  auto fail = [&](const std::string& why) {
    throw plugin::Failure(TSR_UNSUPPORTED, node.describe() + ": " + why);
  };
  check_conv_operands(node, {5}, "a 3-D conv has rank-5 tensors");
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(1);
  const tsr_tensor* y = node.output(0);
  auto per_axis = [&](const char* name, int64_t fallback, size_t values) {
    const std::vector<int64_t> v = node.attr_ints(name, std::vector<int64_t>(values, fallback));
    if (v.size() != values) {
      fail(std::string(name) + " must have " + std::to_string(values) + " values");
    }
    return v;
  };
  const std::vector<int64_t> dil = per_axis("dilations", 1, 3);
  const std::vector<int64_t> strides = per_axis("strides", 1, 3);
  const std::vector<int64_t> pads = per_axis("pads", 0, 6);  // core writes auto_pad out
  for (int i = 0; i < 3; ++i) {
    if (dil[i] < 1) fail("dilations must be >= 1");
    if (strides[i] < 1) fail("strides must be >= 1");
  }
  Conv3dAttrs a;
  ConvGeometry& g = a.g;
  a.batch = x->dims[0];
  g.c = x->dims[1];
  a.d = x->dims[2];
  g.h = x->dims[3];
  g.w = x->dims[4];
  g.oc = y->dims[1];
  a.od = y->dims[2];
  g.oh = y->dims[3];
  g.ow = y->dims[4];
  a.kd = w->dims[2];
  g.kh = w->dims[3];
  g.kw = w->dims[4];
  g.group = node.attr_int("group", 1);
  if (g.group <= 0 || g.c % g.group != 0 || g.oc % g.group != 0 || w->dims[1] * g.group != g.c ||
      w->dims[0] != g.oc) {
    fail("weights shape does not match input channels and group");
  }
  a.dd = dil[0];
  g.dil_h = dil[1];
  g.dil_w = dil[2];
  a.sd = strides[0];
  g.sh = strides[1];
  g.sw = strides[2];
  a.pd = pads[0];
  g.pt = pads[1];
  g.pl = pads[2];
  return a;
}

}  // namespace

bool is_conv3d(const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  return x != nullptr && x->rank == 5;
}

std::string query_conv3d(const RegionView&, const NodeView& node) {
  try {
    conv3d_attrs(node);
  } catch (const plugin::Failure& e) {
    return e.what();
  }
  return "";
}

Step build_conv3d(BuildContext& ctx) {
  const Conv3dAttrs a = conv3d_attrs(ctx.node);
  const ConvGeometry g = a.g;
  const int64_t cpg = g.c / g.group, ocpg = g.oc / g.group;
  const int64_t k = cpg * a.kd * g.kh * g.kw;  // per group: (c, kd, ky, kx)

  // Weights [oc][c / group][kd][kh][kw] are already rows of K; a fused BatchNormalization scales
  // each row and moves the bias.
  const float* w = static_cast<const float*>(ctx.node.input(1)->data);
  std::vector<float> weights(w, w + g.oc * k);
  auto bias = std::make_shared<std::vector<float>>(static_cast<size_t>(g.oc), 0.0f);
  if (const float* b = constant_f32(ctx.node.input(2))) std::copy(b, b + g.oc, bias->begin());
  if (ctx.bn != nullptr) fold_batch_norm(*ctx.bn, g.oc, k, weights.data(), bias->data());

  const int64_t cols = g.oh * g.ow;  // N of one depth slice's GEMM
  const Config config = choose_config(ctx, default_conv_config(ocpg, cols, k, ctx.threads));
  GemmBlocking blocking = gemm_blocking(config);
  // Group-1 convs run their slices one after another, each GEMM parallel inside, so a deep
  // layer's B is packed whole once per slice (r3d_18's 256-channel 3x3x3 convs: K = 6912, the
  // per-task B panels of 8 tasks had taken 3.3x ONNX Runtime's time). Grouped convs run slices
  // and groups as parallel tasks around their parallel GEMMs; a whole-B GEMM keeps its packed B
  // in a per-thread buffer across a wait, which a task stolen meanwhile would overwrite (as for
  // grouped 2-D convs), so there B is packed by panel.
  const bool slices_parallel = g.group > 1;
  if (slices_parallel) blocking.b_whole = false;
  const int64_t nr = blocking.nr;
  auto packed = std::make_shared<std::vector<PackedMatrix>>(static_cast<size_t>(g.group));
  for (int64_t grp = 0; grp < g.group; ++grp) {
    pack_a(weights.data() + grp * ocpg * k, ocpg, k, k, 1, &(*packed)[static_cast<size_t>(grp)],
           tile_rows(config));
  }
  const std::shared_ptr<const UnaryFn> post = take_post(ctx);
  const Activation act = ctx.act;
  const int32_t in = ctx.node.input_index(0), out = ctx.output, res = ctx.residual;
  const int64_t in_plane = g.h * g.w, in_image = g.c * a.d * in_plane;
  const int64_t out_volume = a.od * cols, out_image = g.oc * out_volume;
  return [=](std::vector<float*>& v) {
    for (int64_t n = 0; n < a.batch; ++n) {
      const float* x = v[in] + n * in_image;
      float* y = v[out] + n * out_image;
      const float* r = res >= 0 ? v[res] + n * out_image : nullptr;
      auto slice = [&](int64_t task) {
        const int64_t z = task / g.group, grp = task % g.group;
        // The (c, kd) planes this slice reads, null where the depth tap is in padding.
        std::vector<const float*> planes(static_cast<size_t>(cpg * a.kd));
        for (int64_t ci = 0; ci < cpg; ++ci) {
          for (int64_t t = 0; t < a.kd; ++t) {
            const int64_t iz = z * a.sd - a.pd + t * a.dd;
            planes[static_cast<size_t>(ci * a.kd + t)] =
                iz >= 0 && iz < a.d ? x + ((grp * cpg + ci) * a.d + iz) * in_plane : nullptr;
          }
        }
        const PanelPacker pack = [&planes, &g, nr](int64_t j0, float* panel) {
          im2col_panel_planes(planes.data(), static_cast<int64_t>(planes.size()), g, j0, panel, nr);
        };
        // C is this group's output channels x this slice's pixels, rows a whole volume apart.
        const int64_t c_off = grp * ocpg * out_volume + z * cols;
        Epilogue e = bias_clamp(bias->data() + grp * ocpg, act);
        e.post = post.get();
        e.residual = r != nullptr ? r + c_off : nullptr;
        sgemm_panels((*packed)[static_cast<size_t>(grp)], cols, pack, y + c_off, out_volume, e,
                     blocking);
      };
      if (slices_parallel) {
        tbb::parallel_for(int64_t{0}, a.od * g.group, slice);
      } else {
        for (int64_t z = 0; z < a.od; ++z) slice(z);
      }
    }
  };
}

}  // namespace tessera::cpu
