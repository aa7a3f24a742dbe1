// Driver failures injected through the target option `inject_fault` (allocation, pipeline
// creation, queue submission): each gives an error naming the node, the process goes on, and a
// fresh session on the same device runs and matches the reference kernels. A device without
// shaderInt64 (target option `shader_int64=off`) refuses the ops whose shaders compute in int64_t
// with that reason and still takes the raw moves. Also: bad options are refused with the choices
// named.
#include <functional>

#include "vulkan_test_util.hpp"

namespace tessera::test {
namespace {

Graph small_conv() {
  return GraphBuilder()
      .input("x", {1, 3, 8, 8})
      .constant("w", random_tensor({4, 3, 3, 3}, 21))
      .node("Conv", {"x", "w"}, {"c"}, attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
            "first_conv")
      .node("Relu", {"c"}, {"y"}, {}, "after_conv")
      .output("y")
      .build();
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

void expect_healthy_afterwards() {
  const Graph graph = small_conv();
  Session session(graph, vulkan_options(), vulkan_host());
  const auto inputs = random_inputs(graph, 3);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  ASSERT_EQ(got.size(), 1u);
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    ASSERT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-4);
  }
}

class VulkanFaultTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanFaultTest, ErrorNamesTheNodeAndTheProcessGoesOn) {
  TESSERA_REQUIRE_VULKAN();
  const Graph graph = small_conv();
  const SessionOptions options = vulkan_options({}, {{"inject_fault", GetParam()}});
  const std::string error = error_of([&] {
    Session session(graph, options, vulkan_host());
    session.run(random_inputs(graph, 3));
  });
  ASSERT_FALSE(error.empty()) << "an injected " << GetParam() << " failure went unnoticed";
  EXPECT_NE(error.find("first_conv"), std::string::npos) << error;
  EXPECT_NE(error.find("injected fault"), std::string::npos) << error;
  expect_healthy_afterwards();
}

INSTANTIATE_TEST_SUITE_P(vulkan, VulkanFaultTest, ::testing::Values("alloc", "pipeline", "submit"));

TEST(VulkanFaultTest, CompileFailureFallsBackToTheNextTarget) {
  TESSERA_REQUIRE_VULKAN();
  const Graph graph = small_conv();
  SessionOptions options = vulkan_options({"reference"}, {{"inject_fault", "pipeline"}});
  options.allow_fallback = true;
  Session session(graph, options, vulkan_host());
  const auto inputs = random_inputs(graph, 4);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    ASSERT_NEAR(got[0].data<float>()[i], want[0].data<float>()[i], 1e-5);
  }
}

TEST(VulkanFaultTest, WithoutShaderInt64TheInt64ShadersAreRefused) {
  TESSERA_REQUIRE_VULKAN();
  const Graph graph = GraphBuilder()
                          .input("a", {2, 3}, DType::kInt64)
                          .input("b", {3}, DType::kInt64)
                          .node("Equal", {"a", "b"}, {"eq"}, {}, "int_equal")
                          .node("Where", {"eq", "a", "b"}, {"w"}, {}, "raw_where")
                          .node("Transpose", {"w"}, {"t"}, {}, "raw_transpose")
                          .node("Add", {"t", "t"}, {"y"}, {}, "int_add")
                          .output("y")
                          .build();
  SessionOptions options = vulkan_options({"reference"}, {{"shader_int64", "off"}});
  Session session(graph, options, vulkan_host());
  for (const NodePlacement& p : session.plan().nodes) {
    const bool int64_shader = p.node == "int_equal" || p.node == "int_add";
    EXPECT_EQ(p.plugin, int64_shader ? "reference" : "vulkan") << p.node << ": " << p.reason;
    if (int64_shader) {
      EXPECT_NE(p.reason.find("shaderInt64"), std::string::npos) << p.reason;
    }
  }
  const auto inputs = random_inputs(graph, 6);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  ASSERT_EQ(got.size(), 1u);
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    EXPECT_EQ(got[0].data<int64_t>()[i], want[0].data<int64_t>()[i]) << i;
  }
}

TEST(VulkanOptionsTest, UnknownOptionAndValueAreRefused) {
  const Graph graph = small_conv();
  const std::vector<std::pair<std::string, std::string>> bad = {{"colour", "red"},
                                                                {"validation", "maybe"},
                                                                {"inject_fault", "everything"},
                                                                {"shader_int64", "on"}};
  for (const auto& option : bad) {
    SessionOptions options = vulkan_options({}, {option});
    const std::string error = error_of([&] { Session session(graph, options, vulkan_host()); });
    EXPECT_FALSE(error.empty()) << option.first;
    EXPECT_NE(error.find(option.first), std::string::npos) << option.first << ": " << error;
  }
}

}  // namespace
}  // namespace tessera::test
