// ArgMin: the int64 index of the smallest element along an axis (util/arg_extreme.hpp).
#include "op.hpp"
#include "util/arg_extreme.hpp"

namespace tessera::ops {

TESSERA_REGISTER_OP("ArgMin", infer_arg_extreme, compute_arg_extreme<false>);

}  // namespace tessera::ops
