// mobilenet_v2 from the zoo (random weights, opset 13): cpu (+reference for what cpu refuses)
// against the reference runner, logits within 1e-4 relative.
#include <gtest/gtest.h>

#include <cmath>

#include "graph_builder.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "zoo/zoo.hpp"

namespace tessera {
namespace {

TEST(CpuZoo, MobilenetV2MatchesReference) {
  const std::string bytes = zoo::build_zoo_model("mobilenet_v2", {});
  Graph g = import_onnx_bytes(bytes, "mobilenet_v2 (zoo)", "");
  const Graph reference_graph = g;
  const std::map<std::string, Tensor> inputs = test::random_inputs(g, 11);
  SessionOptions options;
  options.targets = {"cpu", "reference"};
  options.plugin_dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  Session session(std::move(g), options);
  int on_cpu = 0;
  for (const NodePlacement& p : session.plan().nodes) on_cpu += p.plugin == "cpu";
  EXPECT_GT(on_cpu, 0);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(reference_graph, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].shape(), want[o].shape());
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const float w = want[o].data<float>()[i];
      ASSERT_NEAR(got[o].data<float>()[i], w, 1e-4f * std::max(1.0f, std::fabs(w)))
          << "output " << o << " element " << i;
    }
  }
}

}  // namespace
}  // namespace tessera
