// Lowerings written once and used by several op files: unary activations, broadcasting binary
// ops, buffer aliases, 2-D pooling and matrix products.
#pragma once

#include <array>

#include "ops/op.hpp"
#include "tessera_opencl/strided.hpp"

namespace tessera::mali {

// Codes of unary_f32 in kernels/elementwise.cl.
enum class UnaryOp : int32_t {
  kRelu = 0,
  kClip = 1,
  kLeakyRelu = 2,
  kSigmoid = 3,
  kHardSwish = 4,
  kCopy = 5,
  kHardSigmoid = 6,
  kErf = 7
};
// Runs on input 0's layout (follow_input0). unary_options: its one config (vec, wg_x) for
// TESSERA_MALI_TUNABLE.
std::vector<Config> unary_options(const NodeView& node, const Device& device);
void lower_unary(Lowering& lw, const NodeView& node, int32_t index, UnaryOp op, float a, float b);

// Codes of binary_f32.
enum class BinaryOp : int32_t { kAdd = 0, kMul = 1, kDiv = 2, kSub = 3 };
std::string check_binary(const NodeView& node, const Device& device);
// NCHW4c when both inputs have the output's rank-4 shape and one of them is NCHW4c; broadcasts
// run on NCHW.
StoragePlan binary_layout(const NodeView& node, const Lowering& lw);
std::vector<Config> binary_options(const NodeView& node, const Device& device);
void lower_binary(Lowering& lw, const NodeView& node, int32_t index, BinaryOp op);

// An activation a producer's kernel applies (tsr_activate's codes in kernels/common.cl) and the
// value it then writes.
struct FusedActivation {
  int32_t code = 0;  // 0 none, 1 relu, 2 clip(a, b), 3 leaky relu (a)
  float a = 0.0f, b = 0.0f;
  int32_t output = -1;
};
// When the only consumer of `node`'s output 0 is a Relu, Clip or LeakyRelu and that output is not
// a region output, fuses it (Lowering::fuse: the activation node adds no step) and returns it
// with its output value; otherwise no activation and `node`'s own output. Call before the
// output's buffer is created. `keep_zero`: only activations with f(0) == 0 (a Clip whose range
// excludes 0 stays unfused), for kernels that write padded NCHW4c lanes without masking them.
FusedActivation fuse_activation(Lowering& lw, const NodeView& node, bool keep_zero = false);

// Pads (top, left, bottom, right) of a 2-D window (shared, tessera_opencl/plugin_support.hpp).

// MaxPool/AveragePool (2-D, NCHW or NCHW4c as the input is: follow_input0), one work-item per
// output (per float4 in NCHW4c); `mode` is pool2d_f32's: 0 max, 1 average.
std::string check_pool(const NodeView& node, const Device& device);
void lower_pool(Lowering& lw, const NodeView& node, int32_t index, int32_t mode);

// The mean of every plane (n, c) of input 0 (rank >= 3) into output 0, whose bytes are
// [N, C] whatever its rank: GlobalAveragePool, and ReduceMean over every spatial axis. NCHW or
// NCHW4c as the output is (the op's layout rule decides); global_average_options lists the
// schedules for TESSERA_MALI_TUNABLE.
std::vector<Config> global_average_options(const NodeView& node, const Device& device);
void lower_global_average(Lowering& lw, const NodeView& node, int32_t index);

// The Gemm / 2-D MatMul configs: gemm.split (the reduction split in the work-group) first where
// its heuristic splits, else gemm.naive (one output per work-item) first.
std::vector<Config> gemm_options(const NodeView& node, const Device& device);
// Y(M, N) = alpha * op(A) * op(B) + beta * C, C broadcast from rank <= 2 (value id or -1).
void lower_gemm(Lowering& lw, const NodeView& node, int32_t index, int32_t a, int32_t b, int32_t c,
                bool trans_a, bool trans_b, float alpha, float beta);

}  // namespace tessera::mali
