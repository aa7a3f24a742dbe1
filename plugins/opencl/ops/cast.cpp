// Cast between the dtypes device memory holds (float32, int64, int32, int8, uint8, bool): a cast
// to the same dtype (autocast's .float() on a float tensor) shares the input's device buffer;
// any other is one conversion per element (kernels/cast.cl), as core's Cast converts. float16
// stays on the host.
#include <string>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

bool is_float(int32_t dtype) {
  return dtype == TSR_DTYPE_FLOAT32;
}

std::string check(const NodeView& node, const Device& device) {
  if (!node.has_input(0) || node.num_outputs() != 1 || node.output_index(0) < 0) {
    return "input 0 or output 0 missing";
  }
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  if (x.dtype == y.dtype) return check_alias(node, device);
  std::string r = support::check_data_tensor(x, "input 0");
  if (!r.empty()) return r;
  return support::check_data_tensor(y, "output 0");
}

std::string cast_defines(int32_t from, int32_t to) {
  std::string d =
      std::string("-DTSR_SRC=") + opencl_c_type(from) + " -DTSR_DST=" + opencl_c_type(to);
  if (to == TSR_DTYPE_BOOL) return d + " -DTSR_TO_BOOL";
  if (is_float(from) && !is_float(to)) {
    d += std::string(" -DTSR_CONVERT=convert_") + opencl_c_type(to) + "_sat_rtz";
  }
  return d;
}

const Schedule kCast{"cast.any", "cast.cl", "cast_any", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kCast);

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  if (x.dtype == y.dtype) {
    lower_alias(lw, node, index);
    return;
  }
  const int64_t n = plugin::tensor_numel(y);
  const Config config = lw.config_for(kCast.id, n);
  Kernel k = lw.kernel(config, cast_defines(x.dtype, y.dtype));
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node));
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("Cast", check, lower);
}  // namespace tessera::opencl
