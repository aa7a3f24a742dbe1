// Pack application through a real Session with the packtest plugin: the pack chosen at each level
// (device+driver, device, family, vendor, none) with its reason in plan(), the node configs the
// plugin received, --pack files for another device, knob values refused for one node only,
// --no-packs, and bad pack files. Outputs always equal the reference runner's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "graph_builder.hpp"
#include "plugins/region_desc.hpp"
#include "tessera/integrity.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using test::GraphBuilder;
using ::testing::HasSubstr;

const char* const kFamily = R"(schema_version: 1
id: packtest-family
description: the packtest plugin's pretend GPU
kind: gpu
priority: 10
match:
  vendor: "^Tessera tests$"
  name: "^PackTest"
params:
  max_work_group_size: 256
)";

// relu_x and relu_ax share the workload "relu|in=2x3x4x5|f32"; relu_y is "relu|in=3x7|f32";
// add is not tunable; sigmoid runs on the reference plugin.
Graph test_graph() {
  return GraphBuilder()
      .input("x", {2, 3, 4, 5})
      .input("y", {3, 7})
      .node("Relu", {"x"}, {"rx"}, {}, "relu_x")
      .node("Add", {"rx", "x"}, {"ax"}, {}, "add")
      .node("Relu", {"ax"}, {"out1"}, {}, "relu_ax")
      .node("Relu", {"y"}, {"ry"}, {}, "relu_y")
      .node("Sigmoid", {"ry"}, {"out2"}, {}, "sigmoid")
      .output("out1")
      .output("out2")
      .build();
}

std::string pack_text(const std::string& match, const std::string& entries) {
  return "schema_version: 1\nplugin: packtest\nmatch:\n" + match +
         "engine_version: \"*\"\nmeasured:\n  how: \"hand-written test pack\"\n"
         "  when: \"2026-11-23\"\n  tool_version: \"0.1.0\"\nentries:\n" +
         entries;
}

std::string entry(const std::string& workload, int64_t block, int64_t wg) {
  return "  - workload: \"" + workload +
         "\"\n    schedule: relu.blocked\n    knobs: {block: " + std::to_string(block) +
         ", wg_x: " + std::to_string(wg) + "}\n    time_us: 1.5\n";
}

const std::string kBig = "relu|in=2x3x4x5|f32";
const std::string kSmall = "relu|in=3x7|f32";

class PackSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           (std::string("tessera_packs_") + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "schedules" / "packtest");
    fs::create_directories(dir_ / "devices");
    write(dir_ / "devices" / "packtest.yaml", kFamily);
    log_ = (dir_ / "configs.log").string();
    setenv("TESSERA_PACKTEST_LOG", log_.c_str(), 1);
  }
  void TearDown() override { unsetenv("TESSERA_PACKTEST_LOG"); }

  static void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  std::string add_pack(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / "schedules" / "packtest" / name;
    write(p, text);
    return p.string();
  }

  std::shared_ptr<const PluginHost> host() const {
    PluginHostOptions o;
    o.dirs = {TESSERA_PACKS_TEST_PLUGIN_DIR, TESSERA_PLUGIN_BUILD_DIR};
    o.use_environment = false;
    o.use_default_dirs = false;
    return std::make_shared<const PluginHost>(o);
  }
  SessionOptions options() const {
    SessionOptions o;
    o.targets = {"packtest", "reference"};
    o.schedules_dirs = {(dir_ / "schedules").string()};
    o.device_family_dirs = {(dir_ / "devices").string()};
    o.use_schedules_environment = false;
    o.use_default_data_dirs = false;
    return o;
  }

  // Builds a session, checks its outputs against the reference runner, and returns it.
  std::unique_ptr<Session> session(const SessionOptions& o) {
    const Graph g = test_graph();
    auto s = std::make_unique<Session>(g, o, host());
    const auto inputs = test::random_inputs(g, 5);
    const std::vector<Tensor> got = s->run(inputs);
    const std::vector<Tensor> want = run_reference(g, inputs);
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
      EXPECT_EQ(got[i].shape(), want[i].shape());
      EXPECT_EQ(std::memcmp(got[i].raw(), want[i].raw(), got[i].nbytes()), 0) << "output " << i;
    }
    return s;
  }

  // What the plugin applied, per Relu node: "block=B wg_x=W config|heuristic".
  std::map<std::string, std::string> applied() const {
    std::map<std::string, std::string> out;
    std::ifstream in(log_);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ss(line);
      std::string node, schedule, block, wg, source;
      ss >> node >> schedule >> block >> wg >> source;
      out[node] = block + " " + wg + " " + source;
    }
    return out;
  }

  static const NodePlacement& node(const Session& s, const std::string& name) {
    for (const NodePlacement& p : s.plan().nodes) {
      if (p.node == name) return p;
    }
    throw Error("no node " + name);
  }

  static std::string all_warnings(const Session& s) {
    std::string out;
    for (const std::string& w : s.plan().warnings) out += w + "\n";
    return out;
  }

  fs::path dir_;
  std::string log_;
};

TEST_F(PackSessionTest, EachLevelIsChosenWhenNothingMoreSpecificExists) {
  struct Level {
    std::string file, match, level, knobs, why;
  };
  const std::vector<Level> levels = {
      {"a_driver.yaml", "  device: \"PackTest GPU\"\n  driver: \">=3,<4\"\n", "device+driver",
       "block=1 wg_x=1", "driver '3.2.1'"},
      {"b_device.yaml", "  device: \"PackTest GPU\"\n", "device", "block=2 wg_x=64",
       "device 'PackTest GPU'"},
      {"c_family.yaml", "  family: packtest-family\n", "family", "block=8 wg_x=256",
       "family 'packtest-family'"},
      {"d_vendor.yaml", "  vendor: \"Tessera tests\"\n", "vendor", "block=1 wg_x=256",
       "vendor 'Tessera tests'"},
  };
  const std::vector<std::pair<int64_t, int64_t>> knobs = {{1, 1}, {2, 64}, {8, 256}, {1, 256}};
  std::vector<std::string> paths;
  for (size_t i = 0; i < levels.size(); ++i) {
    paths.push_back(add_pack(
        levels[i].file, pack_text(levels[i].match, entry(kBig, knobs[i].first, knobs[i].second))));
  }
  // Remove the most specific pack after each round: the next level must win.
  for (size_t i = 0; i <= levels.size(); ++i) {
    SCOPED_TRACE("round " + std::to_string(i));
    fs::remove(log_);
    auto s = session(options());
    ASSERT_EQ(s->plan().packs.size(), 2u);
    const DevicePackPlan& p = s->plan().packs[0];
    EXPECT_EQ(p.plugin, "packtest");
    EXPECT_EQ(p.device, "PackTest GPU");
    EXPECT_EQ(p.family, "packtest-family");
    const auto got = applied();
    if (i < levels.size()) {
      EXPECT_EQ(p.level, levels[i].level);
      EXPECT_EQ(p.pack_file, paths[i]);
      EXPECT_THAT(p.reason, HasSubstr(paths[i]));
      EXPECT_THAT(p.reason, HasSubstr(levels[i].why));
      EXPECT_EQ(got.at("relu_x"), levels[i].knobs + " config");
      EXPECT_EQ(got.at("relu_ax"), levels[i].knobs + " config");
      EXPECT_EQ(node(*s, "relu_x").config, "relu.blocked{block=" + std::to_string(knobs[i].first) +
                                               ",wg_x=" + std::to_string(knobs[i].second) +
                                               "} from pack " + paths[i] + " (" + levels[i].level +
                                               " match)");
      fs::remove(paths[i]);
    } else {
      EXPECT_EQ(p.level, "none");
      EXPECT_EQ(p.pack_file, "");
      EXPECT_THAT(p.reason, HasSubstr("default heuristics"));
      EXPECT_EQ(got.at("relu_x"), "block=4 wg_x=64 heuristic");
      EXPECT_EQ(node(*s, "relu_x").config, "heuristic (no pack selected for this device)");
    }
    // The small Relu has no entry in any pack; Add describes nothing; Sigmoid is on reference.
    EXPECT_EQ(got.at("relu_y"), "block=4 wg_x=64 heuristic");
    if (i < levels.size()) {
      EXPECT_EQ(node(*s, "relu_y").config,
                "heuristic (no pack entry for workload '" + kSmall + "')");
      EXPECT_EQ(node(*s, "add").config, "heuristic (nothing tunable for this node)");
    }
    EXPECT_EQ(node(*s, "sigmoid").plugin, "reference");
    EXPECT_EQ(node(*s, "sigmoid").config, "heuristic (no pack selected for this device)");
    EXPECT_EQ(s->plan().packs[1].plugin, "reference");
    EXPECT_EQ(s->plan().packs[1].level, "none");
  }
}

TEST_F(PackSessionTest, DriverOutsideRangeFallsToDeviceLevelWithWarning) {
  const std::string path =
      add_pack("old_driver.yaml",
               pack_text("  device: \"PackTest GPU\"\n  driver: \">=4\"\n", entry(kBig, 2, 64)));
  auto s = session(options());
  EXPECT_EQ(s->plan().packs[0].level, "device");
  EXPECT_THAT(s->plan().packs[0].reason, HasSubstr("driver differs"));
  EXPECT_THAT(all_warnings(*s), HasSubstr("measured with driver '>=4'"));
  EXPECT_EQ(applied().at("relu_x"), "block=2 wg_x=64 config");
}

TEST_F(PackSessionTest, PackFileForAnotherDeviceIsIgnoredWithWarning) {
  // Also a matching pack in the schedules dir: --pack means exactly the given files.
  add_pack("device.yaml", pack_text("  device: \"PackTest GPU\"\n", entry(kBig, 2, 64)));
  const fs::path other = dir_ / "mali-g78.yaml";
  write(other, pack_text("  device: \"Mali-G78\"\n", entry(kBig, 8, 1)));
  SessionOptions o = options();
  o.pack_mode = PackMode::kFiles;
  o.pack_files = {other.string()};
  auto s = session(o);
  const DevicePackPlan& p = s->plan().packs[0];
  EXPECT_EQ(p.level, "none");
  EXPECT_EQ(p.pack_file, "");
  EXPECT_THAT(p.reason, HasSubstr("only the given pack files"));
  ASSERT_FALSE(p.warnings.empty());
  EXPECT_THAT(p.warnings[0], HasSubstr(other.string()));
  EXPECT_THAT(p.warnings[0], HasSubstr("Mali-G78"));
  EXPECT_THAT(all_warnings(*s), HasSubstr(other.string()));
  EXPECT_EQ(applied().at("relu_x"), "block=4 wg_x=64 heuristic");
  EXPECT_EQ(applied().at("relu_y"), "block=4 wg_x=64 heuristic");
}

TEST_F(PackSessionTest, PackFileForThisDeviceIsUsed) {
  const fs::path file = dir_ / "mine.yaml";
  write(file, pack_text("  device: \"PackTest GPU\"\n", entry(kBig, 8, 256) + entry(kSmall, 2, 1)));
  SessionOptions o = options();
  o.pack_mode = PackMode::kFiles;
  o.pack_files = {file.string()};
  auto s = session(o);
  EXPECT_EQ(s->plan().packs[0].pack_file, file.string());
  EXPECT_EQ(applied().at("relu_x"), "block=8 wg_x=256 config");
  EXPECT_EQ(applied().at("relu_y"), "block=2 wg_x=1 config");
}

TEST_F(PackSessionTest, KnobOutsideItsSpaceIsRefusedForThatNodeOnly) {
  struct Case {
    int64_t block, wg;
    std::string why;
  };
  const std::vector<Case> cases = {
      {3, 64, "knob 'block' = 3 is not among its candidate values {1,2,4,8}"},
      {16, 64, "knob 'block' = 16 is outside [1, 8]"},
      {2, 1024, "work-group size 1024, above the device limit 256"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    fs::remove(log_);
    const std::string path =
        add_pack("device.yaml", pack_text("  device: \"PackTest GPU\"\n",
                                          entry(kBig, 8, 256) + entry(kSmall, c.block, c.wg)));
    auto s = session(options());
    const auto got = applied();
    EXPECT_EQ(got.at("relu_x"), "block=8 wg_x=256 config");
    EXPECT_EQ(got.at("relu_ax"), "block=8 wg_x=256 config");
    EXPECT_EQ(got.at("relu_y"), "block=4 wg_x=64 heuristic");
    EXPECT_THAT(node(*s, "relu_y").config, HasSubstr("heuristic (pack entry refused"));
    EXPECT_THAT(node(*s, "relu_y").config, HasSubstr(c.why));
    const std::string w = all_warnings(*s);
    EXPECT_THAT(w, HasSubstr(path + ":"));
    EXPECT_THAT(w, HasSubstr("node 'relu_y'"));
    EXPECT_THAT(w, HasSubstr(c.why));
    EXPECT_THAT(w, ::testing::Not(HasSubstr("node 'relu_x'")));
  }
}

TEST_F(PackSessionTest, UnknownScheduleOrKnobIsRefused) {
  add_pack("device.yaml",
           pack_text("  device: \"PackTest GPU\"\n",
                     "  - workload: \"" + kBig +
                         "\"\n    schedule: relu.vector\n    knobs: {block: 2}\n    time_us: 1\n"
                         "  - workload: \"" +
                         kSmall +
                         "\"\n    schedule: relu.blocked\n    knobs: {block: 2, wg_x: 1, unroll: "
                         "2}\n    time_us: 1\n"));
  auto s = session(options());
  EXPECT_THAT(node(*s, "relu_x").config, HasSubstr("no schedule 'relu.vector'"));
  EXPECT_THAT(node(*s, "relu_y").config, HasSubstr("knob 'unroll' is not a knob"));
  EXPECT_EQ(applied().at("relu_x"), "block=4 wg_x=64 heuristic");
  EXPECT_EQ(applied().at("relu_y"), "block=4 wg_x=64 heuristic");
}

TEST_F(PackSessionTest, NoPacksGivesHeuristics) {
  add_pack("device.yaml", pack_text("  device: \"PackTest GPU\"\n", entry(kBig, 8, 256)));
  SessionOptions o = options();
  o.pack_mode = PackMode::kNone;
  auto s = session(o);
  EXPECT_EQ(s->plan().packs[0].level, "none");
  EXPECT_THAT(s->plan().packs[0].reason, HasSubstr("packs disabled"));
  EXPECT_EQ(node(*s, "relu_x").config, "heuristic (packs disabled)");
  EXPECT_EQ(applied().at("relu_x"), "block=4 wg_x=64 heuristic");
  EXPECT_EQ(applied().at("relu_ax"), "block=4 wg_x=64 heuristic");
}

TEST_F(PackSessionTest, BadPackFileIsAnErrorNamingFileAndKey) {
  const fs::path bad = dir_ / "bad.yaml";
  write(bad, pack_text("  device: \"PackTest GPU\"\n",
                       "  - workload: \"" + kBig +
                           "\"\n    schedule: relu.blocked\n    knobs: {block: many}\n"
                           "    time_us: 1\n"));
  SessionOptions o = options();
  o.pack_mode = PackMode::kFiles;
  o.pack_files = {bad.string()};
  try {
    Session s(test_graph(), o, host());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(bad.string()));
    EXPECT_THAT(e.what(), HasSubstr("block"));
  }
  o.pack_files = {(dir_ / "missing.yaml").string()};
  try {
    Session s(test_graph(), o, host());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing.yaml"));
  }
}

TEST_F(PackSessionTest, BadPackInScheduleDirIsAWarningAndTheNextLevelWins) {
  write(dir_ / "schedules" / "packtest" / "a_bad.yaml", "schema_version: 1\nplugin: [\n");
  add_pack("b_family.yaml", pack_text("  family: packtest-family\n", entry(kBig, 2, 64)));
  auto s = session(options());
  EXPECT_EQ(s->plan().packs[0].level, "family");
  EXPECT_THAT(all_warnings(*s), HasSubstr("a_bad.yaml"));
  EXPECT_EQ(applied().at("relu_x"), "block=2 wg_x=64 config");
}

TEST_F(PackSessionTest, PreviewMatchesTheSessionChoice) {
  const std::string path =
      add_pack("family.yaml", pack_text("  family: packtest-family\n", entry(kBig, 2, 64)));
  auto s = session(options());
  const auto plugin = s->plugin_host().find("packtest");
  ASSERT_TRUE(plugin);
  const DevicePackPlan p = preview_device_pack("packtest", plugin->devices()[0], options());
  EXPECT_EQ(p.family, "packtest-family");
  EXPECT_THAT(p.family_reason, HasSubstr("packtest-family"));
  EXPECT_EQ(p.pack_file, path);
  EXPECT_EQ(p.level, "family");
  EXPECT_EQ(p.reason, s->plan().packs[0].reason);
}

// The helper's trampolines seen through the C table: describe_node's answer, and compile applying
// node_configs (and the heuristic without them).
TEST_F(PackSessionTest, HelperDescribesKnobSpaceAndAppliesConfigs) {
  const Graph g = test_graph();
  const auto h = host();
  const auto loaded = h->find("packtest");
  ASSERT_TRUE(loaded);
  const auto plugin = loaded->create_instance();
  ASSERT_TRUE(plugin->has_describe_node());
  const std::vector<PluginDeviceInfo> devices = plugin->probe("");
  ASSERT_EQ(devices.size(), 1u);
  const std::string device = devices[0].id;
  const detail::RegionDesc region(g, {0, 1}, detail::value_consumers(g));  // relu_x, add
  const PluginNodeTuning relu = plugin->describe_node(device, region.get(), 0);
  EXPECT_EQ(relu.workload_key, kBig);
  EXPECT_DOUBLE_EQ(relu.flops, 120.0);
  ASSERT_EQ(relu.schedules.size(), 1u);
  EXPECT_EQ(relu.default_schedule, 0);
  EXPECT_EQ(relu.schedules[0].name, "relu.blocked");
  ASSERT_EQ(relu.schedules[0].knobs.size(), 2u);
  EXPECT_EQ(relu.schedules[0].knobs[0].name, "block");
  EXPECT_EQ(relu.schedules[0].knobs[0].values, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(relu.schedules[0].knobs[0].default_value, 4);
  EXPECT_EQ(relu.schedules[0].knobs[1].name, "wg_x");
  EXPECT_EQ(relu.schedules[0].knobs[1].default_value, 64);
  EXPECT_TRUE(plugin->describe_node(device, region.get(), 1).schedules.empty());  // Add

  const tsr_knob knobs[] = {{"block", 2}, {"wg_x", 256}};
  tsr_node_config config{};
  config.struct_size = sizeof(tsr_node_config);
  config.node = 0;
  config.schedule = "relu.blocked";
  config.num_knobs = 2;
  config.knobs = knobs;
  for (const bool with_config : {false, true}) {
    fs::remove(log_);
    tsr_compile_options options{};
    options.struct_size = sizeof(tsr_compile_options);
    options.num_node_configs = with_config ? 1 : 0;
    options.node_configs = with_config ? &config : nullptr;
    char text[256] = {0};
    tsr_region_handle handle = nullptr;
    ASSERT_EQ(plugin->table().compile_region(plugin->handle(), device.c_str(), region.get(),
                                             &options, &handle, tsr_message{text, sizeof(text)}),
              TSR_OK)
        << text;
    plugin->table().release_region(handle);
    EXPECT_EQ(applied().at("relu_x"),
              with_config ? "block=2 wg_x=256 config" : "block=4 wg_x=64 heuristic");
  }
}

// `text` with its sha256 written, and a signature by `key` when one is given.
std::string sealed(const std::string& text, const SecretKey* key = nullptr) {
  const std::string with_hash = seal_pack_text(text, "pack.yaml", {});
  if (key == nullptr) return with_hash;
  const Pack pack = parse_pack(with_hash, "pack.yaml");
  return seal_pack_text(with_hash, "pack.yaml",
                        {sign_digest(*key, kPackSignatureDomain, pack_content_digest(pack))});
}

// A pack in a schedules directory changed after it was sealed is left out with the reason, and
// the next level's pack runs.
TEST_F(PackSessionTest, APackChangedAfterSealingIsLeftOutAndTheNextLevelWins) {
  std::string text = sealed(pack_text("  device: \"PackTest GPU\"\n", entry(kBig, 8, 256)));
  text.replace(text.find("block: 8"), 8, "block: 1");
  const std::string device = add_pack("device.yaml", text);
  add_pack("family.yaml", sealed(pack_text("  family: packtest-family\n", entry(kBig, 2, 64))));
  auto s = session(options());
  EXPECT_EQ(s->plan().packs[0].level, "family");
  EXPECT_THAT(all_warnings(*s), HasSubstr(device));
  EXPECT_THAT(all_warnings(*s), HasSubstr("does not match its sha256"));
  EXPECT_EQ(applied().at("relu_x"), "block=2 wg_x=64 config");
}

// With trusted keys, a schedules-directory pack no trusted key signed is left out with the
// reason and the signed pack of the next level runs; a --pack file no trusted key signed is an
// error naming it; without keys the unsigned, more specific pack runs as before.
TEST_F(PackSessionTest, TrustedKeysLeaveOutPacksNoTrustedKeySigned) {
  if (!signatures_supported()) GTEST_SKIP() << "built without libsodium";
  const SecretKey key = generate_secret_key();
  const std::string device = add_pack(
      "device.yaml", sealed(pack_text("  device: \"PackTest GPU\"\n", entry(kBig, 8, 256))));
  add_pack("family.yaml",
           sealed(pack_text("  family: packtest-family\n", entry(kBig, 2, 64)), &key));
  SessionOptions trusting = options();
  trusting.trusted_keys = {key.public_key().text()};
  auto s = session(trusting);
  EXPECT_EQ(s->plan().packs[0].level, "family");
  EXPECT_THAT(all_warnings(*s), HasSubstr("pack " + device + " refused: it is not signed"));
  EXPECT_EQ(applied().at("relu_x"), "block=2 wg_x=64 config");

  auto unchecked = session(options());
  EXPECT_EQ(unchecked->plan().packs[0].level, "device");
  EXPECT_EQ(applied().at("relu_x"), "block=8 wg_x=256 config");

  trusting.pack_mode = PackMode::kFiles;
  trusting.pack_files = {device};
  try {
    Session refused(test_graph(), trusting, host());
    ADD_FAILURE() << "an unsigned --pack file was used under trusted keys";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(device + ": refused: it is not signed"));
  }
}

}  // namespace
}  // namespace tessera
