// If: a branch chosen by a condition known when the graph is prepared (from an input's value, as
// a voice-activity detector picks its path from the sample rate, or from a shape) is inlined and
// runs on the cpu plugin. Each output is checked against values computed here by hand from the
// branch the condition picks, so the oracle does not share the inlining under test.
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

void expect_near(const Tensor& got, const Shape& shape, const std::vector<float>& want) {
  ASSERT_EQ(got.shape(), shape);
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-5f * std::max(1.0f, std::fabs(want[i])))
        << "element " << i;
  }
}

// x: float32 [1, 8], sr: int64 scalar. y = If(sr == 16000) then Relu(x) * k else (x + k)[:, :4]
// (the else branch is narrower: ONNX lets branches differ in shape). Both read the outer
// initializer k; the else branch has an initializer of its own.
std::string sample_rate_model() {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 8});
  m.input("sr", onnx::TensorProto::INT64, {});
  m.output("y", onnx::TensorProto::FLOAT);
  m.raw_float("k", {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  m.raw_int64("rate", {}, {16000});
  m.node("Equal", {"sr", "rate"}, {"is16k"}, "is16k");
  ModelBuilder then_branch(13);
  then_branch.node("Relu", {"x"}, {"r"}, "relu");
  then_branch.node("Mul", {"r", "k"}, {"t"}, "scale");
  then_branch.output("t", onnx::TensorProto::FLOAT);
  ModelBuilder else_branch(13);
  else_branch.raw_int64("starts", {1}, {0});
  else_branch.raw_int64("ends", {1}, {4});
  else_branch.raw_int64("axes", {1}, {1});
  else_branch.node("Add", {"x", "k"}, {"a"}, "shift");
  else_branch.node("Slice", {"a", "starts", "ends", "axes"}, {"e"}, "narrow");
  else_branch.output("e", onnx::TensorProto::FLOAT);
  auto* n = m.node("If", {"is16k"}, {"y"}, "by_rate");
  ModelBuilder::add_graph_attr(n, "then_branch", then_branch);
  ModelBuilder::add_graph_attr(n, "else_branch", else_branch);
  return m.bytes();
}

TEST(ControlFlow, IfOnAnInputValueRunsTheBranchItPicksOnCpu) {
  const Graph g = import_onnx_bytes(sample_rate_model(), "vad.onnx", "");
  EXPECT_FALSE(g.prepared);  // the condition needs sr's value
  ASSERT_EQ(g.value_inputs.size(), 1u);
  EXPECT_EQ(g.value(g.value_inputs[0]).name, "sr");
  Session session(g, cpu_only());
  const std::vector<float> x = seeded(8, 3);
  const auto run = [&](int64_t sr) {
    return session.run({{"x", Tensor::from_vector<float>({1, 8}, x)},
                        {"sr", Tensor::from_vector<int64_t>({}, {sr})}});
  };
  std::vector<float> want16(8), want8(4);
  for (int i = 0; i < 8; ++i) want16[i] = std::max(x[i], 0.0f) * static_cast<float>(i + 1);
  for (int i = 0; i < 4; ++i) want8[i] = x[i] + static_cast<float>(i + 1);
  for (int64_t sr : {16000, 8000, 16000, 8000}) {
    SCOPED_TRACE("sr " + std::to_string(sr));
    const std::vector<Tensor> y = run(sr);
    ASSERT_EQ(y.size(), 1u);
    if (sr == 16000) {
      expect_near(y[0], {1, 8}, want16);
    } else {
      expect_near(y[0], {1, 4}, want8);
    }
    EXPECT_EQ(session.plan().plan_number, sr == 16000 ? 1 : 2);
    for (const NodePlacement& p : session.plan().nodes) {
      EXPECT_EQ(p.plugin, "cpu") << p.node;
      EXPECT_NE(p.op_type, "If");
      EXPECT_EQ(p.node.rfind("by_rate/", 0), 0u) << "not from the branch: " << p.node;
    }
  }
}

// x: float32 [1, 2, H, W] (H, W open). y = If(H > 16) then MaxPool 2x2 (x) else Neg(x); the
// then branch nests a second If (W > 16) whose branches read x from two scopes out.
std::string shape_test_model() {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 2, -1, -1});
  m.output("y", onnx::TensorProto::FLOAT);
  m.output("wide", onnx::TensorProto::FLOAT);
  m.raw_int64("two", {1}, {2});
  m.raw_int64("three", {1}, {3});
  m.raw_int64("sixteen", {1}, {16});
  m.node("Shape", {"x"}, {"s"}, "shape");
  m.node("Gather", {"s", "two"}, {"h"}, "height");
  m.node("Gather", {"s", "three"}, {"w"}, "width");
  m.node("Greater", {"h", "sixteen"}, {"tall"}, "tall");
  m.node("Greater", {"w", "sixteen"}, {"wide_c"}, "wide_c");
  ModelBuilder pool(13);
  auto* p = pool.node("MaxPool", {"x"}, {"pooled"}, "pool");
  ModelBuilder::add_ints_attr(p, "kernel_shape", {2, 2});
  ModelBuilder::add_ints_attr(p, "strides", {2, 2});
  pool.output("pooled", onnx::TensorProto::FLOAT);
  ModelBuilder negate(13);
  negate.node("Neg", {"x"}, {"negated"}, "neg");
  negate.output("negated", onnx::TensorProto::FLOAT);
  // Nested: reads wide_c and x from the outer graph, through the then branch's scope.
  ModelBuilder outer_then(13);
  auto* inner = outer_then.node("If", {"wide_c"}, {"inner_y"}, "inner");
  ModelBuilder::add_graph_attr(inner, "then_branch", pool);
  ModelBuilder::add_graph_attr(inner, "else_branch", negate);
  outer_then.output("inner_y", onnx::TensorProto::FLOAT);
  auto* n = m.node("If", {"tall"}, {"y"}, "outer");
  ModelBuilder::add_graph_attr(n, "then_branch", outer_then);
  ModelBuilder::add_graph_attr(n, "else_branch", negate);
  // An If whose branch outputs an enclosing value as it is (an Identity in its place).
  ModelBuilder pass_x(13);
  pass_x.output("x", onnx::TensorProto::FLOAT);
  auto* copy = m.node("If", {"wide_c"}, {"wide"}, "copy");
  ModelBuilder::add_graph_attr(copy, "then_branch", pass_x);
  ModelBuilder::add_graph_attr(copy, "else_branch", negate);
  return m.bytes();
}

TEST(ControlFlow, IfOnShapesPicksPerImageSizeWithNestedBranches) {
  const Graph g = import_onnx_bytes(shape_test_model(), "shape_if.onnx", "");
  Session session(g, cpu_only());
  for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{20, 18}, {20, 8}, {8, 20}}) {
    SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w));
    const Shape shape{1, 2, h, w};
    const std::vector<float> x = seeded(static_cast<size_t>(shape_numel(shape)), 7);
    const std::vector<Tensor> out = session.run({{"x", Tensor::from_vector<float>(shape, x)}});
    ASSERT_EQ(out.size(), 2u);
    std::vector<float> neg(x.size());
    for (size_t i = 0; i < x.size(); ++i) neg[i] = -x[i];
    if (h > 16 && w > 16) {
      std::vector<float> pooled;
      for (int64_t c = 0; c < 2; ++c) {
        for (int64_t i = 0; i < h / 2; ++i) {
          for (int64_t j = 0; j < w / 2; ++j) {
            float best = -INFINITY;
            for (int64_t di = 0; di < 2; ++di) {
              for (int64_t dj = 0; dj < 2; ++dj) {
                best = std::max(best, x[static_cast<size_t>((c * h + 2 * i + di) * w + 2 * j + dj)]);
              }
            }
            pooled.push_back(best);
          }
        }
      }
      expect_near(out[0], {1, 2, h / 2, w / 2}, pooled);
    } else {
      expect_near(out[0], shape, neg);
    }
    expect_near(out[1], shape, w > 16 ? x : neg);
    for (const NodePlacement& p : session.plan().nodes) EXPECT_NE(p.op_type, "If") << p.node;
  }
}

TEST(ControlFlow, IfOnActivationsIsRefusedNamingTheNode) {
  // The condition comes from a large input's values: not something to bind per value.
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 3, 160, 160});
  m.output("y", onnx::TensorProto::FLOAT);
  m.raw_float("zero", {}, {0.0f});
  m.node("ReduceSum", {"x"}, {"total"}, "total");
  m.node("Greater", {"total", "zero"}, {"positive"}, "positive");
  ModelBuilder a(13), b(13);
  a.node("Relu", {"x"}, {"ya"}, "relu");
  a.output("ya", onnx::TensorProto::FLOAT);
  b.node("Neg", {"x"}, {"yb"}, "neg");
  b.output("yb", onnx::TensorProto::FLOAT);
  auto* n = m.node("If", {"positive"}, {"y"}, "by_sign");
  ModelBuilder::add_graph_attr(n, "then_branch", a);
  ModelBuilder::add_graph_attr(n, "else_branch", b);
  try {
    import_onnx_bytes(m.bytes(), "sign.onnx", "");
    FAIL() << "an If on activations was accepted";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'by_sign' (If)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("activations"), std::string::npos) << e.what();
  }
}

TEST(ControlFlow, BranchesWithDifferentOutputCountsAreAnErrorNamingTheNode) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {2});
  m.output("y", onnx::TensorProto::FLOAT);
  m.raw("yes", onnx::TensorProto::BOOL, {}, "\1", 1);
  ModelBuilder a(13), b(13);
  a.node("Relu", {"x"}, {"ya"}, "relu");
  a.output("ya", onnx::TensorProto::FLOAT);
  a.output("x", onnx::TensorProto::FLOAT);
  b.node("Neg", {"x"}, {"yb"}, "neg");
  b.output("yb", onnx::TensorProto::FLOAT);
  auto* n = m.node("If", {"yes"}, {"y"}, "mismatch");
  ModelBuilder::add_graph_attr(n, "then_branch", a);
  ModelBuilder::add_graph_attr(n, "else_branch", b);
  try {
    import_onnx_bytes(m.bytes(), "mismatch.onnx", "");
    FAIL() << "a branch with two outputs for a one-output If was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'mismatch' (If)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has 2 outputs but the node has 1"), std::string::npos)
        << e.what();
  }
}

TEST(ControlFlow, AConstantConditionFoldsAtImport) {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {3});
  m.output("y", onnx::TensorProto::FLOAT);
  m.raw("no", onnx::TensorProto::BOOL, {}, "\0", 1);
  ModelBuilder a(13), b(13);
  a.node("Relu", {"x"}, {"ya"}, "relu");
  a.output("ya", onnx::TensorProto::FLOAT);
  b.node("Neg", {"x"}, {"yb"}, "neg");
  b.output("yb", onnx::TensorProto::FLOAT);
  auto* n = m.node("If", {"no"}, {"y"}, "fixed");
  ModelBuilder::add_graph_attr(n, "then_branch", a);
  ModelBuilder::add_graph_attr(n, "else_branch", b);
  const Graph g = import_onnx_bytes(m.bytes(), "fixed.onnx", "");
  EXPECT_TRUE(g.prepared);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Neg");
  Session session(g, cpu_only());
  const std::vector<Tensor> y =
      session.run({{"x", Tensor::from_vector<float>({3}, {1.0f, -2.0f, 3.0f})}});
  expect_near(y[0], {3}, {-1.0f, 2.0f, -3.0f});
}

}  // namespace
}  // namespace tessera
