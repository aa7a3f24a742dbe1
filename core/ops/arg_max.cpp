// ArgMax: the int64 index of the largest element along an axis (util/arg_extreme.hpp).
#include "op.hpp"
#include "util/arg_extreme.hpp"

namespace tessera::ops {

TESSERA_REGISTER_OP("ArgMax", infer_arg_extreme, compute_arg_extreme<true>);

}  // namespace tessera::ops
