// SpaceToDepth: b x b pixel tiles moved into channel blocks (output channel (i b + j) C + c),
// one strided copy of the output seen as 6-D [N, b, b, C, H / b, W / b] (kernels/strided.cl), for
// every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  const tsr_tensor& x = node.input(0);
  const int64_t b = node.attr_int("blocksize", 0);
  if (x.rank != 4) return "input rank is not 4";
  if (b < 1 || x.dims[2] % b != 0 || x.dims[3] % b != 0) {
    return "blocksize does not divide height and width";
  }
  return support::check_strided_io(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t b = node.attr_int("blocksize", 0);
  const int64_t c = x.dims[1], hb = x.dims[2], wb = x.dims[3];
  const std::array<int64_t, 6> dims = {x.dims[0], b, b, c, hb / b, wb / b};
  const std::array<int64_t, 6> strides = {c * hb * wb, wb, 1, hb * wb, b * wb, b};
  lower_strided_copy(lw, node, index, strided_copy_6d(node, dims, strides));
}

}  // namespace
TESSERA_OPENCL_OP("SpaceToDepth", check, lower);
}  // namespace tessera::opencl
