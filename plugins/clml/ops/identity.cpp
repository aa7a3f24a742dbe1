// Identity (inference: the input unchanged) on CLML's reshape op, which copies between two OPTIMAL
// tensors of one shape: the value keeps to the CLML region instead of splitting it.
#include "ops/op.hpp"

namespace tessera::clml {
TESSERA_CLML_OP("Identity", check_reshape, lower_reshape);
}  // namespace tessera::clml
