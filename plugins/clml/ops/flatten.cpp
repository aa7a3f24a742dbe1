// Flatten on CLML's reshape op (the OPTIMAL layout is the driver's, so even a reshape is an op).
#include "ops/op.hpp"

namespace tessera::clml {
TESSERA_CLML_OP("Flatten", check_reshape, lower_reshape);
}  // namespace tessera::clml
