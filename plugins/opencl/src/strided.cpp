// Definitions of the strided-copy lowerings (Transpose, Slice, Split, Concat, Gather, Expand,
// Pad) declared in tessera_opencl/strided.hpp.
#include "tessera_opencl/strided.hpp"

#include <algorithm>
#include <climits>

namespace tessera::opencl::support {

std::vector<int64_t> transpose_permutation(const NodeView& node) {
  const int32_t rank = node.input(0).rank;
  std::vector<int64_t> reversed;
  for (int32_t d = rank - 1; d >= 0; --d) reversed.push_back(d);
  return node.attr_ints("perm", reversed);
}

std::string check_strided_io(const NodeView& node) {
  if (!node.has_input(0) || node.num_outputs() < 1 || node.output_index(0) < 0) {
    return "input 0 or output 0 missing";
  }
  std::string r = check_data_tensor(node.input(0), "input 0");
  if (!r.empty()) return r;
  r = check_data_tensor(node.output(0), "output 0");
  if (!r.empty()) return r;
  if (node.output(0).dtype != node.input(0).dtype) return "output 0's dtype differs from input 0's";
  const int32_t rank = node.input(0).rank;
  if (rank < 1 || rank > kMaxStridedRank) {
    return "rank " + std::to_string(rank) + " (1 to " + std::to_string(kMaxStridedRank) +
           " is implemented)";
  }
  if (plugin::tensor_numel(node.input(0)) > INT_MAX) {
    return "more elements than 32-bit kernel indexing";
  }
  return "";
}

std::string check_transpose(const NodeView& node) {
  const std::string r = check_strided_io(node);
  if (!r.empty()) return r;
  const int32_t rank = node.input(0).rank;
  const std::vector<int64_t> perm = transpose_permutation(node);
  if (static_cast<int32_t>(perm.size()) != rank) return "perm does not list every axis";
  std::vector<char> seen(static_cast<size_t>(rank), 0);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) return "perm is not a permutation";
    seen[static_cast<size_t>(p)] = 1;
  }
  return "";
}

StridedCopy transpose_copy(const NodeView& node) {
  const tsr_tensor& x = node.input(0);
  const int32_t rank = x.rank;
  const std::vector<int64_t> perm = transpose_permutation(node);
  std::array<int64_t, kMaxStridedRank> in_stride{};
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    in_stride[static_cast<size_t>(d)] = stride;
    stride *= x.dims[d];
  }
  StridedCopy c;
  for (int32_t d = 0; d < rank; ++d) {
    const size_t slot = static_cast<size_t>(kMaxStridedRank - rank + d);
    const int64_t from = perm[static_cast<size_t>(d)];
    c.dims[slot] = to_i32(x.dims[from], node);
    c.strides[slot] = to_i32(in_stride[static_cast<size_t>(from)], node);
  }
  return c;
}

std::optional<std::vector<int64_t>> constant_int_vector(const NodeView& node, int32_t i) {
  if (!node.has_input(i)) return std::nullopt;
  const tsr_tensor& t = node.input(i);
  if (t.data == nullptr || t.rank != 1) return std::nullopt;
  std::vector<int64_t> out(static_cast<size_t>(t.dims[0]));
  for (size_t k = 0; k < out.size(); ++k) {
    if (t.dtype == TSR_DTYPE_INT64) {
      out[k] = static_cast<const int64_t*>(t.data)[k];
    } else if (t.dtype == TSR_DTYPE_INT32) {
      out[k] = static_cast<const int32_t*>(t.data)[k];
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<SliceSpec> slice_spec(const NodeView& node, std::string* why) {
  const tsr_tensor& x = node.input(0);
  std::vector<int64_t> starts, axes, steps;
  if (node.opset() < 10) {
    starts = node.attr_ints("starts", {});
    axes = node.attr_ints("axes", {});
  } else {
    const auto s = constant_int_vector(node, 1);
    if (!s) {
      *why = "starts must be a constant int vector";
      return std::nullopt;
    }
    starts = *s;
    for (const auto& [i, what, out] :
         {std::tuple<int32_t, const char*, std::vector<int64_t>*>{3, "axes", &axes},
          std::tuple<int32_t, const char*, std::vector<int64_t>*>{4, "steps", &steps}}) {
      if (!node.has_input(i)) continue;
      const auto v = constant_int_vector(node, i);
      if (!v) {
        *why = std::string(what) + " must be a constant int vector";
        return std::nullopt;
      }
      *out = *v;
    }
  }
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    *why = "starts, axes and steps differ in length";
    return std::nullopt;
  }
  SliceSpec spec;
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axes[k];
    if (axis < 0) axis += x.rank;
    if (axis < 0 || axis >= x.rank || steps[k] == 0) {
      *why = "an axis is out of range or a step is 0";
      return std::nullopt;
    }
    const int64_t dim = x.dims[axis];
    int64_t start = starts[k] < 0 ? starts[k] + dim : starts[k];
    start = steps[k] > 0 ? std::clamp<int64_t>(start, 0, dim)
                         : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    spec.start[static_cast<size_t>(axis)] = start;
    spec.step[static_cast<size_t>(axis)] = steps[k];
  }
  return spec;
}

std::string check_slice(const NodeView& node) {
  const std::string r = check_strided_io(node);
  if (!r.empty()) return r;
  std::string why;
  return slice_spec(node, &why) ? "" : why;
}

StridedCopy slice_copy(const NodeView& node) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  std::string why;
  const SliceSpec spec = *slice_spec(node, &why);
  StridedCopy c;
  int64_t stride = 1, base = 0;
  for (int32_t d = x.rank - 1; d >= 0; --d) {
    const size_t slot = static_cast<size_t>(kMaxStridedRank - x.rank + d);
    c.dims[slot] = to_i32(y.dims[d], node);
    c.strides[slot] = to_i32(stride * spec.step[static_cast<size_t>(d)], node);
    base += stride * spec.start[static_cast<size_t>(d)];
    stride *= x.dims[d];
  }
  c.base = to_i32(base, node);
  return c;
}

std::array<int64_t, kMaxStridedRank> row_major_strides(const tsr_tensor& t) {
  std::array<int64_t, kMaxStridedRank> s{};
  int64_t stride = 1;
  for (int32_t d = t.rank - 1; d >= 0; --d) {
    s[static_cast<size_t>(d)] = stride;
    stride *= t.dims[d];
  }
  return s;
}

int64_t split_axis(const NodeView& node) {
  const int64_t axis = node.attr_int("axis", 0);
  return axis < 0 ? axis + node.input(0).rank : axis;
}

std::string check_split(const NodeView& node) {
  const std::string r = check_strided_io(node);
  if (!r.empty()) return r;
  const int64_t axis = split_axis(node);
  const tsr_tensor& x = node.input(0);
  if (axis < 0 || axis >= x.rank) return "axis out of range";
  int64_t total = 0;
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output_index(i) < 0) return "output " + std::to_string(i) + " is missing";
    const tsr_tensor& y = node.output(i);
    if (y.dtype != x.dtype || y.rank != x.rank) return "outputs must match the input";
    total += y.dims[axis];
  }
  if (total != x.dims[axis]) return "the outputs' sizes do not add up to the input's";
  return "";
}

StridedCopy axis_slab(const NodeView& node, const tsr_tensor& whole, const tsr_tensor& part,
                      int64_t axis, int64_t offset) {
  const auto strides = row_major_strides(whole);
  StridedCopy c;
  for (int32_t d = 0; d < whole.rank; ++d) {
    const size_t slot = static_cast<size_t>(kMaxStridedRank - whole.rank + d);
    c.dims[slot] = to_i32(part.dims[d], node);
    c.strides[slot] = to_i32(strides[static_cast<size_t>(d)], node);
  }
  c.base = to_i32(offset * strides[static_cast<size_t>(axis)], node);
  return c;
}

StridedCopy split_copy(const NodeView& node, int32_t output) {
  const int64_t axis = split_axis(node);
  int64_t offset = 0;
  for (int32_t i = 0; i < output; ++i) offset += node.output(i).dims[axis];
  return axis_slab(node, node.input(0), node.output(output), axis, offset);
}

std::optional<int64_t> gather_index(const NodeView& node, std::string* why) {
  if (!node.has_input(1) || !node.input(1).data || plugin::tensor_numel(node.input(1)) != 1 ||
      node.input(1).rank > 1) {
    *why = "only one constant index (a scalar or a one-element vector) is supported";
    return std::nullopt;
  }
  const tsr_tensor& t = node.input(1);
  int64_t idx = 0;
  if (t.dtype == TSR_DTYPE_INT64) {
    idx = static_cast<const int64_t*>(t.data)[0];
  } else if (t.dtype == TSR_DTYPE_INT32) {
    idx = static_cast<const int32_t*>(t.data)[0];
  } else {
    *why = "indices must be int32 or int64";
    return std::nullopt;
  }
  const int64_t axis = split_axis(node);
  const int64_t dim = node.input(0).dims[axis];
  if (idx < -dim || idx >= dim) {
    *why = "index out of range";
    return std::nullopt;
  }
  return idx < 0 ? idx + dim : idx;
}

std::string check_gather(const NodeView& node) {
  const std::string r = check_strided_io(node);
  if (!r.empty()) return r;
  const int64_t axis = split_axis(node);
  if (axis < 0 || axis >= node.input(0).rank) return "axis out of range";
  std::string why;
  return gather_index(node, &why) ? "" : why;
}

bool gather_one_index(const NodeView& node) {
  return node.has_input(1) && plugin::tensor_numel(node.input(1)) == 1 && node.input(1).rank <= 1;
}

StridedCopy gather_copy(const NodeView& node) {
  const tsr_tensor& x = node.input(0);
  const int64_t axis = split_axis(node);
  std::string why;
  const int64_t idx = *gather_index(node, &why);
  const auto in = row_major_strides(x);
  const bool keep = node.input(1).rank == 1;
  std::vector<int64_t> dims, strides;
  for (int32_t d = 0; d < x.rank; ++d) {
    if (d == axis && !keep) continue;
    dims.push_back(d == axis ? 1 : x.dims[d]);
    strides.push_back(in[static_cast<size_t>(d)]);
  }
  StridedCopy c;
  const size_t rank = dims.size();
  for (size_t d = 0; d < rank; ++d) {
    c.dims[kMaxStridedRank - rank + d] = to_i32(dims[d], node);
    c.strides[kMaxStridedRank - rank + d] = to_i32(strides[d], node);
  }
  c.base = to_i32(idx * in[static_cast<size_t>(axis)], node);
  return c;
}

std::string check_expand(const NodeView& node) {
  std::string r = check_strided_io(node);
  if (!r.empty()) return r;
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  if (y.rank > kMaxStridedRank || x.rank > y.rank) return "rank above 6";
  if (!broadcasts_to(x, y)) return "input does not broadcast to the output";
  if (plugin::tensor_numel(y) > INT_MAX) return "more elements than 32-bit kernel indexing";
  return "";
}

bool broadcasts_to(const tsr_tensor& x, const tsr_tensor& y) {
  if (x.rank > y.rank) return false;
  for (int32_t d = 0; d < x.rank; ++d) {
    const int64_t xd = x.dims[d], yd = y.dims[y.rank - x.rank + d];
    if (xd != yd && xd != 1) return false;
  }
  return true;
}

StridedCopy broadcast_walk(const NodeView& node, const tsr_tensor& in, const tsr_tensor& out) {
  const auto strides = row_major_strides(in);
  StridedCopy c;
  for (int32_t d = 0; d < out.rank; ++d) {
    const size_t slot = static_cast<size_t>(kMaxStridedRank - out.rank + d);
    c.dims[slot] = to_i32(out.dims[d], node);
    const int32_t xd = d - (out.rank - in.rank);
    c.strides[slot] =
        xd >= 0 && in.dims[xd] != 1 ? to_i32(strides[static_cast<size_t>(xd)], node) : 0;
  }
  return c;
}

StridedCopy expand_copy(const NodeView& node) {
  return broadcast_walk(node, node.input(0), node.output(0));
}

std::optional<PadCopy> pad_copy(const NodeView& node, std::string* why) {
  const tsr_tensor& x = node.input(0);
  const int32_t rank = x.rank;
  std::vector<int64_t> pads;
  float value = 0.0f;
  if (node.opset() < 11) {
    pads = node.attr_ints("pads", {});
    value = node.attr_float("value", 0.0f);
  } else {
    const auto p = constant_int_vector(node, 1);
    if (!p) {
      *why = "pads must be a constant int vector";
      return std::nullopt;
    }
    pads = *p;
    if (node.num_inputs() > 2 && node.has_input(2)) {
      const tsr_tensor& v = node.input(2);
      if (!v.data || v.dtype != TSR_DTYPE_FLOAT32 || plugin::tensor_numel(v) != 1) {
        *why = "the pad value must be a constant float scalar";
        return std::nullopt;
      }
      value = static_cast<const float*>(v.data)[0];
    }
  }
  std::vector<int64_t> axes;
  if (node.num_inputs() > 3 && node.has_input(3)) {
    const auto a = constant_int_vector(node, 3);
    if (!a) {
      *why = "axes must be a constant int vector";
      return std::nullopt;
    }
    axes = *a;
  } else {
    for (int32_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    *why = "pads must hold two values per padded axis";
    return std::nullopt;
  }
  const std::string mode = node.attr_string("mode", "constant");
  PadCopy c;
  c.mode = mode == "constant" ? 0 : mode == "reflect" ? 1 : mode == "edge" ? 2 : -1;
  if (c.mode < 0) {
    *why = "mode '" + mode + "' is not supported";
    return std::nullopt;
  }
  c.value = value;
  const size_t off = static_cast<size_t>(kMaxStridedRank - rank);
  for (int32_t d = 0; d < rank; ++d) {
    c.in_dims[off + d] = to_i32(x.dims[d], node);
    c.out_dims[off + d] = to_i32(node.output(0).dims[d], node);
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank) {
      *why = "an axis is out of range";
      return std::nullopt;
    }
    const int64_t b = pads[k], e = pads[k + axes.size()];
    if (b < 0 || e < 0) {
      *why = "negative pads (cropping) are not supported";
      return std::nullopt;
    }
    if (c.mode != 0 && x.dims[axis] == 0 && (b > 0 || e > 0)) {
      *why = "reflect or edge padding of an empty axis";
      return std::nullopt;
    }
    if (c.mode == 1 && (b >= x.dims[axis] || e >= x.dims[axis])) {
      *why = "reflect pads must be smaller than the padded dim";
      return std::nullopt;
    }
    c.before[off + static_cast<size_t>(axis)] = to_i32(b, node);
  }
  return c;
}

std::string check_pad(const NodeView& node) {
  const std::string r = check_strided_io(node);
  if (!r.empty()) return r;
  // The pad value is a float kernel argument.
  if (node.input(0).dtype != TSR_DTYPE_FLOAT32) return "input 0 is not float32";
  if (plugin::tensor_numel(node.output(0)) > INT_MAX) {
    return "more elements than 32-bit kernel indexing";
  }
  std::string why;
  return pad_copy(node, &why) ? "" : why;
}

std::optional<std::pair<int64_t, int64_t>> trailing_reduction(const NodeView& node,
                                                              std::string* why) {
  const auto axes = reduced_axes(node, why);
  if (!axes) return std::nullopt;
  const tsr_tensor& x = node.input(0);
  for (size_t k = 0; k < axes->size(); ++k) {
    if ((*axes)[k] != x.rank - static_cast<int64_t>(axes->size()) + static_cast<int64_t>(k)) {
      *why = "only a reduction over the trailing axes is implemented";
      return std::nullopt;
    }
  }
  int64_t cols = 1;
  for (int64_t a : *axes) cols *= x.dims[a];
  return std::make_pair(cols == 0 ? 0 : plugin::tensor_numel(x) / cols, cols);
}

int64_t concat_axis(const NodeView& node) {
  const int64_t axis = node.attr_int("axis", 0);
  return axis < 0 ? axis + node.output(0).rank : axis;
}

std::string check_concat(const NodeView& node) {
  if (node.num_outputs() < 1 || node.output_index(0) < 0) return "output 0 missing";
  const tsr_tensor& y = node.output(0);
  std::string r = check_float_tensor(y, "output 0", "");
  if (!r.empty()) return r;
  if (y.rank < 1 || y.rank > kMaxStridedRank) return "rank above 6";
  const int64_t axis = concat_axis(node);
  if (axis < 0 || axis >= y.rank) return "axis out of range";
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i) || node.input(i).rank != y.rank) return "inputs must match the output";
    r = check_float_tensor(node.input(i), "input " + std::to_string(i), "");
    if (!r.empty()) return r;
  }
  if (plugin::tensor_numel(y) > INT_MAX) return "more elements than 32-bit kernel indexing";
  return "";
}

StridedCopy concat_store(const NodeView& node, int32_t input) {
  const int64_t axis = concat_axis(node);
  int64_t offset = 0;
  for (int32_t i = 0; i < input; ++i) offset += node.input(i).dims[axis];
  return axis_slab(node, node.output(0), node.input(input), axis, offset);
}

void bind_strided_copy(const Kernel& k, cl_mem in, cl_mem out, int32_t n, const StridedCopy& c) {
  k.args().buffer(in).buffer(out).i32(n).i32x8(c.dims).i32x8(c.strides).i32(c.base);
}

void bind_pad(const Kernel& k, cl_mem in, cl_mem out, int32_t n, const PadCopy& p) {
  k.args()
      .buffer(in)
      .buffer(out)
      .i32(n)
      .i32x8(p.out_dims)
      .i32x8(p.in_dims)
      .i32x8(p.before)
      .i32(p.mode)
      .f32(p.value);
}

}  // namespace tessera::opencl::support
