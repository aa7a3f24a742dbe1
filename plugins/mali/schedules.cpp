// Knob spaces of the mali schedules and the heuristics shared by the ops.
#include "schedules.hpp"

#include "tessera/error.hpp"
#include "tessera_opencl/lowering.hpp"

namespace tessera::mali {

namespace {
// Work-group widths worth trying on Mali (warp of 4-16 lanes; 0 = driver's choice).
const std::vector<int32_t> kWgX = {0, 4, 8, 16, 32, 64, 128};
// Unroll factors of the conv kernels' input-channel (block) loop; the depthwise kernels, which
// have no channel loop, unroll their kernel-row loop. The remainder runs one at a time.
const Knob kUnroll = {"unroll", {1, 2, 4}, true};
// Floats per work-item, loaded and stored as one vector (kernels fall back to single floats where
// a vector would cross a row / plane or the end, so every size is correct). NCHW4c buffers hold
// whole float4, so their kernels start at 4.
const Knob kVec = {"vec", {1, 4, 8}, true};
const Knob kVec4c = {"vec", {4, 8, 16}, true};
}  // namespace

const std::vector<Schedule>& all_schedules() {
  // Only conv2d.nchw4c.gemm uses __local memory (its k_split partial sums; the lowering keeps
  // them within the device's limit); work-group sizes are bounded by the device and kernel
  // maxima in default_wg_x() and fit_launch().
  static const std::vector<Schedule> schedules = {
      // conv2d.nchw.direct is shared (plugins/opencl/ops/conv.cpp).
      {"conv2d.nchw.1x1",
       "conv.cl",
       "conv2d_1x1_f32",
       {{"wg_x", kWgX, false}, {"outputs_per_item", {1, 2, 4, 8}, true, "OPW"}, kUnroll}},
      {"conv2d.nchw.depthwise",
       "conv.cl",
       "conv2d_depthwise_f32",
       {{"wg_x", kWgX, false}, {"outputs_per_item", {1, 2, 4, 8}, true, "OPW"}, kUnroll}},
      // NCHW4c (kernels/layout.cl describes the layout): four output channels per work-item.
      {"conv2d.nchw4c.direct",
       "conv.cl",
       "conv2d_direct_4c",
       {{"wg_x", kWgX, false}, {"outputs_per_item", {1, 2, 4, 8}, true, "OPW"}, kUnroll}},
      // blocks_per_item: output channel blocks (of 4) per work-item sharing each input load.
      {"conv2d.nchw4c.1x1",
       "conv.cl",
       "conv2d_1x1_4c",
       {{"wg_x", kWgX, false},
        {"outputs_per_item", {1, 2, 4, 8}, true, "OPW"},
        {"blocks_per_item", {1, 2}, true},
        kUnroll}},
      {"conv2d.nchw4c.depthwise",
       "conv.cl",
       "conv2d_depthwise_4c",
       {{"wg_x", kWgX, false}, {"outputs_per_item", {1, 2, 4, 8}, true, "OPW"}, kUnroll}},
      // Register tile rows_per_item x outputs_per_item pixels x 4 channels.
      {"conv2d.nchw4c.3x3s1",
       "conv.cl",
       "conv2d_3x3s1_4c",
       {{"wg_x", kWgX, false},
        {"outputs_per_item", {2, 4, 8}, true, "OPW"},
        {"rows_per_item", {1, 2}, true},
        kUnroll}},
      // Implicit GEMM with a blocks_per_item x outputs_per_item register tile and the reduction
      // split k_split ways inside the work-group (a launch knob: the local size's dimension 2).
      // wg_x 0: 64 / k_split work-items along the pixels.
      {"conv2d.nchw4c.gemm",
       "conv.cl",
       "conv2d_gemm_4c",
       {{"wg_x", {0, 8, 16, 32, 64, 128}, false},
        {"outputs_per_item", {1, 2, 4, 8}, true, "OPW"},
        {"blocks_per_item", {1, 2, 4}, true},
        {"k_split", {1, 2, 4, 8, 16, 32}, false}}},
      {"layout.to_nchw4c", "layout.cl", "nchw_to_nchw4c_f32", {{"wg_x", kWgX, false}}},
      {"layout.to_nchw", "layout.cl", "nchw4c_to_nchw_f32", {{"wg_x", kWgX, false}}},
      {"eltwise.channel_affine.nchw4c",
       "elementwise.cl",
       "channel_affine_4c_f32",
       {{"wg_x", kWgX, false}, kVec4c}},
      {"pool2d.nchw4c", "pool.cl", "pool2d_4c_f32", {{"wg_x", kWgX, false}}},
      // vec here: floats per load along the averaged plane (one work-item per plane).
      {"pool.global_avg.nchw4c",
       "pool.cl",
       "global_avg_pool_4c_f32",
       {{"wg_x", kWgX, false}, kVec4c}},
      {"eltwise.unary", "elementwise.cl", "unary_f32", {{"wg_x", kWgX, false}, kVec}},
      {"eltwise.binary", "elementwise.cl", "binary_f32", {{"wg_x", kWgX, false}, kVec}},
      {"eltwise.channel_affine",
       "elementwise.cl",
       "channel_affine_f32",
       {{"wg_x", kWgX, false}, kVec}},
      {"copy.block", "elementwise.cl", "copy_block_f32", {{"wg_x", kWgX, false}, kVec}},
      {"pool2d.direct", "pool.cl", "pool2d_f32", {{"wg_x", kWgX, false}}},
      {"pool.global_avg", "pool.cl", "global_avg_pool_f32", {{"wg_x", kWgX, false}, kVec}},
      {"gemm.naive", "gemm.cl", "gemm_f32", {{"wg_x", kWgX, false}, {"wg_y", {1, 2, 4, 8}, false}}},
      {"resize.bilinear", "pool.cl", "resize_bilinear_f32", {{"wg_x", kWgX, false}}},
  };
  return schedules;
}

const Schedule& schedule(const std::string& id) {
  for (const Schedule& s : all_schedules()) {
    if (id == s.id) return s;
  }
  if (const Schedule* shared = opencl::SharedSchedules::find(id)) return *shared;
  throw Error("mali: unknown schedule '" + id + "'");
}

int32_t default_vec(const Schedule& s) {
  for (const Knob& k : s.knobs) {
    if (std::string(k.name) != "vec") continue;
    for (int32_t v : k.candidates) {
      if (v == 4) return v;
    }
    return k.candidates.front();
  }
  return 0;
}

}  // namespace tessera::mali
