// If: a branch chosen by a condition known when the graph is prepared (from an input's value, as
// a voice-activity detector picks its path from the sample rate, or from a shape) is inlined and
// runs on the cpu plugin. Each output is checked against values computed here by hand from the
// branch the condition picks, so the oracle does not share the inlining under test.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model_builder.hpp"
#include "session_util.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/passes.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using test::ModelBuilder;

using test::cpu_only;
using test::seeded;

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

// x: float32 [1, 3, 160, 160], too large to bind by value: y = If(sum(x) > 0) Relu(x) else Neg(x).
std::string sign_model() {
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
  return m.bytes();
}

TEST(ControlFlow, IfOnActivationsRunsInStages) {
  const Graph g = import_onnx_bytes(sign_model(), "sign.onnx", "");
  EXPECT_FALSE(g.prepared);
  EXPECT_TRUE(g.value_inputs.empty());
  EXPECT_TRUE(g.unsized_inputs.empty());
  Session session(g, cpu_only());
  ASSERT_FALSE(session.plan().warnings.empty());
  EXPECT_NE(session.plan().warnings.back().find("runs in stages"), std::string::npos);
  const Shape shape{1, 3, 160, 160};
  for (float shift : {0.5f, -0.5f, 0.5f}) {
    SCOPED_TRACE("inputs shifted by " + std::to_string(shift));
    std::vector<float> x = seeded(static_cast<size_t>(shape_numel(shape)), 9);
    for (float& v : x) v += shift;
    const std::vector<Tensor> y = session.run({{"x", Tensor::from_vector<float>(shape, x)}});
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = shift > 0 ? std::max(x[i], 0.0f) : -x[i];
    expect_near(y[0], shape, want);
    bool branch_node = false;
    for (const NodePlacement& p : session.plan().nodes) {
      EXPECT_NE(p.op_type, "If");
      branch_node = branch_node || p.node.rfind("by_sign/", 0) == 0;
    }
    EXPECT_TRUE(branch_node);
    EXPECT_NE(session.plan().warnings.back().find("'positive'"), std::string::npos)
        << session.plan().warnings.back();
  }
  // The first stage planned once; the rest once per condition value seen.
  EXPECT_EQ(session.plans_held(), 3);
}

// A detector's tail: boxes and scores computed by a 1x1 convolution from features, then
// NonMaxSuppression keeps some boxes and Gather takes their coordinates, and NonZero lists the
// positions of the confident scores. Every count depends on the data.
std::string detector_model() {
  ModelBuilder m(13);
  m.input("features", onnx::TensorProto::FLOAT, {1, 8, 4, 4});
  m.output("kept_boxes", onnx::TensorProto::FLOAT);
  m.output("confident", onnx::TensorProto::INT64);
  m.raw_float("w", {5, 8, 1, 1}, seeded(40, 31));
  m.raw_int64("shape_b", {3}, {1, 5, 16});
  m.raw_int64("rows", {2}, {16, 4});
  m.raw_int64("zero1", {1}, {0});
  m.raw_int64("four", {1}, {4});
  m.raw_int64("five", {1}, {5});
  m.raw_int64("axis1", {1}, {1});
  m.raw_int64("max_out", {1}, {3});
  m.raw_float("iou", {1}, {0.3f});
  m.raw_float("score_min", {1}, {0.2f});
  m.raw_float("half", {}, {0.5f});
  m.raw_int64("two", {}, {2});
  m.node("Conv", {"features", "w"}, {"head"}, "head");        // [1, 5, 4, 4]
  m.node("Reshape", {"head", "shape_b"}, {"flat"}, "flat");   // [1, 5, 16]
  m.node("Slice", {"flat", "zero1", "four", "axis1"}, {"coords"}, "coords");  // [1, 4, 16]
  ModelBuilder::add_ints_attr(m.node("Transpose", {"coords"}, {"boxes"}, "boxes"), "perm",
                              {0, 2, 1});  // [1, 16, 4]
  m.node("Slice", {"flat", "four", "five", "axis1"}, {"logit"}, "logit");  // [1, 1, 16]
  m.node("Sigmoid", {"logit"}, {"scores"}, "scores");
  m.node("NonMaxSuppression", {"boxes", "scores", "max_out", "iou", "score_min"}, {"selected"},
         "nms");  // [k, 3]
  ModelBuilder::add_int_attr(m.node("Gather", {"selected", "two"}, {"box_index"}, "box_index"),
                             "axis", 1);  // [k]
  m.node("Reshape", {"boxes", "rows"}, {"box_rows"}, "box_rows");  // [16, 4]
  m.node("Gather", {"box_rows", "box_index"}, {"kept_boxes"}, "kept");  // [k, 4]
  m.node("Greater", {"scores", "half"}, {"sure"}, "sure");
  m.node("NonZero", {"sure"}, {"confident"}, "confident");  // [3, n]
  return m.bytes();
}

TEST(ControlFlow, DetectorPostProcessingRunsInStagesOnCpu) {
  const Graph g = import_onnx_bytes(detector_model(), "detector.onnx", "");
  EXPECT_FALSE(g.prepared);
  Session session(g, cpu_only());
  for (uint32_t seed : {1u, 2u, 3u, 1u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::map<std::string, Tensor> inputs{
        {"features", Tensor::from_vector<float>({1, 8, 4, 4}, seeded(128, seed))}};
    const std::vector<Tensor> got = session.run(inputs);
    const std::vector<Tensor> want = run_reference(g, inputs);
    ASSERT_EQ(got.size(), 2u);
    ASSERT_EQ(got[0].shape(), want[0].shape());
    EXPECT_LE(got[0].shape()[0], 3);
    EXPECT_EQ(got[0].shape()[1], 4);
    for (int64_t i = 0; i < want[0].numel(); ++i) {
      EXPECT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-5f) << i;
    }
    ASSERT_EQ(got[1].shape(), want[1].shape());
    for (int64_t i = 0; i < want[1].numel(); ++i) {
      EXPECT_EQ(got[1].data<int64_t>()[i], want[1].data<int64_t>()[i]) << i;
    }
    // The convolution ran on cpu in the first stage, not folded into the reference.
    bool conv_on_cpu = false;
    for (const NodePlacement& p : session.plan().nodes) {
      conv_on_cpu = conv_on_cpu || (p.op_type == "Conv" && p.plugin == "cpu");
    }
    EXPECT_TRUE(conv_on_cpu);
  }
}

// A scripted recurrence: h = Tanh(MatMul(h, W) + x) for M steps (M an input, so bound by value),
// each step's h also a scan output; W and x are read from the enclosing graph.
std::string recurrence_model() {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 4});
  m.input("steps", onnx::TensorProto::INT64, {});
  m.output("h_final", onnx::TensorProto::FLOAT);
  m.output("h_all", onnx::TensorProto::FLOAT);
  m.raw_float("W", {4, 4}, seeded(16, 41));
  m.raw_float("h0", {1, 4}, {0.1f, -0.2f, 0.3f, 0.0f});
  ModelBuilder body(13);
  body.input("i", onnx::TensorProto::INT64, {});
  body.input("cond_in", onnx::TensorProto::BOOL, {});
  body.input("h", onnx::TensorProto::FLOAT, {1, 4});
  body.node("MatMul", {"h", "W"}, {"hw"}, "hw");
  body.node("Add", {"hw", "x"}, {"pre"}, "pre");
  body.node("Tanh", {"pre"}, {"h_next"}, "act");
  body.node("Identity", {"cond_in"}, {"cond_out"}, "keep_going");
  body.node("Identity", {"h_next"}, {"h_scan"}, "scan");
  body.output("cond_out", onnx::TensorProto::BOOL);
  body.output("h_next", onnx::TensorProto::FLOAT);
  body.output("h_scan", onnx::TensorProto::FLOAT);
  auto* n = m.node("Loop", {"steps", "", "h0"}, {"h_final", "h_all"}, "recur");
  ModelBuilder::add_graph_attr(n, "body", body);
  return m.bytes();
}

TEST(ControlFlow, LoopUnrollsForItsTripCountWithScanOutputs) {
  const Graph g = import_onnx_bytes(recurrence_model(), "recur.onnx", "");
  Session session(g, cpu_only());
  const std::vector<float> x = seeded(4, 42), w = seeded(16, 41);
  for (int64_t steps : {3, 1, 5}) {
    SCOPED_TRACE(std::to_string(steps) + " steps");
    const std::vector<Tensor> got =
        session.run({{"x", Tensor::from_vector<float>({1, 4}, x)},
                     {"steps", Tensor::from_vector<int64_t>({}, {steps})}});
    std::vector<float> h{0.1f, -0.2f, 0.3f, 0.0f}, all;
    for (int64_t t = 0; t < steps; ++t) {
      std::vector<float> next(4);
      for (int j = 0; j < 4; ++j) {
        float acc = x[static_cast<size_t>(j)];
        for (int k = 0; k < 4; ++k) acc += h[static_cast<size_t>(k)] * w[static_cast<size_t>(k * 4 + j)];
        next[static_cast<size_t>(j)] = std::tanh(acc);
      }
      h = next;
      all.insert(all.end(), h.begin(), h.end());
    }
    ASSERT_EQ(got.size(), 2u);
    expect_near(got[0], {1, 4}, h);
    expect_near(got[1], {steps, 1, 4}, all);
    for (const NodePlacement& p : session.plan().nodes) EXPECT_NE(p.op_type, "Loop") << p.node;
  }
}

TEST(ControlFlow, ALoopBeyondTheUnrollLimitIsRefusedNamingIt) {
  const Graph g = import_onnx_bytes(recurrence_model(), "recur.onnx", "");
  Session session(g, cpu_only());
  try {
    session.run({{"x", Tensor::from_vector<float>({1, 4}, seeded(4, 1))},
                 {"steps", Tensor::from_vector<int64_t>({}, {kMaxLoopIterations + 1})}});
    FAIL() << "a loop of " << kMaxLoopIterations + 1 << " iterations was unrolled";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'recur' (Loop)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("more than 4096 iterations"), std::string::npos)
        << e.what();
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
