// Test plugin written with the helper: claims Relu (cheaply) but every compile fails, so core must
// fall back to the next target and say so.
#include "tessera/plugin.hpp"

namespace {
using namespace tessera::plugin;
class CompileFails : public Plugin {
 public:
  std::vector<DeviceInfo> probe(const std::string&) override {
    DeviceInfo d;
    d.id = "host";
    d.name = "compilefail device";
    d.score = 90;
    return {d};
  }
  Support query(const std::string&, const RegionView&, const NodeView& node) override {
    if (node.op_type() == "Relu") return Support::yes(0.001);
    return Support::no("op " + std::string(node.op_type()) + " not implemented");
  }
  std::unique_ptr<CompiledRegion> compile(const std::string&, const RegionView&,
                                          const CompileOptions&) override {
    throw Failure(TSR_COMPILE_FAILED, "kernel build failed: out of registers (test)");
  }
};
}  // namespace

TESSERA_DEFINE_PLUGIN(CompileFails, "compilefail", "0", "test plugin whose compiles fail")
