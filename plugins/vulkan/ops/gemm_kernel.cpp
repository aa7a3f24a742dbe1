// Dispatch of shaders/matmul.comp (schedule matmul.tiled).
#include "ops/gemm_kernel.hpp"

#include "schedules.hpp"

namespace tessera::vulkan {

void dispatch_gemm(Lowering& lowering, const NodeView& node, const GemmShape& s, const Buffer& a,
                   const Buffer& b, const Buffer* c) {
  int32_t out = node.output_index(0);
  const Activation act = fuse_activation(lowering, node, out);
  const int32_t tile = gemm_tile(lowering.config(node.index()), "matmul.tiled", s.m, s.n);
  auto n32 = [&node](int64_t v) { return narrow(v, node, "a shape or stride"); };
  Kernel k;
  k.shader = "matmul";
  k.constants = {tile,
                 n32(s.m),
                 n32(s.n),
                 n32(s.k),
                 n32(s.b2),
                 n32(s.a_b1),
                 n32(s.a_b2),
                 n32(s.a_m),
                 n32(s.a_k),
                 n32(s.b_b1),
                 n32(s.b_b2),
                 n32(s.b_k),
                 n32(s.b_n),
                 s.has_c ? 1 : 0,
                 n32(s.c_m),
                 n32(s.c_n),
                 float_bits(s.alpha),
                 float_bits(s.beta),
                 act.code,
                 float_bits(act.a),
                 float_bits(act.b)};
  k.groups[0] = static_cast<uint32_t>((s.n + tile - 1) / tile);
  k.groups[1] = static_cast<uint32_t>((s.m + tile - 1) / tile);
  k.groups[2] = static_cast<uint32_t>(s.b1 * s.b2);
  lowering.dispatch(node, k, {&a, &b, c != nullptr ? c : &lowering.dummy()},
                    {&lowering.buffer(out)});
}

}  // namespace tessera::vulkan
