// Fuzz harness: deployment YAML text through parse_deploy_config, the strict loader every
// command that takes DEPLOY.yaml runs (load_deploy_config = checked file read + this).
#include <string>

#include "fuzz_target.hpp"
#include "tessera/deploy_config.hpp"

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR must name the source tree (tests/fuzz/CMakeLists.txt sets it)"
#endif

namespace {
// Anchored in configs/ like the seeds taken from there, so their relative paths resolve as
// they do for a user (existence checks of model, pack and plugin paths are only stat calls).
const std::string kConfigPath = TESSERA_SOURCE_DIR "/configs/fuzz.yaml";
}  // namespace

TESSERA_FUZZ_TARGET(config) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  return tessera::fuzz::run_input([&] {
    const tessera::DeployConfig config = tessera::parse_deploy_config(text, kConfigPath);
    tessera::fuzz::fuzz_require(!config.targets.empty(),
                                "an accepted deployment has no targets");
  });
}
