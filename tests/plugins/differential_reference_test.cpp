// The shared differential cases on the `reference` plugin, checked against ONNX Runtime. The
// reference plugin runs the kernels tessera::run_reference runs (core/ops), so comparing the two
// would test nothing; ORT computes every case's values independently. ORT runs once per test
// process, over all the cases the process is going to run (ctest runs the whole list in one
// process, see CMakeLists.txt; --gtest_filter runs just the ones it selects).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "differential_suite.hpp"
#include "graph_builder.hpp"
#include "ort_oracle.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"
#include "test_requirements.hpp"

namespace tessera::test {
namespace {

constexpr char kSuite[] = "ReferenceVersusOrt";

// Cases ONNX Runtime refuses to load: text its error must contain, and why the case stays.
// Batch-first recurrent layers (layout 1) are refused by its CPU kernels; the ONNX backend node
// tests (test_lstm_batchwise, test_gru_batchwise) check the reference kernels' layout 1 instead.
// Its LRN takes odd window sizes only, which ONNX does not require; the backend tests (test_lrn,
// test_lrn_default) check the odd ones. The cpu plugin is checked against the reference kernels
// on every such case.
struct Refusal {
  std::string error, why;
};
const std::map<std::string, Refusal>& ort_refuses() {
  static const std::map<std::string, Refusal> refused = {
      {"LstmBatchFirstPeepholes", {"layout == 1", "batch-first recurrent layers"}},
      {"GruResetFirstBatchFirst", {"layout == 1", "batch-first recurrent layers"}},
      {"LrnEvenWindow", {"size_ % 2 == 1", "LRN windows of even size"}},
  };
  return refused;
}

class ReferenceVersusOrt : public ::testing::TestWithParam<std::string> {};

// The inputs a case runs on, here and in ORT.
std::map<std::string, Tensor> case_inputs(const Graph& graph) {
  return random_inputs(graph, 5);
}

// Whether `test` is one of this suite's (its suite name is "<prefix>/ReferenceVersusOrt").
bool in_this_suite(const ::testing::TestSuite& suite) {
  const std::string name = suite.name();
  const size_t slash = name.rfind('/');
  return name.substr(slash == std::string::npos ? 0 : slash + 1) == kSuite;
}

// ORT's values for every case of this suite that this process runs, computed on first use.
const std::map<std::string, OrtResult>& ort_values() {
  static const std::map<std::string, OrtResult> values = [] {
    std::vector<OrtCase> cases;
    const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
    for (int s = 0; s < unit.total_test_suite_count(); ++s) {
      const ::testing::TestSuite& suite = *unit.GetTestSuite(s);
      if (!in_this_suite(suite)) continue;
      for (int t = 0; t < suite.total_test_count(); ++t) {
        const ::testing::TestInfo& info = *suite.GetTestInfo(t);
        if (!info.should_run()) continue;
        const std::string test = info.name();  // "MatchesOnnxRuntime/<case>"
        const std::string name = test.substr(test.rfind('/') + 1);
        const DifferentialCase* c = find_differential_case(name);
        if (c == nullptr) continue;
        OrtCase oc{name, c->onnx ? c->onnx() : c->build(), {}};
        oc.inputs = case_inputs(oc.graph);
        cases.push_back(std::move(oc));
      }
    }
    return run_onnxruntime(cases);
  }();
  return values;
}

TEST_P(ReferenceVersusOrt, MatchesOnnxRuntime) {
  if (!onnxruntime_available()) {
    TESSERA_SKIP_WITHOUT("ONNX Runtime") << "python3 -c 'import onnxruntime, numpy' failed";
  }
  const DifferentialCase* c = find_differential_case(GetParam());
  ASSERT_NE(c, nullptr);
  const auto found = ort_values().find(c->name);
  ASSERT_NE(found, ort_values().end()) << "ONNX Runtime did not run case " << c->name;
  const OrtResult& want = found->second;
  if (const auto refused = ort_refuses().find(c->name); refused != ort_refuses().end()) {
    ASSERT_NE(want.error.find(refused->second.error), std::string::npos)
        << "ONNX Runtime was expected to refuse " << c->name << " (" << refused->second.error
        << "), and did not; take it off ort_refuses():\n"
        << want.error;
    GTEST_SKIP() << "ONNX Runtime refuses " << refused->second.why << " (" << refused->second.error
                 << "); the ONNX backend node tests check these semantics";
  }
  ASSERT_TRUE(want.error.empty()) << "ONNX Runtime failed on " << c->name << ":\n" << want.error;

  const Graph graph = c->build();
  PluginHostOptions host_options;
  host_options.use_environment = true;
  auto host = std::make_shared<const PluginHost>(host_options);
  ASSERT_NE(host->find("reference"), nullptr) << "the reference plugin is not loaded";
  SessionOptions options;
  options.targets = {"reference"};
  Session session(graph, options, host);
  std::string placement;
  for (const NodePlacement& p : session.plan().nodes) {
    EXPECT_EQ(p.plugin, "reference") << p.node << ": " << p.reason;
    placement += "\n  " + p.node + ": " + p.plugin;
  }
  const std::vector<Tensor> got = session.run(case_inputs(graph));
  expect_outputs_match(*c, got, want.outputs, "ONNX Runtime", " (placement:" + placement + ")");
}

INSTANTIATE_TEST_SUITE_P(reference, ReferenceVersusOrt,
                         ::testing::ValuesIn(differential_case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tessera::test

// The shared suite's TEST_P is linked in with the cases; this binary instantiates its own suite
// instead.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PluginDifferentialTest);
