// The CLI's pack options end to end: `tessera plan --json` gives each node the config text the
// pack implies (--pack FILE, --no-packs), and `tessera info` shows the family and the pack a run
// would select. The model is a zoo network; its Relu nodes run on the packtest plugin. keygen,
// sign, verify, pack seal and run --trusted-key on a compiled package and a hand-written pack.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>

#include "tessera/onnx_import.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// stdout of `command` (stderr discarded); fails the test on a non-zero exit.
std::string run_tool(const std::string& args) {
  const std::string command = std::string(TESSERA_TOOL_PATH) + " " + args + " 2>/dev/null";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  return out;
}

// stdout and stderr of `command` and its exit status.
std::pair<int, std::string> run_tool_status(const std::string& args) {
  const std::string command = std::string(TESSERA_TOOL_PATH) + " " + args + " 2>&1";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, out};
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string json_line_of(const std::string& json, const std::string& node) {
  const size_t at = json.find("{\"name\": \"" + node + "\"");
  if (at == std::string::npos) return "";
  return json.substr(at, json.find('\n', at) - at);
}

std::string key_of(const Graph& g, const Node& n) {
  std::string dims;
  for (int64_t d : g.value(n.inputs[0]).shape)
    dims += (dims.empty() ? "" : "x") + std::to_string(d);
  return "relu|in=" + dims + "|f32";
}

TEST(PackCli, PlanAndInfoShowPackConfigs) {
  const fs::path dir = fs::path(::testing::TempDir()) / "tessera_packs_cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string model = (dir / "squeezenet.onnx").string();
  run_tool("zoo squeezenet_v1.1 -o " + model);
  const Graph g = import_onnx_file(model);
  // Two Relu nodes with different workloads: the pack tunes only the first.
  const Node* first = nullptr;
  const Node* other = nullptr;
  for (const Node& n : g.nodes) {
    if (n.op_type != "Relu") continue;
    if (first == nullptr) {
      first = &n;
    } else if (other == nullptr && key_of(g, n) != key_of(g, *first)) {
      other = &n;
    }
  }
  ASSERT_TRUE(first && other);
  const std::string pack = (dir / "packtest-device.yaml").string();
  std::ofstream(pack) << "schema_version: 1\nplugin: packtest\nmatch:\n  device: \"PackTest GPU\"\n"
                         "engine_version: \"*\"\nmeasured:\n  how: test\n  when: \"2026-11-23\"\n"
                         "  tool_version: \"0.1.0\"\nentries:\n  - workload: \""
                      << key_of(g, *first)
                      << "\"\n    schedule: relu.blocked\n    knobs: {block: 2, wg_x: 1}\n"
                         "    time_us: 3\n";
  const std::string common = model + " --targets packtest,reference --plugin-dir " +
                             TESSERA_PACKS_TEST_PLUGIN_DIR + " --plugin-dir " +
                             TESSERA_PLUGIN_BUILD_DIR + " --json";

  const std::string json = run_tool("plan " + common + " --pack " + pack);
  EXPECT_THAT(json_line_of(json, first->name),
              HasSubstr("\"config\": \"relu.blocked{block=2,wg_x=1} from pack " + pack +
                        " (device match)\""));
  EXPECT_THAT(json_line_of(json, other->name),
              HasSubstr("\"config\": \"heuristic (no pack entry for workload '" +
                        key_of(g, *other) + "')\""));

  const std::string none = run_tool("plan " + common + " --no-packs");
  EXPECT_THAT(json_line_of(none, first->name),
              HasSubstr("\"config\": \"heuristic (packs disabled)\""));

  const std::string info = run_tool("info --plugin-dir " +
                                    std::string(TESSERA_PACKS_TEST_PLUGIN_DIR) + " --pack " + pack);
  EXPECT_THAT(info, HasSubstr("pack: " + pack + ", level device"));
}

// A package compiled, then run under trusted keys: refused unsigned, run once signed by the
// trusted key, refused when signed by another; verify says the same. A hand-written pack gets
// its sha256 from `pack seal` as one more line, and a number changed afterwards fails validate.
TEST(PackCli, SignVerifyAndRunUnderTrustedKeys) {
  const fs::path dir = fs::path(::testing::TempDir()) / "tessera_packs_sign";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string a = (dir / "a").string(), b = (dir / "b").string();
  const auto [keygen_rc, keygen] = run_tool_status("keygen -o " + a);
  if (keygen_rc != 0 && keygen.find("no libsodium") != std::string::npos)
    GTEST_SKIP() << "built without libsodium";
  ASSERT_EQ(keygen_rc, 0) << keygen;
  EXPECT_EQ(fs::status(a + ".key").permissions() & fs::perms::group_all, fs::perms::none);
  EXPECT_THAT(run_tool_status("keygen -o " + a).second, HasSubstr("--force"));
  run_tool("keygen -o " + b);

  const std::string model = (dir / "squeezenet.onnx").string();
  const std::string package = (dir / "squeezenet.tsp").string();
  run_tool("zoo squeezenet_v1.1 -o " + model);
  run_tool("compile " + model + " --targets cpu -o " + package);
  const std::string run = "run " + package + " --repeat 1 --quiet --trusted-key ";
  const auto unsigned_run = run_tool_status(run + a + ".pub");
  EXPECT_EQ(unsigned_run.first, 1);
  EXPECT_THAT(unsigned_run.second, HasSubstr(package + ": refused: it is not signed"));

  EXPECT_THAT(run_tool("sign --key " + a + ".key " + package), HasSubstr("signed " + package));
  EXPECT_EQ(run_tool_status(run + a + ".pub").first, 0);
  const auto other = run_tool_status(run + b + ".pub");
  EXPECT_EQ(other.first, 1);
  EXPECT_THAT(other.second, HasSubstr("(not a trusted key)"));
  EXPECT_THAT(run_tool("verify --trusted-key " + a + ".pub " + package),
              HasSubstr("ok   " + package + ": sha256:"));
  EXPECT_EQ(run_tool_status("verify --trusted-key " + b + ".pub " + package).first, 1);
  // compile --sign: signed as it is written.
  const std::string signed_at_compile = (dir / "signed.tsp").string();
  EXPECT_THAT(
      run_tool("compile " + model + " --targets cpu --sign " + b + ".key -o " + signed_at_compile),
      HasSubstr("signed with ed25519:"));
  EXPECT_THAT(run_tool("verify --trusted-key " + b + ".pub " + signed_at_compile),
              HasSubstr("ok   " + signed_at_compile));

  const std::string pack = (dir / "hand.yaml").string();
  const std::string hand =
      "schema_version: 1\nplugin: packtest\nmatch:\n  device: \"PackTest GPU\"\n"
      "engine_version: \"*\"\nmeasured:\n  how: test\n  when: \"2026-12-07\"\n"
      "  tool_version: \"0.1.0\"\nentries:\n  - workload: \"relu|in=2x3|f32\"\n"
      "    schedule: relu.blocked\n    knobs: {block: 2, wg_x: 1}\n    time_us: 3\n";
  std::ofstream(pack) << hand;
  EXPECT_THAT(run_tool("pack seal " + pack), HasSubstr("sealed " + pack));
  std::ifstream in(pack);
  const std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after.substr(0, hand.size()), hand);
  EXPECT_EQ(after.substr(hand.size()).rfind("sha256: \"", 0), 0u) << after;
  EXPECT_THAT(run_tool("sign --key " + a + ".key " + pack), HasSubstr("signed " + pack));
  EXPECT_THAT(run_tool("verify --trusted-key " + a + ".pub " + pack), HasSubstr("ok   " + pack));
  std::string edited = after;
  edited.replace(edited.find("time_us: 3"), 10, "time_us: 1");
  std::ofstream(pack) << edited;
  const auto validate = run_tool_status("pack validate " + pack);
  EXPECT_EQ(validate.first, 1);
  EXPECT_THAT(validate.second, HasSubstr("does not match its sha256"));
}

}  // namespace
}  // namespace tessera
