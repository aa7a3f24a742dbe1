// Fuzz harness: tuned-pack YAML through parse_pack (what `tessera pack validate`, session start
// and `pack merge` read), then what writers do with a pack that loaded: serialize it and parse
// it back (serialize_validated_pack, as `pack build` / `pack merge` / `tune --pack` write), and
// merge it with itself. A pack that loads must survive both: a failure there is a finding. Its
// sha256 is its content's hash; sealing it (`tessera pack seal`) keeps its content; the trust
// check under a key that signed nothing refuses it with a reason.
#include <string>
#include <vector>

#include "fuzz_target.hpp"
#include "tessera/integrity.hpp"
#include "tessera/pack.hpp"

namespace {

const char* const kUnknownKey =
    "ed25519:d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

// Sealing a pack that loaded either refuses (a top level not in block style) or gives a pack of
// the same content whose sha256 is that content's hash.
void check_seal(const std::string& text, const tessera::Pack& pack) {
  std::string sealed;
  try {
    sealed = tessera::seal_pack_text(text, "fuzz.yaml", {});
  } catch (const tessera::Error&) {
    return;
  }
  tessera::Pack back;
  try {
    back = tessera::parse_pack(sealed, "fuzz.yaml");
  } catch (const tessera::Error& e) {
    tessera::fuzz::fuzz_require(false, std::string("a sealed pack does not load: ") + e.what());
  }
  tessera::fuzz::fuzz_require(back.sha256 == tessera::to_hex(tessera::pack_content_digest(pack)),
                              "sealing changed the pack's content");
}

}  // namespace

TESSERA_FUZZ_TARGET(pack) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  return tessera::fuzz::run_input([&] {
    const tessera::Pack pack = tessera::parse_pack(text, "fuzz.yaml");
    if (pack.schema_version != tessera::kPackSchemaVersion) return;  // header only, by design
    std::string written;
    try {
      written = tessera::serialize_validated_pack(pack, "fuzz-out.yaml");
    } catch (const tessera::Error& e) {
      tessera::fuzz::fuzz_require(false, std::string("a pack that loads does not serialize to "
                                                     "one that loads: ") + e.what());
    }
    const tessera::Pack back = tessera::parse_pack(written, "fuzz-out.yaml");
    tessera::fuzz::fuzz_require(back.entries.size() == pack.entries.size(),
                                "serialize + parse changed the number of entries");
    for (size_t i = 0; i < pack.entries.size(); ++i) {
      const tessera::PackEntry& a = pack.entries[i];
      const tessera::PackEntry& b = back.entries[i];
      tessera::fuzz::fuzz_require(
          a.workload == b.workload && a.schedule == b.schedule && a.knobs.size() == b.knobs.size(),
          "serialize + parse changed entry " + std::to_string(i) + ": workload '" + a.workload +
              "' -> '" + b.workload + "', schedule '" + a.schedule + "' -> '" + b.schedule +
              "', " + std::to_string(a.knobs.size()) + " -> " + std::to_string(b.knobs.size()) +
              " knobs");
    }
    tessera::fuzz::fuzz_require(back.sha256 == tessera::to_hex(tessera::pack_content_digest(pack)),
                                "a written pack's sha256 is not the hash of the content read");
    tessera::fuzz::fuzz_require(
        pack.sha256.empty() || pack.sha256 == back.sha256,
        "a pack whose sha256 was accepted does not hash to it once written");
    check_seal(text, pack);
    if (tessera::signatures_supported()) {
      tessera::fuzz::fuzz_require(tessera::pack_trust_problem(pack, {kUnknownKey}).has_value(),
                                  "a pack no trusted key signed was trusted");
    }
    try {
      const tessera::Pack merged = tessera::merge_packs({pack, pack});
      tessera::fuzz::fuzz_require(merged.entries.size() <= pack.entries.size(),
                                  "merging a pack with itself added entries");
    } catch (const tessera::Error& e) {
      tessera::fuzz::fuzz_require(false, std::string("a pack that loads does not merge with "
                                                     "itself: ") + e.what());
    }
  });
}
