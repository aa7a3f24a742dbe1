// Bad input for the elementwise, variadic, reduction, ArgMax and TopK ops: every case must fail
// in shape inference with a message naming the node and the attribute, input or opset at fault.
#include <limits>

#include "op_test_util.hpp"

namespace tessera::test {
namespace {

const Tensor kX = f32({2, 3}, {1, 2, 3, 4, 5, 6});
const Tensor kI32 = i32({2}, {1, 2});

Tensor u8(Shape shape, std::vector<uint8_t> v) {
  return Tensor::from_vector(shape, v);
}
Tensor i8(Shape shape, std::vector<int8_t> v) {
  return Tensor::from_vector(shape, v);
}

Node named(const std::string& op, size_t inputs, size_t outputs = 1) {
  return make_node(op, std::vector<Tensor>(inputs, kX), outputs, "bad_" + op);
}

TEST(ElementwiseBadInput, FloatUnaryOpsRejectIntegersAndExtraInputs) {
  for (const char* op : {"Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Softplus",
                         "Mish", "Elu", "Selu", "Gelu"}) {
    SCOPED_TRACE(op);
    expect_infer_error(named(op, 1), 20, {kI32}, "input 0 has dtype int32");
    expect_infer_error(named(op, 2), 20, {kX, kX}, "expects 1 input");
  }
}

TEST(ElementwiseBadInput, OpsBeforeTheirOpset) {
  expect_infer_error(named("Erf", 1), 8, {kX}, "Erf exists from opset 9");
  expect_infer_error(named("Mish", 1), 17, {kX}, "Mish exists from opset 18");
  expect_infer_error(named("Gelu", 1), 19, {kX}, "Gelu exists from opset 20");
}

TEST(ElementwiseBadInput, GeluApproximate) {
  Node node = named("Gelu", 1);
  node.attrs.set("approximate", std::string("fast"));
  expect_infer_error(node, 20, {kX}, "attribute 'approximate' = 'fast' must be 'none' or 'tanh'");
  node.attrs.set("approximate", int64_t{1});
  expect_infer_error(node, 20, {kX}, "approximate");
}

TEST(ElementwiseBadInput, EluSeluAttributesMustBeFinite) {
  Node elu = named("Elu", 1);
  elu.attrs.set("alpha", std::numeric_limits<float>::quiet_NaN());
  expect_infer_error(elu, 6, {kX}, "attribute 'alpha'");
  Node selu = named("Selu", 1);
  selu.attrs.set("gamma", std::numeric_limits<float>::infinity());
  expect_infer_error(selu, 6, {kX}, "attribute 'gamma'");
  selu.attrs.set("gamma", std::string("one"));
  expect_infer_error(selu, 6, {kX}, "gamma");
}

TEST(ElementwiseBadInput, NegAndAbsDtypes) {
  expect_infer_error(named("Neg", 1), 13, {u8({1}, {1})}, "input 0 has dtype uint8");
  expect_infer_error(named("Abs", 1), 13, {Tensor::from_vector<bool>({1}, {true})},
                     "input 0 has dtype bool");
}

TEST(ElementwiseBadInput, ArithmeticDtypesAndShapes) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    SCOPED_TRACE(op);
    expect_infer_error(named(op, 2), 14, {i8({1}, {1}), u8({1}, {1})},
                       "inputs have different dtypes (int8 and uint8)");
    expect_infer_error(
        named(op, 2), 14,
        {Tensor::from_vector<bool>({1}, {true}), Tensor::from_vector<bool>({1}, {true})},
        "input 0 has dtype bool");
    expect_infer_error(named(op, 2), 14, {kX, f32({2}, {1, 2})}, "cannot broadcast shapes");
  }
}

TEST(ElementwiseBadInput, IntegerDivisionByZeroNamesTheNode) {
  const Node node = named("Div", 2);
  try {
    run(node, 14, {u8({2}, {4, 4}), u8({2}, {2, 0})});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'bad_Div'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
  }
}

TEST(ElementwiseBadInput, Pow) {
  expect_infer_error(named("Pow", 2), 11, {kX, kI32},
                     "input 1 (exponent) has dtype int32 but input 0 has float32");
  expect_infer_error(named("Pow", 2), 15, {u8({1}, {2}), kI32}, "input 0 has dtype uint8");
  expect_infer_error(named("Pow", 2), 15, {kX, Tensor::from_vector<bool>({1}, {true})},
                     "input 1 has dtype bool");
  expect_infer_error(named("Pow", 2), 15, {kX, f32({4}, {1, 2, 3, 4})}, "cannot broadcast");
}

TEST(ElementwiseBadInput, VariadicOps) {
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
    SCOPED_TRACE(op);
    expect_infer_error(named(op, 0), 13, {}, "expects at least 1 input");
    Node two = named(op, 2);
    expect_infer_error(two, 13, {kX, f32({4}, {1, 2, 3, 4})}, "cannot broadcast shapes");
    expect_infer_error(two, 7, {kX, f32({3}, {1, 2, 3})},
                       "before opset 8 the inputs must have equal shapes");
    expect_infer_error(two, 13, {kX, Tensor::from_vector<uint16_t>({1}, {0})},
                       "input 1 has dtype float16 but input 0 has float32");
  }
  expect_infer_error(named("Sum", 1), 13, {kI32}, "input 0 has dtype int32");
  expect_infer_error(named("Mean", 1), 13, {kI32}, "input 0 has dtype int32");
  // Integer Max/Min exist from opset 12.
  expect_infer_error(named("Max", 1), 11, {kI32}, "input 0 has dtype int32");
  expect_infer_error(named("Min", 1), 11, {kI32}, "input 0 has dtype int32");
}

TEST(ElementwiseBadInput, ReduceOps) {
  struct Case {
    const char* op;
    int64_t axes_input_opset;
  };
  for (const Case c : {Case{"ReduceSum", 13}, Case{"ReduceMax", 18}, Case{"ReduceMin", 18},
                       Case{"ReduceProd", 18}, Case{"ReduceL2", 18}, Case{"ReduceMean", 18}}) {
    SCOPED_TRACE(c.op);
    const int64_t old_opset = c.axes_input_opset - 2;
    const int64_t new_opset = c.axes_input_opset;
    Node attr = named(c.op, 1);
    attr.attrs.set("axes", std::vector<int64_t>{2});
    expect_infer_error(attr, old_opset, {kX}, "attribute 'axes' = 2 is out of range [-2, 1]");
    attr.attrs.set("axes", std::vector<int64_t>{1, -1});
    expect_infer_error(attr, old_opset, {kX}, "attribute 'axes' names axis 1 more than once");
    expect_infer_error(attr, new_opset, {kX}, "attribute 'axes' was replaced by input 1");
    attr.attrs.set("keepdims", int64_t{2});
    attr.attrs.set("axes", std::vector<int64_t>{0});
    expect_infer_error(attr, old_opset, {kX}, "attribute 'keepdims' = 2 must be 0 or 1");

    Node input = named(c.op, 2);
    expect_infer_error(input, new_opset, {kX, i64({1}, {-3})},
                       "input 1 (axes) = -3 is out of range");
    expect_infer_error(input, new_opset, {kX, i32({1}, {0})},
                       "input 1 (axes) must be a 1-D int64 tensor, got int32");
    expect_infer_error(input, old_opset, {kX, i64({1}, {0})},
                       "takes one input before opset " + std::to_string(new_opset));
    Node noop = named(c.op, 1);
    noop.attrs.set("noop_with_empty_axes", int64_t{1});
    expect_infer_error(noop, old_opset, {kX}, "attribute 'noop_with_empty_axes' exists from opset");
    noop.attrs.set("noop_with_empty_axes", int64_t{-1});
    expect_infer_error(noop, new_opset, {kX}, "attribute 'noop_with_empty_axes' = -1");
  }
  const Tensor flags = Tensor::from_vector<bool>({2}, {true, false});
  expect_infer_error(named("ReduceMax", 1), 18, {flags}, "input 0 has dtype bool");
  expect_infer_error(named("ReduceSum", 1), 13, {flags}, "input 0 has dtype bool");
  expect_infer_error(named("ReduceL2", 1), 18, {kI32}, "input 0 has dtype int32");
}

TEST(ElementwiseBadInput, ArgMax) {
  Node node = named("ArgMax", 1);
  node.attrs.set("axis", int64_t{2});
  expect_infer_error(node, 13, {kX}, "attribute 'axis' = 2 is out of range [-2, 1]");
  node.attrs.set("axis", int64_t{0});
  node.attrs.set("keepdims", int64_t{3});
  expect_infer_error(node, 13, {kX}, "attribute 'keepdims' = 3 must be 0 or 1");
  Node last = named("ArgMax", 1);
  last.attrs.set("select_last_index", int64_t{1});
  expect_infer_error(last, 11, {kX}, "attribute 'select_last_index' exists from opset 12");
  last.attrs.set("select_last_index", int64_t{2});
  expect_infer_error(last, 13, {kX}, "attribute 'select_last_index' = 2 must be 0 or 1");
  expect_infer_error(named("ArgMax", 1), 13, {f32({}, {1})}, "input 0 is a scalar");
  expect_infer_error(named("ArgMax", 1), 13, {Tensor(DType::kFloat32, {0, 3})},
                     "attribute 'axis' = 0 names a dim of size 0");
  expect_infer_error(named("ArgMax", 1), 13, {Tensor::from_vector<bool>({1}, {true})},
                     "input 0 has dtype bool");
}

TEST(ElementwiseBadInput, TopK) {
  const Node node = named("TopK", 2, 2);
  expect_infer_error(node, 11, {kX, i64({1}, {4})}, "input 1 (K) = 4 is out of range [0, 3]");
  expect_infer_error(node, 11, {kX, i64({1}, {-1})}, "input 1 (K) = -1 is out of range");
  expect_infer_error(node, 11, {kX, i32({1}, {1})}, "input 1 (K) must be a 1-D int64 tensor");
  expect_infer_error(node, 11, {kX, i64({2}, {1, 1})}, "input 1 (K) must be a 1-D int64 tensor");
  Node axis = named("TopK", 2, 2);
  axis.attrs.set("axis", int64_t{-3});
  expect_infer_error(axis, 11, {kX, i64({1}, {1})}, "attribute 'axis' = -3 is out of range");
  Node largest = named("TopK", 2, 2);
  largest.attrs.set("largest", int64_t{2});
  expect_infer_error(largest, 11, {kX, i64({1}, {1})}, "attribute 'largest' = 2 must be 0 or 1");
  expect_infer_error(largest, 10, {kX, i64({1}, {1})}, "attribute 'largest' exists from opset 11");
  Node k_attr = named("TopK", 2, 2);
  k_attr.attrs.set("k", int64_t{1});
  expect_infer_error(k_attr, 11, {kX, i64({1}, {1})}, "attribute 'k' was replaced by input 1");
  Node old = named("TopK", 1, 2);
  expect_infer_error(old, 9, {kX}, "required attribute 'k' is missing");
  old.attrs.set("k", int64_t{5});
  expect_infer_error(old, 9, {kX}, "attribute 'k' = 5 is out of range [0, 3]");
  expect_infer_error(named("TopK", 2, 1), 11, {kX, i64({1}, {1})}, "expected 2 (Values, Indices)");
}

}  // namespace
}  // namespace tessera::test
