// Gemm on the adreno plugin: 2-D operands do not fit the texture layout, so this runs on NCHW
// buffers (image inputs converted): alpha * op(A) * op(B) + beta * C, C broadcast from rank <= 2.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.num_inputs() < 2) return "expects A and B";
  if (node.input(0).rank != 2 || node.input(1).rank != 2) return "A and B must be 2-D";
  if (node.num_inputs() > 2 && node.has_input(2) && node.input(2).rank > 2) {
    return "C must have rank <= 2";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const bool trans_a = node.attr_int("transA", 0) != 0;
  const bool trans_b = node.attr_int("transB", 0) != 0;
  const tsr_tensor& y = node.output(0);
  const int64_t M = y.dims[0], N = y.dims[1];
  const tsr_tensor& a = node.input(0);
  const int64_t K = trans_a ? a.dims[0] : a.dims[1];
  const bool has_c = node.num_inputs() > 2 && node.has_input(2);
  int32_t cm = 0, cn = 0;
  if (has_c) {
    const tsr_tensor& ct = node.input(2);
    const int64_t rows = ct.rank == 2 ? ct.dims[0] : 1;
    const int64_t cols = ct.rank >= 1 ? ct.dims[ct.rank - 1] : 1;
    cm = rows == 1 ? 0 : to_i32(cols, node);
    cn = cols == 1 ? 0 : 1;
  }
  const Config config = lw.config_for("gemm.buffer", N);
  opencl::Kernel k = lw.kernel(config);
  cl_mem ab = lw.input_buffer(node.input_id(0), index);
  cl_mem bb = lw.input_buffer(node.input_id(1), index);
  cl_mem cb = has_c ? lw.input_buffer(node.input_id(2), index) : ab;  // unused without C
  k.args()
      .buffer(ab)
      .buffer(bb)
      .buffer(cb)
      .buffer(lw.output_buffer(node.output_id(0), index))
      .i32(to_i32(M, node))
      .i32(to_i32(N, node))
      .i32(to_i32(K, node))
      .i32x4(trans_a ? 1 : to_i32(K, node), trans_a ? to_i32(M, node) : 1,
             trans_b ? 1 : to_i32(N, node), trans_b ? to_i32(K, node) : 1)
      .i32x4(cm, cn, has_c ? 1 : 0, 0)
      .f32(node.attr_float("alpha", 1.0f))
      .f32(node.attr_float("beta", 1.0f));
  lw.add_step(index, std::move(k), {static_cast<size_t>(N), static_cast<size_t>(M)}, config);
}

}  // namespace
TESSERA_ADRENO_OP("Gemm", check, lower);
}  // namespace tessera::adreno
