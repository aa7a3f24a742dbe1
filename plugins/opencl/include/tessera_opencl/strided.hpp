// Transpose and Slice as one strided copy (kernels/strided.cl, shared by the OpenCL plugins):
// the checks and the kernel's arguments for every plugin that runs them on dense row-major (NCHW)
// buffers, compiled once into libtessera-opencl (src/strided.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "tessera_opencl/op_registry.hpp"
#include "tessera_opencl/plugin_support.hpp"

namespace tessera::opencl::support {

inline constexpr int32_t kMaxStridedRank = 6;

// strided_copy_f32's arguments: output dims and the input stride of each output axis, both
// padded on the left to 8 (the kernel reads the first 6), and the input offset of element 0.
struct StridedCopy {
  std::array<int32_t, 8> dims{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<int32_t, 8> strides{};
  int32_t base = 0;
};

// Transpose's permutation: the attribute, or the reversed axes (ONNX's default).
std::vector<int64_t> transpose_permutation(const NodeView& node);

// "" when input 0 / output 0 are float32 of rank <= 6 within 32-bit indexing.
std::string check_strided_io(const NodeView& node);

std::string check_transpose(const NodeView& node);

StridedCopy transpose_copy(const NodeView& node);

// Constant int32/int64 vector input i as int64 values, or nullopt.
std::optional<std::vector<int64_t>> constant_int_vector(const NodeView& node, int32_t i);

// Slice's first element and step per input axis (starts clamped as ONNX says), or nullopt with
// `why`: constant starts/axes/steps (inputs from opset 10, attributes before).
struct SliceSpec {
  std::array<int64_t, kMaxStridedRank> start{};
  std::array<int64_t, kMaxStridedRank> step{1, 1, 1, 1, 1, 1};
};

std::optional<SliceSpec> slice_spec(const NodeView& node, std::string* why);

std::string check_slice(const NodeView& node);

StridedCopy slice_copy(const NodeView& node);

// Row-major strides of `t`.
std::array<int64_t, kMaxStridedRank> row_major_strides(const tsr_tensor& t);

int64_t split_axis(const NodeView& node);

// Split: each output is the input's run of its own size along `axis`, in order (the sizes are
// the outputs' shapes, which core inferred from `split` / num_outputs).
std::string check_split(const NodeView& node);

// The slab of `whole` that `part` occupies along `axis` from `offset` on: `part`'s dims walked
// with `whole`'s strides (Split reads such slabs, Concat writes them).
StridedCopy axis_slab(const NodeView& node, const tsr_tensor& whole, const tsr_tensor& part,
                      int64_t axis, int64_t offset);

StridedCopy split_copy(const NodeView& node, int32_t output);

// Gather of one constant index along `axis` (a scalar index drops the axis, a one-element index
// vector keeps it with size 1): a strided copy starting at that index.
std::optional<int64_t> gather_index(const NodeView& node, std::string* why);

std::string check_gather(const NodeView& node);

// Whether a Gather has one index (the strided copy) rather than an index tensor.
bool gather_one_index(const NodeView& node);

StridedCopy gather_copy(const NodeView& node);

// Expand (numpy broadcast of input 0 to the output's shape): a strided copy whose stride is 0
// along each broadcast axis. The shape input is read by core's shape inference, not here.
std::string check_expand(const NodeView& node);

StridedCopy expand_copy(const NodeView& node);

// Whether `x` broadcasts to `y` (numpy rules: right-aligned, each dim equal or 1).
bool broadcasts_to(const tsr_tensor& x, const tsr_tensor& y);

// `in` read at the coordinates of `out` (numpy broadcasting, stride 0 along `in`'s size-1 and
// missing axes), in the 6 slots of a strided copy; out's rank <= 6. Expand is this walk of
// input 0; Where, the comparisons and integer arithmetic walk each operand so.
StridedCopy broadcast_walk(const NodeView& node, const tsr_tensor& in, const tsr_tensor& out);

// pad_f32's arguments (kernels/pad.cl).
struct PadCopy {
  std::array<int32_t, 8> out_dims{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<int32_t, 8> in_dims{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<int32_t, 8> before{};
  int32_t mode = 0;  // 0 constant, 1 reflect, 2 edge
  float value = 0.0f;
};

// Pad with constant pads (the `pads` attribute before opset 11, inputs after; `axes` from 18),
// non-negative, modes constant / reflect / edge; nullopt with `why`.
std::optional<PadCopy> pad_copy(const NodeView& node, std::string* why);

std::string check_pad(const NodeView& node);

// ReduceL2 / ReduceMean / ReduceSum over the trailing axes (contiguous rows of the input):
// {rows, cols}, or nullopt with `why` when the reduced axes are not the last ones.
std::optional<std::pair<int64_t, int64_t>> trailing_reduction(const NodeView& node,
                                                              std::string* why);

// Concat along any axis (rank <= 6): input `input` stored into the output at its offset along
// the axis, with the output's strides (strided_store_f32).
int64_t concat_axis(const NodeView& node);

std::string check_concat(const NodeView& node);

StridedCopy concat_store(const NodeView& node, int32_t input);

// Binds strided_copy_f32's / pad_f32's arguments (kernels/strided.cl, pad.cl) for `n` output
// elements; each plugin passes its own buffers.
void bind_strided_copy(const Kernel& k, cl_mem in, cl_mem out, int32_t n, const StridedCopy& c);

void bind_pad(const Kernel& k, cl_mem in, cl_mem out, int32_t n, const PadCopy& p);

}  // namespace tessera::opencl::support
