// Device-family descriptors: the shipped targets/devices/*.yaml load, real device names map to the
// expected families (with a reason), version ranges compare numerically, bad descriptors are
// refused with file:line:key errors.
#include "tessera/device_family.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_util.hpp"

namespace tessera {
namespace {

using testing::error_of;
using ::testing::HasSubstr;

class ShippedFamilies : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    families_ = new std::vector<DeviceFamily>(
        load_device_families(testing::source_path("targets/devices")));
  }
  static void TearDownTestSuite() { delete families_; }
  static FamilyMatch match(const std::string& vendor, const std::string& name,
                           const std::string& driver = "", int64_t cus = 0) {
    return match_family(*families_, DeviceIdentity{vendor, name, driver, cus});
  }
  static std::vector<DeviceFamily>* families_;
};
std::vector<DeviceFamily>* ShippedFamilies::families_ = nullptr;

TEST_F(ShippedFamilies, AllDescriptorsLoad) {
  std::vector<std::string> ids;
  for (const DeviceFamily& f : *families_) ids.push_back(f.id);
  EXPECT_THAT(ids, ::testing::UnorderedElementsAre(
                       "adreno-5xx", "adreno-6xx", "adreno-7xx", "cortex-a53", "cortex-a55",
                       "cortex-a76", "cortex-a78", "cortex-x1", "mali-bifrost", "mali-midgard",
                       "mali-valhall", "nvidia-opencl", "pocl-cpu", "reference-naive",
                       "vulkan-adreno", "vulkan-lavapipe", "vulkan-mali", "vulkan-nvidia",
                       "x86-64-cpu"));
}

// The partitioner prices every node from these figures: a shipped family without them would
// fall back to its plugin's guess.
TEST_F(ShippedFamilies, EveryFamilyGivesThroughput) {
  for (const DeviceFamily& f : *families_) {
    EXPECT_GT(f.params.gflops_per_unit, 0) << f.id;
    EXPECT_GT(f.params.memory_gbps, 0) << f.id;
    EXPECT_GT(f.params.launch_us, 0) << f.id;
    if (f.kind == DeviceKind::kGpu) {
      EXPECT_GT(f.params.transfer_gbps, 0) << f.id;
    }
  }
}

TEST_F(ShippedFamilies, ReferencePluginIsPricedAsNaiveLoops) {
  // What the reference plugin's probe reports.
  const FamilyMatch m = match("Tessera", "host CPU (reference)", "naive kernels", 1);
  ASSERT_TRUE(m.family.has_value()) << m.reason;
  EXPECT_EQ(m.family->id, "reference-naive");
  const FamilyMatch x86 = match("AuthenticAMD", "AMD EPYC 7B13 (zen3)", "highway AVX2", 2);
  ASSERT_TRUE(x86.family.has_value()) << x86.reason;
  EXPECT_GT(x86.family->params.gflops_per_unit, 20 * m.family->params.gflops_per_unit);
}

TEST_F(ShippedFamilies, PoclCpuDevice) {
  // As clinfo reports PoCL 3.1 on this project's CI host: the device vendor is the CPU's.
  const FamilyMatch m = match("AuthenticAMD", "pthread-skylake-avx512-AMD EPYC", "3.1+debian", 2);
  ASSERT_TRUE(m.family.has_value()) << m.reason;
  EXPECT_EQ(m.family->id, "pocl-cpu");
  EXPECT_EQ(m.family->params.preferred_vector_width, 16);
  EXPECT_EQ(m.family->params.max_work_group_size, 4096);
  EXPECT_FALSE(m.family->params.fp16);
  // The x86 catch-all also matches; the reason says it lost on priority.
  EXPECT_THAT(m.reason, HasSubstr("family 'pocl-cpu'"));
  EXPECT_THAT(m.reason, HasSubstr("also matched with lower priority: x86-64-cpu"));
  EXPECT_EQ(match("The pocl project", "cpu-haswell-Intel(R) Core(TM)").family->id, "pocl-cpu");
}

TEST_F(ShippedFamilies, NvidiaOpenCl) {
  const FamilyMatch m = match("NVIDIA Corporation", "NVIDIA H100 80GB HBM3", "535.104.05", 132);
  ASSERT_TRUE(m.family.has_value()) << m.reason;
  EXPECT_EQ(m.family->id, "nvidia-opencl");
  EXPECT_EQ(m.family->params.subgroup_size, 32);
  EXPECT_EQ(m.family->kind, DeviceKind::kGpu);
}

TEST_F(ShippedFamilies, MaliGenerations) {
  EXPECT_EQ(match("ARM", "Mali-G78", "v1.r32p1", 24).family->id, "mali-valhall");
  EXPECT_EQ(match("ARM", "Mali-G710 r0p0").family->id, "mali-valhall");
  EXPECT_EQ(match("ARM", "Mali-G71").family->id, "mali-bifrost");
  EXPECT_EQ(match("ARM", "Mali-G76 MP10").family->id, "mali-bifrost");
  EXPECT_EQ(match("ARM", "Mali-T860").family->id, "mali-midgard");
  EXPECT_EQ(match("ARM", "Mali-G78", "", 24).family->params.max_work_group_size, 1024);
  EXPECT_EQ(match("ARM", "Mali-G76").family->params.max_work_group_size, 384);
}

TEST_F(ShippedFamilies, MaliComputeUnitsOutsideRangeExplained) {
  const FamilyMatch m = match("ARM", "Mali-G78", "", 500);
  EXPECT_FALSE(m.family.has_value());
  EXPECT_THAT(m.reason, HasSubstr("mali-valhall: 500 compute units outside [1, 32]"));
}

TEST_F(ShippedFamilies, AdrenoGenerations) {
  const FamilyMatch m =
      match("QUALCOMM", "QUALCOMM Adreno(TM) 650", "OpenCL 2.0 QUALCOMM build", 3);
  ASSERT_TRUE(m.family.has_value()) << m.reason;
  EXPECT_EQ(m.family->id, "adreno-6xx");
  EXPECT_TRUE(m.family->params.image_support);
  EXPECT_EQ(match("Qualcomm", "Adreno (TM) 540").family->id, "adreno-5xx");
  EXPECT_EQ(match("QUALCOMM", "QUALCOMM Adreno(TM) 740").family->id, "adreno-7xx");
}

TEST_F(ShippedFamilies, ArmCpuCores) {
  EXPECT_EQ(match("ARM", "Cortex-A53").family->id, "cortex-a53");
  EXPECT_FALSE(match("ARM", "Cortex-A53").family->params.fp16);
  EXPECT_EQ(match("ARM", "Cortex-A55").family->id, "cortex-a55");
  EXPECT_TRUE(match("ARM", "Cortex-A55").family->params.fp16);
  EXPECT_EQ(match("ARM", "Cortex-A76").family->id, "cortex-a76");
  EXPECT_EQ(match("ARM", "Cortex-A78").family->id, "cortex-a78");
  EXPECT_EQ(match("ARM", "Cortex-X1").family->id, "cortex-x1");
  EXPECT_EQ(match("ARM", "Cortex-A76").family->kind, DeviceKind::kCpu);
}

TEST_F(ShippedFamilies, X86Cpu) {
  EXPECT_EQ(match("GenuineIntel", "Intel(R) Xeon(R) Platinum 8480").family->id, "x86-64-cpu");
}

TEST_F(ShippedFamilies, UnknownDeviceHasReason) {
  const FamilyMatch m = match("Imagination Technologies", "PowerVR B-Series BXM-8-256");
  EXPECT_FALSE(m.family.has_value());
  EXPECT_THAT(m.reason, HasSubstr("no device family matches 'PowerVR B-Series BXM-8-256'"));
  // pocl-cpu accepts any vendor (PoCL reports the CPU's), so it is the one candidate considered.
  EXPECT_THAT(m.reason, HasSubstr("pocl-cpu: name does not match /^(pthread|cpu|basic)-/"));
  const FamilyMatch mali = match("ARM", "Mali-G999");
  EXPECT_FALSE(mali.family.has_value());
  EXPECT_THAT(mali.reason, HasSubstr("mali-valhall: name does not match"));
}

TEST(Version, ParsesNumbersAndCompares) {
  EXPECT_EQ(Version::parse("535.104.05").parts, (std::vector<int64_t>{535, 104, 5}));
  EXPECT_EQ(Version::parse("r32p1").parts, (std::vector<int64_t>{32, 1}));
  EXPECT_EQ(Version::parse("3.1+debian").str(), "3.1");
  EXPECT_EQ(Version::parse("1.2").compare(Version::parse("1.2.0")), 0);
  EXPECT_LT(Version::parse("1.9").compare(Version::parse("1.10")), 0);
  EXPECT_GT(Version::parse("2").compare(Version::parse("1.99")), 0);
}

TEST(VersionRange, Constraints) {
  const VersionRange r = VersionRange::parse(">=0.1,<0.2");
  EXPECT_TRUE(r.contains("0.1.0"));
  EXPECT_TRUE(r.contains("0.1.9"));
  EXPECT_FALSE(r.contains("0.2"));
  EXPECT_FALSE(r.contains("0.0.9"));
  EXPECT_TRUE(VersionRange::parse("535.104.05").contains("535.104.5"));
  EXPECT_FALSE(VersionRange::parse("535.104.05").contains("535.104.6"));
  EXPECT_TRUE(VersionRange::parse("*").contains("7"));
  EXPECT_TRUE(VersionRange::parse("").is_any());
  EXPECT_TRUE(VersionRange::parse("> 1, <= 2").contains("2"));
  EXPECT_FALSE(VersionRange::parse("> 1, <= 2").contains("1"));
  EXPECT_THAT(error_of([] { VersionRange::parse(">=abc"); }), HasSubstr("cannot read '>=abc'"));
}

TEST(DeviceFamilyFile, BadDescriptorNamesFileLineAndKey) {
  testing::ScratchDir dir;
  const std::string path = dir.write("bad.yaml", R"(schema_version: 1
id: x
match:
  vendor: "ARM"
  name: "Mali-(G"
)");
  EXPECT_THAT(error_of([&] { load_device_family(path); }),
              HasSubstr(path + ":5:9: match.name: invalid regular expression"));
  const std::string p2 = dir.write("bad2.yaml", R"(id: x
match: {vendor: ARM}
params:
  max_work_group_sise: 64
)");
  EXPECT_THAT(
      error_of([&] { load_device_family(p2); }),
      HasSubstr(p2 + ":4:3: params.max_work_group_sise: unknown key "
                     "'max_work_group_sise' in params; did you mean 'max_work_group_size'?"));
}

TEST(DeviceFamilyFile, DuplicateIdsRefused) {
  testing::ScratchDir dir;
  dir.write("a.yaml", "id: same\nmatch: {vendor: A}\n");
  dir.write("b.yaml", "id: same\nmatch: {vendor: B}\n");
  EXPECT_THAT(error_of([&] { load_device_families(dir.path()); }),
              HasSubstr("family id 'same' is also used"));
}

}  // namespace
}  // namespace tessera
