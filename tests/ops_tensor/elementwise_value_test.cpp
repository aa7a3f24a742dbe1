// Values of the elementwise, variadic, reduction, ArgMax and TopK reference kernels in the cases
// the ONNX node tests leave out: squeeze-excitation broadcasting, integer wrap-around, opsets
// below 7 for Elu/Selu/Softplus (the node tests exist only at opsets the importer refuses), axes
// as an attribute, NaN ordering, TopK before opset 10. Expected values are computed in the test
// from the formula or by hand (numpy where noted).
#include <cmath>
#include <limits>

#include "op_test_util.hpp"

namespace tessera::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Tensor u8(Shape shape, std::vector<uint8_t> v) {
  return Tensor::from_vector(shape, v);
}
Tensor i8(Shape shape, std::vector<int8_t> v) {
  return Tensor::from_vector(shape, v);
}

TEST(ElementwiseValues, SqueezeExcitationScaleBroadcastsOverSpatialDims) {
  // x[n, c, h, w] = 100n + 10c + 2h + w, s[n, c] = (n + 1) * (c + 1) / 4: [2, 3, 2, 2] * [2, 3, 1,
  // 1].
  const int64_t N = 2, C = 3, H = 2, W = 2;
  std::vector<float> xv, sv, expected;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) sv.push_back(static_cast<float>((n + 1) * (c + 1)) / 4.0f);
  }
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t w = 0; w < W; ++w) {
          const float v = static_cast<float>(100 * n + 10 * c + 2 * h + w);
          xv.push_back(v);
          expected.push_back(v * static_cast<float>((n + 1) * (c + 1)) / 4.0f);
        }
      }
    }
  }
  const Tensor x = f32({N, C, H, W}, xv);
  const Tensor s = f32({N, C, 1, 1}, sv);
  expect_floats_near(run1(make_node("Mul", {x, s}), 14, {x, s}), expected);
  // Either operand order gives the same result.
  expect_floats_near(run1(make_node("Mul", {s, x}), 14, {s, x}), expected);
  // A per-channel bias [C, 1, 1]: Add broadcasts it over N, H and W.
  const Tensor bias = f32({C, 1, 1}, {1000, 2000, 3000});
  const Tensor y = run1(make_node("Add", {x, bias}), 14, {x, bias});
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = (i / (H * W)) % C;
    EXPECT_EQ(y.data<float>()[i], xv[static_cast<size_t>(i)] + 1000.0f * static_cast<float>(c + 1));
  }
}

TEST(ElementwiseValues, Uint8ArithmeticWrapsAround) {
  const Tensor a = u8({4}, {200, 5, 16, 255});
  const Tensor b = u8({4}, {100, 10, 17, 2});
  EXPECT_EQ(values<uint8_t>(run1(make_node("Add", {a, b}), 14, {a, b})),
            (std::vector<uint8_t>{44, 15, 33, 1}));  // 300 - 256, 257 - 256
  EXPECT_EQ(values<uint8_t>(run1(make_node("Sub", {a, b}), 14, {a, b})),
            (std::vector<uint8_t>{100, 251, 255, 253}));  // 5 - 10 + 256, 16 - 17 + 256
  EXPECT_EQ(values<uint8_t>(run1(make_node("Mul", {a, b}), 14, {a, b})),
            (std::vector<uint8_t>{32, 50, 16, 254}));  // 20000 % 256, 272 % 256, 510 % 256
  EXPECT_EQ(values<uint8_t>(run1(make_node("Div", {a, b}), 14, {a, b})),
            (std::vector<uint8_t>{2, 0, 0, 127}));
}

TEST(ElementwiseValues, Int8AndInt32ArithmeticWrapsAround) {
  const Tensor a = i8({4}, {127, -128, -128, -7});
  const Tensor b = i8({4}, {1, 1, -1, 2});
  EXPECT_EQ(values<int8_t>(run1(make_node("Add", {a, b}), 14, {a, b})),
            (std::vector<int8_t>{-128, -127, 127, -5}));
  EXPECT_EQ(values<int8_t>(run1(make_node("Sub", {a, b}), 14, {a, b})),
            (std::vector<int8_t>{126, 127, -127, -9}));
  EXPECT_EQ(values<int8_t>(run1(make_node("Mul", {a, b}), 14, {a, b})),
            (std::vector<int8_t>{127, -128, -128, -14}));  // -128 * -1 = 128 wraps to -128
  EXPECT_EQ(values<int8_t>(run1(make_node("Div", {a, b}), 14, {a, b})),
            (std::vector<int8_t>{127, -128, -128, -3}));  // truncation toward zero
  const Tensor big = i32({2}, {std::numeric_limits<int32_t>::max(), 65536});
  const Tensor two = i32({2}, {1, 65536});
  EXPECT_EQ(values<int32_t>(run1(make_node("Add", {big, two}), 14, {big, two})),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 131072}));
  EXPECT_EQ(values<int32_t>(run1(make_node("Mul", {big, two}), 14, {big, two})),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::max(), 0}));  // 2^32 wraps to 0
}

TEST(ElementwiseValues, NegAndAbsOfIntegers) {
  const Tensor a = i8({4}, {-128, -5, 0, 127});
  EXPECT_EQ(values<int8_t>(run1(make_node("Neg", {a}), 13, {a})),
            (std::vector<int8_t>{-128, 5, 0, -127}));
  EXPECT_EQ(values<int8_t>(run1(make_node("Abs", {a}), 13, {a})),
            (std::vector<int8_t>{-128, 5, 0, 127}));
  const Tensor u = u8({2}, {0, 200});
  EXPECT_EQ(values<uint8_t>(run1(make_node("Abs", {u}), 13, {u})), (std::vector<uint8_t>{0, 200}));
  const Tensor l = i64({2}, {-3, 4});
  EXPECT_EQ(values<int64_t>(run1(make_node("Neg", {l}), 13, {l})), (std::vector<int64_t>{3, -4}));
}

TEST(ElementwiseValues, EluSeluSoftplusAtOpset6) {
  const Tensor x = f32({7}, {-3, -1, -0.5f, 0, 0.5f, 2, 30});
  // numpy: np.where(x >= 0, x, alpha * (np.exp(x) - 1)) in float64, alpha = 2.
  Node elu = make_node("Elu", {x});
  elu.attrs.set("alpha", 2.0f);
  expect_floats_near(run1(elu, 6, {x}), {-1.9004259f, -1.2642411f, -0.78693867f, 0, 0.5f, 2, 30});
  // numpy with the spec's default alpha and gamma.
  const Node selu = make_node("Selu", {x});
  expect_floats_near(run1(selu, 6, {x}),
                     {-1.6705687f, -1.1113307f, -0.6917582f, 0, 0.5253505f, 2.101402f, 31.52103f});
  Node selu2 = make_node("Selu", {x});
  selu2.attrs.set("alpha", 1.0f);
  selu2.attrs.set("gamma", 2.0f);
  expect_floats_near(run1(selu2, 6, {x}), {-1.9004259f, -1.2642411f, -0.78693867f, 0, 1, 4, 60});
  // np.log1p(np.exp(x)): no overflow at +-100.
  const Tensor s = f32({5}, {-100, -1, 0, 1, 100});
  expect_floats_near(run1(make_node("Softplus", {s}), 1, {s}),
                     {3.7200760e-44f, 0.3132617f, 0.6931472f, 1.3132616f, 100});
}

TEST(ElementwiseValues, VariadicMaxMinMeanBroadcastThreeInputs) {
  // [2, 1], [3] and a scalar broadcast to [2, 3].
  const Tensor a = f32({2, 1}, {1, 5});
  const Tensor b = f32({3}, {0, 3, kNaN});
  const Tensor c = f32({}, {2});
  Node max = make_node("Max", {a, b, c});
  const Tensor ymax = run1(max, 13, {a, b, c});
  EXPECT_EQ(ymax.shape(), (Shape{2, 3}));
  const std::vector<float> vmax = values<float>(ymax);
  const std::vector<float> emax = {2, 3, kNaN, 5, 5, kNaN};
  for (size_t i = 0; i < 6; ++i) {
    if (std::isnan(emax[i])) {
      EXPECT_TRUE(std::isnan(vmax[i])) << i;
    } else {
      EXPECT_EQ(vmax[i], emax[i]) << i;
    }
  }
  const Tensor bn = f32({3}, {0, 3, 9});
  expect_floats_near(run1(make_node("Min", {a, bn, c}), 13, {a, bn, c}), {0, 1, 1, 0, 2, 2});
  expect_floats_near(run1(make_node("Mean", {a, bn, c}), 13, {a, bn, c}),
                     {1, 2, 4, 7.0f / 3, 10.0f / 3, 16.0f / 3});
  expect_floats_near(run1(make_node("Sum", {a, bn, c}), 13, {a, bn, c}), {3, 6, 12, 7, 10, 16});
  const Tensor i = i32({2}, {-4, 7});
  const Tensor j = i32({}, {0});
  EXPECT_EQ(values<int32_t>(run1(make_node("Max", {i, j}), 13, {i, j})),
            (std::vector<int32_t>{0, 7}));
}

// [2, 3] = {{1, -2, 3}, {4, 5, -6}}.
const Tensor kM = f32({2, 3}, {1, -2, 3, 4, 5, -6});

TEST(ElementwiseValues, ReduceOpsWithAxesAttribute) {
  Node sum = make_node("ReduceSum", {kM});
  sum.attrs.set("axes", std::vector<int64_t>{1});
  expect_floats_near(run1(sum, 11, {kM}), {2, 3});
  sum.attrs.set("keepdims", int64_t{0});
  EXPECT_EQ(run1(sum, 11, {kM}).shape(), (Shape{2}));
  Node max = make_node("ReduceMax", {kM});
  max.attrs.set("axes", std::vector<int64_t>{0});
  expect_floats_near(run1(max, 13, {kM}), {4, 5, 3});
  Node min = make_node("ReduceMin", {kM});
  min.attrs.set("axes", std::vector<int64_t>{-1});
  min.attrs.set("keepdims", int64_t{0});
  expect_floats_near(run1(min, 13, {kM}), {-2, -6});
  Node prod = make_node("ReduceProd", {kM});
  expect_floats_near(run1(prod, 13, {kM}), {720});  // every axis: 1 * -2 * 3 * 4 * 5 * -6
  Node l2 = make_node("ReduceL2", {kM});
  l2.attrs.set("axes", std::vector<int64_t>{1});
  expect_floats_near(run1(l2, 13, {kM}), {std::sqrt(14.0f), std::sqrt(77.0f)});
}

TEST(ElementwiseValues, DefaultValuedAttributesBeforeTheirOpsetAreTolerated) {
  Node sum = make_node("ReduceSum", {kM});
  sum.attrs.set("noop_with_empty_axes", int64_t{0});
  expect_floats_near(run1(sum, 11, {kM}), {5});  // 1 - 2 + 3 + 4 + 5 - 6
  Node arg = make_node("ArgMax", {kM});
  arg.attrs.set("select_last_index", int64_t{0});
  arg.attrs.set("axis", int64_t{1});
  EXPECT_EQ(values<int64_t>(run1(arg, 11, {kM})), (std::vector<int64_t>{2, 1}));
  const Tensor x = f32({3}, {1, 3, 2});
  const Tensor k = i64({1}, {2});
  Node top = make_node("TopK", {x, k}, 2);
  top.attrs.set("largest", int64_t{1});
  top.attrs.set("sorted", int64_t{1});
  const std::vector<Tensor> out = run(top, 10, {x, k});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{3, 2}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 2}));
}

TEST(ElementwiseValues, ReduceOpsOnIntegers) {
  const Tensor a = i8({2, 2}, {100, 100, -128, -1});
  Node sum = make_node("ReduceSum", {a, i64({1}, {1})});
  EXPECT_EQ(values<int8_t>(run1(sum, 13, {a, i64({1}, {1})})),
            (std::vector<int8_t>{-56, 127}));  // 200 - 256, -129 + 256
  const Tensor l = i64({3}, {-3, 7, 2});
  EXPECT_EQ(values<int64_t>(run1(make_node("ReduceProd", {l}), 18, {l})),
            (std::vector<int64_t>{-42}));
  EXPECT_EQ(values<int64_t>(run1(make_node("ReduceMax", {l}), 18, {l})), (std::vector<int64_t>{7}));
  EXPECT_EQ(values<int64_t>(run1(make_node("ReduceMin", {l}), 18, {l})),
            (std::vector<int64_t>{-3}));
}

TEST(ElementwiseValues, ArgMaxNaNCountsAsLargest) {
  const Tensor x = f32({2, 3}, {1, kNaN, kNaN, 4, 9, 9});
  Node first = make_node("ArgMax", {x});
  first.attrs.set("axis", int64_t{1});
  first.attrs.set("keepdims", int64_t{0});
  EXPECT_EQ(values<int64_t>(run1(first, 13, {x})), (std::vector<int64_t>{1, 1}));
  first.attrs.set("select_last_index", int64_t{1});
  EXPECT_EQ(values<int64_t>(run1(first, 13, {x})), (std::vector<int64_t>{2, 2}));
  const Tensor u = u8({3, 1}, {7, 200, 3});
  EXPECT_EQ(values<int64_t>(run1(make_node("ArgMax", {u}), 13, {u})), (std::vector<int64_t>{1}));
}

TEST(ElementwiseValues, TopKTiesNaNAndAttributeK) {
  // Ties keep the lower index first; NaN sorts above every number.
  const Tensor x = f32({5}, {3, kNaN, 3, 7, 1});
  const Tensor k = i64({1}, {4});
  std::vector<Tensor> out = run(make_node("TopK", {x, k}, 2), 11, {x, k});
  const std::vector<float> v = values<float>(out[0]);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ((std::vector<float>(v.begin() + 1, v.end())), (std::vector<float>{7, 3, 3}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 3, 0, 2}));
  Node smallest = make_node("TopK", {x, k}, 2);
  smallest.attrs.set("largest", int64_t{0});
  out = run(smallest, 11, {x, k});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 3, 3, 7}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{4, 0, 2, 3}));
  // Opset 9: k is an attribute; int32 values along axis 0 of [3, 2].
  const Tensor m = i32({3, 2}, {5, -1, 8, -1, 5, 0});
  Node old = make_node("TopK", {m}, 2);
  old.attrs.set("k", int64_t{2});
  old.attrs.set("axis", int64_t{0});
  out = run(old, 9, {m});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{8, 0, 5, -1}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 2, 0, 0}));
}

TEST(ElementwiseValues, PowIntegerAndMixedTypes) {
  // int32 3^40 wraps: 3^40 mod 2^32 = 689956897 (Python); 2^-1 truncates to 0; (-1)^-3 = -1.
  const Tensor base = i32({4}, {3, 2, -1, 1});
  const Tensor exp = i8({4}, {40, -1, -3, -7});
  EXPECT_EQ(values<int32_t>(run1(make_node("Pow", {base, exp}), 15, {base, exp})),
            (std::vector<int32_t>{689956897, 0, -1, 1}));
  // int64 base, float exponent: 4^0.5 = 2, 10^-1 = 0.1 truncates to 0.
  const Tensor lb = i64({2}, {4, 10});
  const Tensor fe = f32({2}, {0.5f, -1});
  EXPECT_EQ(values<int64_t>(run1(make_node("Pow", {lb, fe}), 15, {lb, fe})),
            (std::vector<int64_t>{2, 0}));
  // float base, int64 exponent, broadcast [2, 1] ^ [2].
  const Tensor fb = f32({2, 1}, {2, -3});
  const Tensor ie = i64({2}, {3, -2});
  expect_floats_near(run1(make_node("Pow", {fb, ie}), 15, {fb, ie}), {8, 0.25f, -27, 1.0f / 9});
  // 0 to a negative integer power has no integer value.
  const Tensor zero = i32({1}, {0});
  const Tensor neg = i32({1}, {-1});
  EXPECT_THROW(run1(make_node("Pow", {zero, neg}), 15, {zero, neg}), Error);
}

TEST(ElementwiseValues, GeluTanhAndFloat16) {
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) and 0.5 x (1 + erf(x / sqrt 2)), in double.
  const std::vector<float> xs = {-3, -1, 0, 0.5f, 2};
  std::vector<float> exact, approx;
  for (float v : xs) {
    const double x = v;
    exact.push_back(static_cast<float>(0.5 * x * (1 + std::erf(x / std::sqrt(2.0)))));
    approx.push_back(static_cast<float>(
        0.5 * x *
        (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)))));
  }
  const Tensor x = f32({5}, xs);
  expect_floats_near(run1(make_node("Gelu", {x}), 20, {x}), exact, 1e-6f);
  Node tanh = make_node("Gelu", {x});
  tanh.attrs.set("approximate", std::string("tanh"));
  expect_floats_near(run1(tanh, 20, {x}), approx, 1e-6f);
  // float16 goes through float32 and rounds once: Gelu(2) = 1.9545 -> nearest half 1.9541015625.
  Tensor h(DType::kFloat16, {1});
  h.data<uint16_t>()[0] = float_to_half(2.0f);
  const Tensor yh = run1(make_node("Gelu", {h}), 20, {h});
  EXPECT_EQ(yh.data<uint16_t>()[0], float_to_half(exact[4]));
}

}  // namespace
}  // namespace tessera::test
