// TesseraQLinearConv (core's int8 conv unit) on int8/uint8 NCHW tensors: depthwise convs direct,
// every other conv (1x1, kxk, grouped) as the int8 GEMM of kernels/int8.hpp per group, with B
// (the im2col matrix, or the input itself for 1x1 stride 1) packed 32 columns at a time inside
// each task. Weights are packed once, at compile; the bias, the activation zero point's share
// (zero point times each weight row's sum) and the fused Relu/Clip (output_min/output_max) sit in
// the requantization, so the int32 sums never leave the tile.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "ops/int8_unit.hpp"

namespace tessera::cpu {
namespace {

struct QConv {
  ConvGeometry g;
  int64_t batch = 1;
  bool depthwise = false;
  Int8UnitParams p;
  std::vector<Int8PackedA> a;      // per group (GEMM path)
  std::vector<int32_t> offset;     // per output channel: bias - zero * row sum (GEMM path)
  std::vector<int8_t> dw_weights;  // [c][kh][kw] (depthwise path)
  // Phase path: per group, each B row's offset in the phase planes (-1: a zero row past K).
  std::vector<int64_t> row_offsets;
};

struct PanelTag {};
struct RowsTag {};
struct PointerTag {};

// Row k = (ci, ky, kx) of group `grp`'s im2col matrix over columns p0 .. p0 + n, as unsigned
// bytes (int8 shifted by 128), padding reading the zero point's byte.
void im2col_row(const uint8_t* x, const QConv& q, int64_t c, int64_t ky, int64_t kx, int64_t p0,
                int64_t n, uint8_t* row) {
  const ConvGeometry& g = q.g;
  const uint8_t flip = q.p.x_signed ? 0x80 : 0;
  const auto pad = static_cast<uint8_t>(q.p.x_zero_unsigned);
  const uint8_t* plane = x + c * g.h * g.w;
  int64_t j = 0;
  while (j < n) {
    const int64_t p = p0 + j, oy = p / g.ow, ox0 = p % g.ow;
    const int64_t run = std::min(n - j, g.ow - ox0);  // columns left in this output row
    const int64_t iy = oy * g.sh - g.pt + ky * g.dil_h;
    uint8_t* out = row + j;
    if (iy < 0 || iy >= g.h) {
      std::memset(out, pad, static_cast<size_t>(run));
    } else {
      // Output columns ox0 .. ox0 + run read ix = ox * sw + tap; those in [lo, hi) are inside.
      const uint8_t* src = plane + iy * g.w;
      const int64_t tap = kx * g.dil_w - g.pl;
      const int64_t lo = std::clamp(tap >= 0 ? ox0 : (-tap + g.sw - 1) / g.sw, ox0, ox0 + run);
      const int64_t last = g.w - 1 - tap;  // the largest ox * sw inside the row
      const int64_t hi = std::clamp(last < 0 ? 0 : last / g.sw + 1, lo, ox0 + run);
      std::memset(out, pad, static_cast<size_t>(lo - ox0));
      const uint8_t* s = src + tap;
      uint8_t* o = out - ox0;
      if (g.sw == 1) {
        for (int64_t ox = lo; ox < hi; ++ox) o[ox] = static_cast<uint8_t>(s[ox] ^ flip);
      } else {
        for (int64_t ox = lo; ox < hi; ++ox) o[ox] = static_cast<uint8_t>(s[ox * g.sw] ^ flip);
      }
      std::memset(out + (hi - ox0), pad, static_cast<size_t>(ox0 + run - hi));
    }
    j += run;
  }
}

// One task of a strided conv: image b, group grp, columns p0 .. p0 + n of its im2col matrix.
void gemm_task(const QConv& q, const uint8_t* x, uint8_t* y, int64_t b, int64_t grp, int64_t p0,
               int64_t n) {
  const ConvGeometry& g = q.g;
  const Int8PackedA& a = q.a[static_cast<size_t>(grp)];
  const int64_t cg = g.c / g.group, mg = g.oc / g.group, ohw = g.oh * g.ow;
  const int64_t taps = g.kh * g.kw, rows = a.k4 * 4;
  auto* panel = reinterpret_cast<uint8_t*>(thread_scratch<PanelTag>(int8_b_panel_bytes(a.k4) / 4));
  auto* scratch = reinterpret_cast<uint8_t*>(thread_scratch<RowsTag>(rows * kI8NR / 4 + 1));
  std::vector<const uint8_t*> row_ptr(static_cast<size_t>(rows));
  const uint8_t* image = x + b * g.c * g.h * g.w;
  for (int64_t k = 0; k < rows; ++k) {
    uint8_t* row = scratch + k * kI8NR;
    if (k >= a.k) {
      std::memset(row, 0, kI8NR);
    } else {
      const int64_t c = grp * cg + k / taps, ky = (k % taps) / g.kw, kx = k % g.kw;
      im2col_row(image, q, c, ky, kx, p0, n, row);
    }
    row_ptr[static_cast<size_t>(k)] = row;
  }
  interleave_int8_rows(row_ptr.data(), rows, panel);
  Int8Requant rq = q.p.rq;
  rq.multiplier = q.p.multiplier.data() + grp * mg;
  rq.offset = q.offset.data() + grp * mg;
  uint8_t* out = y + (b * g.oc + grp * mg) * ohw + p0;
  for (int64_t m0 = 0; m0 < mg; m0 += kI8MR) {
    int8_gemm_tile(a, m0, std::min(m0 + kI8MR, mg), panel, n, rq, out, ohw, 1);
  }
}

// Convs of equal strides s read B from phase planes of the input: with the input padded by the
// zero point's byte and split into s * s phases (phase (py, px) holds padded rows py + s * i and
// columns px + s * j, pitch wq), row (c, ky, kx) of B over the output positions j = oy * wq + ox
// is phase (ky % s, kx % s) of c from offset (ky / s) * wq + kx / s on: a contiguous slice. (At
// stride 1 the one phase is the padded input, and dilations scale the offsets.) The columns
// ox >= ow of each output row are computed and dropped (wq - ow of every wq).
struct Phases {
  const uint8_t* data = nullptr;  // planes [c][py][px] of hq * wq bytes, then slack
  int64_t s = 1, wq = 0, plane = 0;
  int64_t columns = 0;  // oh * wq
  int64_t row_offset(int64_t c, int64_t ky, int64_t kx, const ConvGeometry& g) const {
    return ((c * s + (ky % s)) * s + (kx % s)) * plane + (ky / s) * g.dil_h * wq +
           (kx / s) * g.dil_w;
  }
};

bool phases_apply(const ConvGeometry& g) {
  return g.sh == g.sw && (g.sh == 1 || (g.dil_h == 1 && g.dil_w == 1));
}

// The phases of image `image` (all channels) in `buffer`; the image itself when it needs neither
// padding nor the int8 shift (1x1 stride 1).
Phases phase_geometry(const ConvGeometry& g) {
  Phases p;
  p.s = g.sh;
  p.wq = g.ow + (g.kw - 1) * g.dil_w / p.s;
  p.plane = (g.oh + (g.kh - 1) * g.dil_h / p.s) * p.wq;
  p.columns = g.oh * p.wq;
  return p;
}

// The phase planes of channel c of `image` into `out` (laid out as p says).
void phase_channel(const QConv& q, const uint8_t* image, const Phases& p, int64_t c,
                   uint8_t* out) {
  const ConvGeometry& g = q.g;
  const int64_t hq = p.plane / p.wq;
  const uint8_t flip = q.p.x_signed ? 0x80 : 0;
  const auto pad = static_cast<uint8_t>(q.p.x_zero_unsigned);
  // Phase rows i read input rows iy = py + s * i - pt; those in [i0, i1) are inside. Columns j
  // read ix = px + s * j - pl; those in [j0, j1) are inside.
  const auto inside = [&](int64_t phase, int64_t pad_before, int64_t extent, int64_t count,
                          int64_t* lo, int64_t* hi) {
    const int64_t first = pad_before - phase, last = extent - 1 + pad_before - phase;
    *lo = std::min(count, first <= 0 ? 0 : (first + p.s - 1) / p.s);
    *hi = std::max(*lo, last < 0 ? 0 : std::min(count, last / p.s + 1));
  };
  for (int64_t phase = 0; phase < p.s * p.s; ++phase) {
    const int64_t py = phase / p.s, px = phase % p.s;
    uint8_t* dst = out + (c * p.s * p.s + phase) * p.plane;
    std::memset(dst, pad, static_cast<size_t>(p.plane));
    int64_t i0, i1, j0, j1;
    inside(py, g.pt, g.h, hq, &i0, &i1);
    inside(px, g.pl, g.w, p.wq, &j0, &j1);
    if (i1 <= i0 || j1 <= j0) continue;
    const uint8_t* src = image + (c * g.h + py + p.s * i0 - g.pt) * g.w + px - g.pl + p.s * j0;
    int8_copy_flip_rows(src, p.s * g.w, i1 - i0, p.s, j1 - j0, flip, dst + i0 * p.wq + j0, p.wq);
  }
}

// The phases' geometry with data pointing at `buffer`, sized for every channel plus slack; or
// at the image itself when it needs neither padding nor the int8 shift (1x1 stride 1), with
// `copy` false.
Phases phase_buffer(const QConv& q, const uint8_t* image, std::vector<uint8_t>* buffer,
                    bool* copy) {
  const ConvGeometry& g = q.g;
  Phases p = phase_geometry(g);
  *copy = !(p.s == 1 && g.kh == 1 && g.kw == 1 && p.plane / p.wq == g.h && p.wq == g.w &&
            g.pt == 0 && g.pl == 0 && !q.p.x_signed);
  if (!*copy) {
    p.data = image;
    return p;
  }
  // Slack: the last panel of the last plane reads up to a panel and a window row past its end.
  const int64_t planes = g.c * p.s * p.s, slack = p.wq * (g.kh + 1) + 2 * kI8NR;
  buffer->resize(static_cast<size_t>(planes * p.plane + slack));
  std::memset(buffer->data() + planes * p.plane, q.p.x_zero_unsigned, static_cast<size_t>(slack));
  p.data = buffer->data();
  return p;
}

// The phases of image `image` (all channels).
Phases phase_image(const QConv& q, const uint8_t* image, std::vector<uint8_t>* buffer) {
  bool copy = false;
  const Phases p = phase_buffer(q, image, buffer, &copy);
  if (copy) {
    tbb::parallel_for(int64_t{0}, q.g.c,
                      [&](int64_t c) { phase_channel(q, image, p, c, buffer->data()); });
  }
  return p;
}

// Columns j0 .. j0 + n of group grp's B from the phases, C into out (pitch `pitch`).
void phase_task(const QConv& q, const Phases& src, int64_t grp, int64_t j0, int64_t n,
                uint8_t* out, int64_t pitch) {
  const ConvGeometry& g = q.g;
  const Int8PackedA& a = q.a[static_cast<size_t>(grp)];
  const int64_t mg = g.oc / g.group;
  const int64_t taps = g.kh * g.kw, rows = a.k4 * 4;
  auto* panel = reinterpret_cast<uint8_t*>(thread_scratch<PanelTag>(int8_b_panel_bytes(a.k4) / 4));
  auto* scratch = reinterpret_cast<uint8_t*>(thread_scratch<RowsTag>(rows * kI8NR / 4 + 1));
  auto** row_ptr = reinterpret_cast<const uint8_t**>(thread_scratch<PointerTag>(rows * 2));
  // The image itself (no copy) ends with its last plane: a partial panel copies its rows.
  const bool copy = n < kI8NR && src.data != nullptr && src.plane == src.columns && src.s == 1 &&
                    taps == 1;
  for (int64_t k = 0; k < rows; ++k) {
    uint8_t* row = scratch + k * kI8NR;
    if (k >= a.k) {
      std::memset(row, 0, kI8NR);
      row_ptr[k] = row;
      continue;
    }
    const uint8_t* from = src.data + q.row_offsets[static_cast<size_t>(grp * rows + k)] + j0;
    if (copy) {
      std::memcpy(row, from, static_cast<size_t>(n));
      from = row;
    }
    row_ptr[k] = from;
  }
  interleave_int8_rows(row_ptr, rows, panel);
  Int8Requant rq = q.p.rq;
  rq.multiplier = q.p.multiplier.data() + grp * mg;
  rq.offset = q.offset.data() + grp * mg;
  for (int64_t m0 = 0; m0 < mg; m0 += kI8MR) {
    int8_gemm_tile(a, m0, std::min(m0 + kI8MR, mg), panel, n, rq, out + j0, pitch, 1);
  }
}

// Image b of a conv phases_apply() takes: B from the phases, C in rows of wq (straight into y
// when wq == ow), then the dropped columns squeezed out.
void phase_conv_image(const QConv& q, const uint8_t* x, uint8_t* y, int64_t b,
                      std::vector<uint8_t>* phases, std::vector<uint8_t>* wide) {
  const ConvGeometry& g = q.g;
  const Phases src = phase_image(q, x + b * g.c * g.h * g.w, phases);
  const bool direct = src.wq == g.ow;
  uint8_t* image_out = y + b * g.oc * g.oh * g.ow;
  if (!direct) wide->resize(static_cast<size_t>(g.oc * src.columns));
  uint8_t* c_out = direct ? image_out : wide->data();
  const int64_t mg = g.oc / g.group, panels = (src.columns + kI8NR - 1) / kI8NR;
  tbb::parallel_for(int64_t{0}, g.group * panels, [&](int64_t t) {
    const int64_t grp = t / panels, j0 = (t % panels) * kI8NR;
    phase_task(q, src, grp, j0, std::min(kI8NR, src.columns - j0), c_out + grp * mg * src.columns,
               src.columns);
  });
  if (direct) return;
  tbb::parallel_for(int64_t{0}, g.oc, [&](int64_t m) {
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      std::memcpy(image_out + (m * g.oh + oy) * g.ow, c_out + m * src.columns + oy * src.wq,
                  static_cast<size_t>(g.ow));
    }
  });
}

struct AccTag {};

// Depthwise plane (b, c): per output row, int32 sums of (x - zero) * w over the window's taps
// inside the input, then requantized.
template <typename T>
void depthwise_plane(const QConv& q, const T* x, uint8_t* y, int64_t c) {
  const ConvGeometry& g = q.g;
  auto* acc = reinterpret_cast<int32_t*>(thread_scratch<AccTag>(g.ow));
  const int8_t* w = q.dw_weights.data() + c * g.kh * g.kw;
  const int32_t zero = q.p.x_zero;
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    std::fill(acc, acc + g.ow, 0);
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = oy * g.sh - g.pt + ky * g.dil_h;
      if (iy < 0 || iy >= g.h) continue;
      const T* row = x + iy * g.w;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int32_t wv = w[ky * g.kw + kx];
        const int64_t tap = kx * g.dil_w - g.pl;
        const int64_t ox0 = tap >= 0 ? 0 : (-tap + g.sw - 1) / g.sw;
        const int64_t last = g.w - 1 - tap;
        const int64_t ox1 = last < 0 ? 0 : std::min(g.ow, last / g.sw + 1);
        const T* s = row + tap;
        for (int64_t ox = ox0; ox < ox1; ++ox) {
          acc[ox] += wv * (static_cast<int32_t>(s[ox * g.sw]) - zero);
        }
      }
    }
    int8_requantize_row(acc, g.ow, q.p.multiplier[static_cast<size_t>(c)],
                        q.p.bias[static_cast<size_t>(c)], q.p.rq, y + oy * g.ow);
  }
}

// Image b of a depthwise conv phases_apply() takes: the phases of every channel, then each
// channel's plane from its phases (kernels/int8.hpp).
void depthwise_image(const QConv& q, const uint8_t* x, uint8_t* y, int64_t b,
                     std::vector<uint8_t>* phases) {
  const ConvGeometry& g = q.g;
  // Every phase first: a plane's sums read whole vectors past its end, into the next channel's
  // phases (or the slack), which must not be written at the same time.
  const Phases src = phase_image(q, x + b * g.c * g.h * g.w, phases);
  tbb::parallel_for(int64_t{0}, g.c, [&](int64_t c) {
    Int8DepthwisePlane p;
    p.phases = src.data + c * src.s * src.s * src.plane;
    p.s = src.s;
    p.wq = src.wq;
    p.plane = src.plane;
    p.kh = g.kh;
    p.kw = g.kw;
    p.dil_h = g.dil_h;
    p.dil_w = g.dil_w;
    p.oh = g.oh;
    p.ow = g.ow;
    p.weights = q.dw_weights.data() + c * g.kh * g.kw;
    p.zero = q.p.x_zero_unsigned;
    p.multiplier = q.p.multiplier[static_cast<size_t>(c)];
    p.offset = q.p.bias[static_cast<size_t>(c)];
    auto* acc = reinterpret_cast<int32_t*>(
        thread_scratch<AccTag>(kInt8DepthwiseChunk + kInt8DepthwiseRound));
    int8_depthwise_plane(p, q.p.rq, acc, y + (b * g.c + c) * g.oh * g.ow);
  });
}

QConv plan_qconv(const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(3);
  const tsr_tensor* y = node.output(0);
  QConv q;
  ConvGeometry& g = q.g;
  q.batch = x->dims[0];
  g.c = x->dims[1];
  g.h = x->dims[2];
  g.w = x->dims[3];
  g.oc = y->dims[1];
  g.oh = y->dims[2];
  g.ow = y->dims[3];
  g.kh = w->dims[2];
  g.kw = w->dims[3];
  g.group = node.attr_int("group", 1);
  const std::vector<int64_t> s = node.attr_ints("strides", {1, 1});
  const std::vector<int64_t> d = node.attr_ints("dilations", {1, 1});
  const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
  g.sh = s[0];
  g.sw = s[1];
  g.dil_h = d[0];
  g.dil_w = d[1];
  g.pt = pads[0];
  g.pl = pads[1];
  q.p = int8_unit_params(node, g.oc);
  const auto* wd = static_cast<const int8_t*>(w->data);
  q.depthwise = g.group == g.c && g.oc == g.c;
  if (q.depthwise) {
    q.dw_weights.assign(wd, wd + g.c * g.kh * g.kw);
    return q;
  }
  const int64_t mg = g.oc / g.group, kg = (g.c / g.group) * g.kh * g.kw;
  const Phases phases = phase_geometry(g);
  for (int64_t grp = 0; grp < g.group; ++grp) {
    q.a.emplace_back();
    pack_int8_a(wd + grp * mg * kg, mg, kg, kg, 1, &q.a.back());
    for (int64_t k = 0; k < q.a.back().k4 * 4; ++k) {
      const int64_t c = grp * (g.c / g.group) + k / (g.kh * g.kw);
      const int64_t ky = (k % (g.kh * g.kw)) / g.kw, kx = k % g.kw;
      q.row_offsets.push_back(k < kg ? phases.row_offset(c, ky, kx, g) : -1);
    }
    for (int64_t i = 0; i < mg; ++i) {
      q.offset.push_back(q.p.bias[static_cast<size_t>(grp * mg + i)] -
                         q.p.x_zero_unsigned * q.a.back().row_sums[static_cast<size_t>(i)]);
    }
  }
  return q;
}

}  // namespace

std::string query_qlinear_conv(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(3);
  const tsr_tensor* y = node.output(0);
  if (x == nullptr || w == nullptr || y == nullptr || x->rank != 4 || w->rank != 4 || y->rank != 4) {
    return "only 2-D int8 convolution (rank 4) is implemented";
  }
  if (node.attr_ints("pads", {0, 0, 0, 0}).size() != 4 ||
      node.attr_ints("strides", {1, 1}).size() != 2 ||
      node.attr_ints("dilations", {1, 1}).size() != 2) {
    return "pads, strides and dilations must be written out for 2-D";
  }
  if (numel(*y) == 0) return "empty output";
  return query_int8_unit(node, y->dims[1]);
}

Step build_qlinear_conv(BuildContext& ctx) {
  auto q = std::make_shared<const QConv>(plan_qconv(ctx.node));
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  ctx.notes->push_back(std::string(ctx.node.name()) + ": int8 " +
                       (q->depthwise ? "depthwise direct" : "GEMM (" + int8_kernel_name() + ")"));
  // The step's own buffers: core never runs one step twice at once (a lock per region).
  struct Buffers {
    std::vector<uint8_t> padded, wide;
  };
  auto buf = std::make_shared<Buffers>();
  return [q, in, out, buf](std::vector<float*>& v) {
    const auto* x = reinterpret_cast<const uint8_t*>(v[in]);
    auto* y = reinterpret_cast<uint8_t*>(v[out]);
    const ConvGeometry& g = q->g;
    if (q->depthwise && phases_apply(g)) {
      for (int64_t b = 0; b < q->batch; ++b) {
        depthwise_image(*q, x, y, b, &buf->padded);
      }
      return;
    }
    if (q->depthwise) {
      tbb::parallel_for(int64_t{0}, q->batch * g.c, [&](int64_t plane) {
        const int64_t c = plane % g.c;
        uint8_t* yp = y + plane * g.oh * g.ow;
        if (q->p.x_signed) {
          depthwise_plane(*q, reinterpret_cast<const int8_t*>(x) + plane * g.h * g.w, yp, c);
        } else {
          depthwise_plane(*q, x + plane * g.h * g.w, yp, c);
        }
      });
      return;
    }
    if (phases_apply(g)) {
      for (int64_t b = 0; b < q->batch; ++b) phase_conv_image(*q, x, y, b, &buf->padded, &buf->wide);
      return;
    }
    const int64_t panels = (g.oh * g.ow + kI8NR - 1) / kI8NR;
    tbb::parallel_for(int64_t{0}, q->batch * g.group * panels, [&](int64_t t) {
      const int64_t p = t % panels, grp = (t / panels) % g.group, b = t / panels / g.group;
      const int64_t p0 = p * kI8NR;
      gemm_task(*q, x, y, b, grp, p0, std::min(kI8NR, g.oh * g.ow - p0));
    });
  };
}

}  // namespace tessera::cpu
