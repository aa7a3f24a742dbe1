// Shared by tests/cpu (GoogleTest) and the cross-built aarch64 test (plain main, no arm64 gtest):
// the MaxPool case description, and the fused conv path the cpu plugin runs: weights packed in
// tile.mr-row panels, B packed panel by panel (im2col_panel, or copy_panel for a 1x1 stride-1
// conv; read in place when direct), then sgemm_panels with the row bias and clamp epilogue.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"
#include "tessera/graph.hpp"

namespace tessera::cpu::test {

// A square MaxPool or AveragePool over [1, c, h, w]: window k, stride, symmetric pad, ceil_mode.
struct PoolCase {
  int64_t c, h, w, k, stride, pad;
  bool ceil;
  bool average = false;
  bool include_pad = false;  // AveragePool's count_include_pad
};

// The pool cases both suites run. 3x3 and 2x2 windows at stride 2 take the direct kernel:
// squeezenet's 111- and 27-wide rows (full vectors plus an overlapping last block; 8 lanes),
// resnet's pad-1 stem pool (a scalar left edge), densenet's 2x2 average pools (56, 28, 14 wide),
// googlenet's 2x2 ceil_mode pool, rows of 6 outputs (4 lanes), pad 2, and rows too short for any
// vector; odd sizes with ceil_mode clip the last window. The rest run separably: googlenet's 3x3
// stride-1 pad-1 pools (28, 14, 7 wide: 16, 8 and 4 lanes), 5-wide windows at stride 2, stride 3.
// Average pools count the padding or not.
inline std::vector<PoolCase> pool_cases() {
  return {PoolCase{3, 17, 19, 3, 2, 1, false},
          PoolCase{2, 23, 37, 3, 2, 0, true},
          PoolCase{4, 5, 6, 2, 1, 0, false},
          PoolCase{2, 13, 41, 3, 1, 1, false},
          PoolCase{3, 7, 5, 3, 2, 1, true},
          PoolCase{2, 9, 70, 5, 2, 2, false},
          PoolCase{2, 11, 11, 3, 3, 1, false},
          PoolCase{2, 111, 111, 3, 2, 0, true},
          PoolCase{3, 27, 27, 3, 2, 0, true},
          PoolCase{3, 112, 112, 3, 2, 1, false},
          PoolCase{2, 14, 13, 3, 2, 0, true},
          PoolCase{2, 6, 8, 3, 2, 2, false},
          PoolCase{2, 4, 4, 3, 2, 1, true},
          PoolCase{2, 4, 3, 3, 2, 1, false},
          PoolCase{5, 14, 14, 3, 1, 1, true},
          PoolCase{3, 28, 28, 3, 1, 1, true},
          PoolCase{3, 7, 7, 3, 1, 1, true},
          PoolCase{4, 14, 14, 2, 2, 0, true},
          PoolCase{3, 13, 15, 2, 2, 0, true},
          PoolCase{2, 12, 13, 3, 3, 1, true},
          PoolCase{3, 56, 56, 2, 2, 0, false, true},
          PoolCase{3, 28, 28, 2, 2, 0, false, true},
          PoolCase{5, 14, 14, 2, 2, 0, false, true},
          PoolCase{3, 13, 15, 2, 2, 0, true, true},
          PoolCase{3, 13, 15, 2, 2, 0, true, true, true},
          PoolCase{3, 17, 19, 3, 2, 1, true, true},
          PoolCase{3, 17, 19, 3, 2, 1, true, true, true},
          PoolCase{2, 14, 14, 3, 1, 1, true, true},
          PoolCase{2, 14, 14, 3, 1, 1, false, true, true},
          PoolCase{2, 9, 70, 5, 2, 2, false, true, true},
          PoolCase{2, 12, 13, 3, 3, 1, true, true},
          PoolCase{2, 12, 13, 3, 3, 1, true, true, true},
          PoolCase{4, 5, 6, 2, 1, 0, false, true},
          PoolCase{2, 4, 3, 3, 2, 1, false, true, true},
          PoolCase{2, 7, 7, 3, 1, 1, false, true}};
}

// A 3x3 pad-1 depthwise conv over [1, c, h, w] at `stride`, run by depthwise_rows_3x3 in blocks
// of `rows` output rows (as pointwise_depthwise_conv runs it).
struct DepthwiseRowsCase {
  int64_t c, h, w, stride, rows;
};

// Widths with full vectors and an overlapping last block (30, 34), 8- and 4-lane rows (7, 8, 14),
// rows too short for a vector (3, 4), odd heights at stride 2 (a last window past the bottom).
inline std::vector<DepthwiseRowsCase> depthwise_rows_cases() {
  return {DepthwiseRowsCase{3, 9, 30, 1, 4}, DepthwiseRowsCase{2, 5, 7, 1, 2},
          DepthwiseRowsCase{2, 4, 3, 1, 3},  DepthwiseRowsCase{3, 9, 34, 2, 4},
          DepthwiseRowsCase{2, 8, 28, 2, 1}, DepthwiseRowsCase{2, 7, 8, 2, 2},
          DepthwiseRowsCase{1, 5, 4, 2, 4},  DepthwiseRowsCase{2, 12, 16, 1, 4}};
}

inline ConvGeometry depthwise_rows_geometry(const DepthwiseRowsCase& c) {
  ConvGeometry g;
  g.c = g.oc = g.group = c.c;
  g.h = c.h;
  g.w = c.w;
  g.kh = g.kw = 3;
  g.sh = g.sw = c.stride;
  g.pt = g.pl = 1;
  g.oh = (c.h - 1) / c.stride + 1;
  g.ow = (c.w - 1) / c.stride + 1;
  return g;
}

// depthwise_rows_3x3 block by block, each block's input rows copied between NaN guards: a tap that
// reads a guard and is not masked out turns its output into NaN.
inline std::vector<float> depthwise_by_rows(const float* x, const float* w, const float* bias,
                                            const DepthwiseRowsCase& c, float lo, float hi) {
  const ConvGeometry g = depthwise_rows_geometry(c);
  std::vector<float> y(static_cast<size_t>(g.c * g.oh * g.ow));
  for (int64_t oy0 = 0; oy0 < g.oh; oy0 += c.rows) {
    const int64_t oy1 = std::min(g.oh, oy0 + c.rows);
    const int64_t r0 = std::max<int64_t>(0, c.stride * oy0 - 1);
    const int64_t r1 = std::min(g.h, c.stride * (oy1 - 1) + 2);
    const int64_t plane = (r1 - r0) * g.w;
    std::vector<float> buf(static_cast<size_t>(g.c * plane + 32),
                           std::numeric_limits<float>::quiet_NaN());
    for (int64_t ch = 0; ch < g.c; ++ch) {
      std::copy(x + (ch * g.h + r0) * g.w, x + (ch * g.h + r1) * g.w,
                buf.begin() + 16 + ch * plane);
    }
    depthwise_rows_3x3(buf.data() + 16, plane, r0, r1, g, w, bias, lo, hi, y.data() + oy0 * g.ow,
                       g.oh * g.ow, oy0, oy1, 0, g.c);
  }
  return y;
}

// The kernel's geometry for `c` (output size as ONNX computes it).
inline ConvGeometry pool_geometry(const PoolCase& c) {
  auto out_dim = [&](int64_t in) {
    const int64_t span = in + 2 * c.pad - c.k;
    return (c.ceil ? (span + c.stride - 1) / c.stride : span / c.stride) + 1;
  };
  ConvGeometry g;
  g.c = g.oc = c.c;
  g.h = c.h;
  g.w = c.w;
  g.oh = out_dim(c.h);
  g.ow = out_dim(c.w);
  g.kh = g.kw = c.k;
  g.sh = g.sw = c.stride;
  g.pt = g.pl = c.pad;
  return g;
}

// The same pooling as the reference op (the oracle) and its attributes.
inline const char* pool_op(const PoolCase& c) {
  return c.average ? "AveragePool" : "MaxPool";
}

inline Attributes pool_attributes(const PoolCase& c) {
  Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{c.k, c.k});
  attrs.set("strides", std::vector<int64_t>{c.stride, c.stride});
  attrs.set("pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad});
  attrs.set("ceil_mode", int64_t{c.ceil ? 1 : 0});
  if (c.average) attrs.set("count_include_pad", int64_t{c.include_pad ? 1 : 0});
  return attrs;
}

// The pooling the cpu plugin runs for `c`.
inline PoolWindow pool_window(const PoolCase& c) {
  const ConvGeometry g = pool_geometry(c);
  return c.average ? average_pool_window(g, c.include_pad, c.pad, c.pad) : max_pool_window(g);
}

inline std::string pool_name(const PoolCase& c) {
  return std::string(pool_op(c)) + " c=" + std::to_string(c.c) + " h=" + std::to_string(c.h) +
         " w=" + std::to_string(c.w) + " k=" + std::to_string(c.k) +
         " s=" + std::to_string(c.stride) + " p=" + std::to_string(c.pad) +
         " ceil=" + std::to_string(c.ceil) + " include_pad=" + std::to_string(c.include_pad);
}

// Output [oc, oh * ow] of a conv with input x [c, h, w], weights w [oc, c / group, kh, kw].
inline std::vector<float> panel_conv(const float* x, const float* w, const float* bias,
                                     const ConvGeometry& g, const GemmTile& tile,
                                     GemmBlocking blocking, bool direct, float lo, float hi) {
  const int64_t cpg = g.c / g.group, opg = g.oc / g.group, kk = cpg * g.kh * g.kw;
  const int64_t cols = g.oh * g.ow;
  const bool one_by_one =
      g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0;
  blocking.nr = tile.nr;
  std::vector<float> got(static_cast<size_t>(g.oc * cols), 1e9f);
  for (int64_t grp = 0; grp < g.group; ++grp) {
    PackedMatrix pa;
    pack_a(w + grp * opg * kk, opg, kk, kk, 1, &pa, tile.mr);
    const float* bgrp = x + grp * cpg * cols;
    PanelPacker pack = [&](int64_t j0, float* panel) {
      if (one_by_one) {
        copy_panel(bgrp, kk, cols, cols, j0, panel, tile.nr);
      } else {
        im2col_panel(x, g, grp * cpg, cpg, j0, panel, tile.nr);
      }
    };
    Epilogue e;
    e.row_bias = bias + grp * opg;
    e.lo = lo;
    e.hi = hi;
    sgemm_panels(pa, cols, pack, got.data() + grp * opg * cols, cols, e, blocking,
                 direct ? bgrp : nullptr, direct ? cols : 0);
  }
  return got;
}

}  // namespace tessera::cpu::test
