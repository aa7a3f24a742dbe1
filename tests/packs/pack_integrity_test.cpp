// Pack content hashes and signatures without a session: the writers' sha256 loads, a changed
// number is refused naming the file and key, layout and comments are not content, `seal` adds
// the hash keeping every other line, signatures verify only for the content they signed, and
// every pack shipped in schedules/ carries its hash; a deployment's trusted_keys: reach the
// session options, a bad entry refused naming the file, line and key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tessera/deploy_config.hpp"
#include "tessera/deployment.hpp"
#include "tessera/error.hpp"
#include "tessera/file_util.hpp"
#include "tessera/integrity.hpp"
#include "tessera/pack.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

Pack sample_pack() {
  Pack p;
  p.plugin = "cpu";
  p.match.device = "Test CPU";
  p.engine_version = VersionRange::parse(">=0.1");
  p.measured = {"tessera tune m.onnx", "2026-12-07", "0.1.0"};
  p.entries.push_back({"relu|in=1x8|f32", "relu.plain", {{"block", 4}}, 12.5, 0});
  p.entries.push_back({"conv|in=1x3x8x8|f32", "conv2d.nchw.direct", {{"tile", 8}}, 147.859, 0});
  return p;
}

std::string error_of(const std::string& text, const std::string& file) {
  try {
    parse_pack(text, file);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// `text` with the first `from` replaced by `to` (which must be there).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(PackIntegrity, WrittenPacksCarryTheirHashAndAChangedNumberIsRefused) {
  const std::string text = serialize_validated_pack(sample_pack(), "p.yaml");
  const Pack back = parse_pack(text, "p.yaml");
  EXPECT_EQ(back.sha256, to_hex(pack_content_digest(sample_pack())));
  EXPECT_THAT(text, HasSubstr("sha256: \"" + back.sha256 + "\"\n"));

  // A measured time and a knob value changed by hand: refused naming the file and the key.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"time_us: 147.859", "time_us: 14.7859"}, {"tile: 8", "tile: 16"}}) {
    const std::string message = error_of(replaced(text, from, to), "p.yaml");
    EXPECT_THAT(message, HasSubstr("p.yaml:"));
    EXPECT_THAT(message, HasSubstr("sha256: the pack's content does not match its sha256"));
    EXPECT_THAT(message, HasSubstr("tessera pack seal p.yaml"));
  }
  // Layout and comments are not content: the same values written otherwise still load.
  const std::string relaid =
      "# measured on the test machine\n" + replaced(text, "time_us: 147.859", "time_us: 1.47859e2");
  EXPECT_EQ(error_of(relaid, "p.yaml"), "");
  // A hash that is not one.
  EXPECT_THAT(error_of(replaced(text, "sha256: \"", "sha256: \"zz"), "p.yaml"),
              HasSubstr("sha256: 'zz"));
}

TEST(PackIntegrity, SealAddsTheHashAndKeepsEveryOtherLine) {
  const std::string hand_written =
      "schema_version: 1\nplugin: cpu  # the cpu plugin\nmatch:\n  device: \"Test CPU\"\n"
      "engine_version: \">=0.1\"\nmeasured:\n  how: \"by hand\"\n  when: \"2026-12-07\"\n"
      "  tool_version: \"0.1.0\"\nentries:\n  - workload: \"relu|in=1x8|f32\"\n"
      "    schedule: relu.plain\n    knobs: {block: 4}\n    time_us: 12.500000000000002\n";
  EXPECT_TRUE(parse_pack(hand_written, "h.yaml").sha256.empty());
  const std::string sealed = seal_pack_text(hand_written, "h.yaml", {});
  const Pack back = parse_pack(sealed, "h.yaml");
  EXPECT_EQ(back.sha256, to_hex(pack_content_digest(parse_pack(hand_written, "h.yaml"))));
  EXPECT_EQ(back.entries.at(0).time_us, 12.500000000000002);
  // Exactly one line more, every line of the hand-written pack kept as it was.
  const std::string hash_line = "sha256: \"" + back.sha256 + "\"\n";
  EXPECT_EQ(replaced(sealed, hash_line, ""), hand_written);
  // Sealing again changes nothing; sealing after an edit records the new content.
  EXPECT_EQ(seal_pack_text(sealed, "h.yaml", {}), sealed);
  const std::string edited = replaced(sealed, "block: 4", "block: 8");
  EXPECT_THAT(error_of(edited, "h.yaml"), HasSubstr("does not match its sha256"));
  EXPECT_EQ(parse_pack(seal_pack_text(edited, "h.yaml", {}), "h.yaml").entries[0].knobs[0].value,
            8);
  // A top level in flow style has no line to put the hash on.
  try {
    seal_pack_text("{schema_version: 1, plugin: cpu}", "flow.yaml", {});
    ADD_FAILURE() << "a flow-style pack was sealed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("flow.yaml:"));
    EXPECT_THAT(e.what(), HasSubstr("block style"));
  }
}

TEST(PackIntegrity, ASignatureHoldsForTheContentItSignedOnly) {
  if (!signatures_supported()) GTEST_SKIP() << "built without libsodium";
  const SecretKey key = generate_secret_key();
  const SecretKey other = generate_secret_key();
  const std::string text = serialize_validated_pack(sample_pack(), "s.yaml");
  const Pack pack = parse_pack(text, "s.yaml");
  const std::vector<std::string> trusted = {key.public_key().text()};
  EXPECT_THAT(pack_trust_problem(pack, trusted).value_or(""), HasSubstr("it is not signed"));
  EXPECT_EQ(pack_trust_problem(pack, {}), std::nullopt);

  const Signature s = sign_digest(key, kPackSignatureDomain, pack_content_digest(pack));
  const std::string signed_text = seal_pack_text(text, "s.yaml", {s});
  const Pack signed_pack = parse_pack(signed_text, "s.yaml");
  ASSERT_EQ(signed_pack.signatures.size(), 1u);
  EXPECT_EQ(pack_trust_problem(signed_pack, trusted), std::nullopt);
  EXPECT_THAT(pack_trust_problem(signed_pack, {other.public_key().text()}).value_or(""),
              HasSubstr("(not a trusted key)"));
  // The same signature over a package's hash of the same bytes does not verify: domains differ.
  EXPECT_FALSE(verify_signature(s, kPackageSignatureDomain, pack_content_digest(pack)));
  // Edited and sealed again with the old signature: the signature no longer holds.
  const std::string resealed =
      seal_pack_text(replaced(signed_text, "block: 4", "block: 2"), "s.yaml", {s});
  EXPECT_THAT(pack_trust_problem(parse_pack(resealed, "s.yaml"), trusted).value_or(""),
              HasSubstr("changed after signing"));
  // A malformed signature entry names the file and key.
  EXPECT_THAT(error_of(replaced(signed_text, "signature: \"", "signature: \"00"), "s.yaml"),
              HasSubstr("signatures[0].signature"));
}

// What schedules/ ships was measured; its hash was added by `tessera pack seal`, so each file
// loads with a sha256 matching its content.
TEST(PackIntegrity, EveryShippedPackCarriesItsHash) {
  int packs = 0;
  for (const auto& plugin : fs::directory_iterator(TESSERA_SCHEDULES_DIR)) {
    if (!plugin.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(plugin.path())) {
      if (f.path().extension() != ".yaml") continue;
      const Pack p = load_pack(f.path().string());
      EXPECT_EQ(p.sha256.size(), 64u) << f.path() << " has no sha256 (tessera pack seal)";
      ++packs;
    }
  }
  EXPECT_GT(packs, 0);
}

TEST(PackIntegrity, DeploymentTrustedKeysReachTheSessionOptions) {
  const fs::path dir = fs::path(::testing::TempDir()) / "tessera_trusted_keys";
  fs::remove_all(dir);
  fs::create_directories(dir / "keys");
  std::ofstream(dir / "model.onnx") << "not read: the file must only exist";
  const std::string inline_key =
      "ed25519:d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
  const std::string file_key =
      "ed25519:3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c";
  std::ofstream(dir / "keys" / "lab.pub") << file_key << "\n";
  const std::string yaml = (dir / "deploy.yaml").string();
  const DeployConfig config = parse_deploy_config(
      "model: model.onnx\ntrusted_keys:\n  - \"" + inline_key + "\"\n  - keys/lab.pub\n", yaml);
  EXPECT_EQ(config.trusted_keys, (std::vector<std::string>{inline_key, file_key}));
  EXPECT_EQ(from_deployment(config).trusted_keys, config.trusted_keys);

  const auto refusal = [&](const std::string& entry) {
    try {
      parse_deploy_config("model: model.onnx\ntrusted_keys: [\"" + entry + "\"]\n", yaml);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(refusal("ed25519:abc"), HasSubstr(yaml + ":2:"));
  EXPECT_THAT(refusal("ed25519:abc"), HasSubstr("trusted_keys[0]"));
  EXPECT_THAT(refusal("ed25519:abc"), HasSubstr("64 hex digits"));
  EXPECT_THAT(refusal("keys/missing.pub"), HasSubstr("missing.pub"));
}

}  // namespace
}  // namespace tessera
