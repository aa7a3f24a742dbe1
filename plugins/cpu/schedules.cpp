// Schedule tables of the cpu plugin and their default heuristics.
#include "schedules.hpp"

#include <algorithm>
#include <stdexcept>

namespace tessera::cpu {

namespace {
// The micro-tile's rows and columns offered on the running SIMD target (AVX-512: 6/8/12 x 16/32;
// elsewhere kMR x kNR only); every combination is compiled.
std::vector<int64_t> tile_values(bool rows) {
  std::vector<int64_t> out;
  for (const GemmTile& t : gemm_tiles()) {
    const int64_t v = rows ? t.mr : t.nr;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void add_tile(Config* c, const GemmTile& t) {
  c->values.push_back(t.mr);
  c->values.push_back(t.nr);
}
}  // namespace

GemmTile default_tile(int64_t m, int64_t n) {
  if (m == 1) return one_row_tile();
  // On AVX-512 the preferred 8x32 (16 accumulators, 10 loads per 16 FMAs) keeps both FMA ports of
  // an Intel server core busy, where 6x16 (6 chains of latency 4, 7 loads per 6 FMAs, ~15 uops
  // per 6 FMAs on a 4-wide front end) caps near half of peak; on Zen 4 (one 512-bit FMA port) it
  // measured as fast or faster than 6x16 except where its wider panels pad more columns.
  // The preferred tile stays unless another computes C with more than 1/16 fewer padded
  // elements; ties go to the tile sharing the preferred tile's rows, then to more accumulators.
  // Rows pad to whole tiles; a partial last column panel costs what the kernel runs for it
  // (simd.cpp's AnyTile): a 32-wide one splits into a whole 16-wide tile and the rest, and a rest
  // of at most kTailColumns columns is a column tail costing its own columns, anything wider a
  // 16-wide tile. Counting whole panels had sent 111-, 169- and 196-wide convs to 16-wide tiles:
  // squeezenet's 111-wide stem ran 275 us in 8x16 tiles, 234 us in 8x32 (Zen 5, 2 threads).
  std::vector<GemmTile> order = gemm_tiles();
  const GemmTile preferred = default_gemm_tile();
  auto rank = [&](const GemmTile& t) {
    return (t.mr == preferred.mr && t.nr == preferred.nr ? 2 : 0) + (t.mr == preferred.mr ? 1 : 0);
  };
  std::stable_sort(order.begin(), order.end(), [&](const GemmTile& x, const GemmTile& y) {
    return rank(x) != rank(y) ? rank(x) > rank(y) : x.mr * x.nr > y.mr * y.nr;
  });
  auto rest = [](int64_t r) -> int64_t { return r == 0 ? 0 : r <= kTailColumns ? r : 16; };
  auto columns = [&](int64_t nr) {
    const int64_t full = n / nr * nr, r = n % nr;
    return full + (nr > 16 && r > 16 ? 16 + rest(r - 16) : rest(r));
  };
  auto area = [&](const GemmTile& t) {
    return (std::max<int64_t>(1, m) + t.mr - 1) / t.mr * t.mr * columns(t.nr);
  };
  GemmTile best = order.front();
  for (const GemmTile& t : order) {
    if (area(t) < area(best)) best = t;
  }
  const GemmTile& first = order.front();
  if (area(first) * 16 <= area(best) * 17) best = first;
  return best;
}

const std::vector<Schedule>& all_schedules() {
  // mc/nc/kc block the parallel tasks; tile_rows x tile_cols is the register tile (packing of A,
  // at compile time for conv weights, and of B follows it).
  static const std::vector<Schedule> schedules = {
      {"gemm.packed",
       "packed SGEMM, FMA register tile of tile_rows x tile_cols, full-K panels (weights packed "
       "at compile time)",
       {{"mc", {6, 12, 24, 48, 96}},
        {"nc", {16, 32, 64, 128, 256, 512}},
        {"tile_rows", tile_values(true)},
        {"tile_cols", tile_values(false)}}},
      {"conv2d.nchw.im2col_gemm",
       "gemm.packed with B packed panel by panel (im2col, or a strided copy for 1x1) inside "
       "each task, never materialised; K in chunks of kc (0 = all of K) so a B chunk stays in L1",
       {{"mc", {6, 12, 24, 48, 96, 192, 384, 768}},
        {"nc", {16, 32, 64, 128, 256, 512}},
        {"kc", {0, 128, 256, 512, 1024}},
        {"b_whole", {0, 1}},
        {"b_direct", {0, 1}},
        {"tile_rows", tile_values(true)},
        {"tile_cols", tile_values(false)}}},
      {"conv2d.nchw.phase_gemm",
       "group-1 convs with strides 1 or 2 as the packed SGEMM with B read in place: the input is "
       "split once into stride x stride zero-padded phase planes, so each window tap is a "
       "unit-stride run at a fixed offset (no im2col packing); parallel over output rows",
       {{"tile_rows", tile_values(true)}, {"tile_cols", tile_values(false)}}},
      {"conv2d.nchw.winograd",
       "Winograd F(2x2,3x3) for 3x3 stride-1 group-1 convs: weights transformed at compile time "
       "(16 packed [M x C]), per task `tiles` 2x2 output tiles transformed into 16 [C x tiles] "
       "B matrices, 16 packed SGEMMs, output transform with bias and clamp",
       {{"tiles", {32, 64, 128, 256}},
        {"tile_rows", tile_values(true)},
        {"tile_cols", tile_values(false)}}},
      {"conv2d.nchw.flat_gemm",
       "group-1 stride-1 convs as the packed SGEMM over a zero-padded input copy flattened with "
       "row pitch OW + KW - 1: B rows read in place at one offset per tap, tiles across row "
       "ends; tasks of mc output channels x nc flat columns",
       {{"mc", {8, 16, 24, 32, 48, 64, 96, 128, 256, 512}},
        {"nc", {32, 64, 128, 256, 512, 1024}},
        {"tile_rows", tile_values(true)},
        {"tile_cols", tile_values(false)}}},
      {"conv2d.nchw.gconv3x3_direct",
       "grouped 3x3 convs of 4..16 channels per group, stride 1 or 2, direct "
       "(f32_gconv2d_chw_3x3): per task (group x output rows) zero-padded phase planes, the "
       "output flattened across rows, 8 output channels x 3 vectors of accumulators",
       {}},
      {"conv2d.nchw.depthwise_direct",
       "depthwise direct, one task per channel, stride-1/2 specialised rows",
       {}},
  };
  return schedules;
}

const Schedule& schedule(const std::string& id) {
  for (const Schedule& s : all_schedules()) {
    if (id == s.id) return s;
  }
  throw std::invalid_argument("cpu plugin: unknown schedule '" + id + "'");
}

int64_t Config::get(const std::string& knob) const {
  for (size_t i = 0; i < schedule->knobs.size(); ++i) {
    if (knob == schedule->knobs[i].name) return values.at(i);
  }
  throw std::invalid_argument("cpu plugin: schedule '" + std::string(schedule->id) +
                              "' has no knob '" + knob + "'");
}

std::string Config::str() const {
  std::string out = schedule->id;
  out += '{';
  for (size_t i = 0; i < schedule->knobs.size(); ++i) {
    if (i) out += ',';
    out += std::string(schedule->knobs[i].name) + "=" + std::to_string(values.at(i));
  }
  return out + '}';
}

Config default_gemm_config(int64_t m, int64_t n, int64_t threads) {
  const Schedule& s = schedule("gemm.packed");
  const int64_t want_tasks = std::max<int64_t>(1, threads) * 4;
  int64_t mc = 96, nc = 512;
  // Shrink the larger side first until there are enough tasks (or the knobs hit their minimum).
  auto tasks = [&] { return ((m + mc - 1) / mc) * ((n + nc - 1) / nc); };
  while (tasks() < want_tasks && (mc > 6 || nc > 16)) {
    if (nc > 16 && (nc >= 4 * mc || mc <= 6)) {
      nc /= 2;
    } else {
      mc = mc == 12 ? 6 : mc / 2;
    }
  }
  Config out{&s, {mc, nc}};
  add_tile(&out, default_tile(m, n));
  return out;
}

Config default_conv_config(int64_t m, int64_t n, int64_t k, int64_t threads) {
  const Schedule& s = schedule("conv2d.nchw.im2col_gemm");
  const int64_t want_tasks = std::max<int64_t>(1, threads) * 4;
  const GemmTile tile = default_tile(m, n);
  const int64_t col_panels = (n + tile.nr - 1) / tile.nr;
  // K chunks (kc) measured slower than full-K panels on Zen 4 for the resnet shapes with B
  // packed per task (the C reloads cost more than the L1 reuse gains).
  int64_t kc = 0;
  int64_t mc = 768, nc = 512;
  auto tasks = [&] { return ((m + mc - 1) / mc) * ((n + nc - 1) / nc); };
  // Weights larger than the pixels (late layers): pack B whole once, split tasks by rows of A.
  if (m > col_panels * tile.nr) {
    // A whole-K B panel of a deep layer (resnet stage 4: K = 4608, 590 KiB per 32 columns) falls
    // out of L2 while A streams past it, and every row panel reads it again; 512-deep chunks
    // (128 KiB for 64 columns) stay there. resnet's 512 -> 512 3x3 conv at 7x7 alone on Zen 5,
    // mc 48: 1.49 -> 1.24 ms at 1 thread, 1.03 -> 0.68 ms at 2 (ORT 1.09 / 0.49).
    if (k > 1024) kc = 512;
    nc = 512;
    while (nc / 2 >= n && nc > 16) nc /= 2;
    while (tasks() < want_tasks && mc > 6) mc = mc == 12 ? 6 : mc / 2;
    Config out{&s, {mc, nc, kc, 1, 0}};
    add_tile(&out, tile);
    return out;
  }
  // Else every B panel is packed by the task that uses it, so a task should span all of M (each
  // panel packed once) unless that leaves too few tasks: then split M, re-packing some panels.
  // Not below 64 rows while every thread has a panel of its own: a panel's packing costs about
  // what 32 to 64 rows of its products do, so halving a few rows doubled the packing for little
  // balance (pvt_v2's spatial-reduction conv, 32 -> 32 8x8 stride 8 on 56x56, K = 2048 and two
  // 32-column panels: 215 us at mc 24 against 116 us at mc 48, 2 threads, the tuner's verified
  // medians on a Xeon; ORT 104 us at 1 thread).
  while (mc > 6 && mc / 2 >= m) mc /= 2;
  while (tasks() < want_tasks && nc > 16) nc /= 2;
  while (tasks() < want_tasks && mc > 6 && col_panels < want_tasks &&
         (mc / 2 >= 64 || col_panels < threads)) {
    mc = mc == 12 ? 6 : mc / 2;
  }
  // b_direct only matters for 1x1 stride-1 convs (B is the input itself): reading it in place
  // measured faster than packing for every such zoo shape (K 24 to 576).
  Config out{&s, {mc, nc, kc, 0, 1}};
  add_tile(&out, tile);
  return out;
}

Config default_phase_config(int64_t m, int64_t ow) {
  Config out{&schedule("conv2d.nchw.phase_gemm"), {}};
  add_tile(&out, default_tile(m, ow));
  return out;
}

Config default_flat_config(int64_t m, int64_t n, int64_t threads) {
  const GemmTile tile = default_tile(m, n);
  // All output channels per task (each B column block read once) in blocks of 4 tiles, split
  // until every thread has several tasks to balance: columns down to 2 tiles first, then rows
  // (the 7x7 maps of densenet: 61 flat columns, 32 channels).
  const int64_t want_tasks = std::max<int64_t>(1, threads) * 8;
  int64_t mc = (m + tile.mr - 1) / tile.mr * tile.mr, nc = 4 * tile.nr;
  auto tasks = [&] { return ((m + mc - 1) / mc) * ((n + nc - 1) / nc); };
  while (tasks() < want_tasks && nc > 2 * tile.nr) nc /= 2;
  while (tasks() < want_tasks && mc > tile.mr) mc = std::max(tile.mr, mc / 2 / tile.mr * tile.mr);
  Config out{&schedule("conv2d.nchw.flat_gemm"), {mc, nc}};
  add_tile(&out, tile);
  return out;
}

Config default_winograd_config(int64_t m, int64_t c, int64_t tiles, int64_t threads) {
  const Schedule& s = schedule("conv2d.nchw.winograd");
  // A task's 16 transformed B matrices (16 x C x tiles floats) should stay in L2 next to the 16
  // [M x tiles] products: about 256 KiB of B.
  int64_t nt = 256;
  while (nt > 32 && 16 * c * nt > 65536) nt /= 2;
  // Enough tasks for the threads to balance, while a task keeps at least 32 tiles.
  const int64_t want_tasks = std::max<int64_t>(1, threads) * 3;
  while (nt > 32 && (tiles + nt - 1) / nt < want_tasks) nt /= 2;
  Config out{&s, {nt}};
  add_tile(&out, default_tile(m, nt));
  return out;
}

plugin::Schedule describe_schedule(const Config& heuristic) {
  plugin::Schedule out;
  out.name = heuristic.schedule->id;
  for (size_t i = 0; i < heuristic.schedule->knobs.size(); ++i) {
    const Knob& knob = heuristic.schedule->knobs[i];
    plugin::KnobSpace space;
    space.name = knob.name;
    space.values = knob.candidates;
    space.default_value = heuristic.values.at(i);
    // The heuristic may pick a value between the candidates (e.g. mc for a small M); the tuner
    // needs it in the list to measure the default.
    if (std::find(space.values.begin(), space.values.end(), space.default_value) ==
        space.values.end()) {
      space.values.insert(
          std::lower_bound(space.values.begin(), space.values.end(), space.default_value),
          space.default_value);
    }
    out.knobs.push_back(std::move(space));
  }
  return out;
}

Config apply_node_config(const plugin::NodeConfig* requested, const Config& heuristic,
                         std::string* why) {
  why->clear();
  if (requested == nullptr) return heuristic;
  if (requested->schedule != heuristic.schedule->id) {
    *why = "schedule '" + requested->schedule + "' does not apply to this node (it runs " +
           heuristic.schedule->id + ")";
    return heuristic;
  }
  Config out = heuristic;
  for (const plugin::KnobValue& k : requested->knobs) {
    const std::vector<Knob>& knobs = heuristic.schedule->knobs;
    auto it = std::find_if(knobs.begin(), knobs.end(),
                           [&](const Knob& knob) { return k.name == knob.name; });
    if (it == knobs.end()) {
      *why = "schedule '" + requested->schedule + "' has no knob '" + k.name + "'";
      return heuristic;
    }
    const size_t i = static_cast<size_t>(it - knobs.begin());
    const bool candidate =
        std::find(it->candidates.begin(), it->candidates.end(), k.value) != it->candidates.end();
    if (!candidate && k.value != heuristic.values[i]) {
      *why = "knob " + k.name + "=" + std::to_string(k.value) + " is not one of its candidates";
      return heuristic;
    }
    out.values[i] = k.value;
  }
  return out;
}

int64_t tile_rows(const Config& config) {
  return config.get("tile_rows");
}

GemmBlocking gemm_blocking(const Config& config) {
  GemmBlocking b{config.get("mc"), config.get("nc")};
  for (const Knob& knob : config.schedule->knobs) {
    if (std::string(knob.name) == "kc") b.kc = config.get("kc");
    if (std::string(knob.name) == "b_whole") b.b_whole = config.get("b_whole") != 0;
    if (std::string(knob.name) == "b_direct") b.b_direct = config.get("b_direct") != 0;
    if (std::string(knob.name) == "tile_cols") b.nr = config.get("tile_cols");
  }
  return b;
}

}  // namespace tessera::cpu
