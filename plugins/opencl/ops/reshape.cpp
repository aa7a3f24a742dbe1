// Reshape: the output shares the input's device buffer (same bytes, new shape).
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  return check_alias(node, device);
}

}  // namespace
TESSERA_OPENCL_OP("Reshape", check, lower_alias);
}  // namespace tessera::opencl
