// Einsum's reference kernel against the reference MatMul, Transpose and ReduceSum kernels (the
// ONNX backend node tests of Einsum are all float64, which Tessera does not load), its equation
// parsing (implicit output, ellipsis broadcast, spaces, diagonals), and its bad input.
#include "op_test_util.hpp"
#include "uniform_tensor.hpp"

namespace tessera::test {
namespace {

Tensor random_f32(Shape shape, uint32_t seed) {
  return test_util::uniform_tensor(std::move(shape), seed, -1.0f, 1.0f);
}

Node einsum(const std::string& equation, size_t inputs, const std::string& name = "") {
  Node node = make_node("Einsum", std::vector<Tensor>(inputs, f32({1}, {0})), 1, name);
  node.attrs.set("equation", equation);
  return node;
}

Tensor transpose(const Tensor& x, std::vector<int64_t> perm) {
  Node node = make_node("Transpose", {x});
  node.attrs.set("perm", perm);
  return run1(node, 13, {x});
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  return run1(make_node("MatMul", {a, b}), 13, {a, b});
}

void expect_same(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<float> w = want.to_float_vector();
  expect_floats_near(got, w, 1e-5f);
}

TEST(Einsum, AttentionProductsEqualMatMulOfTransposes) {
  const Tensor q = random_f32({2, 3, 4, 5, 8}, 1);  // B G H I D (maxvit)
  const Tensor k = random_f32({2, 3, 4, 6, 8}, 2);  // B G H J D
  expect_same(run1(einsum("B G H I D, B G H J D -> B G H I J", 2), 12, {q, k}),
              matmul(q, transpose(k, {0, 1, 2, 4, 3})));
  const Tensor p = random_f32({2, 3, 4, 5, 6}, 3);  // B G H I J
  const Tensor v = random_f32({2, 3, 4, 6, 8}, 4);  // B G H J D
  expect_same(run1(einsum("BGHIJ,BGHJD->BGHID", 2), 12, {p, v}), matmul(p, v));
}

TEST(Einsum, RelativePositionTermEqualsBatchedMatMul) {
  // mvitv2: byhwc,hkc->byhwk is, per h, [b y w, c] x [c, k].
  const Tensor x = random_f32({2, 3, 4, 5, 6}, 5);
  const Tensor r = random_f32({4, 7, 6}, 6);
  const Tensor got = run1(einsum("byhwc,hkc->byhwk", 2), 12, {x, r});
  // [h, b*y*w, c] x [h, c, k] -> [h, b*y*w, k] -> [b, y, h, w, k]
  const Tensor xh = transpose(x, {2, 0, 1, 3, 4}).reshaped({4, 2 * 3 * 5, 6});
  const Tensor prod = matmul(xh, transpose(r, {0, 2, 1}));
  expect_same(got, transpose(prod.reshaped({4, 2, 3, 5, 7}), {1, 2, 0, 3, 4}));
}

TEST(Einsum, ImplicitOutputEllipsisBroadcastAndSpaces) {
  const Tensor a = random_f32({3, 4}, 7);
  const Tensor b = random_f32({4, 5}, 8);
  expect_same(run1(einsum("ij,jk", 2), 12, {a, b}), matmul(a, b));  // implicit: ik
  // Implicit output sorts letters in ASCII order: "ba" gives "ab", a transpose.
  expect_same(run1(einsum("ba", 1), 12, {a}), transpose(a, {1, 0}));
  const Tensor x = random_f32({2, 1, 3, 4}, 9);
  const Tensor y = random_f32({5, 4, 6}, 10);
  expect_same(run1(einsum("...ij, ...jk -> ...ik", 2), 12, {x, y}), matmul(x, y));
}

TEST(Einsum, SumsDiagonalsAndOuterProducts) {
  const Tensor m = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_floats_near(run1(einsum("ii->i", 1), 12, {m}), {1, 5, 9});
  expect_floats_near(run1(einsum("ii", 1), 12, {m}), {15});
  expect_floats_near(run1(einsum("ij->j", 1), 12, {m}), {12, 15, 18});
  const Tensor u = f32({2}, {1, 2});
  const Tensor w = f32({3}, {1, 10, 100});
  expect_floats_near(run1(einsum("i,j->ij", 2), 12, {u, w}), {1, 10, 100, 2, 20, 200});
  const Tensor i = i64({3}, {1, 2, 3});
  EXPECT_EQ(values<int64_t>(run1(einsum("i,i->", 2), 12, {i, i})), (std::vector<int64_t>{14}));
}

TEST(EinsumBadInput, EquationProblemsNameTheNodeAndAttribute) {
  const Tensor a = random_f32({3, 4}, 11);
  const Tensor b = random_f32({5, 6}, 12);
  expect_infer_error(einsum("ij,jk->ik", 2, "bad_einsum"), 12, {a, b},
                     "subscript 'j' is 4 in one place and 5 in input 1");
  expect_infer_error(einsum("ij->ik", 1, "bad_einsum"), 12, {a},
                     "output subscript 'k' is in no input");
  expect_infer_error(einsum("ij->ii", 1, "bad_einsum"), 12, {a},
                     "output subscript 'i' appears twice");
  expect_infer_error(einsum("ijk->i", 1, "bad_einsum"), 12, {a}, "does not match input 0");
  expect_infer_error(einsum("i1->i", 1, "bad_einsum"), 12, {a}, "'1' is not a subscript letter");
  expect_infer_error(einsum("ij->i->j", 1, "bad_einsum"), 12, {a}, "'->' appears more than once");
  expect_infer_error(einsum("ij,jk->ik", 1, "bad_einsum"), 12, {a}, "2 input term(s) for 1");
  expect_infer_error(einsum("ij", 1, "bad_einsum"), 11, {a}, "Einsum exists from opset 12");
  const Tensor i = i64({3, 4}, std::vector<int64_t>(12, 1));
  expect_infer_error(einsum("ij,ij->ij", 2, "bad_einsum"), 12, {a, i}, "share one dtype");
  Node no_equation = make_node("Einsum", {a}, 1, "bad_einsum");
  expect_infer_error(no_equation, 12, {a}, "equation");
}

}  // namespace
}  // namespace tessera::test
