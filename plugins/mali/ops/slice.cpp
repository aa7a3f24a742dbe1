// Slice on the mali plugin: constant starts, ends, axes and steps (inputs from opset 10, the
// attributes before), any sign of step, rank <= 4: the strided copy (kernels/strided.cl) on NCHW.
// Starts are clamped as ONNX says; the output shape is core's (shape inference).
#include <array>
#include <optional>

#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

struct SliceSpec {
  std::array<int64_t, 4> start{};  // per input axis: the first element taken
  std::array<int64_t, 4> step{};   // per input axis
};

// Constant int32/int64 input i as int64 values, or nullopt.
std::optional<std::vector<int64_t>> constant_ints(const NodeView& node, int32_t i) {
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

// The slice's per-axis first element and step, or nullopt with `why`.
std::optional<SliceSpec> spec_of(const NodeView& node, std::string* why) {
  const tsr_tensor& x = node.input(0);
  std::vector<int64_t> starts, axes, steps;
  if (node.opset() < 10) {
    starts = node.attr_ints("starts", {});
    axes = node.attr_ints("axes", {});
  } else {
    const auto s = constant_ints(node, 1);
    if (!s) {
      *why = "starts must be a constant int vector";
      return std::nullopt;
    }
    starts = *s;
    if (node.has_input(3)) {
      const auto a = constant_ints(node, 3);
      if (!a) {
        *why = "axes must be a constant int vector";
        return std::nullopt;
      }
      axes = *a;
    }
    if (node.has_input(4)) {
      const auto st = constant_ints(node, 4);
      if (!st) {
        *why = "steps must be a constant int vector";
        return std::nullopt;
      }
      steps = *st;
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
  spec.step = {1, 1, 1, 1};
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

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  const std::string io = check_float_data_io(node);
  if (!io.empty()) return io;
  const int32_t rank = node.input(0).rank;
  if (rank < 1 || rank > 4) return "rank " + std::to_string(rank) + " (1 to 4 is implemented)";
  if (numel_of(node.input(0)) > INT_MAX) return "more elements than 32-bit kernel indexing";
  std::string why;
  if (!spec_of(node, &why)) return why;
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  std::string why;
  const SliceSpec spec = *spec_of(node, &why);
  std::array<int32_t, 4> od = {1, 1, 1, 1}, xs = {0, 0, 0, 0};
  int64_t stride = 1, base = 0;
  for (int32_t d = x.rank - 1; d >= 0; --d) {
    const size_t slot = static_cast<size_t>(4 - x.rank + d);
    od[slot] = to_i32(y.dims[d], node);
    xs[slot] = to_i32(stride * spec.step[static_cast<size_t>(d)], node);
    base += stride * spec.start[static_cast<size_t>(d)];
    stride *= x.dims[d];
  }
  lower_strided_copy(lw, node, index, od, xs, to_i32(base, node));
}

}  // namespace
TESSERA_MALI_OP("Slice", check, lower);
}  // namespace tessera::mali
