// DepthToSpace (DCR and CRD): channel blocks moved into b x b pixel tiles, one strided copy of
// the output seen as 6-D [N, C / b^2, H, b, W, b] (kernels/strided.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  const tsr_tensor& x = node.input(0);
  const int64_t b = node.attr_int("blocksize", 0);
  if (x.rank != 4) return "input rank is not 4";
  if (b < 1 || x.dims[1] % (b * b) != 0) return "blocksize does not divide the channels";
  const std::string mode = node.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return "mode '" + mode + "' (DCR or CRD)";
  return support::check_strided_io(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t b = node.attr_int("blocksize", 0);
  const int64_t c = x.dims[1] / (b * b), h = x.dims[2], w = x.dims[3];
  const bool dcr = node.attr_string("mode", "DCR") == "DCR";
  const std::array<int64_t, 6> dims = {x.dims[0], c, h, b, w, b};
  // Input strides of each output axis (n, c', h, i, w, j): DCR reads channel (i b + j) C' + c',
  // CRD channel c' b^2 + i b + j.
  const std::array<int64_t, 6> strides = {
      x.dims[1] * h * w,    (dcr ? 1 : b * b) * h * w, w, (dcr ? b * c : b) * h * w, 1,
      (dcr ? c : 1) * h * w};
  lower_strided_copy(lw, node, index, strided_copy_6d(node, dims, strides));
}

}  // namespace
TESSERA_OPENCL_OP("DepthToSpace", check, lower);
}  // namespace tessera::opencl
