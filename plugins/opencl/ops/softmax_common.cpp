// Softmax and LogSoftmax (ops/softmax_common.hpp). Before opset 13 the input is viewed as 2-D at
// `axis` (any axis works) and each row is contiguous; from opset 13 the softmax runs along `axis`
// alone: the last axis as contiguous rows, any other as columns `inner` elements apart
// (softmax_axis_f32). LogSoftmax builds the same kernels with TSR_LOG_SOFTMAX.
#include "softmax_common.hpp"

#include <climits>

namespace tessera::opencl {
namespace {

const Schedule kSoftmaxAxis{"softmax.axis", "softmax.cl", "softmax_axis_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kSoftmaxAxis);

// Opset 13 along an axis that is not the last: (outer, len, inner) of input 0.
bool along_middle_axis(const NodeView& node) {
  const int64_t axis = support::softmax_axis(node);
  return node.opset() >= 13 && axis >= 0 && axis < node.input(0).rank - 1;
}

}  // namespace

std::string check_softmax(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  if (plugin::tensor_numel(node.input(0)) > INT_MAX) {
    return "more elements than 32-bit kernel indexing";
  }
  return along_middle_axis(node) ? "" : support::check_softmax_rows(node);
}

namespace {

const char* log_define(bool log) {
  return log ? "-DTSR_LOG_SOFTMAX" : "";
}

void lower_middle_axis(Lowering& lw, const NodeView& node, int32_t index, bool log) {
  const tsr_tensor& x = node.input(0);
  const int64_t axis = support::softmax_axis(node);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int64_t d = axis + 1; d < x.rank; ++d) inner *= x.dims[d];
  const Config config = lw.config_for(kSoftmaxAxis.id, outer * inner);
  Kernel k = lw.kernel(config, log_define(log));
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(outer, node))
      .i32(to_i32(x.dims[axis], node))
      .i32(to_i32(inner, node));
  lw.add_1d_step(index, std::move(k), outer * inner, config);
}

}  // namespace

void lower_softmax(Lowering& lw, const NodeView& node, int32_t index, bool log) {
  if (along_middle_axis(node)) {
    lower_middle_axis(lw, node, index, log);
    return;
  }
  const auto [rows, cols] = support::softmax_rows(node);
  const Config config = lw.config_for("softmax.rows", rows);
  Kernel k = lw.kernel(config, log_define(log));
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(cols, node));
  lw.add_1d_step(index, std::move(k), rows, config);
}

}  // namespace tessera::opencl
