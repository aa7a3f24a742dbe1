// Fuzz harness: tuned-pack YAML through parse_pack (what `tessera pack validate`, session start
// and `pack merge` read), then what writers do with a pack that loaded: serialize it and parse
// it back (serialize_validated_pack, as `pack build` / `pack merge` / `tune --pack` write), and
// merge it with itself. A pack that loads must survive both: a failure there is a finding.
#include <string>
#include <vector>

#include "fuzz_target.hpp"
#include "tessera/pack.hpp"

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
