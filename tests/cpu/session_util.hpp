// What the cpu plugin's session tests share: options for a session on the cpu plugin alone, and
// seeded inputs.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "tessera/session.hpp"

namespace tessera::test {

// The cpu plugin alone, from this build tree's plugins, whatever the environment says.
inline SessionOptions cpu_only() {
  SessionOptions options;
  options.targets = {"cpu"};
  options.plugin_dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  return options;
}

// `n` floats uniform in [-1, 1) from `seed`.
inline std::vector<float> seeded(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace tessera::test
