// Fuzz harness: package bytes through parse_package (what `tessera run MODEL.tsp`, the C API and
// the runtime load: the FlatBuffer verifier, then every index, offset, size and shape), then
// what a writer does with a package that loaded: serialize it and parse it back. A package that
// loads must survive that unchanged in its structure: a failure there is a finding.
#include <string>

#include "fuzz_target.hpp"
#include "tessera/package.hpp"

TESSERA_FUZZ_TARGET(package) {
  return tessera::fuzz::run_input([&] {
    const tessera::Package p = tessera::parse_package(data, size, "fuzz.tsp");
    std::string bytes;
    try {
      bytes = tessera::serialize_package(p);
    } catch (const tessera::Error& e) {
      tessera::fuzz::fuzz_require(
          false, std::string("a package that loads does not serialize: ") + e.what());
    }
    tessera::Package back;
    try {
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
  });
}
