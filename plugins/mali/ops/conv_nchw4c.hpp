// Conv pieces shared by both layouts (geometry, shape classes, default configs) and the NCHW4c
// Conv lowering: schedule choice, weight
// repacking and launches of the *_4c kernels of kernels/conv.cl. ops/conv.cpp registers Conv and
// dispatches on the region layout.
#pragma once

#include <array>
#include <vector>

#include "ops/op.hpp"

namespace tessera::mali {

struct ConvGeometry {
  std::array<int64_t, 2> s, d, k;  // strides, dilations, kernel (h, w)
  std::array<int64_t, 4> pads;     // top, left, bottom, right
  int64_t group;
};
ConvGeometry conv_geometry(const NodeView& node);

// Shapes with a specialised schedule (both layouts): group == C == M with one input channel per
// group; 1x1, stride 1, no padding, group 1.
bool is_depthwise(const NodeView& node, const ConvGeometry& g);
bool is_pointwise(const ConvGeometry& g);
// The heuristic's config of Conv schedule `id` (either layout) for this node.
Config conv_default_config(const NodeView& node, const Device& device, const char* id);

// The NCHW4c configs of a Conv: the specialised schedule the shape allows (3x3s1, 1x1,
// depthwise) first, then the general direct one, which runs every shape.
std::vector<Config> conv_nchw4c_options(const NodeView& node, const Device& device);
void lower_conv_nchw4c(Lowering& lw, const NodeView& node, int32_t index, const Config& config);

}  // namespace tessera::mali
