// Skips that name what this machine lacks. A test skips only for a named, expected condition (no
// OpenCL device, no ONNX Runtime, no libxgboost); its message's first line is "needs
// <requirement>" (the detail follows on the next), which tools/run-tests.sh's table groups by. In CI ($CI is "true") the
// machine must have every such tool, so the same condition fails the test instead of skipping:
// a CI run cannot turn green because PoCL or a Python package went missing.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace tessera_test {

inline bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

inline std::string requirement_message(const std::string& requirement) {
  return in_ci() ? "CI requires " + requirement + " (CI=true), absent here"
                 : "needs " + requirement;
}

}  // namespace tessera_test

// Usage, where GTEST_SKIP() could stand (a test body or SetUp):
//   if (!device) TESSERA_SKIP_WITHOUT("an OpenCL device") << probe.error;
#define TESSERA_SKIP_WITHOUT(requirement)                                                   \
  return GTEST_MESSAGE_(                                                                    \
      ::tessera_test::requirement_message(requirement).c_str(),                              \
      ::tessera_test::in_ci() ? ::testing::TestPartResult::kFatalFailure                    \
                              : ::testing::TestPartResult::kSkip)
