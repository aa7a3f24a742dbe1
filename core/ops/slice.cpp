// Slice: numpy-style x[start:end:step] on selected axes. Opsets 1-9 take attributes starts,
// ends and axes (step 1); from opset 10 they are inputs starts, ends, axes?, steps? (constants
// here, since the output shape depends on them). Negative starts/ends count from the end and
// are clamped like the ONNX spec: to [0, dim] for positive steps, [-1, dim - 1] for negative
// ones (start to [0, dim - 1]). Any dtype.
#include <algorithm>
#include <cstring>

#include "op.hpp"
#include "util/axes.hpp"

namespace tessera::ops {
namespace {

// Per input dim: first index, step and output length.
struct SliceDims {
  std::vector<int64_t> start;
  std::vector<int64_t> step;
  Shape out;
};

SliceDims resolve_slice(const Shape& in, const std::vector<int64_t>& starts,
                        const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                        std::vector<int64_t> steps, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    throw Error(where + ": 'starts' " + shape_str(starts) + ", 'ends' " + shape_str(ends) +
                ", 'axes' " + shape_str(axes) + " and 'steps' " + shape_str(steps) +
                " must have the same length");
  }
  axes = normalize_axes(axes, rank, where, "'axes'");
  SliceDims dims{std::vector<int64_t>(in.size(), 0), std::vector<int64_t>(in.size(), 1), in};
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t a = static_cast<size_t>(axes[i]);
    const int64_t dim = in[a];
    const int64_t step = steps[i];
    if (step == 0) throw Error(where + ": 'steps' " + shape_str(steps) + " contains 0");
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    // The length is 1 + (span - 1) / |step| for a span of at least one index: span is at most
    // dim + 1, so nothing overflows for any step, INT64_MAX and INT64_MIN included (|INT64_MIN|
    // is taken as unsigned). ONNX Runtime and numpy give one element for such steps.
    int64_t len = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start) len = (end - start - 1) / step + 1;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      const uint64_t magnitude = uint64_t{0} - static_cast<uint64_t>(step);
      if (start > end) {
        len = static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / magnitude) + 1;
      }
    }
    dims.start[a] = start;
    dims.step[a] = step;
    dims.out[a] = len;
  }
  return dims;
}

// The four index lists, from attributes (opset < 10) or from constant inputs.
struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};

std::vector<int64_t> index_list(const Tensor& t, const std::string& where, const char* name) {
  if (t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32) {
    throw Error(where + ": input '" + name + "' must be int32 or int64, got " +
                dtype_name(t.dtype()));
  }
  if (t.rank() != 1) {
    throw Error(where + ": input '" + name + "' must be 1-D, got " + shape_str(t.shape()));
  }
  return t.to_int64_vector();
}

void infer_slice(InferContext& ctx) {
  SliceArgs args;
  if (ctx.opset < 10) {
    ctx.expect_inputs(1, 1);
    args.starts = ctx.node.attrs.get_ints("starts");
    args.ends = ctx.node.attrs.get_ints("ends");
    args.axes = ctx.node.attrs.get_ints("axes", {});
  } else {
    ctx.expect_inputs(3, 5);
    args.starts = index_list(ctx.constant_input(1), ctx.where, "starts");
    args.ends = index_list(ctx.constant_input(2), ctx.where, "ends");
    if (ctx.has_input(3)) args.axes = index_list(ctx.constant_input(3), ctx.where, "axes");
    if (ctx.has_input(4)) args.steps = index_list(ctx.constant_input(4), ctx.where, "steps");
  }
  const SliceDims dims =
      resolve_slice(ctx.input(0).shape, args.starts, args.ends, args.axes, args.steps, ctx.where);
  ctx.outputs[0] = {ctx.input(0).dtype, dims.out};
}

void compute_slice(ComputeContext& ctx) {
  const std::string where = "node '" + ctx.node.name + "' (Slice)";
  SliceArgs args;
  if (ctx.opset < 10) {
    args.starts = ctx.node.attrs.get_ints("starts");
    args.ends = ctx.node.attrs.get_ints("ends");
    args.axes = ctx.node.attrs.get_ints("axes", {});
  } else {
    args.starts = index_list(ctx.input(1), where, "starts");
    args.ends = index_list(ctx.input(2), where, "ends");
    if (ctx.has_input(3)) args.axes = index_list(ctx.input(3), where, "axes");
    if (ctx.has_input(4)) args.steps = index_list(ctx.input(4), where, "steps");
  }
  const Tensor& x = ctx.input(0);
  const SliceDims dims =
      resolve_slice(x.shape(), args.starts, args.ends, args.axes, args.steps, where);
  Tensor& y = ctx.outputs[0];
  const std::vector<int64_t> in_strides = shape_strides(x.shape());
  const std::vector<int64_t> out_strides = shape_strides(y.shape());
  const size_t size = dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw());
  auto* dst = static_cast<std::byte*>(y.raw());
  for (int64_t i = 0; i < y.numel(); ++i) {
    // Output coordinate c on dim d reads input index start[d] + c * step[d].
    int64_t offset = 0;
    for (size_t d = 0; d < out_strides.size(); ++d) {
      const int64_t coord = (i / out_strides[d]) % y.shape()[d];
      // coord * step lies within the slice's span (at most dim): a coord above 0 exists only
      // when |step| is below the span.
      offset += (dims.start[d] + coord * dims.step[d]) * in_strides[d];
    }
    std::memcpy(dst + static_cast<size_t>(i) * size, src + static_cast<size_t>(offset) * size,
                size);
  }
}

}  // namespace

TESSERA_REGISTER_OP("Slice", infer_slice, compute_slice);

}  // namespace tessera::ops
