// Schedule tables of the cpu plugin and their default heuristics.
#include "schedules.hpp"

#include <algorithm>
#include <stdexcept>

namespace tessera::cpu {

const std::vector<Schedule>& all_schedules() {
  // The micro-tile (kMR x kNR) is fixed at build time in v1; the knobs block the parallel tasks.
  static const std::vector<Schedule> schedules = {
      {"gemm.packed.6x16",
       "packed SGEMM, 6x16 FMA register tile, full-K panels (weights packed at compile time)",
       {{"mc", {6, 12, 24, 48, 96}}, {"nc", {16, 32, 64, 128, 256, 512}}}},
      {"conv2d.nchw.im2col_gemm",
       "gemm.packed.6x16 with B packed panel by panel (im2col, or a strided copy for 1x1) inside "
       "each task, never materialised; K in chunks of kc (0 = all of K) so a B chunk stays in L1",
       {{"mc", {6, 12, 24, 48, 96, 192, 384, 768}},
        {"nc", {16, 32, 64, 128, 256, 512}},
        {"kc", {0, 128, 256, 512, 1024}},
        {"b_whole", {0, 1}},
        {"b_direct", {0, 1}}}},
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
  const Schedule& s = schedule("gemm.packed.6x16");
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
  return Config{&s, {mc, nc}};
}

Config default_conv_config(int64_t m, int64_t n, int64_t k, int64_t threads) {
  const Schedule& s = schedule("conv2d.nchw.im2col_gemm");
  const int64_t want_tasks = std::max<int64_t>(1, threads) * 4;
  const int64_t col_panels = (n + kNR - 1) / kNR;
  // K chunks (kc) measured slower than full-K panels on Zen 4 for every resnet shape (the C
  // reloads cost more than the L1 reuse gains); kept as a knob for cores with smaller L2.
  (void)k;
  const int64_t kc = 0;
  int64_t mc = 768, nc = 512;
  auto tasks = [&] { return ((m + mc - 1) / mc) * ((n + nc - 1) / nc); };
  // Weights larger than the pixels (late layers): pack B whole once, split tasks by rows of A.
  if (m > col_panels * kNR) {
    nc = 512;
    while (nc / 2 >= n && nc > 16) nc /= 2;
    while (tasks() < want_tasks && mc > 6) mc = mc == 12 ? 6 : mc / 2;
    return Config{&s, {mc, nc, kc, 1, 0}};
  }
  // Else every B panel is packed by the task that uses it, so a task should span all of M (each
  // panel packed once) unless that leaves too few tasks: then split M, re-packing some panels.
  while (mc > 6 && mc / 2 >= m) mc /= 2;
  while (tasks() < want_tasks && nc > 16) nc /= 2;
  while (tasks() < want_tasks && mc > 6 && col_panels < want_tasks) mc = mc == 12 ? 6 : mc / 2;
  // b_direct only matters for 1x1 stride-1 convs (B is the input itself): reading it in place
  // measured faster than packing for every such zoo shape (K 24 to 576).
  return Config{&s, {mc, nc, kc, 0, 1}};
}

GemmBlocking gemm_blocking(const Config& config) {
  GemmBlocking b{config.get("mc"), config.get("nc")};
  for (const Knob& knob : config.schedule->knobs) {
    if (std::string(knob.name) == "kc") b.kc = config.get("kc");
    if (std::string(knob.name) == "b_whole") b.b_whole = config.get("b_whole") != 0;
    if (std::string(knob.name) == "b_direct") b.b_direct = config.get("b_direct") != 0;
  }
  return b;
}

}  // namespace tessera::cpu
