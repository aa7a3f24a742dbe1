// Identity: the output shares the input's device buffer (same bytes, same
// layout: an NCHW4c input stays NCHW4c).
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  return check_alias(node, device);
}

}  // namespace
TESSERA_OPENCL_OP_WITH_RULE("Identity", check, lower_alias, follow_input0);
}  // namespace tessera::opencl
