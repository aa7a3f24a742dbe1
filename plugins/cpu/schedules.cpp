// Schedule tables of the cpu plugin and their default heuristics.
#include "schedules.hpp"

#include <algorithm>
#include <stdexcept>

namespace tessera::cpu {

const std::vector<Schedule>& all_schedules() {
  // The micro-tile (kMR x kNR) is fixed at build time in v1; the knobs block the parallel tasks.
  static const std::vector<Schedule> schedules = {
      {"gemm.packed",
       "packed SGEMM, FMA register tile sized per SIMD target, full-K panels (weights packed at "
       "compile time)",
       {{"mc", {6, 12, 24, 48, 96}}, {"nc", {16, 32, 64, 128, 256, 512}}}},
      {"conv2d.nchw.im2col_gemm",
       "gemm.packed with B packed panel by panel (im2col, or a strided copy for 1x1) inside "
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
