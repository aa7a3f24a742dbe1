// Cases and the test body of the shared differential suite (see differential_suite.hpp).
#include "differential_suite.hpp"

#include <cmath>
#include <cstring>

#include "graph_builder.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera::test {
namespace {

Graph unary(const std::string& op, Shape shape, Attributes a = {}) {
  return GraphBuilder().input("x", shape).node(op, {"x"}, {"y"}, a).output("y").build();
}

Graph binary(const std::string& op, Shape a, Shape b) {
  return GraphBuilder().input("a", a).input("b", b).node(op, {"a", "b"}, {"y"}).output("y").build();
}

Graph conv(Shape x, Shape w, Attributes a, bool bias) {
  GraphBuilder b;
  b.input("x", x).constant("w", random_tensor(w, 11));
  if (bias) b.constant("bias", random_tensor({w[0]}, 12));
  return b.node("Conv", {"x", "w", bias ? "bias" : ""}, {"y"}, a).output("y").build();
}

std::vector<DifferentialCase> make_cases() {
  using V = std::vector<int64_t>;
  std::vector<DifferentialCase> c;
  c.push_back({"ConvBasic", [] { return conv({1, 3, 8, 8}, {4, 3, 3, 3}, {}, true); }});
  c.push_back({"ConvPadStride", [] {
                 return conv({1, 4, 9, 9}, {6, 4, 3, 3},
                             attrs({{"pads", V{1, 1, 1, 1}}, {"strides", V{2, 2}}}), true);
               }});
  c.push_back({"ConvDilated", [] {
                 return conv({1, 2, 10, 10}, {3, 2, 3, 3},
                             attrs({{"dilations", V{2, 2}}, {"pads", V{2, 2, 2, 2}}}), false);
               }});
  c.push_back({"ConvDepthwise", [] {
                 return conv({1, 8, 7, 7}, {8, 1, 3, 3},
                             attrs({{"group", int64_t{8}}, {"pads", V{1, 1, 1, 1}}}), true);
               }});
  c.push_back({"ConvGrouped1x1", [] {
                 return conv({2, 6, 5, 5}, {4, 3, 1, 1}, attrs({{"group", int64_t{2}}}), true);
               }});
  c.push_back(
      {"MaxPool", [] {
         return unary(
             "MaxPool", {1, 3, 9, 9},
             attrs({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}));
       }});
  c.push_back({"AveragePool", [] {
                 return unary("AveragePool", {1, 3, 8, 8},
                              attrs({{"kernel_shape", V{2, 2}}, {"strides", V{2, 2}}}));
               }});
  c.push_back({"GlobalAveragePool", [] { return unary("GlobalAveragePool", {2, 5, 4, 3}); }});
  c.push_back({"Gemm", [] {
                 return GraphBuilder()
                     .input("a", {3, 5})
                     .constant("b", random_tensor({4, 5}, 21))
                     .constant("c", random_tensor({4}, 22))
                     .node("Gemm", {"a", "b", "c"}, {"y"},
                           attrs({{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"MatMul", [] { return binary("MatMul", {2, 3, 4}, {4, 5}); }});
  c.push_back({"AddSameShape", [] { return binary("Add", {2, 3, 4}, {2, 3, 4}); }});
  c.push_back({"AddBroadcast", [] { return binary("Add", {2, 3, 4}, {3, 1}); }});
  c.push_back({"MulBroadcast", [] { return binary("Mul", {1, 4, 2, 2}, {4, 1, 1}); }});
  c.push_back({"SubScalar", [] { return binary("Sub", {2, 5}, {}); }});
  c.push_back({"Relu", [] { return unary("Relu", {2, 3, 4, 5}); }});
  c.push_back({"Sigmoid", [] { return unary("Sigmoid", {4, 7}); }});
  c.push_back({"Clip6", [] {
                 return GraphBuilder()
                     .input("x", {3, 8})
                     .constant("lo", Tensor::from_vector<float>({}, {0.0f}))
                     .constant("hi", Tensor::from_vector<float>({}, {0.5f}))
                     .node("Clip", {"x", "lo", "hi"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"Softmax", [] {
                 return unary("Softmax", {3, 10}, attrs({{"axis", int64_t{-1}}}));
               }});
  c.push_back({"Concat", [] {
                 return GraphBuilder()
                     .input("a", {1, 2, 3})
                     .input("b", {1, 4, 3})
                     .node("Concat", {"a", "b"}, {"y"}, attrs({{"axis", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"Reshape", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 4})
                     .constant("shape", Tensor::from_vector<int64_t>({2}, {6, -1}))
                     .node("Reshape", {"x", "shape"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"Transpose", [] {
                 return unary("Transpose", {2, 3, 4}, attrs({{"perm", V{2, 0, 1}}}));
               }});
  c.push_back({"ConvReluPoolChain", [] {
                 return GraphBuilder()
                     .input("x", {1, 3, 8, 8})
                     .constant("w", random_tensor({4, 3, 3, 3}, 31))
                     .node("Conv", {"x", "w"}, {"c"}, attrs({{"pads", V{1, 1, 1, 1}}}))
                     .node("Relu", {"c"}, {"r"})
                     .node("MaxPool", {"r"}, {"p"},
                           attrs({{"kernel_shape", V{2, 2}}, {"strides", V{2, 2}}}))
                     .node("Flatten", {"p"}, {"f"})
                     .constant("fw", random_tensor({10, 64}, 32))
                     .node("Gemm", {"f", "fw"}, {"g"}, attrs({{"transB", int64_t{1}}}))
                     .node("Softmax", {"g"}, {"y"})
                     .output("y")
                     .build();
               }});
  return c;
}

}  // namespace

const std::vector<DifferentialCase>& differential_cases() {
  static const std::vector<DifferentialCase> cases = make_cases();
  return cases;
}

std::vector<std::string> differential_case_names() {
  std::vector<std::string> names;
  for (const DifferentialCase& c : differential_cases()) names.push_back(c.name);
  return names;
}

std::string differential_test_name(
    const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
  return std::get<1>(info.param);
}

TEST_P(PluginDifferentialTest, MatchesReference) {
  const auto& [spec, case_name] = GetParam();
  const std::string plugin_name = spec.substr(0, spec.find(':'));
  const DifferentialCase* c = nullptr;
  for (const DifferentialCase& candidate : differential_cases()) {
    if (candidate.name == case_name) c = &candidate;
  }
  ASSERT_NE(c, nullptr);

  PluginHostOptions host_options;
  host_options.use_environment = true;
  auto host = std::make_shared<const PluginHost>(host_options);
  auto plugin = host->find(plugin_name);
  if (!plugin) {
    std::string why = "not found in any searched directory";
    for (const PluginRefusal& r : host->refusals()) {
      if (r.name == plugin_name) why = "refused: " + r.reason;
    }
    FAIL() << "plugin '" << plugin_name << "' is not loaded: " << why;
  }
  const size_t colon = spec.find(':');
  const auto devices = plugin->probe(colon == std::string::npos ? "" : spec.substr(colon + 1));
  std::string unusable;
  bool usable = false;
  for (const PluginDeviceInfo& d : devices) {
    usable = usable || d.score > 0;
    unusable += " [" + d.name + ": " + d.unusable_reason + "]";
  }
  if (!usable)
    GTEST_SKIP() << "plugin '" << plugin_name << "' has no usable device here:" << unusable;

  const Graph graph = c->build();
  SessionOptions options;
  options.targets = {spec};
  if (plugin_name != "reference") options.targets.push_back("reference");
  Session session(graph, options, host);
  bool used = false;
  std::string reasons;
  for (const NodePlacement& p : session.plan().nodes) {
    used = used || p.plugin == plugin_name;
    reasons += "\n  " + p.node + ": " + p.reason;
  }
  const auto inputs = random_inputs(graph, 5);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].dtype(), want[o].dtype());
    ASSERT_EQ(got[o].shape(), want[o].shape());
    if (want[o].dtype() == DType::kFloat32) {
      const float* g = got[o].data<float>();
      const float* w = want[o].data<float>();
      for (int64_t i = 0; i < want[o].numel(); ++i) {
        ASSERT_LE(std::fabs(g[i] - w[i]), c->tolerance * (1.0 + std::fabs(w[i])))
            << case_name << " output " << o << " element " << i << ": got " << g[i] << ", want "
            << w[i] << " (placement:" << reasons << ")";
      }
    } else {
      ASSERT_EQ(std::memcmp(got[o].raw(), want[o].raw(), want[o].nbytes()), 0);
    }
  }
  if (!used) GTEST_SKIP() << "values match, but " << plugin_name << " took no node:" << reasons;
}

}  // namespace tessera::test
