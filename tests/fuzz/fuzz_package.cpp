// Fuzz harness: package bytes through parse_package (what `tessera run MODEL.tsp`, the C API and
// the runtime load: the FlatBuffer verifier, then every index, offset, size and shape, the
// per-member content hashes and the signatures), then what a writer does with a package that
// loaded: serialize it and parse it back. A package that loads must survive that unchanged in
// its structure and content hash: a failure there is a finding.
//
// Each input is parsed twice: once as a user's package is (the hashes compared: an error or a
// package, never a crash), and once with the comparison off, whose result is the verdict. Mutated
// bytes almost never keep their hashes, and the checks behind the hash must hold against a
// crafted package that states correct ones, so they are fuzzed with it off.
#include <string>

#include "fuzz_target.hpp"
#include "tessera/integrity.hpp"
#include "tessera/package.hpp"

namespace {

// A key no input was signed with: the trust check must refuse every input with a reason, and
// reach libsodium's verification with whatever key and signature bytes the input holds.
const char* const kUnknownKey =
    "ed25519:d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

void check_written(const tessera::Package& p) {
  std::string bytes;
  try {
    bytes = tessera::serialize_package(p);
  } catch (const tessera::Error& e) {
    tessera::fuzz::fuzz_require(
        false, std::string("a package that loads does not serialize: ") + e.what());
  }
  tessera::Package back;
  try {
    // What the writer writes carries the hashes of what it wrote: it loads with them compared.
    back = tessera::parse_package(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                  "fuzz-out.tsp");
  } catch (const tessera::Error& e) {
    tessera::fuzz::fuzz_require(
        false, std::string("a package that loads does not load again once written: ") + e.what());
  }
  tessera::fuzz::fuzz_require(back.graph.values.size() == p.graph.values.size() &&
                                  back.graph.nodes.size() == p.graph.nodes.size() &&
                                  back.targets.size() == p.targets.size(),
                              "serialize + parse changed the graph's size");
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    tessera::fuzz::fuzz_require(back.graph.nodes[i].op_type == p.graph.nodes[i].op_type &&
                                    back.nodes[i].config.schedule == p.nodes[i].config.schedule &&
                                    back.nodes[i].target == p.nodes[i].target,
                                "serialize + parse changed node " + std::to_string(i));
  }
  tessera::fuzz::fuzz_require(back.content_sha256 == p.content_sha256,
                              "serialize + parse changed the content hash");
  tessera::fuzz::fuzz_require(back.signatures.size() == p.signatures.size(),
                              "serialize + parse changed the signatures");
}

}  // namespace

TESSERA_FUZZ_TARGET(package) {
  return tessera::fuzz::run_input([&] {
    try {
      tessera::parse_package(data, size, "fuzz.tsp");
    } catch (const tessera::Error&) {
      // A refusal, as the verdict below may be; only its kind (tessera::Error) is checked here.
    }
    const tessera::Package p = tessera::parse_package(data, size, "fuzz.tsp",
                                                      tessera::ContentHashCheck::kIgnoreForFuzzing);
    tessera::fuzz::fuzz_require(p.content_sha256 == tessera::package_content_digest(p),
                                "the content hash read is not the content's");
    if (tessera::signatures_supported()) {
      tessera::fuzz::fuzz_require(tessera::package_trust_problem(p, {kUnknownKey}).has_value(),
                                  "a package no trusted key signed was trusted");
    }
    check_written(p);
  });
}
