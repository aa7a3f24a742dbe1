// The op registry of the adreno plugin and the helpers op files share.
#include "ops/op.hpp"

namespace tessera::adreno {

std::string check_float_io(const NodeView& node) {
  const char* const float_only = "(adreno runs float32 models)";
  const std::string r = opencl::support::check_float_inputs(node, float_only);
  if (!r.empty()) return r;
  if (node.num_outputs() < 1 || node.output_index(0) < 0) return "output 0 is missing";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  return opencl::support::check_float_tensor(node.output(0), "output 0", float_only);
}

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
