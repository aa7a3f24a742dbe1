// Transpose on the mali plugin: any permutation of up to 4 axes (channel shuffles, the NCHW <->
// NHWC moves around channels-last LayerNorms): the strided copy (kernels/strided.cl) on NCHW.
#include <array>

#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

// The permutation: the attribute, or the reversed axes when it is absent (ONNX's default).
std::vector<int64_t> permutation(const NodeView& node) {
  const int32_t rank = node.input(0).rank;
  std::vector<int64_t> reversed;
  for (int32_t d = rank - 1; d >= 0; --d) reversed.push_back(d);
  return node.attr_ints("perm", reversed);
}

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  const int32_t rank = node.input(0).rank;
  if (rank > 4) return "rank " + std::to_string(rank) + " (at most 4 is implemented)";
  const std::vector<int64_t> perm = permutation(node);
  std::vector<char> seen(static_cast<size_t>(rank), 0);
  if (static_cast<int32_t>(perm.size()) != rank) return "perm does not list every axis";
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) return "perm is not a permutation";
    seen[static_cast<size_t>(p)] = 1;
  }
  if (numel_of(node.input(0)) > INT_MAX) return "more elements than 32-bit kernel indexing";
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int32_t rank = x.rank;
  const std::vector<int64_t> perm = permutation(node);
  // Input strides (row-major), then each output axis' stride, both padded on the left to 4.
  std::array<int64_t, 4> in_stride{};
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    in_stride[static_cast<size_t>(d)] = stride;
    stride *= x.dims[d];
  }
  std::array<int32_t, 4> od = {1, 1, 1, 1}, xs = {0, 0, 0, 0};
  for (int32_t d = 0; d < rank; ++d) {
    const size_t slot = static_cast<size_t>(4 - rank + d);
    const int64_t from = perm[static_cast<size_t>(d)];
    od[slot] = to_i32(x.dims[from], node);
    xs[slot] = to_i32(in_stride[static_cast<size_t>(from)], node);
  }
  lower_strided_copy(lw, node, index, od, xs, 0);
}

}  // namespace
TESSERA_MALI_OP("Transpose", check, lower);
}  // namespace tessera::mali
