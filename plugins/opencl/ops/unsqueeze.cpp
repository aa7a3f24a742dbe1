// Unsqueeze: the output shares the input's device buffer (same bytes, new
// shape).
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
TESSERA_OPENCL_OP("Unsqueeze", check_alias, lower_alias);
}  // namespace tessera::opencl
