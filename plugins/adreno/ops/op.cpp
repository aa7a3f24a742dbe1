// The op registry of the adreno plugin and the helpers op files share.
#include "ops/op.hpp"

namespace tessera::adreno {

std::string check_image_io(const NodeView& node, const Device& device, bool any_rank) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i) || node.input(i).data) continue;
    r = check_fits_image(node.input(i), device.limits, !any_rank);
    if (!r.empty()) return "input " + std::to_string(i) + ": " + r;
  }
  r = check_fits_image(node.output(0), device.limits, !any_rank);
  return r.empty() ? "" : "output 0: " + r;
}

std::array<int32_t, 4> blocked_dims(const tsr_tensor& t, const NodeView& node) {
  return {to_i32(t.dims[0], node), to_i32((t.dims[1] + 3) / 4, node), to_i32(t.dims[2], node),
          to_i32(t.dims[3], node)};
}

std::vector<float> pad_channels(const std::vector<float>& v) {
  std::vector<float> out((v.size() + 3) / 4 * 4, 0.0f);
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}

}  // namespace tessera::adreno
