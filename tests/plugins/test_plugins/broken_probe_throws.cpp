// Broken test plugin written with the helper: probe() throws; the helper's trampoline must turn
// it into TSR_ERROR + message.
#include <stdexcept>

#include "tessera/plugin.hpp"

namespace {
class ProbeThrows : public tessera::plugin::Plugin {
 public:
  std::vector<tessera::plugin::DeviceInfo> probe(const std::string&) override {
    throw std::runtime_error("probe threw on purpose (test)");
  }
  tessera::plugin::Support query(const std::string&, const tessera::plugin::RegionView&,
                                 const tessera::plugin::NodeView&) override {
    return tessera::plugin::Support::no("never");
  }
  std::unique_ptr<tessera::plugin::CompiledRegion> compile(
      const std::string&, const tessera::plugin::RegionView&,
      const tessera::plugin::CompileOptions&) override {
    return nullptr;
  }
};
}  // namespace

TESSERA_DEFINE_PLUGIN(ProbeThrows, "probethrows", "0", "test plugin whose probe throws")
