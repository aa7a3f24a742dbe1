// Shared by the vulkan tests: the target they run (lavapipe through 'vulkan:any' with the
// validation layer failing any call it reports on), a skip when no device or layer exists, and a
// session run compared with the reference kernels.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "test_requirements.hpp"

namespace tessera::test {

inline const char* kVulkanTarget = "vulkan:any";

// Session options with 'vulkan:any' first (validation on, plus `extra` target options), then
// `fallback` targets.
inline SessionOptions vulkan_options(std::vector<std::string> fallback = {},
                                     std::vector<std::pair<std::string, std::string>> extra = {}) {
  SessionOptions options;
  options.targets = {kVulkanTarget};
  options.targets.insert(options.targets.end(), fallback.begin(), fallback.end());
  TargetSettings& settings = options.target_settings[kVulkanTarget];
  settings.options = {{"validation", "on"}};
  settings.options.insert(settings.options.end(), extra.begin(), extra.end());
  settings.origin = "tests/vulkan";
  return options;
}

inline std::shared_ptr<const PluginHost> vulkan_host() {
  static const std::shared_ptr<const PluginHost> host = [] {
    PluginHostOptions options;
    options.use_environment = true;
    return std::make_shared<const PluginHost>(options);
  }();
  return host;
}

// "" when a usable Vulkan device is here, else why not (every device's reason).
inline std::string vulkan_unusable() {
  auto plugin = vulkan_host()->find("vulkan");
  if (!plugin) return "the vulkan plugin is not loaded";
  std::string why;
  for (const PluginDeviceInfo& d : plugin->probe("any")) {
    if (d.score > 0) return "";
    why += " [" + d.name + ": " + d.unusable_reason + "]";
  }
  return why;
}

#define TESSERA_REQUIRE_VULKAN()                                                               \
  do {                                                                                         \
    const std::string why_unusable = ::tessera::test::vulkan_unusable();                       \
    if (!why_unusable.empty()) {                                                               \
      TESSERA_SKIP_WITHOUT("a Vulkan device (lavapipe: mesa-vulkan-drivers)") << why_unusable; \
    }                                                                                          \
  } while (0)

}  // namespace tessera::test
