// Shapes decided at run time: a model with an open batch dimension and an input that decides a
// Resize's output size runs on the cpu plugin for several input signatures in one Session. Each
// run is compared with the reference runner on the same inputs (the oracle), each signature gets
// its own plan, and a signature seen before reuses its cached plan.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model_builder.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using test::ModelBuilder;

SessionOptions cpu_only() {
  SessionOptions options;
  options.targets = {"cpu"};
  options.plugin_dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  return options;
}

std::vector<float> seeded(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

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

}  // namespace
}  // namespace tessera
