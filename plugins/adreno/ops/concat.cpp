// Concat along the channels of rank-4 tensors on the adreno plugin: the inputs are read as NCHW
// buffers (images converted) and copied into the output's buffer at their channel offsets; the
// next texture op converts the result back. (Channel blocks of 4 need not line up between the
// inputs, which whole-texel image writes would need.)
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  const tsr_tensor& y = node.output(0);
  if (y.rank != 4) return "only rank-4 tensors";
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += 4;
  if (axis != 1) return "only the channel axis (1)";
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i) || node.input(i).rank != 4) return "every input must be rank 4";
  }
  r = check_fits_image(y, device.limits);
  return r.empty() ? "" : "output 0: " + r;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& y = node.output(0);
  const cl_mem out = lw.output_buffer(node.output_id(0), index);
  int64_t offset = 0;
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    const tsr_tensor& x = node.input(i);
    const size_t n = static_cast<size_t>(numel_of(x));
    const Config config = lw.config_for("layout.concat_channels", static_cast<int64_t>(n));
    opencl::Kernel k = lw.kernel(config);
    k.args()
        .buffer(lw.input_buffer(node.input_id(i), index))
        .buffer(out)
        .i32x4(to_i32(x.dims[0], node), to_i32(x.dims[1], node), to_i32(x.dims[2], node),
               to_i32(x.dims[3], node))
        .i32(to_i32(y.dims[1], node))
        .i32(to_i32(offset, node));
    lw.add_step(index, std::move(k), {std::max<size_t>(n, 1)}, config);
    offset += x.dims[1];
  }
}

}  // namespace
TESSERA_ADRENO_OP("Concat", check, lower);
}  // namespace tessera::adreno
