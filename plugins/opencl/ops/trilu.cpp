// Trilu: the upper or lower triangle of the last two dims, the rest 0 (torch.triu / tril: causal
// attention masks computed from the input's length), any dtype device memory holds, k a
// constant (kernels/common/strided.cl trilu_any), for every OpenCL plugin.
#include <algorithm>
#include <cstdint>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kTrilu{"trilu", "strided.cl", "trilu_any", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kTrilu);

std::string check(const NodeView& node, const Device&) {
  if (!node.has_input(0) || node.num_outputs() != 1 || node.output_index(0) < 0) {
    return "input 0 or output 0 missing";
  }
  const tsr_tensor& x = node.input(0);
  std::string r = support::check_data_tensor(x, "input 0");
  if (!r.empty()) return r;
  if (x.rank < 2) return "rank below 2";
  if (node.num_inputs() > 1 && node.has_input(1)) {
    r = check_constant(node, 1, "k");
    if (!r.empty()) return r;
    const tsr_tensor& k = node.input(1);
    if (k.dtype != TSR_DTYPE_INT64 || plugin::tensor_numel(k) != 1) {
      return "k is not an int64 scalar";
    }
    const int64_t v = *static_cast<const int64_t*>(k.data);
    if (v < INT32_MIN / 2 || v > INT32_MAX / 2) return "k out of range";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t k = node.num_inputs() > 1 && node.has_input(1)
                        ? *static_cast<const int64_t*>(node.input(1).data)
                        : 0;
  const int64_t n = plugin::tensor_numel(x);
  const Config config = lw.config_for(kTrilu.id, n);
  Kernel kern = lw.kernel(config, element_defines(x));
  kern.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(to_i32(std::max<int64_t>(x.dims[x.rank - 2], 1), node))
      .i32(to_i32(std::max<int64_t>(x.dims[x.rank - 1], 1), node))
      .i32(to_i32(k, node))
      .i32(node.attr_int("upper", 1) != 0 ? 1 : 0);
  lw.add_1d_step(index, std::move(kern), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("Trilu", check, lower);
}  // namespace tessera::opencl
