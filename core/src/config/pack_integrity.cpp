// A pack's content hash (the canonical encoding its `sha256:` is taken over) and its trust
// check. In the runtime, without YAML: what is hashed is the pack as read, never its text.
#include <cstring>

#include "tessera/error.hpp"
#include "tessera/pack.hpp"

namespace tessera {

namespace {

// Length-prefixed fields into a SHA-256: no two different packs encode alike.
class PackCanon {
 public:
  void u64(uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    h_.update(b, 8);
  }
  void str(const std::string& s) {
    u64(s.size());
    h_.update(s);
  }
  void number(double d) {
    uint64_t bits = 0;
    std::memcpy(&bits, &d, 8);
    u64(bits);
  }
  Sha256Digest finish() { return h_.finish(); }

 private:
  Sha256 h_;
};

}  // namespace

Sha256Digest pack_content_digest(const Pack& pack) {
  PackCanon c;
  c.str("tessera-pack-content");
  c.u64(static_cast<uint64_t>(pack.schema_version));
  c.str(pack.plugin);
  c.str(pack.match.device);
  c.str(pack.match.driver.text());
  c.str(pack.match.family);
  c.str(pack.match.vendor);
  c.str(pack.engine_version.text());
  c.str(pack.measured.how);
  c.str(pack.measured.when);
  c.str(pack.measured.tool_version);
  c.u64(pack.entries.size());
  for (const PackEntry& e : pack.entries) {
    c.str(e.workload);
    c.str(e.schedule);
    c.u64(e.knobs.size());
    for (const Knob& k : e.knobs) {
      c.str(k.name);
      c.u64(static_cast<uint64_t>(k.value));
    }
    c.number(e.time_us);
  }
  return c.finish();
}

std::optional<std::string> pack_trust_problem(const Pack& pack,
                                              const std::vector<std::string>& trusted_keys) {
  if (trusted_keys.empty()) return std::nullopt;
  if (pack.sha256.empty()) {
    return std::string(
        "it has no sha256, so no signature can cover it, and trusted keys are given "
        "(tessera pack seal, then tessera sign)");
  }
  return trust_problem(pack.signatures, kPackSignatureDomain, pack_content_digest(pack),
                       trusted_keys);
}

}  // namespace tessera
