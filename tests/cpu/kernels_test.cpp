// The cpu plugin's kernels against core's reference kernels (tessera::ops::compute_node) on
// random data with odd sizes, so every edge tile and border path runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include <hwy/targets.h>

#include "../cpu_aarch64/panel_conv.hpp"
#include "kernels/kernels.hpp"
#include "knob_grid.hpp"
#include "op.hpp"
#include "tessera/graph.hpp"

namespace tessera::cpu {
namespace {

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

// 1e-4 relative (absolute near zero).
void expect_close(const float* got, const Tensor& want) {
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float w = want.data<float>()[i];
    ASSERT_NEAR(got[i], w, 1e-4f * std::max(1.0f, std::fabs(w))) << "element " << i;
  }
}

// Every compiled micro-tile (any target runs any of them; AVX-512 offers them all to the tuner).
const std::vector<GemmTile> kAllTiles = compiled_gemm_tiles();

using tessera_test::knob_grid_indices;

std::string tile_name(const GemmTile& t) {
  return "tile " + std::to_string(t.mr) + "x" + std::to_string(t.nr);
}

TEST(CpuKernels, EveryOfferedTileIsCompiled) {
  for (const GemmTile& t : gemm_tiles()) EXPECT_TRUE(gemm_tile_compiled(t.mr, t.nr));
  ASSERT_EQ(kAllTiles.size(), 8u);  // rows 6, 8, 12 x columns 16, 32, and one-row 1 x 16/32
  for (const int64_t mr : {1, 6, 8, 12}) {
    for (const int64_t nr : {16, 32}) EXPECT_TRUE(gemm_tile_compiled(mr, nr));
  }
  for (const GemmTile& t : gemm_tiles()) EXPECT_GT(t.mr, 1);  // one-row tiles are not offered
  EXPECT_FALSE(gemm_tile_compiled(7, 16));
  EXPECT_FALSE(gemm_tile_compiled(6, 24));
  const GemmTile d = default_gemm_tile();
  EXPECT_TRUE(gemm_tile_compiled(d.mr, d.nr));
}

TEST(CpuKernels, UncompiledTileIsRefused) {
  const float a[4] = {1, 2, 3, 4};
  PackedMatrix pa, pb;
  pack_a(a, 2, 2, 2, 1, &pa, 7);
  pack_b(a, 2, 2, 2, 1, &pb, 16);
  float c[4];
  EXPECT_THROW(sgemm_packed(pa, pb, c, 2, Epilogue{}, GemmBlocking{}), std::invalid_argument);
}

TEST(CpuKernels, SimdFeaturesAreReported) {
  EXPECT_FALSE(simd_features().empty());
  EXPECT_NE(simd_best_target(), "none");
}

struct GemmCase {
  int64_t m, n, k;
  bool trans_a, trans_b;
};

class CpuGemm : public ::testing::TestWithParam<GemmCase> {};

TEST_P(CpuGemm, MatchesReferenceGemmWithBiasAndClamp) {
  const GemmCase c = GetParam();
  const Tensor a = random_tensor(c.trans_a ? Shape{c.k, c.m} : Shape{c.m, c.k}, 1);
  const Tensor b = random_tensor(c.trans_b ? Shape{c.n, c.k} : Shape{c.k, c.n}, 2);
  const Tensor bias = random_tensor({c.n}, 3);
  Attributes attrs;
  attrs.set("transA", int64_t{c.trans_a});
  attrs.set("transB", int64_t{c.trans_b});
  Tensor want = reference("Gemm", attrs, {&a, &b, &bias}, {c.m, c.n});
  for (int64_t i = 0; i < want.numel(); ++i) {
    want.data<float>()[i] = std::min(std::max(want.data<float>()[i], -0.5f), 2.0f);
  }
  const std::vector<GemmBlocking> blockings = {GemmBlocking{6, 16}, GemmBlocking{96, 512},
                                               GemmBlocking{12, 48}};
  for (const auto& p : knob_grid_indices("tile x blocking", {kAllTiles.size(), blockings.size()})) {
    const GemmTile& tile = kAllTiles[p[0]];
    const GemmBlocking& blocking = blockings[p[1]];
    SCOPED_TRACE(tile_name(tile) + " mc=" + std::to_string(blocking.mc) +
                 " nc=" + std::to_string(blocking.nc));
    PackedMatrix pa, pb;
    // Transposed operands are packed through their strides.
    pack_a(a.data<float>(), c.m, c.k, c.trans_a ? 1 : c.k, c.trans_a ? c.m : 1, &pa, tile.mr);
    pack_b(b.data<float>(), c.k, c.n, c.trans_b ? 1 : c.n, c.trans_b ? c.k : 1, &pb, tile.nr);
    std::vector<float> got(static_cast<size_t>(c.m * c.n), -7.0f);
    Epilogue e;
    e.col_bias = bias.data<float>();
    e.lo = -0.5f;
    e.hi = 2.0f;
    sgemm_packed(pa, pb, got.data(), c.n, e, blocking);
    expect_close(got.data(), want);
  }
}

// The post ops the GEMM epilogue runs per register tile, in double precision for the reference:
// none, SiLU, GELU (erf) and HardSwish with a clamp of its own.
std::vector<UnaryFn> post_ops() {
  UnaryFn silu, gelu, hard_swish;
  silu.op = UnaryOp::kSilu;
  gelu.op = UnaryOp::kGelu;
  hard_swish.op = UnaryOp::kHardSwish;
  hard_swish.hi = 0.6f;
  return {UnaryFn{}, silu, gelu, hard_swish};
}

float apply_post(const UnaryFn& f, float v) {
  const double x = v;
  double y = x;
  switch (f.op) {
    case UnaryOp::kSilu:
      y = x / (1.0 + std::exp(-x));
      break;
    case UnaryOp::kGelu:
      y = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
      break;
    case UnaryOp::kHardSwish:
      y = x * std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0);
      break;
    default:
      break;
  }
  return static_cast<float>(std::min<double>(std::max<double>(y, f.lo), f.hi));
}

// Every width a partial last column panel can have (column tails of 1-6, 16-wide edge tiles, a
// whole 16 plus a tail), for every tile, with K in one pass and in chunks (a tail resuming from C),
// row bias, a residual (a fused Add), clamp and each post op, against the reference Gemm.
TEST(CpuKernels, EveryPartialPanelWidth) {
  const int64_t m = 13, k = 37;
  const Tensor a = random_tensor({m, k}, 11);
  const Tensor row_bias = random_tensor({m}, 12);
  const std::vector<UnaryFn> posts = post_ops();
  for (int64_t n = 1; n <= 40; ++n) {
    const Tensor b = random_tensor({k, n}, 13 + static_cast<uint32_t>(n));
    const Tensor res = random_tensor({m, n}, 60 + static_cast<uint32_t>(n));
    Tensor clamped = reference("Gemm", Attributes{}, {&a, &b}, {m, n});
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float& x = clamped.data<float>()[i * n + j];
        x = std::min(std::max(x + row_bias.data<float>()[i] + res.data<float>()[i * n + j], -0.5f),
                     2.0f);
      }
    }
    // K in one pass (kc 0) and in chunks of 16.
    const std::vector<int64_t> kcs = {0, 16};
    for (const auto& p :
         knob_grid_indices("tile x kc x post", {kAllTiles.size(), kcs.size(), posts.size()})) {
      const GemmTile& tile = kAllTiles[p[0]];
      const UnaryFn& post = posts[p[2]];
      SCOPED_TRACE(tile_name(tile) + " n=" + std::to_string(n) + " kc=" +
                   std::to_string(kcs[p[1]]) + " post=" + std::to_string(static_cast<int>(post.op)));
      Tensor want = clamped.clone();
      for (int64_t i = 0; i < want.numel(); ++i) {
        want.data<float>()[i] = apply_post(post, want.data<float>()[i]);
      }
      PackedMatrix pa;
      pack_a(a.data<float>(), m, k, k, 1, &pa, tile.mr);
      Epilogue e;
      e.row_bias = row_bias.data<float>();
      e.residual = res.data<float>();
      e.lo = -0.5f;
      e.hi = 2.0f;
      if (post.op != UnaryOp::kIdentity) e.post = &post;
      GemmBlocking blocking{96, 512, kcs[p[1]]};
      blocking.nr = tile.nr;
      std::vector<float> got(static_cast<size_t>(m * n), -7.0f);
      const float* bp = b.data<float>();
      sgemm_panels(
          pa, n, [&](int64_t j0, float* panel) { copy_panel(bp, k, n, n, j0, panel, tile.nr); },
          got.data(), n, e, blocking);
      expect_close(got.data(), want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, CpuGemm,
    ::testing::Values(GemmCase{1, 1, 1, false, false}, GemmCase{7, 17, 5, false, false},
                      GemmCase{6, 16, 64, false, true}, GemmCase{13, 33, 29, true, false},
                      GemmCase{25, 100, 300, true, true}, GemmCase{64, 48, 1, false, false},
                      // Multiples of every tile (no edge tiles) and just past them.
                      GemmCase{24, 96, 40, false, false}, GemmCase{25, 97, 40, false, true}));

TEST(CpuKernels, RowBiasEpilogue) {
  const int64_t m = 11, n = 19, k = 7;
  const Tensor a = random_tensor({m, k}, 4), b = random_tensor({k, n}, 5);
  const Tensor bias = random_tensor({m}, 6);
  const Tensor prod = reference("MatMul", {}, {&a, &b}, {m, n});
  PackedMatrix pa, pb;
  pack_a(a.data<float>(), m, k, k, 1, &pa);
  pack_b(b.data<float>(), k, n, n, 1, &pb);
  std::vector<float> got(static_cast<size_t>(m * n));
  Epilogue e;
  e.row_bias = bias.data<float>();
  sgemm_packed(pa, pb, got.data(), n, e, GemmBlocking{});
  Tensor want = prod;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) want.data<float>()[i * n + j] += bias.data<float>()[i];
  }
  expect_close(got.data(), want);
}

struct ConvCase {
  int64_t c, h, w, oc, k, stride, pad, group;
};

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

class CpuConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(CpuConv, Im2colGemmMatchesReference) {
  const ConvCase c = GetParam();
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
  expect_close(got.data(), want);
}

// The fused path the plugin runs: B packed panel by panel (im2col_panel, or copy_panel for a 1x1
// stride-1 conv), every blocking variant: K chunks with edge tiles, B packed whole, split M.
TEST_P(CpuConv, PanelGemmMatchesReferenceEveryBlocking) {
  const ConvCase c = GetParam();
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 17);
  const Tensor w = random_tensor({c.oc, c.c / c.group, c.k, c.k}, 18);
  const Tensor b = random_tensor({c.oc}, 19);
  Tensor want = reference_conv(c, x, w, b, g);
  for (int64_t i = 0; i < want.numel(); ++i) {
    want.data<float>()[i] = std::min(std::max(want.data<float>()[i], -0.5f), 0.7f);
  }
  const bool one_by_one = c.k == 1 && c.stride == 1 && c.pad == 0;
  const std::vector<GemmBlocking> blockings = {
      GemmBlocking{768, 512, 0, false}, GemmBlocking{6, 16, 5, false},
      GemmBlocking{12, 32, 7, true}, GemmBlocking{768, 512, 0, true},
      GemmBlocking{6, 48, 16, false, false}};
  for (const auto& p : knob_grid_indices("tile x blocking", {kAllTiles.size(), blockings.size()})) {
    const GemmTile& tile = kAllTiles[p[0]];
    GemmBlocking blocking = blockings[p[1]];
    blocking.nr = tile.nr;
    // 1x1: B is the input itself, read in place unless b_direct is off.
    const std::vector<float> got =
        test::panel_conv(x.data<float>(), w.data<float>(), b.data<float>(), g, tile, blocking,
                         one_by_one, -0.5f, 0.7f);
    SCOPED_TRACE(tile_name(tile) + " mc=" + std::to_string(blocking.mc) +
                 " nc=" + std::to_string(blocking.nc) + " kc=" + std::to_string(blocking.kc) +
                 " whole=" + std::to_string(blocking.b_whole) +
                 " direct=" + std::to_string(blocking.b_direct));
    expect_close(got.data(), want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, CpuConv,
    ::testing::Values(ConvCase{3, 17, 13, 7, 3, 2, 1, 1}, ConvCase{5, 9, 11, 13, 1, 1, 0, 1},
                      ConvCase{4, 10, 7, 6, 3, 1, 1, 2}, ConvCase{8, 6, 6, 8, 5, 1, 2, 4},
                      // Many more channels than pixels (B packed whole).
                      ConvCase{19, 5, 3, 37, 3, 1, 1, 1}, ConvCase{23, 4, 5, 29, 1, 1, 0, 1},
                      // 1x1 with several full panels (read in place) and a partial one; 2 groups.
                      ConvCase{13, 7, 9, 11, 1, 1, 0, 1}, ConvCase{6, 8, 9, 10, 1, 1, 0, 2},
                      // Stride 2 with asymmetric window edges, 7x7.
                      ConvCase{3, 23, 21, 10, 7, 2, 3, 1},
                      // 17-wide rows, pad 1: a 16-float run after one padding column in a
                      // 32-wide panel.
                      ConvCase{4, 6, 17, 8, 3, 1, 1, 1},
                      // Stride-2 stems with rows wider than a 32-column panel (vector gather).
                      ConvCase{3, 30, 75, 10, 7, 2, 3, 1}, ConvCase{3, 33, 67, 16, 3, 2, 1, 1}));

// A 1x1 stride-1 conv with B read in place (a task's whole panels in one block, row panels
// outer, then its partial panel packed) and each post op per tile, against the reference Conv:
// 99 columns are whole 16- and 32-wide panels and a column tail, blockings of one task, of
// several with a K chunk, and tasks narrower than their panels' run.
TEST(CpuKernels, DirectOneByOneWithPostOps) {
  const ConvCase c{13, 9, 11, 11, 1, 1, 0, 1};
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 31);
  const Tensor w = random_tensor({c.oc, c.c, 1, 1}, 32);
  const Tensor b = random_tensor({c.oc}, 33);
  const Tensor conv = reference_conv(c, x, w, b, g);
  const int64_t cols = g.oh * g.ow;
  const std::vector<UnaryFn> posts = post_ops();
  const std::vector<GemmBlocking> blockings = {GemmBlocking{768, 512, 0, false},
                                               GemmBlocking{6, 48, 5, false},
                                               GemmBlocking{12, 64, 0, false}};
  for (const auto& p : knob_grid_indices("tile x blocking x post",
                                         {kAllTiles.size(), blockings.size(), posts.size()})) {
    const GemmTile& tile = kAllTiles[p[0]];
    GemmBlocking blocking = blockings[p[1]];
    blocking.nr = tile.nr;
    const UnaryFn& post = posts[p[2]];
    SCOPED_TRACE(tile_name(tile) + " mc=" + std::to_string(blocking.mc) +
                 " nc=" + std::to_string(blocking.nc) + " kc=" + std::to_string(blocking.kc) +
                 " post=" + std::to_string(static_cast<int>(post.op)));
    PackedMatrix pa;
    pack_a(w.data<float>(), c.oc, c.c, c.c, 1, &pa, tile.mr);
    Epilogue e;
    e.row_bias = b.data<float>();
    e.lo = -0.5f;
    e.hi = 0.7f;
    if (post.op != UnaryOp::kIdentity) e.post = &post;
    const float* xb = x.data<float>();
    std::vector<float> got(static_cast<size_t>(c.oc * cols), -7.0f);
    sgemm_panels(
        pa, cols,
        [&](int64_t j0, float* panel) { copy_panel(xb, c.c, cols, cols, j0, panel, tile.nr); },
        got.data(), cols, e, blocking, xb, cols);
    Tensor want = conv.clone();
    for (int64_t i = 0; i < want.numel(); ++i) {
      want.data<float>()[i] =
          apply_post(post, std::min(std::max(want.data<float>()[i], -0.5f), 0.7f));
    }
    expect_close(got.data(), want);
  }
}

// Winograd F(2x2,3x3) against the reference Conv: odd H/W (partial right/bottom tiles), pads 0
// and 1, channel counts off the tile multiples, every compiled tile, several tiles per task, with
// and without bias, no clamp and a Relu/Clip clamp.
struct WinogradCase {
  int64_t c, h, w, oc, pad;
};

class CpuWinograd : public ::testing::TestWithParam<WinogradCase> {};

TEST_P(CpuWinograd, MatchesReferenceEveryTileAndClamp) {
  const WinogradCase wc = GetParam();
  const ConvCase c{wc.c, wc.h, wc.w, wc.oc, 3, 1, wc.pad, 1};
  const ConvGeometry g = geometry(c);
  ASSERT_TRUE(winograd_applies(g));
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 27);
  const Tensor w = random_tensor({c.oc, c.c, 3, 3}, 28);
  const Tensor zero = Tensor::from_vector({c.oc}, std::vector<float>(c.oc, 0.0f));
  // With bias, also a residual (a fused Add): added before the clamp.
  const Tensor res = random_tensor({1, c.oc, g.oh, g.ow}, 30);
  for (const bool with_bias : {false, true}) {
    const Tensor b = with_bias ? random_tensor({c.oc}, 29) : zero;
    Tensor raw = reference_conv(c, x, w, b, g);
    if (with_bias) {
      for (int64_t i = 0; i < raw.numel(); ++i) raw.data<float>()[i] += res.data<float>()[i];
    }
    const float inf = std::numeric_limits<float>::infinity();
    for (const auto& [lo, hi] : {std::pair<float, float>{-inf, inf}, {0.0f, inf}, {0.0f, 0.6f}}) {
      Tensor want = raw;
      for (int64_t i = 0; i < want.numel(); ++i) {
        want.data<float>()[i] = std::min(std::max(want.data<float>()[i], lo), hi);
      }
      // Output tiles per task.
      const std::vector<int64_t> task_tiles = {16, 32, 96};
      for (const auto& p :
           knob_grid_indices("tile x tiles per task", {kAllTiles.size(), task_tiles.size()})) {
        const GemmTile& tile = kAllTiles[p[0]];
        const int64_t tiles = task_tiles[p[1]];
        WinogradWeights u;
        winograd_weights(w.data<float>(), c.oc, c.c, tile.mr, &u);
        std::vector<float> got(static_cast<size_t>(c.oc * g.oh * g.ow), -7.0f);
        winograd_conv(x.data<float>(), g, u, with_bias ? b.data<float>() : nullptr,
                      with_bias ? res.data<float>() : nullptr, lo, hi,
                      WinogradBlocking{tiles, tile.nr}, got.data());
        SCOPED_TRACE(tile_name(tile) + " tiles=" + std::to_string(tiles) +
                     " bias=" + std::to_string(with_bias) + " lo=" + std::to_string(lo) +
                     " hi=" + std::to_string(hi));
        expect_close(got.data(), want);
      }
    }
  }
}

// Convs on phase planes (phase_gemm_conv) against the reference, with every compiled tile: strides
// 1 and 2, pads 0..3, odd sizes, rows narrower and wider than a tile, windows 1..7.
class CpuPhaseGemm : public ::testing::TestWithParam<ConvCase> {};

TEST_P(CpuPhaseGemm, MatchesReferenceEveryTile) {
  const ConvCase c = GetParam();
  const ConvGeometry g = geometry(c);
  ASSERT_TRUE(phase_gemm_applies(g));
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 31);
  const Tensor w = random_tensor({c.oc, c.c, c.k, c.k}, 32);
  const Tensor b = random_tensor({c.oc}, 33);
  Tensor want = reference_conv(c, x, w, b, g);
  for (int64_t i = 0; i < want.numel(); ++i) {
    want.data<float>()[i] = std::min(std::max(want.data<float>()[i], 0.0f), 0.6f);
  }
  const int64_t k = c.c * c.k * c.k;
  for (const auto& p : knob_grid_indices("tile", {kAllTiles.size()})) {
    const GemmTile& tile = kAllTiles[p[0]];
    SCOPED_TRACE(tile_name(tile));
    PackedMatrix a;
    pack_a(w.data<float>(), c.oc, k, k, 1, &a, tile.mr);
    Epilogue e;
    e.row_bias = b.data<float>();
    e.lo = 0.0f;
    e.hi = 0.6f;
    std::vector<float> got(static_cast<size_t>(want.numel()), -7.0f);
    phase_gemm_conv(x.data<float>(), g, a, e, tile.nr, got.data());
    expect_close(got.data(), want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, CpuPhaseGemm,
    ::testing::Values(ConvCase{3, 224, 224, 32, 3, 2, 1, 1}, ConvCase{3, 37, 41, 9, 3, 2, 0, 1},
                      ConvCase{2, 17, 15, 13, 7, 2, 3, 1}, ConvCase{5, 9, 70, 7, 3, 1, 1, 1},
                      ConvCase{4, 6, 5, 3, 1, 1, 0, 1}, ConvCase{3, 12, 13, 17, 5, 2, 2, 1},
                      ConvCase{2, 3, 2, 4, 3, 1, 2, 1}, ConvCase{1, 8, 33, 6, 2, 2, 0, 1}));

// The direct grouped 3x3 kernel (f32_gconv2d_chw_3x3) against the reference Conv, with bias,
// residual and clamp: the output of every channel written once, nothing outside it touched.
std::vector<float> gconv_expected(const ConvCase& c, const Tensor& x, const Tensor& w,
                                  const Tensor& b, const Tensor* res, float lo, float hi) {
  const ConvGeometry g = geometry(c);
  Tensor want = reference_conv(c, x, w, b, g);
  std::vector<float> out(want.data<float>(), want.data<float>() + want.numel());
  for (size_t i = 0; i < out.size(); ++i) {
    if (res != nullptr) out[i] += res->data<float>()[i];
    out[i] = std::min(std::max(out[i], lo), hi);
  }
  return out;
}

void check_gconv(const ConvCase& c, uint32_t seed) {
  const ConvGeometry g = geometry(c);
  ASSERT_TRUE(f32_gconv2d_chw_3x3_applies(g));
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, seed);
  const Tensor w = random_tensor({c.oc, c.c / c.group, 3, 3}, seed + 1);
  const Tensor b = random_tensor({c.oc}, seed + 2);
  const Tensor res = random_tensor({1, c.oc, g.oh, g.ow}, seed + 3);
  GconvWeights packed;
  f32_gconv2d_chw_3x3_pack(w.data<float>(), g, &packed);
  const int64_t n = c.oc * g.oh * g.ow;
  const float inf = std::numeric_limits<float>::infinity();
  for (const bool with_residual : {false, true}) {
    for (const auto& [lo, hi] : {std::pair<float, float>{-inf, inf}, {0.0f, 0.6f}}) {
      SCOPED_TRACE("residual=" + std::to_string(with_residual) + " lo=" + std::to_string(lo) +
                   " hi=" + std::to_string(hi));
      const std::vector<float> want =
          gconv_expected(c, x, w, b, with_residual ? &res : nullptr, lo, hi);
      // Guards either side of the output must keep their values.
      const int64_t guard = 64;
      std::vector<float> buf(static_cast<size_t>(n + 2 * guard), -7.0f);
      Epilogue e;
      e.row_bias = b.data<float>();
      e.residual = with_residual ? res.data<float>() : nullptr;
      e.lo = lo;
      e.hi = hi;
      f32_gconv2d_chw_3x3(x.data<float>(), g, packed, e, buf.data() + guard);
      for (int64_t i = 0; i < guard; ++i) {
        ASSERT_EQ(buf[static_cast<size_t>(i)], -7.0f) << "guard before, element " << i;
        ASSERT_EQ(buf[static_cast<size_t>(guard + n + i)], -7.0f) << "guard after, element " << i;
      }
      for (int64_t i = 0; i < n; ++i) {
        const float wv = want[static_cast<size_t>(i)];
        ASSERT_NEAR(buf[static_cast<size_t>(guard + i)], wv, 1e-4f * std::max(1.0f, std::fabs(wv)))
            << "element " << i;
      }
    }
  }
}

class CpuGconv3x3 : public ::testing::TestWithParam<ConvCase> {};

TEST_P(CpuGconv3x3, MatchesReferenceWithEpilogue) {
  check_gconv(GetParam(), 41);
}

// {c, h, w, oc, k, stride, pad, group}: regnet's width 8 at stride 1 and 2 (even and odd input
// sizes), 7x7 and 13x13 maps, 1-wide and 1-tall outputs, widths 6 and 12 (not a vector's
// multiple), one group of 8, out-width 16 (two chunks) and 12 from 4, pads 0 and 2, and maps large
// enough to be split into several row blocks per group.
const std::vector<ConvCase>& gconv_cases() {
  static const std::vector<ConvCase> cases = {
      ConvCase{96, 7, 7, 96, 3, 1, 1, 12},  ConvCase{48, 13, 13, 48, 3, 1, 1, 6},
      ConvCase{64, 14, 14, 64, 3, 2, 1, 8}, ConvCase{32, 15, 15, 32, 3, 2, 1, 4},
      ConvCase{16, 2, 2, 16, 3, 2, 1, 2},   ConvCase{16, 1, 9, 16, 3, 1, 1, 2},
      ConvCase{16, 9, 1, 16, 3, 1, 1, 2},   ConvCase{36, 13, 13, 36, 3, 1, 1, 6},
      ConvCase{24, 14, 14, 24, 3, 2, 1, 2}, ConvCase{8, 9, 9, 8, 3, 1, 1, 1},
      ConvCase{16, 11, 11, 32, 3, 1, 1, 2}, ConvCase{8, 10, 10, 24, 3, 2, 1, 2},
      ConvCase{16, 12, 11, 16, 3, 1, 0, 2}, ConvCase{16, 9, 8, 16, 3, 2, 2, 2},
      ConvCase{48, 56, 56, 48, 3, 2, 1, 6}, ConvCase{16, 61, 30, 16, 3, 1, 1, 2},
  };
  return cases;
}

INSTANTIATE_TEST_SUITE_P(OddSizes, CpuGconv3x3, ::testing::ValuesIn(gconv_cases()));

TEST(CpuKernels, Gconv3x3AppliesToFewChannelsPerGroup) {
  EXPECT_TRUE(f32_gconv2d_chw_3x3_applies(geometry(ConvCase{440, 7, 7, 440, 3, 1, 1, 55})));
  EXPECT_TRUE(f32_gconv2d_chw_3x3_applies(geometry(ConvCase{8, 9, 9, 8, 3, 1, 1, 1})));
  // Depthwise, 2 channels per group, 32 per group, 5x5 windows, stride 3.
  EXPECT_FALSE(f32_gconv2d_chw_3x3_applies(geometry(ConvCase{8, 9, 9, 8, 3, 1, 1, 8})));
  EXPECT_FALSE(f32_gconv2d_chw_3x3_applies(geometry(ConvCase{8, 9, 9, 8, 3, 1, 1, 4})));
  EXPECT_FALSE(f32_gconv2d_chw_3x3_applies(geometry(ConvCase{64, 9, 9, 64, 3, 1, 1, 2})));
  EXPECT_FALSE(f32_gconv2d_chw_3x3_applies(geometry(ConvCase{16, 9, 9, 16, 5, 1, 2, 2})));
  EXPECT_FALSE(f32_gconv2d_chw_3x3_applies(geometry(ConvCase{16, 9, 9, 16, 3, 3, 1, 2})));
}

// The flattened-plane GEMM conv (flat_gemm_conv) against the reference Conv with bias, residual
// and clamp, for every compiled tile and task blocking (rows mc x flat columns nc; nc below the
// tile rounds up to it): nothing outside the output touched.
void check_flat(const ConvCase& c, uint32_t seed, bool all_tiles) {
  const ConvGeometry g = geometry(c);
  ASSERT_TRUE(flat_gemm_conv_applies(g));
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, seed);
  const Tensor w = random_tensor({c.oc, c.c, c.k, c.k}, seed + 1);
  const Tensor b = random_tensor({c.oc}, seed + 2);
  const Tensor res = random_tensor({1, c.oc, g.oh, g.ow}, seed + 3);
  const int64_t n = c.oc * g.oh * g.ow;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<int64_t, int64_t>> blockings = {{8, 16}, {12, 64}, {512, 1024}};
  const std::vector<GemmTile> tiles =
      all_tiles ? kAllTiles : std::vector<GemmTile>{GemmTile{}, GemmTile{8, 32}};
  for (const auto& p : knob_grid_indices("tile x blocking", {tiles.size(), blockings.size()})) {
    const GemmTile& tile = tiles[p[0]];
    const auto [mc, nc] = blockings[p[1]];
    FlatConvWeights packed;
    flat_gemm_conv_pack(w.data<float>(), g, mc, tile.mr, &packed);
    for (const bool with_residual : {false, true}) {
      for (const auto& [lo, hi] : {std::pair<float, float>{-inf, inf}, {0.0f, 0.6f}}) {
        SCOPED_TRACE(tile_name(tile) + " mc=" + std::to_string(mc) + " nc=" + std::to_string(nc) +
                     " residual=" + std::to_string(with_residual) + " lo=" + std::to_string(lo));
        const std::vector<float> want =
            gconv_expected(c, x, w, b, with_residual ? &res : nullptr, lo, hi);
        const int64_t guard = 64;
        std::vector<float> buf(static_cast<size_t>(n + 2 * guard), -7.0f);
        Epilogue e;
        e.row_bias = b.data<float>();
        e.residual = with_residual ? res.data<float>() : nullptr;
        e.lo = lo;
        e.hi = hi;
        flat_gemm_conv(x.data<float>(), g, packed, e, nc, tile.nr, buf.data() + guard);
        for (int64_t i = 0; i < guard; ++i) {
          ASSERT_EQ(buf[static_cast<size_t>(i)], -7.0f) << "guard before, element " << i;
          ASSERT_EQ(buf[static_cast<size_t>(guard + n + i)], -7.0f) << "guard after, element " << i;
        }
        for (int64_t i = 0; i < n; ++i) {
          const float wv = want[static_cast<size_t>(i)];
          ASSERT_NEAR(buf[static_cast<size_t>(guard + i)], wv,
                      1e-4f * std::max(1.0f, std::fabs(wv)))
              << "element " << i;
        }
      }
    }
  }
}

class CpuFlatGemmConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(CpuFlatGemmConv, MatchesReferenceEveryTileAndEpilogue) {
  check_flat(GetParam(), 61, true);
}

// {c, h, w, oc, k, stride, pad, group}: densenet's 128 -> 32 at 7x7 and 14x14 (tiles across row
// ends, rows split into blocks), squeezenet's 16 -> 64 at 13x13, odd channel counts (not a
// multiple of any tile's rows), 1-wide and 1-tall maps, pads 0 and 2, a 5x5 and a 2x2 window, a
// map wider than a task's columns.
const std::vector<ConvCase>& flat_cases() {
  static const std::vector<ConvCase> cases = {
      ConvCase{128, 7, 7, 32, 3, 1, 1, 1}, ConvCase{128, 14, 14, 32, 3, 1, 1, 1},
      ConvCase{16, 13, 13, 64, 3, 1, 1, 1}, ConvCase{5, 9, 11, 13, 3, 1, 1, 1},
      ConvCase{3, 1, 9, 7, 3, 1, 1, 1},    ConvCase{3, 9, 1, 7, 3, 1, 1, 1},
      ConvCase{6, 10, 12, 9, 3, 1, 0, 1},  ConvCase{4, 8, 7, 10, 3, 1, 2, 1},
      ConvCase{3, 11, 9, 5, 5, 1, 2, 1},   ConvCase{2, 6, 5, 3, 2, 1, 0, 1},
      ConvCase{7, 5, 70, 11, 3, 1, 1, 1},
  };
  return cases;
}

INSTANTIATE_TEST_SUITE_P(OddSizes, CpuFlatGemmConv, ::testing::ValuesIn(flat_cases()));

TEST(CpuKernels, FlatGemmConvAppliesToStride1GroupOne) {
  EXPECT_TRUE(flat_gemm_conv_applies(geometry(ConvCase{128, 7, 7, 32, 3, 1, 1, 1})));
  // 1x1, stride 2, grouped.
  EXPECT_FALSE(flat_gemm_conv_applies(geometry(ConvCase{128, 7, 7, 32, 1, 1, 0, 1})));
  EXPECT_FALSE(flat_gemm_conv_applies(geometry(ConvCase{128, 8, 8, 32, 3, 2, 1, 1})));
  EXPECT_FALSE(flat_gemm_conv_applies(geometry(ConvCase{128, 7, 7, 32, 3, 1, 1, 2})));
}

TEST(CpuKernels, WinogradRefusesOtherConvs) {
  ConvGeometry g = geometry(ConvCase{4, 8, 8, 4, 3, 2, 1, 1});
  EXPECT_FALSE(winograd_applies(g));
  g = geometry(ConvCase{4, 8, 8, 4, 3, 1, 1, 2});
  EXPECT_FALSE(winograd_applies(g));
  g = geometry(ConvCase{4, 8, 8, 4, 5, 1, 2, 1});
  EXPECT_FALSE(winograd_applies(g));
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, CpuWinograd,
    ::testing::Values(WinogradCase{3, 9, 11, 7, 1}, WinogradCase{5, 9, 11, 13, 0},
                      WinogradCase{17, 13, 13, 19, 1}, WinogradCase{16, 28, 28, 64, 1},
                      WinogradCase{1, 3, 3, 1, 0}, WinogradCase{9, 4, 37, 6, 1},
                      WinogradCase{33, 7, 7, 37, 1}, WinogradCase{8, 20, 5, 10, 0}));

// The stride-2 de-interleave reads no further than avail floats (here exactly 2 len - 1, the last
// element it needs) and matches the scalar gather for every length around the vector widths.
TEST(CpuKernels, GatherStride2MatchesScalar) {
  for (int64_t len = 1; len <= 40; ++len) {
    for (const int64_t extra : {int64_t{0}, int64_t{1}, int64_t{33}}) {
      std::vector<float> src(static_cast<size_t>(2 * len - 1 + extra));
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f - 3.0f;
      std::vector<float> dst(static_cast<size_t>(len) + 1, -1.0f);
      gather_stride2(src.data(), len, static_cast<int64_t>(src.size()), dst.data());
      for (int64_t t = 0; t < len; ++t) {
        ASSERT_EQ(dst[static_cast<size_t>(t)], src[static_cast<size_t>(2 * t)])
            << "len " << len << " t " << t;
      }
      EXPECT_EQ(dst[static_cast<size_t>(len)], -1.0f);
    }
  }
}

// MaxPool and AveragePool through the SIMD kernels (the direct stride-2 one and the separable
// one): pads, strides 1 to 3, ceil_mode (windows past the bottom/right edge), count_include_pad,
// rows narrower and wider than a vector, fused clamp.
using test::PoolCase;

class CpuPool : public ::testing::TestWithParam<PoolCase> {};

TEST_P(CpuPool, MatchesReference) {
  const PoolCase c = GetParam();
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 21);
  const ConvGeometry g = test::pool_geometry(c);
  Tensor want = reference(test::pool_op(c), test::pool_attributes(c), {&x}, {1, c.c, g.oh, g.ow});
  for (int64_t i = 0; i < want.numel(); ++i) {
    want.data<float>()[i] = std::min(std::max(want.data<float>()[i], -0.8f), 0.9f);
  }
  std::vector<float> got(static_cast<size_t>(want.numel()), 1e9f);
  pool2d(x.data<float>(), test::pool_window(c), -0.8f, 0.9f, got.data());
  expect_close(got.data(), want);
}

INSTANTIATE_TEST_SUITE_P(OddSizes, CpuPool, ::testing::ValuesIn(test::pool_cases()));

class CpuDepthwise : public ::testing::TestWithParam<ConvCase> {};

TEST_P(CpuDepthwise, MatchesReferenceWithRelu6) {
  const ConvCase c = GetParam();
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 10);
  const Tensor w = random_tensor({c.c, 1, c.k, c.k}, 11);
  const Tensor b = random_tensor({c.c}, 12);
  Tensor want = reference_conv(c, x, w, b, g);
  for (int64_t i = 0; i < want.numel(); ++i) {
    want.data<float>()[i] = std::min(std::max(want.data<float>()[i], 0.0f), 0.6f);
  }
  std::vector<float> got(static_cast<size_t>(want.numel()));
  depthwise_conv(x.data<float>(), w.data<float>(), b.data<float>(), g, 0.0f, 0.6f, got.data());
  expect_close(got.data(), want);
}

// Each post op after the clamp (a fused SiLU, HardSwish or GELU node): every depthwise kernel
// applies it as a pass over the planes it just computed, tails included.
// What a depthwise kernel with clamp [-0.5, 0.9] and post op `post` makes of the conv `conv`.
Tensor clamp_then_post(const Tensor& conv, const UnaryFn& post) {
  Tensor want = conv.clone();
  for (int64_t i = 0; i < want.numel(); ++i) {
    want.data<float>()[i] =
        apply_post(post, std::min(std::max(want.data<float>()[i], -0.5f), 0.9f));
  }
  return want;
}

// depthwise_conv of case c (inputs from seeds seed, seed + 1, seed + 2), clamped to [-0.5, 0.9]
// and followed by each post op, against the reference conv.
void check_depthwise_post_ops(const ConvCase& c, uint32_t seed) {
  const ConvGeometry g = geometry(c);
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, seed);
  const Tensor w = random_tensor({c.c, 1, c.k, c.k}, seed + 1);
  const Tensor b = random_tensor({c.c}, seed + 2);
  const Tensor conv = reference_conv(c, x, w, b, g);
  for (const UnaryFn& post : post_ops()) {
    SCOPED_TRACE("post " + std::to_string(static_cast<int>(post.op)));
    const Tensor want = clamp_then_post(conv, post);
    std::vector<float> got(static_cast<size_t>(want.numel()));
    depthwise_conv(x.data<float>(), w.data<float>(), b.data<float>(), g, -0.5f, 0.9f, got.data(),
                   post.op == UnaryOp::kIdentity ? nullptr : &post);
    expect_close(got.data(), want);
  }
}

TEST_P(CpuDepthwise, MatchesReferenceWithPostOps) {
  check_depthwise_post_ops(GetParam(), 16);
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, CpuDepthwise,
    ::testing::Values(ConvCase{5, 13, 11, 5, 3, 1, 1, 5}, ConvCase{3, 14, 15, 3, 3, 2, 1, 3},
                      ConvCase{2, 7, 9, 2, 3, 2, 0, 2}, ConvCase{4, 3, 2, 4, 3, 1, 1, 4},
                      ConvCase{3, 12, 10, 3, 5, 3, 2, 3},
                      // Wide rows: the vector interior path runs.
                      ConvCase{7, 9, 53, 7, 3, 1, 1, 7}, ConvCase{4, 8, 71, 4, 3, 2, 1, 4},
                      ConvCase{3, 5, 40, 3, 3, 2, 0, 3}, ConvCase{2, 4, 66, 2, 3, 2, 1, 2},
                      // Padded-plane path: exact vector multiples, 4-vector blocks, 5x5 and 7x7
                      // windows, no padding, windows wider than the plane.
                      ConvCase{3, 16, 32, 3, 3, 1, 1, 3}, ConvCase{2, 6, 130, 2, 3, 2, 1, 2},
                      ConvCase{2, 11, 37, 2, 5, 2, 2, 2}, ConvCase{3, 9, 64, 3, 3, 1, 0, 3},
                      ConvCase{2, 5, 5, 2, 7, 1, 3, 2}, ConvCase{2, 4, 3, 2, 5, 2, 2, 2},
                      // Linear-plane path (depthwise_linear): "same" stride 1 and even stride 2,
                      // planes of 4 to 3136 outputs, with and without a partial last vector.
                      ConvCase{5, 7, 7, 5, 3, 1, 1, 5}, ConvCase{3, 14, 14, 3, 3, 1, 1, 3},
                      ConvCase{2, 56, 56, 2, 3, 1, 1, 2}, ConvCase{3, 2, 2, 3, 3, 1, 1, 3},
                      ConvCase{3, 9, 11, 3, 5, 1, 2, 3}, ConvCase{4, 28, 28, 4, 3, 2, 1, 4},
                      ConvCase{3, 14, 6, 3, 3, 2, 1, 3}, ConvCase{2, 12, 12, 2, 5, 2, 2, 2},
                      ConvCase{2, 112, 112, 2, 3, 2, 1, 2},
                      // Stride-2 rows de-interleaved with an overlapping last vector: 7, 20
                      // and 18 outputs wide.
                      ConvCase{3, 14, 14, 3, 3, 2, 1, 3}, ConvCase{2, 40, 36, 2, 3, 2, 1, 2}));

// The channel-blocked kernel alone, on every shape above and on what only it takes: channel
// counts around the block width (a partial last block), planes tall enough to split into bands,
// asymmetric pads, dilations at strides 1 and 2, windows wider than the plane.
struct BlockedCase {
  int64_t c, h, w, k, stride, pad_t, pad_l, pad_b, pad_r, dil;
};

class CpuDepthwiseBlocked : public ::testing::TestWithParam<BlockedCase> {};

TEST_P(CpuDepthwiseBlocked, MatchesReferenceWithPostOps) {
  const BlockedCase c = GetParam();
  ConvGeometry g;
  g.c = g.oc = g.group = c.c;
  g.h = c.h;
  g.w = c.w;
  g.kh = g.kw = c.k;
  g.sh = g.sw = c.stride;
  g.pt = c.pad_t;
  g.pl = c.pad_l;
  g.dil_h = g.dil_w = c.dil;
  g.oh = (c.h + c.pad_t + c.pad_b - g.extent_h()) / c.stride + 1;
  g.ow = (c.w + c.pad_l + c.pad_r - g.extent_w()) / c.stride + 1;
  ASSERT_TRUE(depthwise_blocked_applies(g));
  const Tensor x = random_tensor({1, c.c, c.h, c.w}, 31);
  const Tensor w = random_tensor({c.c, 1, c.k, c.k}, 32);
  const Tensor b = random_tensor({c.c}, 33);
  Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{c.k, c.k});
  attrs.set("strides", std::vector<int64_t>{c.stride, c.stride});
  attrs.set("pads", std::vector<int64_t>{c.pad_t, c.pad_l, c.pad_b, c.pad_r});
  attrs.set("dilations", std::vector<int64_t>{c.dil, c.dil});
  attrs.set("group", c.c);
  const Tensor conv = reference("Conv", attrs, {&x, &w, &b}, {1, c.c, g.oh, g.ow});
  for (const UnaryFn& post : post_ops()) {
    SCOPED_TRACE("post " + std::to_string(static_cast<int>(post.op)));
    const Tensor want = clamp_then_post(conv, post);
    // Sentinels around the output: a block or band must not write past its own channels.
    std::vector<float> got(static_cast<size_t>(want.numel() + 32), 7.0f);
    ASSERT_TRUE(depthwise_blocked(x.data<float>(), w.data<float>(), b.data<float>(), g, -0.5f, 0.9f,
                                  got.data() + 16,
                                  post.op == UnaryOp::kIdentity ? nullptr : &post));
    expect_close(got.data() + 16, want);
    for (int64_t i = 0; i < 16; ++i) {
      ASSERT_EQ(got[static_cast<size_t>(i)], 7.0f);
      ASSERT_EQ(got[static_cast<size_t>(want.numel() + 16 + i)], 7.0f);
    }
  }
}

// A crafted window of huge dilation and pads would need a tile of GiBs: the kernel declines it
// (nothing written, nothing allocated) and depthwise_conv takes another kernel.
TEST(CpuDepthwiseBlockedLimits, DeclinesTilesPastItsBudget) {
  ConvGeometry g;
  g.c = g.oc = g.group = 16;
  g.h = g.w = 4;
  g.kh = g.kw = 5;
  g.dil_h = g.dil_w = 2000;
  g.pt = g.pl = 4000;
  g.oh = g.ow = (4 + 8000 - g.extent_h()) / 1 + 1;
  ASSERT_TRUE(depthwise_blocked_applies(g));
  std::vector<float> x(16 * 16, 1.0f), w(16 * 25, 1.0f), y(16 * 16, 7.0f);
  EXPECT_FALSE(depthwise_blocked(x.data(), w.data(), nullptr, g, -1e30f, 1e30f, y.data()));
  EXPECT_EQ(y[0], 7.0f);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuDepthwiseBlocked,
    ::testing::Values(
        BlockedCase{5, 13, 11, 3, 1, 1, 1, 1, 1, 1}, BlockedCase{3, 14, 15, 3, 2, 1, 1, 1, 1, 1},
        BlockedCase{16, 7, 7, 5, 1, 2, 2, 2, 2, 1}, BlockedCase{17, 7, 7, 5, 1, 2, 2, 2, 2, 1},
        BlockedCase{33, 14, 14, 5, 2, 1, 1, 2, 2, 1}, BlockedCase{40, 14, 14, 3, 1, 1, 1, 1, 1, 1},
        BlockedCase{4, 3, 2, 3, 1, 1, 1, 1, 1, 1}, BlockedCase{2, 5, 5, 7, 1, 3, 3, 3, 3, 1},
        BlockedCase{2, 4, 3, 5, 2, 2, 2, 2, 2, 1}, BlockedCase{3, 1, 1, 3, 1, 1, 1, 1, 1, 1},
        // Tall and wide planes: several bands of output rows, the last one short.
        BlockedCase{18, 150, 121, 3, 2, 1, 1, 1, 1, 1},
        BlockedCase{9, 97, 230, 5, 1, 2, 2, 2, 2, 1},
        // Asymmetric (TF "same") pads, dilations, no padding.
        BlockedCase{20, 15, 15, 3, 2, 0, 0, 1, 1, 1}, BlockedCase{21, 28, 28, 3, 1, 2, 2, 2, 2, 2},
        BlockedCase{19, 33, 29, 3, 2, 4, 4, 4, 4, 4}, BlockedCase{24, 9, 12, 5, 1, 0, 0, 0, 0, 1},
        BlockedCase{7, 12, 10, 5, 3, 2, 1, 0, 3, 1}));

// The shapes above that the linear-plane kernel takes (the others keep the row kernel).
TEST(CpuDepthwiseLinear, AppliesToSameShapedConvs) {
  EXPECT_TRUE(depthwise_linear_applies(geometry(ConvCase{5, 7, 7, 5, 3, 1, 1, 5})));
  EXPECT_TRUE(depthwise_linear_applies(geometry(ConvCase{2, 12, 12, 2, 5, 2, 2, 2})));
  EXPECT_FALSE(depthwise_linear_applies(geometry(ConvCase{3, 14, 15, 3, 3, 2, 1, 3})));
  EXPECT_FALSE(depthwise_linear_applies(geometry(ConvCase{3, 9, 64, 3, 3, 1, 0, 3})));
  EXPECT_FALSE(depthwise_linear_applies(geometry(ConvCase{2, 5, 5, 2, 7, 1, 3, 2})));
}

TEST(CpuKernels, AddClampAndClampMatchReference) {
  const int64_t n = 1037;
  const Tensor a = random_tensor({n}, 13), b = random_tensor({n}, 14);
  const Tensor sum = reference("Add", {}, {&a, &b}, {n});
  const Tensor relu = reference("Relu", {}, {&sum}, {n});
  std::vector<float> got(static_cast<size_t>(n));
  add_clamp(a.data<float>(), b.data<float>(), got.data(), n, 0.0f,
            std::numeric_limits<float>::infinity());
  expect_close(got.data(), relu);
  const Tensor lo = Tensor::from_vector<float>({}, {-0.25f}),
               hi = Tensor::from_vector<float>({}, {0.5f});
  const Tensor clip = reference("Clip", {}, {&a, &lo, &hi}, {n});
  clamp_copy(a.data<float>(), got.data(), n, -0.25f, 0.5f);
  expect_close(got.data(), clip);
}

// Planes of 1 to 200 floats: whole 4-vector blocks, single vectors and scalar tails.
TEST(CpuKernels, GlobalAveragePoolMatchesReference) {
  for (const int64_t hw : {1, 3, 7, 49, 71, 169, 200}) {
    SCOPED_TRACE("plane " + std::to_string(hw));
    const Tensor x = random_tensor({2, 5, hw, 1}, 15);
    Tensor want = reference("GlobalAveragePool", {}, {&x}, {2, 5, 1, 1});
    for (int64_t i = 0; i < want.numel(); ++i) {
      want.data<float>()[i] = std::min(std::max(want.data<float>()[i], -0.1f), 0.2f);
    }
    std::vector<float> got(10, 9.0f);
    global_average_pool(x.data<float>(), 10, hw, -0.1f, 0.2f, got.data());
    expect_close(got.data(), want);
  }
}

// Forces each compiled Highway target this host can run (AVX-512, AVX2, SSE4, ..., scalar on
// x86-64) so every variant of the kernels is checked here, not only the best one.
TEST(CpuKernels, EveryHighwayTargetMatchesReference) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  const ConvCase dw{3, 7, 45, 3, 3, 2, 1, 3};
  const ConvGeometry g = geometry(dw);
  const Tensor x = random_tensor({1, 3, 7, 45}, 20), w = random_tensor({3, 1, 3, 3}, 21);
  const Tensor b = random_tensor({3}, 22);
  const Tensor want_dw = reference_conv(dw, x, w, b, g);
  const int64_t m = 13, n = 37, k = 21;
  const Tensor a = random_tensor({m, k}, 23), bm = random_tensor({k, n}, 24);
  const Tensor want_mm = reference("MatMul", {}, {&a, &bm}, {m, n});
  for (int64_t target : targets) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    EXPECT_EQ(simd_best_target(), hwy::TargetName(target));
    std::vector<float> got(static_cast<size_t>(want_dw.numel()));
    depthwise_conv(x.data<float>(), w.data<float>(), b.data<float>(), g, -1e30f, 1e30f, got.data());
    expect_close(got.data(), want_dw);
    for (const auto& p : knob_grid_indices("tile", {kAllTiles.size()})) {
      const GemmTile& tile = kAllTiles[p[0]];
      SCOPED_TRACE(tile_name(tile));
      PackedMatrix pa, pb;
      pack_a(a.data<float>(), m, k, k, 1, &pa, tile.mr);
      pack_b(bm.data<float>(), k, n, n, 1, &pb, tile.nr);
      std::vector<float> c(static_cast<size_t>(m * n));
      sgemm_packed(pa, pb, c.data(), n, Epilogue{}, GemmBlocking{});
      expect_close(c.data(), want_mm);
      // The panel path with K chunks (first/last partial-sum variants of the tile), then with
      // each post op (whole tiles, edge tiles and column tails through the tile buffer).
      // Row and column bias, a residual and a clamp ride along, so every epilogue input meets
      // every tile kind.
      GemmBlocking chunked{12, 32, 8, false, false};
      chunked.nr = tile.nr;
      const Tensor row_bias = random_tensor({m}, 29), col_bias = random_tensor({n}, 30);
      const Tensor residual = random_tensor({m, n}, 31);
      for (const UnaryFn& post : post_ops()) {
        SCOPED_TRACE("post " + std::to_string(static_cast<int>(post.op)));
        std::fill(c.begin(), c.end(), 0.0f);
        Epilogue e;
        e.row_bias = row_bias.data<float>();
        e.col_bias = col_bias.data<float>();
        e.residual = residual.data<float>();
        e.lo = -1.5f;
        e.hi = 2.5f;
        if (post.op != UnaryOp::kIdentity) e.post = &post;
        sgemm_panels(
            pa, n,
            [&](int64_t j0, float* panel) {
              copy_panel(bm.data<float>(), k, n, n, j0, panel, tile.nr);
            },
            c.data(), n, e, chunked);
        Tensor want = want_mm.clone();
        for (int64_t i = 0; i < want.numel(); ++i) {
          const float x = want.data<float>()[i] + row_bias.data<float>()[i / n] +
                          col_bias.data<float>()[i % n] + residual.data<float>()[i];
          want.data<float>()[i] = apply_post(post, std::min(std::max(x, -1.5f), 2.5f));
        }
        expect_close(c.data(), want);
      }
    }
    // The linear-plane depthwise kernel with each post op: 8- and 16-lane planes (7x7 and 13x13),
    // stride 1 and 2, 3x3 and 5x5.
    for (const ConvCase& c : {ConvCase{3, 7, 7, 3, 3, 1, 1, 3}, ConvCase{2, 20, 20, 2, 5, 2, 2, 2},
                              ConvCase{2, 13, 13, 2, 3, 1, 1, 2}}) {
      SCOPED_TRACE("depthwise linear h=" + std::to_string(c.h) + " k=" + std::to_string(c.k));
      ASSERT_TRUE(depthwise_linear_applies(geometry(c)));
      check_depthwise_post_ops(c, 32);
    }
    // Depthwise rows (the pointwise+depthwise fusion's kernel), against the reference conv.
    EXPECT_FALSE(test::depthwise_rows_cases().empty()) << "no depthwise rows case: nothing checked";
    for (const test::DepthwiseRowsCase& c : test::depthwise_rows_cases()) {
      SCOPED_TRACE("depthwise rows h=" + std::to_string(c.h) + " w=" + std::to_string(c.w) +
                   " s=" + std::to_string(c.stride));
      const ConvCase cc{c.c, c.h, c.w, c.c, 3, c.stride, 1, c.c};
      const Tensor dx = random_tensor({1, c.c, c.h, c.w}, 26);
      const Tensor dwt = random_tensor({c.c, 1, 3, 3}, 27), db = random_tensor({c.c}, 28);
      Tensor want = reference_conv(cc, dx, dwt, db, geometry(cc));
      for (int64_t i = 0; i < want.numel(); ++i) {
        want.data<float>()[i] = std::min(std::max(want.data<float>()[i], -0.4f), 0.8f);
      }
      const std::vector<float> got = test::depthwise_by_rows(dx.data<float>(), dwt.data<float>(),
                                                             db.data<float>(), c, -0.4f, 0.8f);
      expect_close(got.data(), want);
    }
    // Pools: both kernels pick their vector width per row, so each target takes other paths
    // (16, 8, 4 lanes or scalars).
    EXPECT_FALSE(test::pool_cases().empty()) << "no pool case: the pool loop checked nothing";
    for (const PoolCase& c : test::pool_cases()) {
      SCOPED_TRACE(test::pool_name(c));
      const Tensor px = random_tensor({1, c.c, c.h, c.w}, 25);
      const ConvGeometry pg = test::pool_geometry(c);
      const Tensor want =
          reference(test::pool_op(c), test::pool_attributes(c), {&px}, {1, c.c, pg.oh, pg.ow});
      std::vector<float> got(static_cast<size_t>(want.numel()), 1e9f);
      pool2d(px.data<float>(), test::pool_window(c), -1e30f, 1e30f, got.data());
      expect_close(got.data(), want);
    }
    // The grouped 3x3 kernel: blocks of 1 or 3 vectors, exact masked stores or a stack buffer.
    for (const ConvCase& c : gconv_cases()) {
      SCOPED_TRACE("gconv c=" + std::to_string(c.c) + " h=" + std::to_string(c.h) +
                   " w=" + std::to_string(c.w) + " s=" + std::to_string(c.stride));
      check_gconv(c, 51);
    }
    // The flattened-plane conv: its GEMM tiles and edge tiles across row ends on this target.
    for (const ConvCase& c : flat_cases()) {
      SCOPED_TRACE("flat c=" + std::to_string(c.c) + " h=" + std::to_string(c.h) +
                   " w=" + std::to_string(c.w) + " k=" + std::to_string(c.k));
      check_flat(c, 71, false);
    }
    // Fake quantization (a QuantizeLinear -> DequantizeLinear pair): halves round to even, both
    // ends saturate, NaN goes to the lowest value; uint8 with zero point 3, scale 0.5.
    {
      UnaryFn fq;
      fq.op = UnaryOp::kFakeQuant;
      fq.alpha = 0.5f;
      fq.beta = 3.0f;
      fq.gamma = 0.0f;
      const std::vector<float> x = {-1.25f,  -0.75f,        0.25f, 0.75f, 1.25f, 150.0f,
                                    -100.0f, std::nanf(""), 2.0f,  -1.5f, 0.3f,  126.0f,
                                    126.3f,  -1.75f,        0.0f,  1e30f, -1e30f};
      const std::vector<float> want = {-1.0f,  -1.0f, 0.0f, 1.0f,   1.0f, 126.0f,
                                       -1.5f,  -1.5f, 2.0f, -1.5f,  0.5f, 126.0f,
                                       126.0f, -1.5f, 0.0f, 126.0f, -1.5f};
      std::vector<float> got(x.size());
      unary_parallel(fq, x.data(), got.data(), static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); ++i)
        EXPECT_EQ(got[i], want[i]) << "fake quant element " << i;
    }
    // Sin, Cos and Tan past Highway's argument range (the C library's values there), NaN and
    // infinities; Sign, Round (halves to even) and Celu at their edges.
    {
      const float inf = std::numeric_limits<float>::infinity();
      const std::vector<float> x = {0.5f,    -2.5f, 1.5f,  2.5f,    -0.0f,  3.0e4f, -3.9e4f,
                                    4.0e4f,  1e7f,  -1e9f, 1e30f,   inf,    -inf,   NAN,
                                    -1e-30f, 7.25f, -0.5f, 1234.5f, -88.0f, 0.0f,   2.0f};
      struct Case {
        UnaryOp op;
        float (*want)(float);
      };
      const Case cases[] = {
          {UnaryOp::kSin, [](float v) { return std::sin(v); }},
          {UnaryOp::kCos, [](float v) { return std::cos(v); }},
          {UnaryOp::kTan, [](float v) { return std::tan(v); }},
          {UnaryOp::kAtan, [](float v) { return std::atan(v); }},
          {UnaryOp::kSign,
           [](float v) { return std::isnan(v) ? v : static_cast<float>((0.0f < v) - (v < 0.0f)); }},
          {UnaryOp::kRound, [](float v) { return std::nearbyint(v); }},
          {UnaryOp::kCelu,
           [](float v) {
             return std::isnan(v) ? v : std::max(0.0f, v) + std::min(0.0f, std::expm1(v));
           }},
      };
      for (const Case& c : cases) {
        UnaryFn fn;
        fn.op = c.op;
        fn.alpha = 1.0f;
        std::vector<float> got(x.size());
        unary_run(fn, x.data(), got.data(), static_cast<int64_t>(x.size()));
        for (size_t i = 0; i < x.size(); ++i) {
          const float want = c.want(x[i]);
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got[i])) << "op " << static_cast<int>(c.op) << " x " << x[i];
          } else if (std::isinf(want)) {
            EXPECT_EQ(got[i], want) << "op " << static_cast<int>(c.op) << " x " << x[i];
          } else {
            EXPECT_NEAR(got[i], want, 2e-6f * std::max(1.0f, std::fabs(want)))
                << "op " << static_cast<int>(c.op) << " x " << x[i];
          }
        }
      }
    }
    // The 2-D transpose: whole 4 x 4 and 8 x 8 register blocks, both ragged edges (shifted
    // blocks), one side too short for a block, leading dimensions past the extent.
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{4, 4},
                                                                             {13, 7},
                                                                             {3, 9},
                                                                             {16, 1},
                                                                             {9, 18},
                                                                             {8, 8},
                                                                             {16, 16},
                                                                             {49, 16},
                                                                             {17, 23},
                                                                             {8, 5},
                                                                             {5, 8},
                                                                             {64, 9}}) {
      SCOPED_TRACE("transpose " + std::to_string(rows) + "x" + std::to_string(cols));
      const int64_t lds = cols + 3, ldd = rows + 2;
      const Tensor src = random_tensor({rows, lds}, 81);
      std::vector<float> dst(static_cast<size_t>(cols * ldd), 7.0f);
      transpose_2d(src.data<float>(), lds, dst.data(), ldd, rows, cols);
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t r = 0; r < ldd; ++r) {
          const float want = r < rows ? src.data<float>()[r * lds + c] : 7.0f;
          ASSERT_EQ(dst[static_cast<size_t>(c * ldd + r)], want) << "row " << r << " col " << c;
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
}

}  // namespace
}  // namespace tessera::cpu
