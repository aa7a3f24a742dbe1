// The cpu plugin's SIMD kernels (plugins/cpu/kernels) against core's reference kernels
// (tessera::ops::compute_node), cross-built for aarch64 and run under qemu-aarch64. A plain test
// main rather than GoogleTest so the cross build needs no arm64 gtest. Every case runs once per
// Highway target the (emulated) CPU supports, each forced in turn, so NEON and every SVE variant
// are checked, not only the one the dispatcher would pick. Prints "N passed, M failed"; exits
// non-zero on any failure.
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include "kernels/kernels.hpp"
#include "op.hpp"
#include "panel_conv.hpp"
#include "tessera/graph.hpp"

namespace tessera::cpu {
namespace {

// Every compiled micro-tile: NEON offers only 6x16 to the tuner but must run any packed layout.
const std::vector<GemmTile> kAllTiles = compiled_gemm_tiles();

std::string tile_name(const GemmTile& tile) {
  return "tile " + std::to_string(tile.mr) + "x" + std::to_string(tile.nr);
}

int g_passed = 0;
int g_failed = 0;

Tensor random_tensor(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector(std::move(shape), v);
}

Tensor reference(const std::string& op, Attributes attrs, const std::vector<const Tensor*>& ins,
                 const Shape& out_shape) {
  Node node;
  node.name = "ref";
  node.op_type = op;
  node.attrs = std::move(attrs);
  for (size_t i = 0; i < ins.size(); ++i) node.inputs.push_back(static_cast<int32_t>(i));
  node.outputs = {static_cast<int32_t>(ins.size())};
  return ops::compute_node(node, 13, ins, {{DType::kFloat32, out_shape}})[0];
}

void clamp_tensor(Tensor* t, float lo, float hi) {
  for (int64_t i = 0; i < t->numel(); ++i) {
    t->data<float>()[i] = std::min(std::max(t->data<float>()[i], lo), hi);
  }
}

// 1e-4 relative (absolute near zero), as tests/cpu/kernels_test.cpp. Counts one check and prints
// the first mismatching element on failure.
void check_close(const std::string& target, const std::string& what, const float* got,
                 const Tensor& want) {
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float w = want.data<float>()[i];
    if (!(std::fabs(got[i] - w) <= 1e-4f * std::max(1.0f, std::fabs(w)))) {
      std::printf("FAIL [%s] %s: element %lld got %.8g want %.8g\n", target.c_str(), what.c_str(),
                  static_cast<long long>(i), static_cast<double>(got[i]), static_cast<double>(w));
      ++g_failed;
      return;
    }
  }
  if (std::getenv("TESSERA_TEST_VERBOSE") != nullptr) {
    std::printf("ok [%s] %s\n", target.c_str(), what.c_str());
  }
  ++g_passed;
}

void check(const std::string& target, const std::string& what, bool ok) {
  if (ok) {
    ++g_passed;
  } else {
    std::printf("FAIL [%s] %s\n", target.c_str(), what.c_str());
    ++g_failed;
  }
}

std::string blocking_name(const GemmBlocking& b) {
  return "mc=" + std::to_string(b.mc) + " nc=" + std::to_string(b.nc) +
         " kc=" + std::to_string(b.kc) + " whole=" + std::to_string(b.b_whole);
}

struct GemmCase {
  int64_t m, n, k;
  bool trans_a, trans_b;
};

void gemm_bias_clamp(const std::string& t, const GemmCase& c) {
  const Tensor a = random_tensor(c.trans_a ? Shape{c.k, c.m} : Shape{c.m, c.k}, 1);
  const Tensor b = random_tensor(c.trans_b ? Shape{c.n, c.k} : Shape{c.k, c.n}, 2);
  const Tensor bias = random_tensor({c.n}, 3);
  Attributes attrs;
  attrs.set("transA", int64_t{c.trans_a});
  attrs.set("transB", int64_t{c.trans_b});
  Tensor want = reference("Gemm", attrs, {&a, &b, &bias}, {c.m, c.n});
  clamp_tensor(&want, -0.5f, 2.0f);
  for (const GemmTile& tile : kAllTiles) {
    PackedMatrix pa, pb;
    // Transposed operands are packed through their strides.
    pack_a(a.data<float>(), c.m, c.k, c.trans_a ? 1 : c.k, c.trans_a ? c.m : 1, &pa, tile.mr);
    pack_b(b.data<float>(), c.k, c.n, c.trans_b ? 1 : c.n, c.trans_b ? c.k : 1, &pb, tile.nr);
    Epilogue e;
    e.col_bias = bias.data<float>();
    e.lo = -0.5f;
    e.hi = 2.0f;
    for (const GemmBlocking blocking :
         {GemmBlocking{6, 16}, GemmBlocking{96, 512}, GemmBlocking{12, 48}}) {
      std::vector<float> got(static_cast<size_t>(c.m * c.n), -7.0f);
      sgemm_packed(pa, pb, got.data(), c.n, e, blocking);
      check_close(t,
                  "sgemm_packed Gemm m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                      " k=" + std::to_string(c.k) + " tA=" + std::to_string(c.trans_a) +
                      " tB=" + std::to_string(c.trans_b) + " " + blocking_name(blocking) + " " +
                      tile_name(tile),
                  got.data(), want);
    }
  }
}

void gemm_row_bias(const std::string& t) {
  const int64_t m = 11, n = 19, k = 7;
  const Tensor a = random_tensor({m, k}, 4), b = random_tensor({k, n}, 5);
  const Tensor bias = random_tensor({m}, 6);
  Tensor want = reference("MatMul", {}, {&a, &b}, {m, n});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) want.data<float>()[i * n + j] += bias.data<float>()[i];
  }
  PackedMatrix pa, pb;
  pack_a(a.data<float>(), m, k, k, 1, &pa);
  pack_b(b.data<float>(), k, n, n, 1, &pb);
  std::vector<float> got(static_cast<size_t>(m * n));
  Epilogue e;
  e.row_bias = bias.data<float>();
  sgemm_packed(pa, pb, got.data(), n, e, GemmBlocking{});
  check_close(t, "sgemm_packed row bias", got.data(), want);
}

struct ConvCase {
  int64_t c, h, w, oc, k, stride, pad, group;
};

std::string conv_name(const ConvCase& c) {
  return "c=" + std::to_string(c.c) + " h=" + std::to_string(c.h) + " w=" + std::to_string(c.w) +
         " oc=" + std::to_string(c.oc) + " k=" + std::to_string(c.k) +
         " s=" + std::to_string(c.stride) + " p=" + std::to_string(c.pad) +
         " g=" + std::to_string(c.group);
}

ConvGeometry geometry(const ConvCase& c) {
  ConvGeometry g;
  g.c = c.c;
  g.h = c.h;
  g.w = c.w;
  g.oc = c.oc;
  g.kh = g.kw = c.k;
  g.sh = g.sw = c.stride;
  g.pt = g.pl = c.pad;
  g.oh = (c.h + 2 * c.pad - c.k) / c.stride + 1;
  g.ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
  g.group = c.group;
  return g;
}

Tensor reference_conv(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor& b,
                      const ConvGeometry& g) {
  Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{c.k, c.k});
  attrs.set("strides", std::vector<int64_t>{c.stride, c.stride});
  attrs.set("pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad});
  attrs.set("group", c.group);
  return reference("Conv", attrs, {&x, &w, &b}, {1, c.oc, g.oh, g.ow});
}

void conv_im2col(const std::string& t, const ConvCase& c) {
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 7);
  const Tensor w = random_tensor({c.oc, c.c / c.group, c.k, c.k}, 8);
  const Tensor b = random_tensor({c.oc}, 9);
  const Tensor want = reference_conv(c, x, w, b, g);
  const int64_t cpg = c.c / c.group, opg = c.oc / c.group, kk = cpg * c.k * c.k;
  const int64_t cols = g.oh * g.ow;
  std::vector<float> col(static_cast<size_t>(kk * cols)), got(static_cast<size_t>(c.oc * cols));
  for (int64_t grp = 0; grp < c.group; ++grp) {
    PackedMatrix pa, pb;
    pack_a(w.data<float>() + grp * opg * kk, opg, kk, kk, 1, &pa);
    im2col(x.data<float>(), g, grp * cpg, cpg, col.data());
    pack_b(col.data(), kk, cols, cols, 1, &pb);
    Epilogue e;
    e.row_bias = b.data<float>() + grp * opg;
    sgemm_packed(pa, pb, got.data() + grp * opg * cols, cols, e, GemmBlocking{12, 64});
  }
  check_close(t, "conv im2col+sgemm_packed " + conv_name(c), got.data(), want);
}

// The fused path the plugin runs: B packed panel by panel, every blocking variant.
void conv_panels(const std::string& t, const ConvCase& c) {
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 17);
  const Tensor w = random_tensor({c.oc, c.c / c.group, c.k, c.k}, 18);
  const Tensor b = random_tensor({c.oc}, 19);
  Tensor want = reference_conv(c, x, w, b, g);
  clamp_tensor(&want, -0.5f, 0.7f);
  const bool one_by_one = c.k == 1 && c.stride == 1 && c.pad == 0;
  for (const GemmTile& tile : kAllTiles) {
    for (GemmBlocking blocking : {GemmBlocking{768, 512, 0, false}, GemmBlocking{6, 16, 5, false},
                                  GemmBlocking{12, 32, 7, true}, GemmBlocking{768, 512, 0, true},
                                  GemmBlocking{6, 48, 16, false}}) {
      blocking.nr = tile.nr;
      // Unpacked B read in place (direct_b) only exists for the 1x1 case.
      for (const bool direct : {false, true}) {
        if (direct && !one_by_one) continue;
        const std::vector<float> got =
            test::panel_conv(x.data<float>(), w.data<float>(), b.data<float>(), g, tile, blocking,
                             direct, -0.5f, 0.7f);
        check_close(t,
                    "conv sgemm_panels " + conv_name(c) + " " + blocking_name(blocking) + " " +
                        tile_name(tile) + (direct ? " direct_b" : ""),
                    got.data(), want);
      }
    }
  }
}

// A 1x1 conv with B read in place and a post op (SiLU, GELU) run per register tile, every tile:
// whole panels, a partial one and a column tail (99 columns), one task and several with K chunks.
void conv_post_ops(const std::string& t) {
  const ConvCase c{13, 9, 11, 11, 1, 1, 0, 1};
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 31);
  const Tensor w = random_tensor({c.oc, c.c, 1, 1}, 32);
  const Tensor b = random_tensor({c.oc}, 33);
  const Tensor conv = reference_conv(c, x, w, b, g);
  const int64_t cols = g.oh * g.ow;
  UnaryFn silu, gelu;
  silu.op = UnaryOp::kSilu;
  gelu.op = UnaryOp::kGelu;
  for (const UnaryFn& post : {silu, gelu}) {
    Tensor want = conv.clone();
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double v = want.data<float>()[i];
      want.data<float>()[i] = static_cast<float>(
          post.op == UnaryOp::kSilu ? v / (1.0 + std::exp(-v))
                                    : 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    }
    for (const GemmTile& tile : kAllTiles) {
      for (GemmBlocking blocking : {GemmBlocking{768, 512, 0, false}, GemmBlocking{6, 48, 5, false}}) {
        blocking.nr = tile.nr;
        PackedMatrix pa;
        pack_a(w.data<float>(), c.oc, c.c, c.c, 1, &pa, tile.mr);
        Epilogue e;
        e.row_bias = b.data<float>();
        e.post = &post;
        const float* xb = x.data<float>();
        std::vector<float> got(static_cast<size_t>(c.oc * cols));
        sgemm_panels(
            pa, cols,
            [&](int64_t j0, float* panel) { copy_panel(xb, c.c, cols, cols, j0, panel, tile.nr); },
            got.data(), cols, e, blocking, xb, cols);
        check_close(t,
                    std::string("conv 1x1 direct_b + ") +
                        (post.op == UnaryOp::kSilu ? "SiLU " : "GELU ") + blocking_name(blocking) +
                        " " + tile_name(tile),
                    got.data(), want);
      }
    }
  }
}

// Convs on phase planes (phase_gemm_conv), every tile.
void phase_conv(const std::string& t, const ConvCase& c) {
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 37);
  const Tensor w = random_tensor({c.oc, c.c, c.k, c.k}, 38);
  const Tensor b = random_tensor({c.oc}, 39);
  Tensor want = reference_conv(c, x, w, b, g);
  clamp_tensor(&want, -0.5f, 0.7f);
  const int64_t kk = c.c * c.k * c.k;
  for (const GemmTile& tile : kAllTiles) {
    PackedMatrix a;
    pack_a(w.data<float>(), c.oc, kk, kk, 1, &a, tile.mr);
    Epilogue e;
    e.row_bias = b.data<float>();
    e.lo = -0.5f;
    e.hi = 0.7f;
    std::vector<float> got(static_cast<size_t>(want.numel()));
    phase_gemm_conv(x.data<float>(), g, a, e, tile.nr, got.data());
    check_close(t, "phase_gemm_conv " + conv_name(c) + " " + tile_name(tile), got.data(), want);
  }
}

// The direct grouped 3x3 kernel with bias, residual and clamp; on NEON its 3-vector blocks store
// partial vectors through a stack buffer (x86 targets with those blocks have masked stores).
void grouped_conv_3x3(const std::string& t, const ConvCase& c) {
  const ConvGeometry g = geometry(c);
  check(t, "f32_gconv2d_chw_3x3 applies to " + conv_name(c), f32_gconv2d_chw_3x3_applies(g));
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 47);
  const Tensor w = random_tensor({c.oc, c.c / c.group, 3, 3}, 48);
  const Tensor b = random_tensor({c.oc}, 49);
  const Tensor res = random_tensor({1, c.oc, g.oh, g.ow}, 50);
  Tensor want = reference_conv(c, x, w, b, g);
  for (int64_t i = 0; i < want.numel(); ++i) want.data<float>()[i] += res.data<float>()[i];
  clamp_tensor(&want, -0.5f, 0.7f);
  GconvWeights packed;
  f32_gconv2d_chw_3x3_pack(w.data<float>(), g, &packed);
  Epilogue e;
  e.row_bias = b.data<float>();
  e.residual = res.data<float>();
  e.lo = -0.5f;
  e.hi = 0.7f;
  std::vector<float> got(static_cast<size_t>(want.numel()));
  f32_gconv2d_chw_3x3(x.data<float>(), g, packed, e, got.data());
  check_close(t, "f32_gconv2d_chw_3x3 " + conv_name(c), got.data(), want);
}

void global_average(const std::string& t) {
  for (const int64_t hw : {3, 49, 71, 169}) {
    const Tensor x = random_tensor({1, 6, hw, 1}, 41);
    const Tensor want = reference("GlobalAveragePool", {}, {&x}, {1, 6, 1, 1});
    std::vector<float> got(6);
    global_average_pool(x.data<float>(), 6, hw, -1e30f, 1e30f, got.data());
    check_close(t, "global_average_pool plane " + std::to_string(hw), got.data(), want);
  }
}

void depthwise_rows(const std::string& t, const test::DepthwiseRowsCase& c) {
  const ConvCase cc{c.c, c.h, c.w, c.c, 3, c.stride, 1, c.c};
  const ConvGeometry g = geometry(cc);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 26);
  const Tensor w = random_tensor({c.c, 1, 3, 3}, 27);
  const Tensor b = random_tensor({c.c}, 28);
  Tensor want = reference_conv(cc, x, w, b, g);
  clamp_tensor(&want, -0.4f, 0.8f);
  const std::vector<float> got =
      test::depthwise_by_rows(x.data<float>(), w.data<float>(), b.data<float>(), c, -0.4f, 0.8f);
  check_close(t, "depthwise_rows_3x3 rows=" + std::to_string(c.rows) + " " + conv_name(cc),
              got.data(), want);
}

void depthwise(const std::string& t, const ConvCase& c) {
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 10);
  const Tensor w = random_tensor({c.c, 1, c.k, c.k}, 11);
  const Tensor b = random_tensor({c.c}, 12);
  Tensor want = reference_conv(c, x, w, b, g);
  clamp_tensor(&want, 0.0f, 0.6f);
  std::vector<float> got(static_cast<size_t>(want.numel()));
  depthwise_conv(x.data<float>(), w.data<float>(), b.data<float>(), g, 0.0f, 0.6f, got.data());
  check_close(t, "depthwise_conv relu6 " + conv_name(c), got.data(), want);
}

// Winograd F(2x2,3x3): partial edge tiles (odd H/W), pads 0 and 1, every tile, with and without
// bias, clamped.
void winograd(const std::string& t, const ConvCase& c) {
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 20);
  const Tensor w = random_tensor({c.oc, c.c, 3, 3}, 21);
  const Tensor zero = Tensor::from_vector({c.oc}, std::vector<float>(c.oc, 0.0f));
  // With bias, also a residual (a fused Add): added before the clamp.
  const Tensor res = random_tensor({1, c.oc, g.oh, g.ow}, 23);
  for (const bool with_bias : {false, true}) {
    const Tensor b = with_bias ? random_tensor({c.oc}, 22) : zero;
    Tensor want = reference_conv(c, x, w, b, g);
    if (with_bias) {
      for (int64_t i = 0; i < want.numel(); ++i) want.data<float>()[i] += res.data<float>()[i];
    }
    clamp_tensor(&want, 0.0f, 0.6f);
    for (const GemmTile& tile : kAllTiles) {
      WinogradWeights u;
      winograd_weights(w.data<float>(), c.oc, c.c, tile.mr, &u);
      std::vector<float> got(static_cast<size_t>(want.numel()));
      winograd_conv(x.data<float>(), g, u, with_bias ? b.data<float>() : nullptr,
                    with_bias ? res.data<float>() : nullptr, 0.0f, 0.6f,
                    WinogradBlocking{32, tile.nr}, got.data());
      check_close(
          t,
          "winograd " + conv_name(c) + " " + tile_name(tile) + (with_bias ? " bias" : " no bias"),
          got.data(), want);
    }
  }
}

using test::PoolCase;

void pool_case(const std::string& t, const PoolCase& c) {
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 15);
  const ConvGeometry g = test::pool_geometry(c);
  std::vector<float> got(static_cast<size_t>(c.c * g.oh * g.ow), 1e9f);
  Tensor want = reference(test::pool_op(c), test::pool_attributes(c), {&x}, {1, c.c, g.oh, g.ow});
  clamp_tensor(&want, -0.8f, 0.9f);
  pool2d(x.data<float>(), test::pool_window(c), -0.8f, 0.9f, got.data());
  check_close(t, test::pool_name(c), got.data(), want);
}

void elementwise(const std::string& t) {
  for (const int64_t n : {int64_t{1}, int64_t{3}, int64_t{17}, int64_t{1037}}) {
    const Tensor a = random_tensor({n}, 13), b = random_tensor({n}, 14);
    const Tensor sum = reference("Add", {}, {&a, &b}, {n});
    const Tensor relu = reference("Relu", {}, {&sum}, {n});
    std::vector<float> got(static_cast<size_t>(n));
    add_clamp(a.data<float>(), b.data<float>(), got.data(), n, 0.0f,
              std::numeric_limits<float>::infinity());
    check_close(t, "add_clamp relu n=" + std::to_string(n), got.data(), relu);
    const Tensor lo = Tensor::from_vector<float>({}, {-0.25f}),
                 hi = Tensor::from_vector<float>({}, {0.5f});
    const Tensor clip = reference("Clip", {}, {&a, &lo, &hi}, {n});
    clamp_copy(a.data<float>(), got.data(), n, -0.25f, 0.5f);
    check_close(t, "clamp_copy n=" + std::to_string(n), got.data(), clip);
    got.assign(a.data<float>(), a.data<float>() + n);
    clamp_inplace(got.data(), n, -0.25f, 0.5f);
    check_close(t, "clamp_inplace n=" + std::to_string(n), got.data(), clip);
  }
}

void run_all(const std::string& t) {
  check(t, "dispatcher picks the forced target (simd_best_target() == " + t + ")",
        simd_best_target() == t);
  for (const GemmCase& c :
       {GemmCase{1, 1, 1, false, false}, GemmCase{7, 17, 5, false, false},
        GemmCase{6, 16, 64, false, true}, GemmCase{13, 33, 29, true, false},
        GemmCase{25, 100, 300, true, true}, GemmCase{64, 48, 1, false, false}}) {
    gemm_bias_clamp(t, c);
  }
  gemm_row_bias(t);
  for (const ConvCase& c :
       {ConvCase{3, 17, 13, 7, 3, 2, 1, 1}, ConvCase{5, 9, 11, 13, 1, 1, 0, 1},
        ConvCase{4, 10, 7, 6, 3, 1, 1, 2}, ConvCase{8, 6, 6, 8, 5, 1, 2, 4},
        ConvCase{19, 5, 3, 37, 3, 1, 1, 1}, ConvCase{23, 4, 5, 29, 1, 1, 0, 1},
        ConvCase{3, 23, 21, 10, 7, 2, 3, 1}, ConvCase{6, 4, 9, 8, 1, 1, 0, 2},
        // 17-wide rows, pad 1: a 16-float run after one padding column in a 32-wide panel.
        ConvCase{4, 6, 17, 8, 3, 1, 1, 1},
        // Stride-2 stem wider than a 32-column panel (vector de-interleave gather).
        ConvCase{3, 11, 75, 6, 7, 2, 3, 1}}) {
    conv_im2col(t, c);
    conv_panels(t, c);
  }
  conv_post_ops(t);
  for (const ConvCase& c :
       {ConvCase{5, 13, 11, 5, 3, 1, 1, 5}, ConvCase{3, 14, 15, 3, 3, 2, 1, 3},
        ConvCase{2, 7, 9, 2, 3, 2, 0, 2}, ConvCase{4, 3, 2, 4, 3, 1, 1, 4},
        ConvCase{3, 12, 10, 3, 5, 3, 2, 3},
        // Wide rows: the full-vector and 4-lane interior paths run (stride 1 and 2).
        ConvCase{7, 9, 53, 7, 3, 1, 1, 7}, ConvCase{4, 8, 71, 4, 3, 2, 1, 4},
        ConvCase{3, 5, 40, 3, 3, 2, 0, 3}, ConvCase{2, 4, 66, 2, 3, 2, 1, 2},
        ConvCase{2, 6, 37, 2, 5, 1, 2, 2},
        // Linear planes (depthwise_linear): same-shaped stride 1, even stride 2, 3x3 and 5x5.
        ConvCase{5, 7, 7, 5, 3, 1, 1, 5}, ConvCase{3, 14, 14, 3, 3, 1, 1, 3},
        ConvCase{4, 28, 28, 4, 3, 2, 1, 4}, ConvCase{2, 12, 12, 2, 5, 2, 2, 2},
        ConvCase{3, 9, 11, 3, 5, 1, 2, 3}}) {
    depthwise(t, c);
  }
  for (const ConvCase& c : {ConvCase{3, 37, 41, 9, 3, 2, 1, 1}, ConvCase{2, 17, 15, 13, 7, 2, 3, 1},
                            ConvCase{5, 9, 70, 7, 3, 1, 1, 1}, ConvCase{4, 6, 5, 3, 1, 1, 0, 1}}) {
    phase_conv(t, c);
  }
  // Group width 8 at stride 1 and 2, width 6, 8 -> 16 per group, a map split into row blocks.
  for (const ConvCase& c :
       {ConvCase{32, 7, 7, 32, 3, 1, 1, 4}, ConvCase{16, 13, 14, 16, 3, 2, 1, 2},
        ConvCase{18, 11, 9, 18, 3, 1, 1, 3}, ConvCase{16, 9, 9, 32, 3, 1, 1, 2},
        ConvCase{16, 40, 20, 16, 3, 1, 1, 2}}) {
    grouped_conv_3x3(t, c);
  }
  global_average(t);
  for (const ConvCase& c : {ConvCase{3, 9, 11, 7, 3, 1, 1, 1}, ConvCase{17, 13, 21, 19, 3, 1, 0, 1},
                            ConvCase{9, 4, 37, 6, 3, 1, 1, 1}}) {
    winograd(t, c);
  }
  for (const PoolCase& c : test::pool_cases()) pool_case(t, c);
  for (const test::DepthwiseRowsCase& c : test::depthwise_rows_cases()) depthwise_rows(t, c);
  elementwise(t);
}

int run(int threads) {
  // Line-buffered so a CI log shows progress even when stdout is a pipe.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  std::printf("highway: dispatcher's choice on this CPU: %s; supported and compiled: %s\n",
              simd_best_target().c_str(), simd_features().c_str());
  if (targets.empty()) {
    std::printf("FAIL no Highway target is both compiled and supported\n");
    return 1;
  }
  for (const int64_t target : targets) {
    const std::string name = hwy::TargetName(target);
    hwy::SetSupportedTargetsForTest(target);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    std::printf("target %s: running\n", name.c_str());
    const int passed = g_passed, failed = g_failed;
    try {
      run_all(name);
    } catch (const std::exception& e) {
      std::printf("FAIL [%s] exception: %s\n", name.c_str(), e.what());
      ++g_failed;
    }
    std::printf("target %s: %d passed, %d failed\n", name.c_str(), g_passed - passed,
                g_failed - failed);
  }
  hwy::SetSupportedTargetsForTest(0);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  std::printf("%d passed, %d failed (%d thread%s)\n", g_passed, g_failed, threads,
              threads == 1 ? "" : "s");
  return g_failed == 0 && g_passed > 0 ? 0 : 1;
}

}  // namespace
}  // namespace tessera::cpu

// Usage: cpu_aarch64_kernels_test [--threads N] (default 1). One thread because Debian 12's
// qemu-aarch64 (7.2) can hang for good inside the guest's pthread_create (seen on this CI host:
// the guest spins in glibc's mutex code, even for one std::thread). With oneTBB limited to one
// thread no worker is ever started; the kernels still split work into the same tasks (every
// blocking variant runs), only one after another. Threading itself is covered by tests/cpu on
// the host. The process leaves with _Exit so oneTBB's teardown starts no thread either.
int main(int argc, char** argv) {
  int threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--threads") threads = std::max(1, std::atoi(argv[i + 1]));
  }
  // Never destroyed: its destructor wakes oneTBB's thread machinery (a pthread_create).
  new tbb::global_control(tbb::global_control::max_allowed_parallelism,
                          static_cast<size_t>(threads));
  const int rc = tessera::cpu::run(threads);
  std::fflush(stdout);
  if (threads == 1) std::_Exit(rc);
  return rc;
}
