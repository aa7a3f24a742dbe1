// Plugin discovery: loads, refusals with their reasons, directory rules.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "graph_builder.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

bool has_control_character(const std::string& text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

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
      // Tables naming themselves otherwise than their files; the ESC arrives escaped.
      {"impostor",
       "its function table names it 'cpu', but its file is named for 'impostor'; a plugin's "
       "table name must match its file name, libtessera-plugin-impostor.so"},
      {"escname",
       "its function table names it 'esc\\x1b[31mname', but its file is named for "
       "'escname'"},
  };
  for (const Expect& e : expected) {
    const PluginRefusal* r = refusal_named(host, e.name);
    ASSERT_NE(r, nullptr) << e.name;
    EXPECT_NE(r->reason.find(e.reason_part), std::string::npos) << e.name << ": " << r->reason;
  }
  EXPECT_EQ(host.refusals().size(), std::size(expected));
  for (const PluginRefusal& r : host.refusals()) {
    EXPECT_FALSE(has_control_character(r.name + r.reason + r.path)) << r.name << ": " << r.reason;
  }
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

// The impostor on TESSERA_PLUGIN_PATH calls itself "cpu" from libtessera-plugin-impostor.so: the
// shadowing check, which runs on file names before any code is loaded, let it through, and it
// took the bundled cpu plugin's name (the bundled one was then refused as the duplicate). It is
// refused for the mismatch, whatever allow_shadowing says, and the bundled plugins load.
TEST(PluginHost, TableNamingABundledPluginFromAnotherFileReplacesNothing) {
  ::setenv("TESSERA_PLUGIN_PATH", TESSERA_TEST_PLUGIN_BROKEN_DIR, 1);
  for (const bool allow_shadowing : {false, true}) {
    PluginHostOptions o;
    o.allow_shadowing = allow_shadowing;
    const PluginHost host(o);
    const PluginRefusal* r = refusal_named(host, "impostor");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->reason.rfind("its function table names it 'cpu', but its file is named for "
                              "'impostor'",
                              0),
              0u)
        << r->reason;
    for (const PluginRefusal& other : host.refusals()) {
      EXPECT_EQ(other.reason.find("duplicate name 'cpu'"), std::string::npos) << other.reason;
    }
    // The bundled plugins come from the build tree, the cpu plugin among them where it is built.
    for (const char* name : {"reference", "cpu"}) {
      const auto plugin = host.find(name);
      if (plugin == nullptr && std::string(name) == "cpu") continue;
      ASSERT_NE(plugin, nullptr) << name;
      EXPECT_TRUE(std::filesystem::equivalent(std::filesystem::path(plugin->path()).parent_path(),
                                              TESSERA_PLUGIN_BUILD_DIR))
          << plugin->path();
    }
  }
  ::unsetenv("TESSERA_PLUGIN_PATH");
}

// A file whose name gives a plugin name with an ESC in it is refused before it is opened, and the
// refusal shows the name escaped.
TEST(PluginHost, FileNameWithAControlCharacterIsRefusedEscaped) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-host-esc-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms(0755));
  std::ofstream(dir / "libtessera-plugin-re\x1b[2Jd.so") << "never opened";
  const PluginHost host(only({dir.string()}));
  std::filesystem::remove_all(dir);
  ASSERT_EQ(host.refusals().size(), 1u);
  EXPECT_EQ(host.refusals()[0].name, "re\\x1b[2Jd");
  EXPECT_EQ(host.refusals()[0].reason,
            "the plugin name in its file name has a character outside [A-Za-z0-9._-]");
  EXPECT_EQ(host.refusals()[0].path, (dir / "libtessera-plugin-re\\x1b[2Jd.so").string());
  EXPECT_TRUE(host.plugins().empty());
}

// controltext loads (its name is an identifier) but puts ESC sequences and newlines in every
// free-text answer: core keeps them escaped, so plans, errors and `tessera info` print them as
// text instead of moving the cursor or forging lines.
TEST(PluginHost, ControlCharactersInPluginTextAreKeptEscaped) {
  const PluginHost host(only({TESSERA_TEST_PLUGIN_CONTROLS_DIR}));
  const auto plugin = host.find("controltext");
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->version(), "1\\x1b[0m");
  EXPECT_EQ(plugin->description(), "first line\\x0asecond line");
  ASSERT_EQ(plugin->devices().size(), 1u);
  const PluginDeviceInfo& d = plugin->devices()[0];
  EXPECT_EQ(d.id, "odd0");
  EXPECT_EQ(d.vendor, "vendor\\x1b[2J");
  EXPECT_EQ(d.name, "device\\x0aname");
  EXPECT_EQ(d.driver_version, "driver\\x1b]0;title\\x07");
  EXPECT_EQ(d.features, "f1\\x0df2");
}

TEST(PluginHost, ControlCharactersInACompileFailureAreEscapedInTheError) {
  auto host = std::make_shared<const PluginHost>(only({TESSERA_TEST_PLUGIN_CONTROLS_DIR}));
  ASSERT_NE(host->find("controltext"), nullptr);
  const Graph g = test::GraphBuilder()
                      .input("x", {4})
                      .node("Relu", {"x"}, {"y"}, {}, "relu")
                      .output("y")
                      .build();
  SessionOptions o;
  o.targets = {"controltext"};
  std::string message;
  try {
    Session s(g, o, host);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("failed to compile on controltext: \\x1b[31mred\\x0aforged line"),
            std::string::npos)
      << message;
  EXPECT_FALSE(has_control_character(message)) << message;
}

// The reason a plugin gives for refusing a node reaches the plan's node reasons (and through them
// `tessera plan` and `run --verbose`) escaped like every other plugin text.
TEST(PluginHost, ControlCharactersInAQueryReasonAreEscapedInThePlan) {
  auto host = std::make_shared<const PluginHost>(
      only({TESSERA_TEST_PLUGIN_CONTROLS_DIR, TESSERA_PLUGIN_BUILD_DIR}));
  ASSERT_NE(host->find("controltext"), nullptr);
  ASSERT_NE(host->find("reference"), nullptr);
  const Graph g = test::GraphBuilder()
                      .input("x", {4})
                      .node("Sigmoid", {"x"}, {"y"}, {}, "sigmoid")
                      .output("y")
                      .build();
  SessionOptions o;
  o.targets = {"controltext", "reference"};
  Session s(g, o, host);
  ASSERT_EQ(s.plan().nodes.size(), 1u);
  const NodePlacement& n = s.plan().nodes[0];
  EXPECT_EQ(n.plugin, "reference");
  EXPECT_NE(n.reason.find("controltext: unsupported: \\x1b[1Anot\\x0amine"), std::string::npos)
      << n.reason;
  EXPECT_FALSE(has_control_character(n.reason)) << n.reason;
  // The node still runs, on the reference kernels: sigmoid(0) = 0.5.
  const std::vector<Tensor> y = s.run({{"x", Tensor::from_vector<float>({4}, {0, 0, 0, 0})}});
  EXPECT_EQ(y[0].to_float_vector(), std::vector<float>(4, 0.5f));
}

// The output of `command` (stdout), asserting it exits 0.
std::string command_output(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  if (pipe == nullptr) return "";
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  EXPECT_EQ(::pclose(pipe), 0) << command << "\n" << out;
  return out;
}

// `tessera plan` sums up why nodes are not on the first target: one line per distinct reason it
// gave, with the count and the op types, and the counts add up to the nodes placed elsewhere
// (halfref runs only Relu and same-shape Add, so squeezenet's other ops go to the reference).
TEST(PluginHost, PlanSumsUpWhyNodesAreNotOnTheFirstTarget) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-why-not-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "squeezenet.onnx").string();
  command_output(std::string(TESSERA_CLI) + " zoo squeezenet_v1.1 -o " + model + " --force");
  const std::string plan = std::string("env -u TESSERA_PLUGIN_PATH ") + TESSERA_CLI + " plan " +
                           model + " --targets halfref,reference --no-packs --plugin-dir " +
                           TESSERA_TEST_PLUGIN_GOOD_DIR;
  const std::string text = command_output(plan);
  // The oracle: the session's own placement of the same model.
  auto host = std::make_shared<const PluginHost>(
      only({TESSERA_TEST_PLUGIN_GOOD_DIR, TESSERA_PLUGIN_BUILD_DIR}));
  SessionOptions o;
  o.targets = {"halfref", "reference"};
  o.pack_mode = PackMode::kNone;
  Session s(import_onnx_file(model), o, host);
  std::map<std::string, int> elsewhere;  // op type -> nodes not on halfref
  int total = 0;
  for (const NodePlacement& n : s.plan().nodes) {
    if (n.plugin == "halfref") continue;
    ++elsewhere[n.op_type];
    ++total;
  }
  ASSERT_GT(total, 0);
  EXPECT_NE(text.find("not on halfref (the first target): " + std::to_string(total) + " of " +
                      std::to_string(s.plan().nodes.size()) + " node(s)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(std::to_string(elsewhere["Conv"]) +
                      "  unsupported: op Conv not implemented [Conv]\n"),
            std::string::npos)
      << text;
  std::filesystem::remove_all(dir);
}

// `tessera info` over the controls and broken folders: the plugin's texts, the refused ESC name
// and every other line arrive as printable text; nothing but the line breaks is a control byte.
TEST(PluginHost, InfoPrintsPluginTextEscaped) {
  const std::string command = std::string("env -u TESSERA_PLUGIN_PATH ") + TESSERA_CLI +
                              " info --no-packs --plugin-dir " + TESSERA_TEST_PLUGIN_CONTROLS_DIR +
                              " --plugin-dir " + TESSERA_TEST_PLUGIN_BROKEN_DIR;
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  ASSERT_EQ(::pclose(pipe), 0) << out;
  std::string lines_only = out;
  lines_only.erase(std::remove(lines_only.begin(), lines_only.end(), '\n'), lines_only.end());
  EXPECT_FALSE(has_control_character(lines_only)) << out;
  for (const char* shown :
       {"controltext 1\\x1b[0m (ABI", "first line\\x0asecond line",
        "vendor\\x1b[2J / device\\x0aname [cpu], driver driver\\x1b]0;title\\x07",
        "features: f1\\x0df2", "its function table names it 'esc\\x1b[31mname'"}) {
    EXPECT_NE(out.find(shown), std::string::npos) << shown << "\n" << out;
  }
}

}  // namespace
}  // namespace tessera
