// 2-D pooling windows over NCHW, one invocation per output element.
#include "ops/pool.hpp"

namespace tessera::vulkan {

std::string check_pool(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  if (node.input(0)->rank != 4) return "2-D pooling only";
  if (node.attr_string("auto_pad", "NOTSET") != "NOTSET") return "auto_pad other than NOTSET";
  if (node.num_outputs() > 1 && node.output(1) != nullptr) return "the Indices output";
  if (node.attr_ints("kernel_shape", {}).size() != 2) return "kernel_shape of 2 dims";
  return "";
}

void lower_pool(Lowering& lowering, const NodeView& node, bool is_max) {
  const tsr_tensor& x = *node.input(0);
  const tsr_tensor& y = *node.output(0);
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape", {1, 1});
  const std::vector<int64_t> strides = node.attr_ints("strides", {1, 1});
  const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
  const std::vector<int64_t> dilations = node.attr_ints("dilations", {1, 1});
  auto n32 = [&node](int64_t v) { return narrow(v, node, "a shape"); };
  const int64_t planes = x.dims[0] * x.dims[1];
  const std::vector<int32_t> c = {n32(planes),
                                  n32(x.dims[2]),
                                  n32(x.dims[3]),
                                  n32(y.dims[2]),
                                  n32(y.dims[3]),
                                  n32(kernel[0]),
                                  n32(kernel[1]),
                                  n32(strides[0]),
                                  n32(strides[1]),
                                  n32(pads[0]),
                                  n32(pads[1]),
                                  n32(dilations[0]),
                                  n32(dilations[1]),
                                  is_max ? 1 : 0,
                                  static_cast<int32_t>(node.attr_int("count_include_pad", 0)),
                                  n32(pads[2]),
                                  n32(pads[3])};
  lowering.dispatch(node, linear_kernel("pool2d", planes * y.dims[2] * y.dims[3], 64, c),
                    {&lowering.buffer(node.input_index(0))},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace tessera::vulkan
