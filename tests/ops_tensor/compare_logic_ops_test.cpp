// Comparisons (Less, Greater, LessOrEqual, GreaterOrEqual), logical ops (Not, And, Or, Xor), Mod,
// Sign, Round, Sin, Cos, CumSum and ScatterND: values against hand-computed results (numpy's
// conventions; the ONNX backend node tests check the rest in tessera_conformance_tests), and every
// bad input failing with the node and the attribute or input named.
#include <cmath>
#include <limits>

#include "op_test_util.hpp"

namespace tessera::test {
namespace {

Tensor bools(Shape shape, const std::vector<bool>& v) {
  return Tensor::from_vector<bool>(std::move(shape), v);
}

std::vector<bool> bool_values(const Tensor& t) {
  return std::vector<bool>(t.data<bool>(), t.data<bool>() + t.numel());
}

TEST(Compare, BroadcastAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor a = f32({2, 2}, {1, 2, nan, 4});
  const Tensor b = f32({2}, {2, 2});
  EXPECT_EQ(bool_values(run1(make_node("Less", {a, b}), 13, {a, b})),
            (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(bool_values(run1(make_node("Greater", {a, b}), 13, {a, b})),
            (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(bool_values(run1(make_node("LessOrEqual", {a, b}), 16, {a, b})),
            (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(bool_values(run1(make_node("GreaterOrEqual", {a, b}), 16, {a, b})),
            (std::vector<bool>{false, true, false, true}));
  const Tensor i = i64({3}, {-5, 0, 7});
  const Tensor z = i64({}, {0});
  EXPECT_EQ(bool_values(run1(make_node("Less", {i, z}), 13, {i, z})),
            (std::vector<bool>{true, false, false}));
}

TEST(Logic, NotAndOrXorBroadcast) {
  const Tensor a = bools({2, 2}, {true, true, false, false});
  const Tensor b = bools({2}, {true, false});
  EXPECT_EQ(bool_values(run1(make_node("Not", {a}), 13, {a})),
            (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(bool_values(run1(make_node("And", {a, b}), 13, {a, b})),
            (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(bool_values(run1(make_node("Or", {a, b}), 13, {a, b})),
            (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(bool_values(run1(make_node("Xor", {a, b}), 13, {a, b})),
            (std::vector<bool>{false, true, true, false}));
}

TEST(Mod, PythonAndCRemainders) {
  // numpy.mod / Python %: the divisor's sign; numpy.fmod / C: the dividend's.
  const Tensor a = i64({4}, {7, -7, 7, -7});
  const Tensor b = i64({4}, {3, 3, -3, -3});
  Node python = make_node("Mod", {a, b});
  EXPECT_EQ(values<int64_t>(run1(python, 13, {a, b})), (std::vector<int64_t>{1, 2, -2, -1}));
  Node c = make_node("Mod", {a, b});
  c.attrs.set("fmod", int64_t{1});
  EXPECT_EQ(values<int64_t>(run1(c, 13, {a, b})), (std::vector<int64_t>{1, -1, 1, -1}));
  const Tensor lowest = i64({1}, {std::numeric_limits<int64_t>::lowest()});
  const Tensor minus1 = i64({1}, {-1});
  EXPECT_EQ(values<int64_t>(run1(make_node("Mod", {lowest, minus1}), 13, {lowest, minus1})),
            (std::vector<int64_t>{0}));
  const Tensor fa = f32({2}, {5.5f, -5.5f});
  const Tensor fb = f32({1}, {2});
  Node f = make_node("Mod", {fa, fb});
  f.attrs.set("fmod", int64_t{1});
  expect_floats_near(run1(f, 13, {fa, fb}), {1.5f, -1.5f});
}

TEST(Mod, IntegerDivisionByZeroNamesTheNode) {
  const Tensor a = i32({2}, {1, 2});
  const Tensor b = i32({2}, {1, 0});
  const Node node = make_node("Mod", {a, b}, 1, "bad_mod");
  try {
    run1(node, 13, {a, b});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'bad_mod'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("division by zero"), std::string::npos) << msg;
  }
}

TEST(Unary, SignRoundSinCos) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = f32({4}, {-2.5f, 0.0f, 3.0f, nan});
  const std::vector<float> sign = run1(make_node("Sign", {x}), 13, {x}).to_float_vector();
  EXPECT_EQ(sign[0], -1.0f);
  EXPECT_EQ(sign[1], 0.0f);
  EXPECT_EQ(sign[2], 1.0f);
  EXPECT_TRUE(std::isnan(sign[3]));
  const Tensor h = f32({5}, {0.5f, 1.5f, 2.5f, -0.5f, -1.6f});
  expect_floats_near(run1(make_node("Round", {h}), 13, {h}), {0, 2, 2, -0.0f, -2});
  const Tensor r = f32({3}, {0, 1.5707963f, 3.1415927f});
  expect_floats_near(run1(make_node("Sin", {r}), 13, {r}), {0, 1, 0}, 1e-6f);
  expect_floats_near(run1(make_node("Cos", {r}), 13, {r}), {1, 0, -1}, 1e-6f);
  const Tensor i = i32({3}, {-4, 0, 9});
  EXPECT_EQ(values<int32_t>(run1(make_node("Sign", {i}), 13, {i})),
            (std::vector<int32_t>{-1, 0, 1}));
}

TEST(CumSum, ExclusiveReverseAlongAnAxis) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor axis1 = i64({}, {1});
  expect_floats_near(run1(make_node("CumSum", {x, axis1}), 14, {x, axis1}), {1, 3, 6, 4, 9, 15});
  const Tensor axis0 = i32({1}, {-2});
  Node node = make_node("CumSum", {x, axis0});
  node.attrs.set("exclusive", int64_t{1});
  node.attrs.set("reverse", int64_t{1});
  expect_floats_near(run1(node, 14, {x, axis0}), {4, 5, 6, 0, 0, 0});
  const Tensor ints = i64({4}, {1, 2, 3, 4});
  const Tensor zero = i64({}, {0});
  Node excl = make_node("CumSum", {ints, zero});
  excl.attrs.set("exclusive", int64_t{1});
  EXPECT_EQ(values<int64_t>(run1(excl, 14, {ints, zero})), (std::vector<int64_t>{0, 1, 3, 6}));
}

TEST(ScatterND, ReplacesSlicesAndReducesDuplicates) {
  const Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor rows = i64({2, 1}, {2, -3});  // -3 is row 0
  const Tensor updates = f32({2, 2}, {10, 20, 30, 40});
  expect_floats_near(run1(make_node("ScatterND", {data, rows, updates}), 13, {data, rows, updates}),
                     {30, 40, 3, 4, 10, 20});
  const Tensor same = i64({2, 2}, {1, 1, 1, 1});  // element (1, 1) twice
  const Tensor two = f32({2}, {10, 100});
  Node add = make_node("ScatterND", {data, same, two});
  add.attrs.set("reduction", std::string("add"));
  expect_floats_near(run1(add, 16, {data, same, two}), {1, 2, 3, 114, 5, 6});
  Node mx = make_node("ScatterND", {data, same, two});
  mx.attrs.set("reduction", std::string("max"));
  expect_floats_near(run1(mx, 18, {data, same, two}), {1, 2, 3, 100, 5, 6});
}

TEST(ScatterND, IndexOutOfRangeNamesTheNodeAndPosition) {
  const Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor rows = i64({2, 1}, {0, 3});
  const Tensor updates = f32({2, 2}, {10, 20, 30, 40});
  const Node node = make_node("ScatterND", {data, rows, updates}, 1, "bad_scatter");
  try {
    run1(node, 13, {data, rows, updates});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'bad_scatter'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index 3 at position 1 of 'indices' is out of range [-3, 2]"),
              std::string::npos)
        << msg;
  }
}

TEST(CompareLogicBadInput, EveryCaseNamesTheNode) {
  const Tensor x = f32({2}, {1, 2});
  const Tensor i = i64({2}, {1, 2});
  const Tensor b = bools({2}, {true, false});
  for (const char* op : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    SCOPED_TRACE(op);
    expect_infer_error(make_node(op, {x, i}, 1, "bad"), 16, {x, i}, "different dtypes");
    expect_infer_error(make_node(op, {b, b}, 1, "bad"), 16, {b, b}, "has dtype bool");
  }
  expect_infer_error(make_node("LessOrEqual", {x, x}, 1, "bad"), 11, {x, x},
                     "LessOrEqual exists from opset 12");
  expect_infer_error(make_node("Not", {x}, 1, "bad"), 13, {x}, "input 0 has dtype float32");
  expect_infer_error(make_node("And", {b, x}, 1, "bad"), 13, {b, x}, "input 1 has dtype float32");
  const Tensor b3 = bools({3}, {true, false, true});
  expect_infer_error(make_node("Or", {b, b3}, 1, "bad"), 13, {b, b3}, "cannot broadcast");
  expect_infer_error(make_node("Sign", {x}, 1, "bad"), 8, {x}, "Sign exists from opset 9");
  expect_infer_error(make_node("Sin", {i}, 1, "bad"), 13, {i}, "input 0 has dtype int64");
}

TEST(ModBadInput, FmodAttribute) {
  const Tensor x = f32({2}, {1, 2});
  Node floats = make_node("Mod", {x, x}, 1, "bad_mod");
  expect_infer_error(floats, 13, {x, x}, "floating-point inputs need fmod = 1");
  Node two = make_node("Mod", {x, x}, 1, "bad_mod");
  two.attrs.set("fmod", int64_t{2});
  expect_infer_error(two, 13, {x, x}, "attribute 'fmod' = 2 must be 0 or 1");
  Node text = make_node("Mod", {x, x}, 1, "bad_mod");
  text.attrs.set("fmod", std::string("yes"));
  expect_infer_error(text, 13, {x, x}, "fmod");
  expect_infer_error(make_node("Mod", {x, x}, 1, "bad_mod"), 9, {x, x}, "Mod exists from opset 10");
}

TEST(CumSumBadInput, AxisAndFlags) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor far = i64({}, {2});
  expect_infer_error(make_node("CumSum", {x, far}, 1, "bad_cumsum"), 14, {x, far},
                     "input 1 (axis) = 2 is out of range [-2, 1]");
  const Tensor two = i64({2}, {0, 1});
  expect_infer_error(make_node("CumSum", {x, two}, 1, "bad_cumsum"), 14, {x, two},
                     "input 1 (axis) must be an int32 or int64 scalar");
  const Tensor faxis = f32({}, {0});
  expect_infer_error(make_node("CumSum", {x, faxis}, 1, "bad_cumsum"), 14, {x, faxis},
                     "input 1 has dtype float32");
  const Tensor zero = i64({}, {0});
  Node flags = make_node("CumSum", {x, zero}, 1, "bad_cumsum");
  flags.attrs.set("exclusive", int64_t{2});
  expect_infer_error(flags, 14, {x, zero}, "attribute 'exclusive' = 2 must be 0 or 1");
  const Tensor scalar = f32({}, {1});
  expect_infer_error(make_node("CumSum", {scalar, zero}, 1, "bad_cumsum"), 14, {scalar, zero},
                     "CumSum needs rank >= 1");
}

TEST(ScatterNDBadInput, ShapesAndReduction) {
  const Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor deep = i64({1, 3}, {0, 0, 0});
  const Tensor upd1 = f32({1}, {1});
  expect_infer_error(make_node("ScatterND", {data, deep, upd1}, 1, "bad_scatter"), 13,
                     {data, deep, upd1}, "it must be in [1, rank of 'data' = 2]");
  const Tensor rows = i64({2, 1}, {0, 1});
  const Tensor wrong = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_infer_error(make_node("ScatterND", {data, rows, wrong}, 1, "bad_scatter"), 13,
                     {data, rows, wrong}, "input 'updates' has shape [2, 3]");
  const Tensor upd = f32({2, 2}, {1, 2, 3, 4});
  Node add = make_node("ScatterND", {data, rows, upd}, 1, "bad_scatter");
  add.attrs.set("reduction", std::string("add"));
  expect_infer_error(add, 13, {data, rows, upd}, "attribute 'reduction' = 'add'");
  Node odd = make_node("ScatterND", {data, rows, upd}, 1, "bad_scatter");
  odd.attrs.set("reduction", std::string("mean"));
  expect_infer_error(odd, 18, {data, rows, upd}, "none, add, mul, max, min at opset 18");
  const Tensor i32rows = i32({2, 1}, {0, 1});
  expect_infer_error(make_node("ScatterND", {data, i32rows, upd}, 1, "bad_scatter"), 13,
                     {data, i32rows, upd}, "input 1 has dtype int32");
}

}  // namespace
}  // namespace tessera::test
