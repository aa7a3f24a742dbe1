// NonMaxSuppression: per batch and class, the boxes kept by greedy suppression in descending
// score order (ties: lower box index first): a box whose score is not above score_threshold is
// dropped, and a box is kept when its IoU with every box kept before is not above
// iou_threshold, until max_output_boxes_per_class are kept. Output int64 [count, 3] rows of
// (batch, class, box), batch-major, then class, then the order kept. Boxes are corners
// [y1, x1, y2, x2] in either order (center_point_box = 0) or [x_center, y_center, w, h] (1).
// How many boxes are kept follows from the values, so boxes and scores must be constants to
// infer the shape: a detector runs in stages (a Session binds them before planning the rest).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

struct Corners {
  float y1, x1, y2, x2;
  float area;
};

struct Params {
  int64_t max_per_class = 0;
  float iou_threshold = 0.0f;
  bool has_score_threshold = false;
  float score_threshold = 0.0f;
  bool center = false;
};

Corners corners(const float* b, bool center) {
  Corners c{};
  if (center) {
    // [x_center, y_center, width, height]
    c = {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2, 0.0f};
  } else {
    c = {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3]),
         0.0f};
  }
  c.area = (c.y2 - c.y1) * (c.x2 - c.x1);
  return c;
}

float iou(const Corners& a, const Corners& b) {
  if (a.area <= 0.0f || b.area <= 0.0f) return 0.0f;
  const float h = std::max(0.0f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const float w = std::max(0.0f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const float inter = h * w;
  return inter / (a.area + b.area - inter);
}

// The optional scalar inputs 2-4, which must be constants.
template <typename Ctx>
Params read_params(const Ctx& ctx, const Tensor* max_out, const Tensor* iou_t,
                   const Tensor* score_t) {
  Params p;
  if (max_out != nullptr) p.max_per_class = std::max<int64_t>(0, max_out->scalar_as_int64(0));
  if (iou_t != nullptr) p.iou_threshold = static_cast<float>(iou_t->scalar_as_double(0));
  if (score_t != nullptr) {
    p.has_score_threshold = true;
    p.score_threshold = static_cast<float>(score_t->scalar_as_double(0));
  }
  p.center = ctx.node.attrs.get_int("center_point_box", 0) != 0;
  return p;
}

// Rows (batch, class, box) kept, in output order.
std::vector<int64_t> select(const Tensor& boxes, const Tensor& scores, const Params& p) {
  const int64_t batches = boxes.shape()[0], count = boxes.shape()[1];
  const int64_t classes = scores.shape()[1];
  const float* b = boxes.data<float>();
  const float* s = scores.data<float>();
  std::vector<int64_t> rows;
  std::vector<Corners> boxes_of(static_cast<size_t>(count));
  for (int64_t n = 0; n < batches; ++n) {
    // Each box's corners and area once per batch, not once per comparison.
    for (int64_t i = 0; i < count; ++i) {
      boxes_of[static_cast<size_t>(i)] = corners(b + (n * count + i) * 4, p.center);
    }
    for (int64_t c = 0; c < classes; ++c) {
      const float* sc = s + (n * classes + c) * count;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < count; ++i) {
        if (!p.has_score_threshold || sc[i] > p.score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t x, int64_t y) { return sc[x] > sc[y]; });
      std::vector<Corners> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= p.max_per_class) break;
        const Corners& box = boxes_of[static_cast<size_t>(i)];
        const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](const Corners& k) {
          return iou(k, box) > p.iou_threshold;
        });
        if (suppressed) continue;
        kept.push_back(box);
        rows.insert(rows.end(), {n, c, i});
      }
    }
  }
  return rows;
}

// Shape inference must run the suppression to count the rows, and the kernel then needs the
// same rows: the last result is kept per thread, keyed by the exact inputs (compared byte for
// byte), so folding a detector's NMS of tens of thousands of boxes runs it once, not twice.
struct LastSelection {
  std::string boxes, scores;
  Shape boxes_shape, scores_shape;
  Params params;
  std::vector<int64_t> rows;
};

bool same_params(const Params& a, const Params& b) {
  return a.max_per_class == b.max_per_class && a.iou_threshold == b.iou_threshold &&
         a.has_score_threshold == b.has_score_threshold &&
         a.score_threshold == b.score_threshold && a.center == b.center;
}

const std::vector<int64_t>& selection(const Tensor& boxes, const Tensor& scores,
                                      const Params& p) {
  thread_local LastSelection last;
  const auto bytes = [](const Tensor& t) {
    return std::string(static_cast<const char*>(t.raw()), static_cast<size_t>(t.nbytes()));
  };
  const bool hit = last.boxes_shape == boxes.shape() && last.scores_shape == scores.shape() &&
                   same_params(last.params, p) &&
                   last.boxes.size() == static_cast<size_t>(boxes.nbytes()) &&
                   last.scores.size() == static_cast<size_t>(scores.nbytes()) &&
                   std::memcmp(last.boxes.data(), boxes.raw(), last.boxes.size()) == 0 &&
                   std::memcmp(last.scores.data(), scores.raw(), last.scores.size()) == 0;
  if (!hit) {
    last.rows = select(boxes, scores, p);
    last.boxes = bytes(boxes);
    last.scores = bytes(scores);
    last.boxes_shape = boxes.shape();
    last.scores_shape = scores.shape();
    last.params = p;
  }
  return last.rows;
}

const Tensor* optional_constant(const InferContext& ctx, size_t i) {
  return ctx.has_input(i) ? &ctx.constant_input(i) : nullptr;
}

void infer_non_max_suppression(InferContext& ctx) {
  ctx.expect_inputs(2, 5);
  ctx.expect_dtype(0, {DType::kFloat32});
  ctx.expect_dtype(1, {DType::kFloat32});
  const Shape& bs = ctx.input(0).shape;
  const Shape& ss = ctx.input(1).shape;
  if (bs.size() != 3 || bs[2] != 4) {
    ctx.fail("input 0 (boxes) must be [batches, boxes, 4], got " + shape_str(bs));
  }
  if (ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
    ctx.fail("input 1 (scores) must be [batches, classes, boxes] = [" + std::to_string(bs[0]) +
             ", C, " + std::to_string(bs[1]) + "], got " + shape_str(ss));
  }
  const int64_t center = attr_int(ctx, "center_point_box", 0);
  if (center != 0 && center != 1) {
    ctx.fail("attribute 'center_point_box' must be 0 or 1, got " + std::to_string(center));
  }
  const Params p = read_params(ctx, optional_constant(ctx, 2), optional_constant(ctx, 3),
                               optional_constant(ctx, 4));
  // The count needs the values: the scores first (the usual one computed from data).
  const Tensor& scores = ctx.constant_input(1);
  const Tensor& boxes = ctx.constant_input(0);
  const auto rows = static_cast<int64_t>(selection(boxes, scores, p).size() / 3);
  ctx.outputs[0] = {DType::kInt64, {rows, 3}};
}

void compute_non_max_suppression(ComputeContext& ctx) {
  const auto opt = [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
  const Params p = read_params(ctx, opt(2), opt(3), opt(4));
  const std::vector<int64_t>& rows = selection(ctx.input(0), ctx.input(1), p);
  std::copy(rows.begin(), rows.end(), ctx.outputs[0].data<int64_t>());
}

}  // namespace

TESSERA_REGISTER_OP("NonMaxSuppression", infer_non_max_suppression, compute_non_max_suppression);

}  // namespace tessera::ops
