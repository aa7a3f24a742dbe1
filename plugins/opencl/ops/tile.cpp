// Tile: the output axis of size r * d (d the input's, r its repeat) walked as two axes (r, d),
// the first reading stride 0 and the second the input's stride, so the shared strided copy
// repeats the input with no kernel of its own. Repeats are a constant input; the axes with
// r > 1 plus the rank must fit the copy's 6 dims (Tile in exported vision and speech models
// repeats one or two axes of a rank <= 4 tensor).
#include <array>
#include <climits>
#include <vector>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

struct TileWalk {
  std::vector<int64_t> dims, strides;  // the output as (r, d) pairs, r = 1 pairs dropped
};

std::optional<TileWalk> tile_walk(const NodeView& node, std::string* why) {
  const tsr_tensor& x = node.input(0);
  const auto repeats = support::constant_int_vector(node, 1);
  if (!repeats) {
    *why = "repeats is not a constant";
    return std::nullopt;
  }
  if (static_cast<int64_t>(repeats->size()) != x.rank) {
    *why = "repeats has " + std::to_string(repeats->size()) + " values for rank " +
           std::to_string(x.rank);
    return std::nullopt;
  }
  TileWalk walk;
  const auto strides = support::row_major_strides(x);
  for (int32_t d = 0; d < x.rank; ++d) {
    const int64_t r = (*repeats)[static_cast<size_t>(d)];
    if (r < 0) {
      *why = "negative repeat";
      return std::nullopt;
    }
    if (r != 1) {
      walk.dims.push_back(r);
      walk.strides.push_back(0);
    }
    walk.dims.push_back(x.dims[d]);
    walk.strides.push_back(strides[static_cast<size_t>(d)]);
  }
  if (walk.dims.size() > static_cast<size_t>(support::kMaxStridedRank)) {
    *why = "the rank plus the repeated axes exceed the strided copy's " +
           std::to_string(support::kMaxStridedRank) + " dims";
    return std::nullopt;
  }
  return walk;
}

std::string check(const NodeView& node, const Device&) {
  if (node.num_inputs() != 2 || !node.has_input(1)) return "expects input and repeats";
  const std::string s = support::check_strided_io(node);
  if (!s.empty()) return s;
  if (plugin::tensor_numel(node.output(0)) > INT_MAX) {
    return "more output elements than 32-bit kernel indexing";
  }
  std::string why;
  return tile_walk(node, &why) ? "" : why;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  std::string why;
  const TileWalk walk = *tile_walk(node, &why);
  std::array<int64_t, 6> dims{1, 1, 1, 1, 1, 1}, strides{};
  const size_t pad = dims.size() - walk.dims.size();
  for (size_t d = 0; d < walk.dims.size(); ++d) {
    dims[pad + d] = walk.dims[d];
    strides[pad + d] = walk.strides[d];
  }
  lower_strided_copy(lw, node, index, strided_copy_6d(node, dims, strides));
}

}  // namespace
TESSERA_OPENCL_OP("Tile", check, lower);
}  // namespace tessera::opencl
