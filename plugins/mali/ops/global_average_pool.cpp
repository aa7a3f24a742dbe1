// GlobalAveragePool on the mali plugin: one work-item per (n, c) plane, or per (n, channel block)
// in NCHW4c (it follows its input's layout). With C % 4 == 0 the NCHW4c [N, C, 1, 1] output is
// NCHW already, so a following Flatten/Gemm reads it without a conversion.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank < 3) return "input must have spatial dims";
  return "";
}

// default_config's wg_x for one work-item per plane (it counts ceil(n / vec) items for `vec`
// schedules, whose vec is floats per work-item; here vec is the load width along a plane).
Config plane_config(const char* id, const Device& device, int64_t rows) {
  Config c = device.config(id, rows);
  for (size_t i = 0; i < c.schedule->knobs.size(); ++i) {
    if (std::string(c.schedule->knobs[i].name) == "wg_x") {
      c.values[i] = default_wg_x(*c.schedule, device, rows);
    }
  }
  return c;
}

}  // namespace

// The schedules describe_node lists: the default layout's first (under nchw4c the NCHW one runs
// when the input arrives as NCHW).
std::vector<Config> global_average_options(const NodeView& node, const Device& device) {
  const tsr_tensor& x = node.input(0);
  const int64_t rows = x.dims[0] * x.dims[1];
  std::vector<Config> out = {plane_config("pool.global_avg", device, rows)};
  if (kDefaultLayout == Storage::kNchw4c && x.rank == 4) {
    out.insert(out.begin(), plane_config("pool.global_avg.nchw4c", device, rows));
  }
  return out;
}

void lower_global_average(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const bool c4 = writes_nchw4c(lw, node);
  const int64_t rows = x.dims[0] * (c4 ? (x.dims[1] + 3) / 4 : x.dims[1]);
  int64_t inner = 1;  // pixels per plane (float4 in NCHW4c)
  for (int32_t d = 2; d < x.rank; ++d) inner *= x.dims[d];
  const std::vector<Config> configs = {
      plane_config(c4 ? "pool.global_avg.nchw4c" : "pool.global_avg", lw.op_device(), rows)};
  const Config config = choose_config(lw, index, configs);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(inner, node));
  // One work-item per plane whatever vec is (it is the load width along the plane).
  lw.add_step(index, std::move(k), {static_cast<size_t>(rows)},
              {static_cast<size_t>(config.get("wg_x"))}, config);
}

TESSERA_MALI_OP_WITH_LAYOUT("GlobalAveragePool", check, lower_global_average, follow_input0);
TESSERA_MALI_TUNABLE("GlobalAveragePool", global_average_options);
}  // namespace tessera::mali
