// Plugin discovery: loads, refusals with their reasons, directory rules.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tessera/plugin_host.hpp"

namespace tessera {
namespace {

PluginHostOptions only(std::vector<std::string> dirs) {
  PluginHostOptions o;
  o.dirs = std::move(dirs);
  o.use_environment = false;
  o.use_default_dirs = false;
  return o;
}

const PluginRefusal* refusal_named(const PluginHost& host, const std::string& name) {
  for (const PluginRefusal& r : host.refusals()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST(PluginHost, LoadsGoodPluginsWithDevices) {
  const PluginHost host(only({TESSERA_TEST_PLUGIN_GOOD_DIR}));
  ASSERT_EQ(host.plugins().size(), 2u);
  auto halfref = host.find("halfref");
  ASSERT_NE(halfref, nullptr);
  EXPECT_EQ(halfref->version(), "0.1");
  EXPECT_EQ(halfref->abi_major(), static_cast<uint32_t>(TESSERA_PLUGIN_ABI_MAJOR));
  ASSERT_EQ(halfref->devices().size(), 1u);
  EXPECT_EQ(halfref->devices()[0].name, "halfref device");
  EXPECT_EQ(halfref->devices()[0].kind, "cpu");
  EXPECT_EQ(halfref->devices()[0].score, 50);
  EXPECT_EQ(host.find("islandgpu")->devices()[0].kind, "gpu");
  EXPECT_TRUE(host.refusals().empty());
}

TEST(PluginHost, ReferencePluginFromBuildTree) {
  const PluginHost host(only({TESSERA_PLUGIN_BUILD_DIR}));
  auto ref = host.find("reference");
  ASSERT_NE(ref, nullptr);
  ASSERT_EQ(ref->devices().size(), 1u);
  EXPECT_EQ(ref->devices()[0].name, "host CPU (reference)");
}

TEST(PluginHost, DefaultDirsFindTheBuildTree) {
  PluginHostOptions o;
  o.use_environment = false;
  const PluginHost host(o);
  EXPECT_NE(host.find("reference"), nullptr);
  bool build_tree = false;
  for (const PluginDir& d : host.dirs()) {
    build_tree = build_tree || (d.origin == "build tree" &&
                                std::filesystem::equivalent(d.path, TESSERA_PLUGIN_BUILD_DIR));
  }
  EXPECT_TRUE(build_tree);
}

TEST(PluginHost, BrokenPluginsAreRefusedWithReasons) {
  const PluginHost host(only({TESSERA_TEST_PLUGIN_GOOD_DIR, TESSERA_TEST_PLUGIN_BROKEN_DIR}));
  struct Expect {
    const char* name;
    std::string reason_part;
  };
  const Expect expected[] = {
      {"noentry", "not a plugin: no entry symbol 'tessera_plugin_entry'"},
      {"wrongabi",
       "ABI major mismatch: plugin built for " + std::to_string(TESSERA_PLUGIN_ABI_MAJOR + 1) +
           "." + std::to_string(TESSERA_PLUGIN_ABI_MINOR) + ", host is " + plugin_abi_version()},
      // A plugin built for ABI 1 refuses this host in its entry; the refusal still names its
      // version and says how to port it.
      {"legacy", "built for plugin ABI 1.2; this core speaks " + plugin_abi_version() +
                     " and no longer loads it. To port it: rebuild against this core's "
                     "plugin.hpp"},
      {"entrynull", "entry returned NULL"},
      {"probeerror", "probe failed (status 1): no driver found (test)"},
      {"twinids", "probe answered two devices with the id 'stub0' ('stub', 'stub twin')"},
      {"probethrows", "probe failed (status 1): probe threw on purpose (test)"},
      {"rawthrow", "probe threw a C++ exception across the C boundary: raw probe exploded"},
      {"halfref", "duplicate name 'halfref' (already loaded from "},
  };
  for (const Expect& e : expected) {
    const PluginRefusal* r = refusal_named(host, e.name);
    ASSERT_NE(r, nullptr) << e.name;
    EXPECT_NE(r->reason.find(e.reason_part), std::string::npos) << e.name << ": " << r->reason;
  }
  EXPECT_EQ(host.refusals().size(), std::size(expected));
  // The refusals never stop the others: both good plugins and compilefail loaded.
  EXPECT_NE(host.find("halfref"), nullptr);
  EXPECT_NE(host.find("islandgpu"), nullptr);
  EXPECT_NE(host.find("compilefail"), nullptr);
  EXPECT_EQ(host.plugins().size(), 3u);
  // The duplicate is the one from the broken dir; the first one found wins.
  EXPECT_NE(host.find("halfref")->path().find("/good/"), std::string::npos);
}

TEST(PluginHost, NonLibraryFileIsRefusedNotLoaded) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-host-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "libtessera-plugin-garbage.so") << "not an ELF file";
  std::ofstream(dir / "README.txt") << "ignored: wrong name";
  const PluginHost host(only({dir.string()}));
  std::filesystem::remove_all(dir);
  ASSERT_EQ(host.refusals().size(), 1u);
  EXPECT_EQ(host.refusals()[0].name, "garbage");
  EXPECT_EQ(host.refusals()[0].reason.rfind("not loadable: ", 0), 0u) << host.refusals()[0].reason;
  EXPECT_TRUE(host.plugins().empty());
}

TEST(PluginHost, RelativeAndMissingDirsAreRefused) {
  const PluginHost host(only({"plugins/lib", "/nonexistent/tessera/plugins"}));
  ASSERT_EQ(host.dirs().size(), 2u);
  EXPECT_EQ(host.dirs()[0].status, "refused: relative path (plugin directories must be absolute)");
  EXPECT_EQ(host.dirs()[1].status, "not found");
  EXPECT_TRUE(host.plugins().empty());
}

TEST(PluginHost, EnvironmentPathRefusesRelativeEntries) {
  const std::string value = std::string("relative/dir:") + TESSERA_TEST_PLUGIN_GOOD_DIR;
  ::setenv("TESSERA_PLUGIN_PATH", value.c_str(), 1);
  PluginHostOptions o;
  o.use_default_dirs = false;
  const PluginHost host(o);
  ::unsetenv("TESSERA_PLUGIN_PATH");
  ASSERT_EQ(host.dirs().size(), 2u);
  EXPECT_EQ(host.dirs()[0].origin, "TESSERA_PLUGIN_PATH");
  EXPECT_EQ(host.dirs()[0].status.rfind("refused: relative path", 0), 0u);
  EXPECT_EQ(host.dirs()[1].status, "searched (2 candidates)");
  EXPECT_NE(host.find("halfref"), nullptr);
}

TEST(PluginHost, ReprobeWithSelector) {
  const PluginHost host(only({TESSERA_TEST_PLUGIN_GOOD_DIR}));
  const auto devices = host.find("halfref")->probe("any");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "halfref device");
}

}  // namespace
}  // namespace tessera
