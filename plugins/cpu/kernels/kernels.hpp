// The cpu plugin's kernels as plain functions over float32 buffers (no graph types), so the
// plugin and the tests (which compare them with core's reference kernels) call the same code.
// SIMD code comes from one Highway source per kernel family, dispatched at run time to the best
// target the host supports (AVX2/AVX-512 on x86-64, NEON on aarch64).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/elementwise.hpp"

namespace tessera::cpu {

// Register tile of the SGEMM micro-kernel: mr rows of C by nr columns. kMR x kNR is the default
// (and the only tile a target without AVX-512 offers); gemm_tiles() lists what the running target
// offers. Packed A panels are mr rows, packed B panels nr columns, so packing follows the tile.
constexpr int64_t kMR = 6;
constexpr int64_t kNR = 16;

// A partial last column panel of at most this many columns runs as a column tail (vectors down
// the rows, one broadcast of B per column) instead of a padded tile.
constexpr int64_t kTailColumns = 6;

struct GemmTile {
  int64_t mr = kMR, nr = kNR;
};
// Every tile the kernels are compiled for (any target runs any of them correctly; those with more
// accumulators than the target has registers spill): rows 6, 8, 12 by columns 16, 32, and the
// one-row tiles 1 x 16 and 1 x 32 for matrix-vector products.
std::vector<GemmTile> compiled_gemm_tiles();
bool gemm_tile_compiled(int64_t mr, int64_t nr);
// The tiles worth offering on the target the dispatcher picks (rows > 1): with 32 vector registers
// of 16 floats (AVX-512) every compiled tile fits in registers; elsewhere only kMR x kNR (AVX2: 12
// ymm accumulators of 16).
std::vector<GemmTile> gemm_tiles();
// The default tile for this host: 8x32 on AVX-512 (16 accumulators: enough FMA chains for cores
// with two 512-bit FMA ports), kMR x kNR elsewhere.
GemmTile default_gemm_tile();
// The tile for a one-row product (M == 1): 1 x 32 on AVX-512, 1 x kNR elsewhere. Not offered by
// gemm_tiles(): with more rows it would run one FMA chain per vector.
GemmTile one_row_tile();

// A grow-only float buffer per thread and per Tag, kept across tasks and runs: kernels' per-task
// scratch. Tag is a type naming the use, so buffers one thread holds at the same time (a task's
// B panel inside a call that packed all of B) stay apart. New floats are zero.
template <class Tag>
float* thread_scratch(int64_t floats) {
  static thread_local std::vector<float> buffer;
  if (buffer.size() < static_cast<size_t>(floats)) buffer.resize(static_cast<size_t>(floats));
  return buffer.data();
}

// Space-separated names of the Highway targets this host can run, e.g. "avx2 avx512" or "neon".
std::string simd_features();
// Name of the target the dispatcher picks, e.g. "AVX3".
std::string simd_best_target();

// A matrix packed for the micro-kernel. As the left operand (A, M x K): panels of kMR rows laid out
// [k][r]. As the right operand (B, K x N): panels of kNR columns laid out [k][c]. Edge panels are
// zero-padded so the kernel never branches on edges in its K loop.
struct PackedMatrix {
  int64_t rows = 0, cols = 0;  // logical M x K (A) or K x N (B)
  int64_t panel = 0;           // rows (A: the tile's mr) or columns (B: nr) per panel
  std::vector<float> data;
};

// Packs A (M x K) given by element (i, k) at a[i * row_stride + k * col_stride], mr-row panels.
void pack_a(const float* a, int64_t m, int64_t k, int64_t row_stride, int64_t col_stride,
            PackedMatrix* out, int64_t mr = kMR);
// Packs B (K x N) given by element (k, j) at b[k * row_stride + j * col_stride], nr-column panels.
void pack_b(const float* b, int64_t k, int64_t n, int64_t row_stride, int64_t col_stride,
            PackedMatrix* out, int64_t nr = kNR);

// What happens to each C tile before it is stored: bias then clamp to [lo, hi].
struct Epilogue {
  const float* row_bias = nullptr;  // one per row of C (conv: per output channel)
  const float* col_bias = nullptr;  // one per column of C (Gemm: per output feature)
  const float* residual = nullptr;  // added before the clamp: laid out like C, same row stride
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  // A pointwise op after the clamp (SiLU, HardSwish, GELU, ...), applied while C is in cache: per
  // register tile as it is stored, or per block of tiles (simd.cpp's PanelBlockT, PhaseBlockT say
  // which); nullptr for none.
  const UnaryFn* post = nullptr;
};

// GEMM blocking: row panels and column panels per parallel task.
struct GemmBlocking {
  int64_t mc = 12;       // rows per task (rounded up to kMR)
  int64_t nc = 128;      // columns per task (rounded up to kNR)
  int64_t kc = 0;        // K per pass over a B panel in sgemm_panels (0 = all of K)
  bool b_whole = false;  // sgemm_panels: pack all of B first (B smaller than A)
  bool b_direct = true;  // sgemm_panels: read a given row-major B in place (1x1 convs)
  int64_t nr = kNR;      // sgemm_panels: B panel width, the tile's columns (A's panels give mr)
};

// C (M x N, row stride ldc) = A * B, then the epilogue. Parallel over tasks of mc x nc with TBB
// (inside whatever task_arena the caller runs in). The tile is a.panel x b.panel (must be
// gemm_tile_compiled, else std::invalid_argument).
void sgemm_packed(const PackedMatrix& a, const PackedMatrix& b, float* c, int64_t ldc,
                  const Epilogue& epilogue, const GemmBlocking& blocking);

// Writes the blocking.nr columns of B starting at column j0 as one packed panel (K x nr, [k][c],
// columns past N zero).
using PanelPacker = std::function<void(int64_t j0, float* panel)>;

// C = A * B, then the epilogue, where B (K x n, K = a.cols) is never materialised: each task packs
// the B panels it needs (im2col or a strided copy) into a per-thread buffer that stays in cache,
// then runs its row panels over it in K chunks of blocking.kc. Tasks are mc x nc as in
// sgemm_packed; with mc >= M every B panel is packed exactly once. With blocking.b_whole all of B
// is packed first (in parallel) and tasks only read it: for small N, where A is the big operand.
// direct_b (row-major K x n, row stride ldb), when given with blocking.b_direct and not b_whole,
// is read in place for every full-width panel (only the last, partial one is packed): measured
// faster than packing for every 1x1 conv shape of the zoo networks.
void sgemm_panels(const PackedMatrix& a, int64_t n, const PanelPacker& pack_panel, float* c,
                  int64_t ldc, const Epilogue& epilogue, const GemmBlocking& blocking,
                  const float* direct_b = nullptr, int64_t ldb = 0);

// C (a.rows x n, row stride ldc) = A * B, then the epilogue (row bias and clamp), on the calling
// thread, where B's row p is the n floats from b + off[p] (n rounded up to nr must be readable).
void gemm_offset_rows(const PackedMatrix& a, const float* b, const int64_t* off, int64_t n,
                      int64_t nr, float* c, int64_t ldc, const Epilogue& epilogue);

// C (M x n, row stride ldc) = A * B on the calling thread, no epilogue: B row-major K x n (row
// stride ldb) read in place, n a multiple of nr. The Winograd conv's 16 products per task.
void gemm_block_direct(const PackedMatrix& a, const float* b, int64_t ldb, int64_t n, int64_t nr,
                       float* c, int64_t ldc);

// Elementwise kernels (Highway).
void clamp_inplace(float* x, int64_t n, float lo, float hi);
void clamp_copy(const float* x, float* y, int64_t n, float lo, float hi);
void add_clamp(const float* a, const float* b, float* y, int64_t n, float lo, float hi);
// y[p] = clamp(mean of x[p * inner, (p + 1) * inner)), parallel over the planes.
void global_average_pool(const float* x, int64_t planes, int64_t inner, float lo, float hi,
                         float* y);

// 2-D convolution, NCHW, batch 1 slice: input [C, H, W] -> output [OC, OH, OW].
struct ConvGeometry {
  int64_t c = 0, h = 0, w = 0;     // input channels / height / width
  int64_t oc = 0, oh = 0, ow = 0;  // output
  int64_t kh = 1, kw = 1;          // kernel
  int64_t sh = 1, sw = 1;          // strides
  int64_t pt = 0, pl = 0;          // top/left pads (bottom/right follow from oh/ow)
  int64_t group = 1;
  int64_t dil_h = 1, dil_w = 1;  // dilations: only the im2col path and depthwise_conv take > 1
  bool dilated() const { return dil_h != 1 || dil_w != 1; }
  // The window's extent in input rows / columns: (taps - 1) * dilation + 1.
  int64_t extent_h() const { return (kh - 1) * dil_h + 1; }
  int64_t extent_w() const { return (kw - 1) * dil_w + 1; }
};

// im2col for one group: rows (c, ky, kx), columns (oy, ox); zero where the window is in padding.
void im2col(const float* x, const ConvGeometry& g, int64_t c_begin, int64_t c_count, float* col);

// One packed B panel of the im2col matrix (rows (c, ky, kx) over c_count channels from c_begin,
// columns j0..j0+nr of (oy, ox)) without materialising the matrix.
void im2col_panel(const float* x, const ConvGeometry& g, int64_t c_begin, int64_t c_count,
                  int64_t j0, float* panel, int64_t nr = kNR);
// The same over a list of planes: rows (i, ky, kx) read planes[i] (H x W, g's input size), and
// a null plane gives zero rows. A 3-D conv's B for one output depth: planes (c, kd), null where
// the depth tap falls in padding.
void im2col_panel_planes(const float* const* planes, int64_t count, const ConvGeometry& g,
                         int64_t j0, float* panel, int64_t nr = kNR);
// dst[t] = src[2 t] for t < len (SIMD de-interleave); reads no further than src[avail - 1].
void gather_stride2(const float* src, int64_t len, int64_t avail, float* dst);
// One packed B panel of a row-major K x n matrix b (row stride ld): columns j0..j0+nr.
void copy_panel(const float* b, int64_t k, int64_t n, int64_t ld, int64_t j0, float* panel,
                int64_t nr = kNR);

// Group-1 convs with strides 1 or 2 (sh == sw) as GEMMs whose B rows are read in place: the input
// is split once into stride x stride phase planes (zero-padded, pitch a whole number of tiles), so
// window tap (c, ky, kx) for output row oy, columns ox.. is one unit-stride run at a fixed offset.
// No im2col panels are packed: for the small-C stride-2 stems of mobile networks (K = 27) packing
// had cost as much as the FMAs. `a` holds the weights [OC x C*KH*KW] packed (tile_rows panels);
// parallel over output rows, or (parallel = false) all on the calling thread, for a caller that
// runs many such convs as parallel tasks (the groups of a grouped conv).
bool phase_gemm_applies(const ConvGeometry& g);
void phase_gemm_conv(const float* x, const ConvGeometry& g, const PackedMatrix& a,
                     const Epilogue& epilogue, int64_t nr, float* y, bool parallel = true);

// phase_gemm_conv fused with the 3x3 stride-2 max pool that reads its output (the stems of
// squeezenet and resnet): per task of kConvPoolRows pooled rows, the conv rows they read are
// computed into per-thread scratch and pooled from there, so the full-size conv output (3 MiB for
// squeezenet) is never written to memory and read back. The epilogue must have no residual.
constexpr int64_t kConvPoolRows = 4;
bool phase_gemm_pool_applies(const ConvGeometry& g, const ConvGeometry& pool);
void phase_gemm_conv_pool(const float* x, const ConvGeometry& g, const PackedMatrix& a,
                          const Epilogue& epilogue, int64_t nr, const ConvGeometry& pool, float* y);

// A 1x1 stride-1 conv (the expansion of a mobilenet_v2 block) fused with the 3x3 pad-1 depthwise
// conv that reads its output: per task of kConvDepthwiseRows depthwise rows, the pointwise rows
// they read are computed into per-thread scratch (B rows read in place; `epilogue`: bias, clamp,
// no residual) and the depthwise rows (weights [C x 9], bias, clamp [lo, hi]) computed from
// there, so the expanded tensor (6x the block's input; 4.6 MiB at mobilenet_v2's 112x112) is
// never stored.
constexpr int64_t kConvDepthwiseRows = 4;
bool pointwise_depthwise_applies(const ConvGeometry& pw, const ConvGeometry& dw);
void pointwise_depthwise_conv(const float* x, const ConvGeometry& pw, const PackedMatrix& a,
                              const Epilogue& epilogue, int64_t nr, const ConvGeometry& dw,
                              const float* dw_weights, const float* dw_bias, float lo, float hi,
                              float* y);

// Group-1 stride-1 convs (windows larger than 1x1, no dilation) as an implicit GEMM over a
// zero-padded copy of the input flattened with row pitch P = OW + KW - 1 (kernels/
// flat_gemm_conv.cpp): B rows read in place at one offset per tap, tiles running across row ends,
// the pad columns dropped as each task's block of C is stored. Weights [OC x C*KH*KW] packed in
// blocks of mc rows (a multiple of the tile's mr); tasks are mc rows x nc flat columns.
struct FlatConvWeights {
  int64_t mc = 0;
  std::vector<PackedMatrix> blocks;
};
bool flat_gemm_conv_applies(const ConvGeometry& g);
void flat_gemm_conv_pack(const float* w, const ConvGeometry& g, int64_t mc, int64_t mr,
                         FlatConvWeights* out);
// y [OC, OH, OW] = conv(x [C, H, W]) with the whole epilogue (row bias, residual laid out like
// y, clamp, post op); parallel over its tasks; nr is the tile's columns.
void flat_gemm_conv(const float* x, const ConvGeometry& g, const FlatConvWeights& a,
                    const Epilogue& epilogue, int64_t nc, int64_t nr, float* y);

// Winograd F(2x2, 3x3): 3x3, stride 1, group 1 convs (any pads; dilation 1 is the caller's check).
bool winograd_applies(const ConvGeometry& g);
// U = G g G^T of weights w [M, C, 3, 3]: 16 matrices [M x C] (xi = 4 i + j), packed mr-row panels.
struct WinogradWeights {
  int64_t m = 0, c = 0;
  std::vector<PackedMatrix> u;
};
void winograd_weights(const float* w, int64_t m, int64_t c, int64_t mr, WinogradWeights* out);
struct WinogradBlocking {
  int64_t tiles = 64;  // 2x2 output tiles per parallel task (rounded up to nr)
  int64_t nr = kNR;    // B panel width: the SGEMM tile's columns (u's panels give its rows)
};
// Output [M, OH, OW] of one image: per task of `tiles` output tiles, the input tiles are
// transformed into 16 [C x tiles] matrices in per-thread scratch, multiplied by U, and
// transformed back with per-channel bias, the residual (laid out like y, or nullptr) and clamp to
// [lo, hi].
void winograd_conv(const float* x, const ConvGeometry& g, const WinogradWeights& u,
                   const float* bias, const float* residual, float lo, float hi,
                   const WinogradBlocking& blocking, float* y);

// Dilated convs (group 1) as one GEMM per window tap over the output rectangle where that tap
// reads the input (kernels/tap_regions.cpp): y = sum over taps of W[:, :, ky, kx] x (the input
// shifted by the tap), so taps that read padding are never multiplied, as they are in im2col.
struct TapRect {
  int64_t ky = 0, kx = 0;
  int64_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;  // output rows [y0, y1), columns [x0, x1)
};
struct TapRegionPlan {
  std::vector<TapRect> taps;         // taps that read the input somewhere, largest rectangle first
  bool first_covers_output = false;  // taps[0] reads the input for every output
  double live_share = 1.0;           // (tap, output) pairs that read the input, over all of them
};
// Output positions o along one axis whose window tap at `offset` (k * dilation) reads the input:
// 0 <= o * stride - pad + offset < in for o in [lo, hi) (lo == hi: none).
void tap_output_range(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t offset,
                      int64_t* lo, int64_t* hi);
bool tap_regions_apply(const ConvGeometry& g);
TapRegionPlan plan_tap_regions(const ConvGeometry& g);
// One packed A (oc x c, mr-row panels) per planned tap of weights w [OC, C, KH, KW].
std::vector<PackedMatrix> pack_tap_weights(const float* w, const ConvGeometry& g,
                                           const TapRegionPlan& plan, int64_t mr);
// y [OC, OH, OW] = conv(x) + bias (no clamp: the caller's pass adds a residual, clamps and runs a
// post op over the whole output), each tap's GEMM parallel with `blocking`'s tasks.
void tap_region_conv(const float* x, const ConvGeometry& g, const TapRegionPlan& plan,
                     const std::vector<PackedMatrix>& a, const float* bias,
                     const GemmBlocking& blocking, float* y);

// Grouped 3x3 convs with few channels per group (kernels/f32_gconv2d_chw_3x3.cpp): stride 1 or 2,
// pads 0..2, no dilation, kGconvMinChannels..kGconvMaxChannels input and output channels per
// group (regnet's group width 8; one group counts too). Direct, parallel over groups x blocks of
// output rows: each task splits its group's input rows into zero-padded phase planes and computes
// the output flattened across rows, up to 8 output channels x 3 vectors in registers.
constexpr int64_t kGconvMinChannels = 4;
constexpr int64_t kGconvMaxChannels = 16;
bool f32_gconv2d_chw_3x3_applies(const ConvGeometry& g);
// Weights [OC, C / group, 3, 3] packed per group in chunks of at most 8 output channels.
struct GconvWeights {
  int64_t group = 0, cin = 0, cout = 0;  // cin, cout: channels per group
  std::vector<float> data;
};
void f32_gconv2d_chw_3x3_pack(const float* w, const ConvGeometry& g, GconvWeights* out);
// y [OC, OH, OW] = conv(x [C, H, W]), then the epilogue: row_bias per output channel (or
// nullptr), the residual (laid out like y, or nullptr), the clamp, the post op. col_bias unused.
void f32_gconv2d_chw_3x3(const float* x, const ConvGeometry& g, const GconvWeights& w,
                         const Epilogue& epilogue, float* y);

// 2-D pooling (kernels/pool.cpp): g.c planes, window kh x kw, strides, top/left pads (oc unused).
struct PoolWindow {
  ConvGeometry g;
  bool average = false;  // AveragePool (else MaxPool)
  // Average: 1 / (cells counted) per output row and per output column; a window counts their
  // product (count_include_pad and ceil_mode decide the counts, average_pool_window).
  std::vector<float> row_scale, col_scale;
};
// 1 / (cells a window counts) along one axis, per output position: the window [o s - pad,
// o s - pad + k) clipped to the input, or with count_include_pad to [-pad, size + pad_end) (never
// the part a ceil_mode window reaches past the end padding). 0 where nothing counts.
std::vector<float> pool_scales(int64_t outputs, int64_t size, int64_t k, int64_t stride,
                               int64_t pad, int64_t pad_end, bool count_include_pad);
PoolWindow max_pool_window(const ConvGeometry& g);
// pad_bottom / pad_right count with count_include_pad; a ceil_mode window's part past them never.
PoolWindow average_pool_window(const ConvGeometry& g, bool count_include_pad, int64_t pad_bottom,
                               int64_t pad_right);
// y = clamp(pool(x), lo, hi), parallel over blocks of planes. Any window, stride and padding.
void pool2d(const float* x, const PoolWindow& p, float lo, float hi, float* y);
// The same on the calling thread for planes [c0, c1): plane c read from x + c * x_plane, written
// to y + c * y_plane.
void pool2d_planes(const float* x, int64_t x_plane, const PoolWindow& p, float lo, float hi,
                   float* y, int64_t y_plane, int64_t c0, int64_t c1);
// Whether pool2d runs the direct stride-2 kernel (windows 2 or 3 wide, at most 16 tall), not
// the separable one.
bool pool2d_direct_applies(const ConvGeometry& g);
// Whether pool2d runs the flattened-plane stride-1 kernel (output as large as the input, rows of
// at most 16).
bool pool2d_same_applies(const ConvGeometry& g);
// 3x3 stride-2 max pools every window of which keeps an input row and column: the pools the
// conv+pool fusion takes (it runs pool2d_planes on blocks of rows).
bool max_pool_3x3s2_applies(const ConvGeometry& g);

// Depthwise conv over flattened planes (kernels/depthwise.cpp) for "same"-shaped 3x3 and 5x5
// convs: stride 1 with an output as large as the input, or stride 2 with even H and W halved.
bool depthwise_linear_applies(const ConvGeometry& g);
// Returns false (nothing written) where it does not apply.
bool depthwise_linear(const float* x, const float* w, const float* bias, const ConvGeometry& g,
                      float lo, float hi, float* y, const UnaryFn* post = nullptr);

// Depthwise conv on blocks of a vector's worth of channels, transposed channels-last into a
// padded tile (kernels/depthwise_blocked.cpp): any window, stride, pads and dilation; needs
// vectors of at least 4 floats. Returns false (nothing written) where it does not apply.
bool depthwise_blocked_applies(const ConvGeometry& g);
// Where it beats the per-plane kernels: windows of 25 taps or more (a 5x5 on 7x7 to 28x28
// planes ran 1.1-1.5x faster than depthwise_linear), and dilated windows at strides above 1
// (which no other SIMD kernel takes). 3x3 windows keep the per-plane kernels (1.1-1.3x faster).
bool depthwise_prefers_blocked(const ConvGeometry& g);
bool depthwise_blocked(const float* x, const float* w, const float* bias, const ConvGeometry& g,
                       float lo, float hi, float* y, const UnaryFn* post = nullptr);

// Rows of a 3x3 pad-1 depthwise conv (stride 1 "same", or stride 2 on an even width), on the
// calling thread: channels [c0, c1), output rows [oy0, oy1), from input rows [r0, r1) (all the
// rows those output rows read that exist) held per channel at src + c * src_plane with row pitch
// g.w; at least 16 readable floats before the first channel and after the last (edge taps read
// them, then are masked). Output row oy of channel c goes to y + c * y_plane + (oy - oy0) * g.ow.
bool depthwise_rows_3x3_applies(const ConvGeometry& g);
void depthwise_rows_3x3(const float* src, int64_t src_plane, int64_t r0, int64_t r1,
                        const ConvGeometry& g, const float* w, const float* bias, float lo,
                        float hi, float* y, int64_t y_plane, int64_t oy0, int64_t oy1, int64_t c0,
                        int64_t c1);

// Depthwise conv (group == C == OC) with per-channel bias and clamp, parallel over channels.
// Runs depthwise_linear where it applies, padded rows (simd.cpp) otherwise, and a direct loop
// over taps for dilated convs (the atrous stages of segmentation backbones).
void depthwise_conv(const float* x, const float* w, const float* bias, const ConvGeometry& g,
                    float lo, float hi, float* y, const UnaryFn* post = nullptr);

}  // namespace tessera::cpu
