// Concat on the adreno plugin, on NCHW buffers (images converted; the next texture op converts
// the result back): along the channels of rank-4 tensors with concat_channels (channel blocks of 4
// need not line up between the inputs, which whole-texel image writes would need), along any
// other axis (rank <= 6) by storing each input at its offset with the output's strides.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

bool channels_rank4(const NodeView& node) {
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += node.output(0).rank;
  return node.output(0).rank == 4 && axis == 1;
}

std::string check(const NodeView& node, const Device&) {
  const std::string r = check_float_io(node);
  if (!r.empty()) return r;
  return opencl::support::check_concat(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& y = node.output(0);
  const cl_mem out = lw.buffer(node.output_index(0));
  if (!channels_rank4(node)) {
    for (int32_t i = 0; i < node.num_inputs(); ++i) {
      const int64_t n = plugin::tensor_numel(node.input(i));
      const Config config = lw.config_for("copy.strided_store", n);
      opencl::Kernel k = lw.kernel(config);
      opencl::support::bind_strided_copy(k, lw.buffer(node.input_index(i)), out, to_i32(n, node),
                                         opencl::support::concat_store(node, i));
      lw.add_step(index, std::move(k), {static_cast<size_t>(std::max<int64_t>(n, 1))}, config);
    }
    return;
  }
  int64_t offset = 0;
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    const tsr_tensor& x = node.input(i);
    const size_t n = static_cast<size_t>(plugin::tensor_numel(x));
    const Config config = lw.config_for("layout.concat_channels", static_cast<int64_t>(n));
    opencl::Kernel k = lw.kernel(config);
    k.args()
        .buffer(lw.buffer(node.input_index(i)))
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
