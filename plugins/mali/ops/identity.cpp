// Identity on the mali plugin: the output shares the input's device buffer (same bytes, same
// layout: an NCHW4c input stays NCHW4c).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device& device) {
  return check_alias(node, device);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Identity", check, lower_alias, follow_input0);
}  // namespace tessera::mali
