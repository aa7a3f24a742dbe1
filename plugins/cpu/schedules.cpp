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
       "im2col then gemm.packed.6x16 (weights are the packed A)",
       {{"mc", {6, 12, 24, 48, 96}}, {"nc", {16, 32, 64, 128, 256, 512}}}},
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

GemmBlocking gemm_blocking(const Config& config) {
  return GemmBlocking{config.get("mc"), config.get("nc")};
}

}  // namespace tessera::cpu
