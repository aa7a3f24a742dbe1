// ScatterND with constant indices and no reduction (the in-place slice assignments of exported
// detection heads, e.g. y[..., 0:2] = ...): the output is a copy of the data (the shared strided
// copy), then each update slice is written at its place (kernels/common/strided.cl
// scatter_slices), any dtype by element size, for every OpenCL plugin. Indices are checked here:
// in range, and distinct, since parallel writes to one element would leave either value.
#include <cstring>
#include <set>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kScatter{"scatter.slices", "strided.cl", "scatter_slices", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kScatter);

// The element offset in data of each index tuple's slice, or the reason there is none.
std::optional<std::vector<int64_t>> slice_offsets(const NodeView& node, std::string* why) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& idx = node.input(1);
  const int64_t k = idx.dims[idx.rank - 1];
  if (k < 1 || k > x.rank) {
    *why = "the indices' last dim must be 1 to the data's rank";
    return std::nullopt;
  }
  const auto strides = support::row_major_strides(x);
  const int64_t tuples = plugin::tensor_numel(idx) / k;
  const int64_t* v = static_cast<const int64_t*>(idx.data);
  std::vector<int64_t> offsets(static_cast<size_t>(tuples));
  std::set<int64_t> seen;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = v[t * k + d];
      if (i < 0) i += x.dims[d];
      if (i < 0 || i >= x.dims[d]) {
        *why = "index " + std::to_string(v[t * k + d]) + " out of range for axis " +
               std::to_string(d);
        return std::nullopt;
      }
      off += i * strides[static_cast<size_t>(d)];
    }
    if (!seen.insert(off).second) {
      *why = "two index tuples name the same slice (which update wins is left open)";
      return std::nullopt;
    }
    offsets[static_cast<size_t>(t)] = off;
  }
  return offsets;
}

std::string check(const NodeView& node, const Device&) {
  if (node.num_inputs() != 3 || node.num_outputs() != 1 || node.output_index(0) < 0) {
    return "expects data, indices, updates and one output";
  }
  for (int32_t i = 0; i < 3; ++i) {
    if (!node.has_input(i)) return "input " + std::to_string(i) + " missing";
  }
  if (node.attr_string("reduction", "none") != "none") return "only reduction 'none'";
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& idx = node.input(1);
  const tsr_tensor& up = node.input(2);
  std::string r = support::check_data_tensor(x, "data");
  if (!r.empty()) return r;
  r = support::check_data_tensor(up, "updates");
  if (!r.empty()) return r;
  if (up.dtype != x.dtype) return "updates differ from data in dtype";
  if (x.rank < 1 || x.rank > support::kMaxStridedRank) return "data rank 1 to 6";
  r = check_constant(node, 1, "indices");
  if (!r.empty()) return r;
  if (idx.dtype != TSR_DTYPE_INT64 || idx.rank < 1) return "indices must be int64, rank >= 1";
  std::string why;
  return slice_offsets(node, &why) ? "" : why;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& up = node.input(2);
  // The copy: the data walked onto the output, which has its shape (an identity walk).
  lower_strided_copy(lw, node, index, support::broadcast_walk(node, x, node.output(0)));
  std::string why;
  const std::vector<int64_t> offsets = *slice_offsets(node, &why);
  const int64_t n = plugin::tensor_numel(up);
  if (n == 0) return;
  // The offsets travel as int32 bit patterns in the region's constant memory.
  std::vector<float> bits(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) {
    const int32_t o = to_i32(offsets[i], node);
    std::memcpy(&bits[i], &o, sizeof(o));
  }
  const int64_t slice_len = n / static_cast<int64_t>(offsets.size());
  const Config config = lw.config_for(kScatter.id, n);
  Kernel k = lw.kernel(config, element_defines(x));
  k.args()
      .buffer(lw.buffer(node.input_index(2)))
      .buffer(lw.constant_buffer(bits))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(to_i32(slice_len, node));
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("ScatterND", check, lower);
}  // namespace tessera::opencl
