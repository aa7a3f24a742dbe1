// Shapes decided at run time: a model with an open batch dimension and an input that decides a
// Resize's output size runs on the cpu plugin for several input signatures in one Session. Each
// run is compared with the reference runner on the same inputs (the oracle), each signature gets
// its own plan, and a signature seen before reuses its cached plan.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model_builder.hpp"
#include "session_util.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using test::ModelBuilder;

using test::cpu_only;
using test::seeded;

// x: float32 [N, 4, 6, 6] (N open), hw: int64 [2].
//   y = MatMul(Reshape(Relu(Conv(x)), [N, -1]), M)  with [N, -1] computed from Shape(x) as
//       PyTorch's exporter writes flatten
//   z = Resize(x, sizes = Concat(Shape(x)[0:2], hw)), nearest
std::string dynamic_model() {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {-1, 4, 6, 6});
  m.input("hw", onnx::TensorProto::INT64, {2});
  m.output("y", onnx::TensorProto::FLOAT);
  m.output("z", onnx::TensorProto::FLOAT);
  m.raw_float("W", {8, 4, 3, 3}, seeded(8 * 4 * 9, 1));
  m.raw_float("B", {8}, seeded(8, 2));
  m.raw_float("M", {8 * 6 * 6, 5}, seeded(8 * 36 * 5, 3));
  m.raw_int64("zero", {}, {0});
  m.raw_int64("axes0", {1}, {0});
  m.raw_int64("minus1", {1}, {-1});
  m.raw_int64("s0", {1}, {0});
  m.raw_int64("s2", {1}, {2});
  ModelBuilder::add_ints_attr(m.node("Conv", {"x", "W", "B"}, {"c"}, "conv"), "pads",
                              {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("Shape", {"r"}, {"s"}, "shape_r");
  m.node("Gather", {"s", "zero"}, {"n"}, "batch");
  m.node("Unsqueeze", {"n", "axes0"}, {"nu"}, "batch_1d");
  ModelBuilder::add_int_attr(m.node("Concat", {"nu", "minus1"}, {"flat_shape"}, "flat_shape"),
                             "axis", 0);
  m.node("Reshape", {"r", "flat_shape"}, {"flat"}, "flatten");
  m.node("MatMul", {"flat", "M"}, {"y"}, "fc");
  m.node("Shape", {"x"}, {"sx"}, "shape_x");
  m.node("Slice", {"sx", "s0", "s2"}, {"nc"}, "batch_channels");
  ModelBuilder::add_int_attr(m.node("Concat", {"nc", "hw"}, {"sizes"}, "sizes"), "axis", 0);
  auto* resize = m.node("Resize", {"x", "", "", "sizes"}, {"z"}, "resize");
  auto* mode = resize->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("nearest");
  return m.bytes();
}

std::map<std::string, Tensor> inputs_for(int64_t batch, int64_t h, int64_t w, uint32_t seed) {
  const Shape shape{batch, 4, 6, 6};
  const std::vector<float> x = seeded(static_cast<size_t>(shape_numel(shape)), seed);
  return {{"x", Tensor::from_vector<float>(shape, x)},
          {"hw", Tensor::from_vector<int64_t>({2}, {h, w})}};
}

void expect_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].shape(), want[o].shape()) << "output " << o;
    int64_t bad = 0;
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const float g = got[o].data<float>()[i], r = want[o].data<float>()[i];
      if (!(std::fabs(g - r) <= 1e-4f * std::max(1.0f, std::fabs(r))) && bad++ < 3) {
        ADD_FAILURE() << "output " << o << " element " << i << ": got " << g << ", want " << r;
      }
    }
    EXPECT_EQ(bad, 0) << "output " << o;
  }
}

TEST(DynamicShapes, ImportKeepsValueInputsUnprepared) {
  const Graph g = import_onnx_bytes(dynamic_model(), "dynamic.onnx", "");
  EXPECT_FALSE(g.prepared);
  ASSERT_EQ(g.value_inputs.size(), 1u);
  EXPECT_EQ(g.value(g.value_inputs[0]).name, "hw");
  const Value& x = g.value(g.find_value("x"));
  ASSERT_EQ(x.open_dims.size(), 4u);
  EXPECT_TRUE(x.open_dims[0]);
  EXPECT_FALSE(x.open_dims[1]);
}

TEST(DynamicShapes, PlansPerSignatureOnCpuAndReusesCachedPlans) {
  const Graph g = import_onnx_bytes(dynamic_model(), "dynamic.onnx", "");
  Session session(g, cpu_only());
  EXPECT_EQ(session.plan().plan_number, 0);
  ASSERT_FALSE(session.plan().warnings.empty());
  EXPECT_NE(session.plan().warnings.back().find("'hw'"), std::string::npos);

  struct Case {
    int64_t batch, h, w;
    int plan_number;  // expected: a new number per new signature, the old one when seen before
  };
  const Case cases[] = {{1, 5, 7, 1}, {3, 5, 7, 2}, {3, 12, 9, 3}, {1, 5, 7, 1}, {2, 3, 3, 4},
                        {3, 12, 9, 3}};
  uint32_t seed = 10;
  for (const Case& c : cases) {
    SCOPED_TRACE("batch " + std::to_string(c.batch) + ", hw " + std::to_string(c.h) + "x" +
                 std::to_string(c.w));
    const auto inputs = inputs_for(c.batch, c.h, c.w, ++seed);
    const std::vector<Tensor> got = session.run(inputs);
    expect_same(got, run_reference(g, inputs));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].shape(), (Shape{c.batch, 5}));
    EXPECT_EQ(got[1].shape(), (Shape{c.batch, 4, c.h, c.w}));
    const ExecutionPlan& plan = session.plan();
    EXPECT_EQ(plan.plan_number, c.plan_number);
    EXPECT_NE(plan.input_signature.find("x: float32 [" + std::to_string(c.batch) + ", 4, 6, 6]"),
              std::string::npos)
        << plan.input_signature;
    EXPECT_NE(plan.input_signature.find("= " + std::to_string(c.h) + "," + std::to_string(c.w)),
              std::string::npos)
        << plan.input_signature;
    for (const NodePlacement& p : plan.nodes) EXPECT_EQ(p.plugin, "cpu") << p.node << ": " << p.reason;
  }
}

TEST(DynamicShapes, PlanCacheDropsTheLeastRecentlyUsed) {
  const Graph g = import_onnx_bytes(dynamic_model(), "dynamic.onnx", "");
  SessionOptions options = cpu_only();
  options.plan_cache_size = 2;
  Session session(g, options);
  session.run(inputs_for(1, 4, 4, 1));  // plan 1
  session.run(inputs_for(2, 4, 4, 2));  // plan 2
  session.run(inputs_for(1, 4, 4, 3));  // plan 1 again, now the most recent
  EXPECT_EQ(session.plan().plan_number, 1);
  session.run(inputs_for(3, 4, 4, 4));  // plan 3 drops plan 2, the least recently used
  EXPECT_EQ(session.plan().plan_number, 3);
  const auto inputs = inputs_for(2, 4, 4, 5);
  expect_same(session.run(inputs), run_reference(g, inputs));
  EXPECT_EQ(session.plan().plan_number, 4);  // planned again; drops plan 1 (older than plan 3)
  session.run(inputs_for(3, 4, 4, 6));
  EXPECT_EQ(session.plan().plan_number, 3);  // still cached
  session.run(inputs_for(1, 4, 4, 7));
  EXPECT_EQ(session.plan().plan_number, 5);  // dropped, so planned again
}

TEST(DynamicShapes, StaticModelReplansForAnOpenBatchOnly) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3});
  m.output("y", onnx::TensorProto::FLOAT);
  m.raw_float("k", {3}, {1.0f, 2.0f, 3.0f});
  m.node("Mul", {"x", "k"}, {"y"}, "scale");
  const Graph g = import_onnx_bytes(m.bytes(), "scale.onnx", "");
  EXPECT_TRUE(g.prepared);
  EXPECT_TRUE(g.value_inputs.empty());
  Session session(g, cpu_only());
  EXPECT_EQ(session.plan().plan_number, 1);
  const std::map<std::string, Tensor> four{
      {"x", Tensor::from_vector<float>({4, 3}, seeded(12, 7))}};
  expect_same(session.run(four), run_reference(g, four));
  EXPECT_EQ(session.plan().plan_number, 2);
  // The model fixes the second dimension at 3: another size there is an error naming the input.
  const std::map<std::string, Tensor> wrong{
      {"x", Tensor::from_vector<float>({1, 4}, seeded(4, 8))}};
  try {
    session.run(wrong);
    FAIL() << "a fixed dimension took another size";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x' expects float32 [?, 3]"), std::string::npos)
        << e.what();
  }
  // The session still runs after the refusal.
  expect_same(session.run(four), run_reference(g, four));
}

TEST(DynamicShapes, MissingValueInputIsAnErrorNamingIt) {
  const Graph g = import_onnx_bytes(dynamic_model(), "dynamic.onnx", "");
  Session session(g, cpu_only());
  std::map<std::string, Tensor> inputs = inputs_for(1, 4, 4, 1);
  inputs.erase("hw");
  try {
    session.run(inputs);
    FAIL() << "ran without 'hw'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor given for input 'hw'"), std::string::npos)
        << e.what();
  }
}

// x: float32 [N, 3, H, W] with N, H and W open, as OCR detectors and FCNs export them.
//   y = ReduceMean(Reshape(Relu(Conv(x, stride 2, pads 1)), [N, 6, -1]), axis 2), z = Relu out.
// `minus_one`: the open dims are written as dim_value -1 (Paddle2ONNX) instead of dim_params.
std::string open_image_model(bool minus_one) {
  ModelBuilder m(13);
  onnx::ValueInfoProto* x = m.input("x", onnx::TensorProto::FLOAT, {-1, 3, -1, -1});
  if (minus_one) {
    for (auto& d : *x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (d.has_dim_param()) d.set_dim_value(-1);
    }
  }
  m.output("y", onnx::TensorProto::FLOAT);
  m.output("z", onnx::TensorProto::FLOAT);
  m.raw_float("W", {6, 3, 3, 3}, seeded(6 * 3 * 9, 21));
  m.raw_float("B", {6}, seeded(6, 22));
  m.raw_int64("zero", {}, {0});
  m.raw_int64("axes0", {1}, {0});
  m.raw_int64("c_rest", {2}, {6, -1});
  auto* conv = m.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  ModelBuilder::add_ints_attr(conv, "pads", {1, 1, 1, 1});
  ModelBuilder::add_ints_attr(conv, "strides", {2, 2});
  m.node("Relu", {"c"}, {"z"}, "relu");
  m.node("Shape", {"z"}, {"s"}, "shape");
  m.node("Gather", {"s", "zero"}, {"n"}, "batch");
  m.node("Unsqueeze", {"n", "axes0"}, {"nu"}, "batch_1d");
  ModelBuilder::add_int_attr(m.node("Concat", {"nu", "c_rest"}, {"to"}, "to"), "axis", 0);
  m.node("Reshape", {"z", "to"}, {"flat"}, "flatten");
  auto* mean = m.node("ReduceMean", {"flat"}, {"y"}, "mean");
  ModelBuilder::add_ints_attr(mean, "axes", {2});
  ModelBuilder::add_int_attr(mean, "keepdims", 0);
  return m.bytes();
}

std::map<std::string, Tensor> image_of(int64_t batch, int64_t h, int64_t w, uint32_t seed) {
  const Shape shape{batch, 3, h, w};
  return {{"x", Tensor::from_vector<float>(
                    shape, seeded(static_cast<size_t>(shape_numel(shape)), seed))}};
}

TEST(DynamicShapes, OpenHeightAndWidthWaitForTheFirstRunSymbolicOrMinusOne) {
  for (bool minus_one : {false, true}) {
    SCOPED_TRACE(minus_one ? "dims written -1" : "dims written as dim_params");
    const Graph g = import_onnx_bytes(open_image_model(minus_one), "open.onnx", "");
    EXPECT_FALSE(g.prepared);
    ASSERT_EQ(g.unsized_inputs.size(), 1u);
    const Value& x = g.value(g.unsized_inputs[0]);
    EXPECT_EQ(x.name, "x");
    EXPECT_EQ(x.open_dims, (std::vector<bool>{true, false, true, true}));
    Session session(g, cpu_only());
    EXPECT_EQ(session.plans_held(), 0);
    EXPECT_EQ(session.plan().plan_number, 0);
    ASSERT_FALSE(session.plan().warnings.empty());
    EXPECT_NE(session.plan().warnings.back().find("'x' [?, 3, ?, ?]"), std::string::npos)
        << session.plan().warnings.back();
    // Three image sizes as an OCR pipeline feeds them, then the first again: each matches the
    // reference runner on the same inputs, and a size seen before reuses its plan.
    struct Case {
      int64_t batch, h, w;
      int plan_number, held;
    };
    const Case cases[] = {{1, 32, 48, 1, 1}, {1, 17, 9, 2, 2}, {2, 64, 40, 3, 3}, {1, 32, 48, 1, 3}};
    uint32_t seed = 40;
    for (const Case& c : cases) {
      SCOPED_TRACE(std::to_string(c.batch) + "x3x" + std::to_string(c.h) + "x" +
                   std::to_string(c.w));
      const auto inputs = image_of(c.batch, c.h, c.w, ++seed);
      const std::vector<Tensor> got = session.run(inputs);
      expect_same(got, run_reference(g, inputs));
      ASSERT_EQ(got.size(), 2u);
      EXPECT_EQ(got[0].shape(), (Shape{c.batch, 6}));
      EXPECT_EQ(got[1].shape(), (Shape{c.batch, 6, (c.h + 1) / 2, (c.w + 1) / 2}));
      EXPECT_EQ(session.plan().plan_number, c.plan_number);
      EXPECT_EQ(session.plans_held(), c.held);
      for (const NodePlacement& p : session.plan().nodes) {
        if (p.op_type == "Conv" || p.op_type == "Relu") {
          EXPECT_EQ(p.plugin, "cpu") << p.node;
        }
      }
    }
    // A size the model fixes (3 channels) is still checked, naming the input.
    try {
      session.run({{"x", Tensor::from_vector<float>({1, 4, 8, 8}, seeded(256, 3))}});
      FAIL() << "4 channels were accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("input 'x' expects float32 [?, 3, ?, ?]"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(DynamicShapes, PlanCacheBoundsThePlansHeldForManySizes) {
  const Graph g = import_onnx_bytes(open_image_model(false), "open.onnx", "");
  SessionOptions options = cpu_only();
  options.plan_cache_size = 2;
  Session session(g, options);
  for (int64_t h = 8; h < 14; ++h) {
    const auto inputs = image_of(1, h, 10, static_cast<uint32_t>(h));
    expect_same(session.run(inputs), run_reference(g, inputs));
    EXPECT_LE(session.plans_held(), 2);
  }
  EXPECT_EQ(session.plan().plan_number, 6);
}

TEST(DynamicShapes, AGivenInputShapePlansAtOnceAndKeepsTheDimsOpen) {
  ImportOptions import;
  import.input_shapes["x"] = {1, 3, 20, 30};
  const Graph g = import_onnx_bytes(open_image_model(true), "open.onnx", "", import);
  EXPECT_TRUE(g.prepared);
  EXPECT_TRUE(g.unsized_inputs.empty());
  Session session(g, cpu_only());
  EXPECT_EQ(session.plans_held(), 1);
  const auto other = image_of(1, 24, 24, 5);
  expect_same(session.run(other), run_reference(g, other));
  EXPECT_EQ(session.plan().plan_number, 2);
}

TEST(DynamicShapes, NegativeDimsOtherThanMinusOneAreRefusedNamingTheInput) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, -1})
      ->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(-2);
  m.output("y", onnx::TensorProto::FLOAT);
  m.node("Relu", {"x"}, {"y"}, "relu");
  try {
    import_onnx_bytes(m.bytes(), "neg.onnx", "");
    FAIL() << "a -2 dimension was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x' has a negative dimension (-2)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera
