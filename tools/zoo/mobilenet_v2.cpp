// MobileNet v2 (width 1.0). relay.testing has no MobileNet v2; this follows the paper (Sandler et
// al. 2018, table 2) as torchvision and the MXNet/Gluon model zoo build it: inverted residual
// blocks (1x1 expand + BN + ReLU6, 3x3 depthwise + BN + ReLU6, 1x1 linear projection + BN) with an
// identity shortcut when stride is 1 and the channel count is kept, then a 1x1 conv to 1280,
// global average pooling, dropout and a dense classifier.
#include <cmath>
#include <string>

#include "networks.hpp"

namespace tessera::zoo::detail {
namespace {

constexpr float kBnEpsilon = 1e-5f;

Sym conv_bn(ModelBuilder& b, const Sym& data, const std::string& name, ConvSpec spec, bool relu6) {
  const Sym bn = b.batch_norm(b.conv(data, name + "_conv", spec), name + "_bn", kBnEpsilon);
  return relu6 ? b.relu6(bn, name + "_relu6") : bn;
}

}  // namespace

void build_mobilenet_v2(ModelBuilder& b, int64_t batch) {
  b.compensate_batch_norm(/*fixed_gamma=*/false);
  const Sym data = b.input("data", {batch, 3, 224, 224});
  Sym body = conv_bn(b, data, "features_0", ConvSpec{32, {3, 3}, {2, 2}, {1, 1}}, true);
  struct Stage {
    int64_t expansion, channels, repeats, stride;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t residual_blocks = 0;
  for (const Stage& s : stages) residual_blocks += s.repeats - 1;
  // The projection has no activation; scaling it by 1/sqrt(blocks with a shortcut) keeps the
  // residual sums from growing (fixed-statistics BN does not renormalise them).
  const float projection_gain = 1.0f / std::sqrt(static_cast<float>(residual_blocks));
  int index = 1;
  for (const Stage& s : stages) {
    for (int64_t r = 0; r < s.repeats; ++r) {
      const std::string name = "block_" + std::to_string(index++);
      const int64_t stride = r == 0 ? s.stride : 1;
      const int64_t in_channels = body.shape[1];
      const int64_t hidden = in_channels * s.expansion;
      Sym x = body;
      if (s.expansion != 1) x = conv_bn(b, x, name + "_expand", ConvSpec{hidden}, true);
      ConvSpec depthwise{hidden, {3, 3}, {stride, stride}, {1, 1}};
      depthwise.groups = hidden;
      x = conv_bn(b, x, name + "_depthwise", depthwise, true);
      const bool residual = stride == 1 && in_channels == s.channels;
      ConvSpec project{s.channels};
      project.gain = residual ? projection_gain : 1.0f;
      x = conv_bn(b, x, name + "_project", project, false);
      body = residual ? b.add(body, x, name + "_add") : x;
    }
  }
  body = conv_bn(b, body, "features_18", ConvSpec{1280}, true);
  body = b.flatten(b.global_avg_pool(body, "pool"), "flatten");
  body = b.dropout(body, "dropout");
  finish_classifier(b, b.dense(body, "logits", 1000, 1.0f));
}

}  // namespace tessera::zoo::detail
