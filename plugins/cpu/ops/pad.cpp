// Pad (constant, edge, reflect; non-negative pads) on float32: each output row (all axes but
// the last) maps to one source row or to the fill value, and the last axis is a copy with its
// pads written around it.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

struct PadPlan {
  std::string mode;
  float value = 0.0f;
  std::vector<int64_t> in, out, before;  // per axis
};

std::string pad_plan(const RegionView& region, const NodeView& node, PadPlan* plan) {
  const tsr_tensor* x = node.input(0);
  const int64_t rank = x->rank;
  plan->mode = node.attr_string("mode", "constant");
  if (plan->mode != "constant" && plan->mode != "edge" && plan->mode != "reflect") {
    return "mode '" + plan->mode + "' is not implemented";
  }
  std::vector<int64_t> pads, axes;
  if (region.opset() < 11) {
    pads = node.attr_ints("pads", {});
    plan->value = node.attr_float("value", 0.0f);
  } else {
    if (!constant_ints(node.input(1), &pads)) return "pads must be a constant";
    if (node.input_index(2) >= 0) {
      const float* v = constant_f32(node.input(2));
      if (v == nullptr) return "the constant value must be a float32 constant";
      if (numel(*node.input(2)) > 0) plan->value = v[0];
    }
    if (node.input_index(3) >= 0 && !constant_ints(node.input(3), &axes)) {
      return "axes must be a constant";
    }
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) return "pads must hold two values per padded axis";
  plan->in = dims(*x);
  plan->out = dims(*node.output(0));
  plan->before.assign(static_cast<size_t>(rank), 0);
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = normalize_axis(axes[i], rank);
    if (a < 0) return "axis out of range";
    if (pads[i] < 0 || pads[i + n] < 0) return "negative pads (crops) are not implemented";
    if (plan->mode == "reflect" && (pads[i] >= plan->in[static_cast<size_t>(a)] ||
                                    pads[i + n] >= plan->in[static_cast<size_t>(a)])) {
      return "reflect pads must be smaller than the axis";
    }
    plan->before[static_cast<size_t>(a)] = pads[i];
  }
  if (rank == 0) return "scalar input";
  for (int64_t e : plan->in) {
    if (e == 0) return "empty inputs are not implemented";
  }
  return "";
}

// Source index of output index o along an axis, or -1 for the fill value.
int64_t source_index(const std::string& mode, int64_t o, int64_t before, int64_t in) {
  int64_t i = o - before;
  if (i >= 0 && i < in) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return std::min(std::max<int64_t>(i, 0), in - 1);
  // reflect: mirror without repeating the edge
  if (i < 0) return -i;
  return 2 * (in - 1) - i;
}

}  // namespace

std::string query_pad(const RegionView& region, const NodeView& node) {
  if (!is_f32(node.input(0)) || !is_f32(node.output(0))) return "only float32 is implemented";
  PadPlan plan;
  return pad_plan(region, node, &plan);
}

Step build_pad(BuildContext& ctx) {
  auto plan = std::make_shared<PadPlan>();
  pad_plan(ctx.region, ctx.node, plan.get());
  const size_t rank = plan->in.size();
  // The last axis's source index per output column, computed once.
  auto cols = std::make_shared<std::vector<int64_t>>();
  for (int64_t o = 0; o < plan->out.back(); ++o) {
    cols->push_back(source_index(plan->mode, o, plan->before.back(), plan->in.back()));
  }
  const std::vector<int64_t> in_strides = row_major_strides(plan->in);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= plan->out[d];
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    const int64_t width = plan->out.back(), in_width = plan->in.back();
    const int64_t left = plan->before.back();
    const int64_t right = width - left - in_width;
    tbb::parallel_for(int64_t{0}, rows, [&](int64_t row) {
      float* dst = v[out] + row * width;
      int64_t r = row, src = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t i = source_index(plan->mode, r % plan->out[d], plan->before[d], plan->in[d]);
        r /= plan->out[d];
        if (i < 0) {
          std::fill(dst, dst + width, plan->value);
          return;
        }
        src += i * in_strides[d];
      }
      const float* s = v[in] + src;
      if (plan->mode == "constant") {
        std::fill(dst, dst + left, plan->value);
        std::memcpy(dst + left, s, static_cast<size_t>(in_width) * sizeof(float));
        std::fill(dst + left + in_width, dst + left + in_width + right, plan->value);
      } else {
        for (int64_t o = 0; o < width; ++o) dst[o] = s[(*cols)[static_cast<size_t>(o)]];
      }
    });
  };
}

}  // namespace tessera::cpu
