// Flatten on the mali plugin: the output shares the input's device buffer (same bytes, new shape).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device& device) {
  return check_alias(node, device);
}

}  // namespace
TESSERA_MALI_OP("Flatten", check, lower_alias);
}  // namespace tessera::mali
