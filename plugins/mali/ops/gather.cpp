// Gather of one constant index along an axis on the mali plugin (a scalar index drops the axis:
// how exporters pick q, k and v out of one tensor): the shared strided copy on NCHW. Gathers of
// several indices fall back with the reason.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  return opencl::support::check_gather(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_strided_copy(lw, node, index, opencl::support::gather_copy(node));
}

}  // namespace
TESSERA_MALI_OP("Gather", check, lower);
}  // namespace tessera::mali
