// The shared differential suite on the cpu plugin (reference runs what cpu refuses), and a check
// that cpu alone takes every node of every case: a case it cannot run is a gap in the op set,
// and this test names it with the reason cpu gave.
#include <gtest/gtest.h>

#include "differential_suite.hpp"
#include "tessera/session.hpp"

TESSERA_DIFFERENTIAL_SUITE(cpu, "cpu");

namespace tessera {
namespace {

class CpuTakesEveryNode : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuTakesEveryNode, WithoutReference) {
  const test::DifferentialCase* c = nullptr;
  for (const test::DifferentialCase& candidate : test::differential_cases()) {
    if (candidate.name == GetParam()) c = &candidate;
  }
  ASSERT_NE(c, nullptr);
  SessionOptions options;
  options.targets = {"cpu"};
  options.plugin_dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  // Session construction throws naming the node no target can run.
  try {
    Session session(c->build(), options);
    for (const NodePlacement& p : session.plan().nodes) {
      EXPECT_EQ(p.plugin, "cpu") << p.node << ": " << p.reason;
    }
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(cpu, CpuTakesEveryNode,
                         ::testing::ValuesIn(test::differential_case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tessera
