// Cast from float32 to float32 (autocast's .float() on a tensor that already
// is): the output shares the input's device buffer. Casts that change the type fall back.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
TESSERA_OPENCL_OP("Cast", check_alias, lower_alias);
}  // namespace tessera::opencl
