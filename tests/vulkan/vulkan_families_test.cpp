// targets/devices families of Vulkan devices: the plugin names vendors "<vendor> (Vulkan)", so a
// Vulkan device gets its Vulkan family, never the OpenCL one of the same hardware; lavapipe as the
// plugin probes it here maps to vulkan-lavapipe.
#include <gtest/gtest.h>

#include "tessera/device_family.hpp"
#include "vulkan_test_util.hpp"

namespace tessera::test {
namespace {

std::vector<DeviceFamily> shipped() {
  return load_device_families(std::string(TESSERA_SOURCE_DIR) + "/targets/devices");
}

std::string family_of(const std::string& vendor, const std::string& name) {
  const FamilyMatch m = match_family(shipped(), DeviceIdentity{vendor, name, "", 0});
  return m.family ? m.family->id : "none: " + m.reason;
}

TEST(VulkanFamilies, VulkanVendorsGetVulkanFamilies) {
  EXPECT_EQ(family_of("NVIDIA (Vulkan)", "NVIDIA H100 80GB HBM3"), "vulkan-nvidia");
  EXPECT_EQ(family_of("NVIDIA Corporation", "NVIDIA H100 80GB HBM3"), "nvidia-opencl");
  EXPECT_EQ(family_of("ARM (Vulkan)", "Mali-G78"), "vulkan-mali");
  EXPECT_EQ(family_of("ARM", "Mali-G78"), "mali-valhall");
  EXPECT_EQ(family_of("Qualcomm (Vulkan)", "Adreno (TM) 740"), "vulkan-adreno");
  EXPECT_EQ(family_of("Mesa (Vulkan)", "llvmpipe (LLVM 15.0.6, 256 bits)"), "vulkan-lavapipe");
}

TEST(VulkanFamilies, ProbedLavapipeMapsToItsFamily) {
  TESSERA_REQUIRE_VULKAN();
  for (const PluginDeviceInfo& d : vulkan_host()->find("vulkan")->probe("any")) {
    if (d.name.rfind("llvmpipe", 0) != 0) continue;
    EXPECT_EQ(family_of(d.vendor, d.name), "vulkan-lavapipe") << d.vendor << " / " << d.name;
    // What tessera info shows: the features the issue asks discovery to report.
    EXPECT_NE(d.features.find("subgroup="), std::string::npos) << d.features;
    EXPECT_NE(d.features.find("storage16"), std::string::npos) << d.features;
    EXPECT_NE(d.features.find("fp16"), std::string::npos) << d.features;
    return;
  }
  GTEST_SKIP() << "no lavapipe device here";
}

}  // namespace
}  // namespace tessera::test
