// Gemm and MatMul against hand-worked products and an explicit batched formula.
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

// A = [[1,2,3],[4,5,6]], B = [[1,0],[0,1],[1,1]]: AB = [[4,5],[10,11]].
const Tensor kA = f32({2, 3}, {1, 2, 3, 4, 5, 6});
const Tensor kAt = f32({3, 2}, {1, 4, 2, 5, 3, 6});
const Tensor kB = f32({3, 2}, {1, 0, 0, 1, 1, 1});
const Tensor kBt = f32({2, 3}, {1, 0, 1, 0, 1, 1});

Node gemm(float alpha, float beta, int64_t trans_a, int64_t trans_b, size_t inputs = 3) {
  Node node = make_node("Gemm", inputs);
  node.attrs.set("alpha", alpha);
  node.attrs.set("beta", beta);
  node.attrs.set("transA", trans_a);
  node.attrs.set("transB", trans_b);
  return node;
}

TEST(Gemm, AlphaBetaRowBroadcastC) {
  // 2*AB + 0.5*[1,2] per row.
  const std::vector<float> expected = {8.5f, 11, 20.5f, 23};
  const Tensor c = f32({2}, {1, 2});
  expect_near(run(gemm(2, 0.5f, 0, 0), 11, {kA, kB, c})[0], {2, 2}, expected);
  expect_near(run(gemm(2, 0.5f, 1, 0), 11, {kAt, kB, c})[0], {2, 2}, expected);
  expect_near(run(gemm(2, 0.5f, 0, 1), 11, {kA, kBt, c})[0], {2, 2}, expected);
  expect_near(run(gemm(2, 0.5f, 1, 1), 11, {kAt, kBt, c})[0], {2, 2}, expected);
}

TEST(Gemm, ColumnAndScalarC) {
  // C [[1],[2]] adds 0.5 to row 0 and 1 to row 1; a scalar C 3 adds 1.5 everywhere.
  expect_near(run(gemm(2, 0.5f, 0, 0), 11, {kA, kB, f32({2, 1}, {1, 2})})[0], {2, 2},
              {8.5f, 10.5f, 21, 23});
  expect_near(run(gemm(2, 0.5f, 0, 0), 11, {kA, kB, f32({}, {3})})[0], {2, 2},
              {9.5f, 11.5f, 21.5f, 23.5f});
  expect_near(run(gemm(1, 1, 0, 0), 11, {kA, kB, f32({2, 2}, {1, 2, 3, 4})})[0], {2, 2},
              {5, 7, 13, 15});
}

TEST(Gemm, WithoutC) {
  expect_near(run(gemm(2, 0.5f, 0, 0, 2), 13, {kA, kB})[0], {2, 2}, {8, 10, 20, 22});
  expect_near(run(gemm(1, 1, 0, 0, 3), 13, {kA, kB, Tensor()})[0], {2, 2}, {4, 5, 10, 11});
}

TEST(Gemm, BadShapesNameTheNode) {
  Node node = gemm(1, 1, 0, 0);
  node.name = "gemm_bad";
  expect_error(node, 11, {kA, kB, f32({3}, {1, 2, 3})}, "C has shape");
  expect_error(node, 11, {kA, kA, f32({1}, {1})}, "inner dims");
  node.attrs.set("transA", int64_t{2});
  expect_error(node, 11, {kA, kB, f32({1}, {1})}, "transA");
}

TEST(MatMul, VectorCases) {
  Node node = make_node("MatMul", 2);
  // Dot product: rank-0 result.
  expect_near(run(node, 13, {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})})[0], {}, {32});
  // Matrix x vector and vector x matrix.
  const Tensor m = f32({2, 2}, {1, 2, 3, 4});
  expect_near(run(node, 13, {m, f32({2}, {1, 1})})[0], {2}, {3, 7});
  expect_near(run(node, 13, {f32({2}, {1, 1}), m})[0], {2}, {4, 6});
  // Plain 2-D: [[1,2],[3,4]] x [[0,1],[1,0]] swaps columns.
  expect_near(run(node, 13, {m, f32({2, 2}, {0, 1, 1, 0})})[0], {2, 2}, {2, 1, 4, 3});
}

TEST(MatMul, BatchBroadcast) {
  // A [2,1,2,3], B [3,3,2] -> [2,3,2,2]: Y[i,j] = A[i,0] @ B[j], checked with explicit sums.
  std::vector<float> a(12), b(18);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) - 5;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 7) % 5) - 2;
  std::vector<float> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
          float s = 0;
          for (int k = 0; k < 3; ++k) s += a[i * 6 + r * 3 + k] * b[j * 6 + k * 2 + c];
          expected.push_back(s);
        }
  auto y = run(make_node("MatMul", 2), 13, {f32({2, 1, 2, 3}, a), f32({3, 3, 2}, b)});
  expect_near(y[0], {2, 3, 2, 2}, expected);
  // A 1-D A against a batched B: [3] x [3,3,2] -> [3,2].
  expect_near(run(make_node("MatMul", 2), 13, {f32({3}, {1, 0, -1}), f32({3, 3, 2}, b)})[0], {3, 2},
              {b[0] - b[4], b[1] - b[5], b[6] - b[10], b[7] - b[11], b[12] - b[16], b[13] - b[17]});
}

TEST(MatMul, MismatchNamesTheNode) {
  expect_error(make_node("MatMul", 2, 1, "mm_bad"), 13,
               {f32({2, 3}, std::vector<float>(6, 1)), f32({2, 3}, std::vector<float>(6, 1))},
               "inner dims");
  expect_error(make_node("MatMul", 2, 1, "mm_batch"), 13,
               {f32({2, 1, 2}, std::vector<float>(4, 1)), f32({3, 2, 1}, std::vector<float>(6, 1))},
               "broadcast");
}

}  // namespace
}  // namespace tessera::testing
