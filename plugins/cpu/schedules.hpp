// The cpu plugin's schedules: each kernel variant with its knob space, described once as data,
// plus the heuristic default. Compile reads them; a tuner and the tests enumerate the same tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"
#include "tessera/plugin.hpp"

namespace tessera::cpu {

struct Knob {
  const char* name;
  std::vector<int64_t> candidates;
};

struct Schedule {
  const char* id;  // "gemm.packed"
  const char* what;
  std::vector<Knob> knobs;
};

// A schedule plus one value per knob, in the schedule's knob order.
struct Config {
  const Schedule* schedule = nullptr;
  std::vector<int64_t> values;
  int64_t get(const std::string& knob) const;  // throws std::invalid_argument naming the knob
  std::string str() const;                     // "gemm.packed{mc=12,nc=128}"
};

const std::vector<Schedule>& all_schedules();
// Throws std::invalid_argument naming the id when unknown.
const Schedule& schedule(const std::string& id);

// Heuristic register tile for C of m x n: among the target's tiles, the one padding C least.
GemmTile default_tile(int64_t m, int64_t n);
// Heuristic GEMM blocking for C of m x n on `threads` threads: tasks wide enough to stream B
// panels from cache, and at least ~4 tasks per thread so TBB can balance.
Config default_gemm_config(int64_t m, int64_t n, int64_t threads);
// Heuristic for conv2d.nchw.im2col_gemm: C is m (output channels per group) x n (output pixels),
// K = k.
Config default_conv_config(int64_t m, int64_t n, int64_t k, int64_t threads);
// Heuristic for conv2d.nchw.winograd: m output channels, c input channels, `tiles` 2x2 output
// tiles, on `threads` threads.
Config default_winograd_config(int64_t m, int64_t c, int64_t tiles, int64_t threads);
// conv2d.nchw.phase_gemm: the tile for m output channels by ow-wide output rows.
Config default_phase_config(int64_t m, int64_t ow);
// conv2d.nchw.flat_gemm for m output channels over n flat columns ((OH - 1) * P + OW).
Config default_flat_config(int64_t m, int64_t n, int64_t threads);
// The blocking, with nr = tile_cols; the A operand is packed with tile_rows(config) rows.
GemmBlocking gemm_blocking(const Config& config);
int64_t tile_rows(const Config& config);

// The schedule and knob space core's tuner sees for a node whose heuristic chose `heuristic`: the
// knobs' candidates, with the heuristic's values as defaults.
plugin::Schedule describe_schedule(const Config& heuristic);

// `requested` (from a pack or the tuner) when it names heuristic's schedule and gives only its
// knobs, each a candidate value (knobs it leaves out keep the heuristic's value). Otherwise the
// heuristic, with why the request was not applied in *why (never throws for bad requests: a
// stale pack must not fail a compile).
Config apply_node_config(const plugin::NodeConfig* requested, const Config& heuristic,
                         std::string* why);

}  // namespace tessera::cpu
