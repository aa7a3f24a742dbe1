// Knob spaces of the adreno schedules and their default heuristic.
#include "schedules.hpp"

#include <algorithm>
#include <string>

#include "region.hpp"
#include "tessera/error.hpp"

namespace tessera::adreno {

namespace {
// Adreno waves are 64/128 lanes; texture kernels like 2-D groups of 16-64 (0 = driver's choice).
const std::vector<int32_t> kWgX = {0, 4, 8, 16, 32, 64};
const std::vector<int32_t> kWgY = {1, 2, 4};
const std::vector<int32_t> kOpw = {1, 2, 4};
}  // namespace

const std::vector<Schedule>& all_schedules() {
  // Only conv2d.image.gemm uses __local memory (its k_split partial sums, kept within the
  // device's limit by split_group); group sizes are bounded by device and kernel maxima.
  static const std::vector<Schedule> schedules = {
      {"conv2d.image.direct",
       "conv.cl",
       "conv2d_direct_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}, {"opw", kOpw, true}}},
      {"conv2d.image.1x1",
       "conv.cl",
       "conv2d_1x1_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}, {"opw", kOpw, true}}},
      // Implicit GEMM: blocks_per_item output texels x opw pixels per work-item, the reduction
      // split k_split ways in the work-group (local dimension 2). wg_x 0: 64 / k_split.
      {"conv2d.image.gemm",
       "conv.cl",
       "conv2d_gemm_image",
       {{"wg_x", kWgX, false},
        {"opw", kOpw, true},
        {"blocks_per_item", {1, 2, 4}, true},
        {"k_split", {1, 2, 4, 8, 16, 32}, false}}},
      {"conv2d.image.depthwise",
       "conv.cl",
       "conv2d_depthwise_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}, {"opw", kOpw, true}}},
      {"conv2d.image.grouped",
       "conv.cl",
       "conv2d_grouped_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}, {"opw", kOpw, true}}},
      {"layout.to_image",
       "layout.cl",
       "nchw_to_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"layout.to_buffer",
       "layout.cl",
       "image_to_nchw",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"eltwise.image.unary",
       "elementwise.cl",
       "unary_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"eltwise.image.add",
       "elementwise.cl",
       "add_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"eltwise.image.binary",
       "elementwise.cl",
       "binary_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"eltwise.image.binary_bcast",
       "elementwise.cl",
       "binary_bcast_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"eltwise.image.affine",
       "elementwise.cl",
       "affine_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"pool2d.image", "pool.cl", "pool2d_image", {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"pool.image.global_avg",
       "pool.cl",
       "global_avg_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"pool.image.global_avg_nchw",
       "pool.cl",
       "global_avg_to_nchw",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"resize.image.bilinear",
       "pool.cl",
       "resize_bilinear_image",
       {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
      {"layout.concat_channels", "layout.cl", "concat_channels", {{"wg_x", kWgX, false}}},
      {"gemm.buffer", "gemm.cl", "gemm_f32", {{"wg_x", kWgX, false}, {"wg_y", kWgY, false}}},
  };
  return schedules;
}

const Schedule& schedule(const std::string& id) {
  for (const Schedule& s : all_schedules()) {
    if (id == s.id) return s;
  }
  if (const Schedule* shared = opencl::SharedSchedules::find(id)) return *shared;
  throw Error("adreno: unknown schedule '" + id + "'");
}

std::string check_knob_option(const std::string& name, const std::string& value) {
  // The shared ops run on adreno too, so their knobs may be forced as well.
  std::vector<Schedule> schedules = all_schedules();
  for (const Schedule& s : opencl::SharedSchedules::all()) schedules.push_back(s);
  return opencl::check_knob_option(schedules, "adreno", name, value);
}

Config default_config(const std::string& schedule_id, const opencl::DeviceInfo& device,
                      int64_t work_dim0, const opencl::ConfigOverrides& overrides) {
  Config c;
  c.schedule = &schedule(schedule_id);
  for (const Knob& k : c.schedule->knobs) {
    int32_t v = k.candidates.front();
    const std::string name = k.name;
    // 32 x 1 keeps a 2-D texture access pattern cache-friendly without padding small layers.
    if (name == "wg_x") v = opencl::support::default_wg_x(*c.schedule, device, work_dim0, 32);
    for (const auto& [oname, value] : overrides) {
      if (name == oname) v = value;
    }
    c.values.push_back(v);
  }
  return c;
}

const opencl::Flavor& flavor() {
  static const opencl::Flavor f{"adreno", schedule, default_config};
  return f;
}

}  // namespace tessera::adreno
