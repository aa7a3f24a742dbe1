// Softmax / LogSoftmax (both opset semantics) and ReduceMean against hand-worked values.
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

// [2,2,2] whose first half is ln(1..4): exp() of it is 1, 2, 3, 4; the second half is zeros.
Tensor logs() {
  return f32({2, 2, 2}, {0, std::log(2.f), std::log(3.f), std::log(4.f), 0, 0, 0, 0});
}

TEST(Softmax, Opset11FlattensFromAxis) {
  // axis 1 (default) views [2,2,2] as [2,4]: row 0 -> 1,2,3,4 / 10; row 1 -> 1/4 each.
  expect_near(run(make_node("Softmax", 1), 11, {logs()})[0], {2, 2, 2},
              {0.1f, 0.2f, 0.3f, 0.4f, 0.25f, 0.25f, 0.25f, 0.25f});
}

TEST(Softmax, Opset13IsPerAxis) {
  // Default axis -1: pairs (1,2) -> 1/3, 2/3 and (3,4) -> 3/7, 4/7; zeros -> 1/2.
  expect_near(run(make_node("Softmax", 1), 13, {logs()})[0], {2, 2, 2},
              {1 / 3.f, 2 / 3.f, 3 / 7.f, 4 / 7.f, 0.5f, 0.5f, 0.5f, 0.5f});
  // axis 1 at opset 13: pairs along dim 1, (1,3) -> 1/4, 3/4 and (2,4) -> 2/6, 4/6.
  Node node = make_node("Softmax", 1);
  node.attrs.set("axis", int64_t{1});
  expect_near(run(node, 13, {logs()})[0], {2, 2, 2},
              {1 / 4.f, 2 / 6.f, 3 / 4.f, 4 / 6.f, 0.5f, 0.5f, 0.5f, 0.5f});
}

TEST(Softmax, LargeValuesStayFinite) {
  expect_near(run(make_node("Softmax", 1), 13, {f32({2}, {1000, 1000})})[0], {2}, {0.5f, 0.5f});
}

TEST(LogSoftmax, BothOpsetSemantics) {
  expect_near(run(make_node("LogSoftmax", 1), 11, {logs()})[0], {2, 2, 2},
              {std::log(0.1f), std::log(0.2f), std::log(0.3f), std::log(0.4f), std::log(0.25f),
               std::log(0.25f), std::log(0.25f), std::log(0.25f)});
  expect_near(run(make_node("LogSoftmax", 1), 13, {logs()})[0], {2, 2, 2},
              {std::log(1 / 3.f), std::log(2 / 3.f), std::log(3 / 7.f), std::log(4 / 7.f),
               std::log(0.5f), std::log(0.5f), std::log(0.5f), std::log(0.5f)});
}

TEST(Softmax, AxisOutOfRangeNamesTheNode) {
  Node node = make_node("Softmax", 1, 1, "sm_bad");
  node.attrs.set("axis", int64_t{3});
  expect_error(node, 13, {logs()}, "axis");
}

const Tensor kM = f32({2, 3}, {1, 2, 3, 4, 5, 6});

TEST(ReduceMean, AxesAttributeAndKeepdims) {
  Node rows = make_node("ReduceMean", 1);
  rows.attrs.set("axes", std::vector<int64_t>{1});
  expect_near(run(rows, 13, {kM})[0], {2, 1}, {2, 5});
  Node cols = make_node("ReduceMean", 1);
  cols.attrs.set("axes", std::vector<int64_t>{-2});
  cols.attrs.set("keepdims", int64_t{0});
  expect_near(run(cols, 13, {kM})[0], {3}, {2.5f, 3.5f, 4.5f});
  expect_near(run(make_node("ReduceMean", 1), 13, {kM})[0], {1, 1}, {3.5f});
}

TEST(ReduceMean, Opset18AxesInputAndNoop) {
  Node node = make_node("ReduceMean", 2);
  node.attrs.set("keepdims", int64_t{0});
  expect_near(run(node, 18, {kM, i64({1}, {-1})})[0], {2}, {2, 5});
  // No axes: reduce all, or nothing with noop_with_empty_axes.
  Node all = make_node("ReduceMean", 1);
  expect_near(run(all, 18, {kM})[0], {1, 1}, {3.5f});
  all.attrs.set("noop_with_empty_axes", int64_t{1});
  expect_near(run(all, 18, {kM})[0], {2, 3}, {1, 2, 3, 4, 5, 6});
  Node empty_axes = make_node("ReduceMean", 2);
  empty_axes.attrs.set("noop_with_empty_axes", int64_t{1});
  expect_near(run(empty_axes, 18, {kM, i64({0}, {})})[0], {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(ReduceMean, ThreeDMiddleAxis) {
  // [2,2,2] = 0..7, mean over axis 1: (0+2)/2, (1+3)/2, (4+6)/2, (5+7)/2.
  Node node = make_node("ReduceMean", 1);
  node.attrs.set("axes", std::vector<int64_t>{1});
  expect_near(run(node, 11, {f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})})[0], {2, 1, 2},
              {1, 2, 5, 6});
}

TEST(ReduceMean, BadAxesNameTheNode) {
  Node dup = make_node("ReduceMean", 1, 1, "rm_dup");
  dup.attrs.set("axes", std::vector<int64_t>{1, -1});
  expect_error(dup, 13, {kM}, "more than once");
  Node range = make_node("ReduceMean", 1, 1, "rm_range");
  range.attrs.set("axes", std::vector<int64_t>{2});
  expect_error(range, 13, {kM}, "out of range");
  Node old_attr = make_node("ReduceMean", 1, 1, "rm_attr18");
  old_attr.attrs.set("axes", std::vector<int64_t>{0});
  expect_error(old_attr, 18, {kM}, "opset 18");
}

}  // namespace
}  // namespace tessera::testing
