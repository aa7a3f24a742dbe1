// MobileNet v1 (alpha 1.0) after relay.testing.mobilenet: a 3x3 stride-2 conv block, then 13
// depthwise-separable blocks (3x3 depthwise + BN + ReLU, 1x1 pointwise + BN + ReLU), global
// average pooling and a dense classifier.
#include <string>

#include "networks.hpp"

namespace tessera::zoo::detail {
namespace {

constexpr float kBnEpsilon = 1e-5f;

Sym conv_block(ModelBuilder& b, const Sym& data, const std::string& name, int64_t channels,
               int64_t stride) {
  const Sym conv =
      b.conv(data, name + "_conv", ConvSpec{channels, {3, 3}, {stride, stride}, {1, 1}});
  return b.relu(b.batch_norm(conv, name + "_bn", kBnEpsilon), name + "_relu");
}

Sym separable_conv_block(ModelBuilder& b, const Sym& data, const std::string& name,
                         int64_t depthwise_channels, int64_t pointwise_channels, bool downsample) {
  const int64_t stride = downsample ? 2 : 1;
  ConvSpec depthwise{depthwise_channels, {3, 3}, {stride, stride}, {1, 1}};
  depthwise.groups = depthwise_channels;
  Sym body = b.conv(data, name + "_depthwise_conv1", depthwise);
  body = b.relu(b.batch_norm(body, name + "_bn1", kBnEpsilon), name + "_relu1");
  body = b.conv(body, name + "_conv2", ConvSpec{pointwise_channels});
  return b.relu(b.batch_norm(body, name + "_bn2", kBnEpsilon), name + "_relu2");
}

}  // namespace

void build_mobilenet(ModelBuilder& b, int64_t batch) {
  b.compensate_batch_norm(/*fixed_gamma=*/false);
  const Sym data = b.input("data", {batch, 3, 224, 224});
  Sym body = conv_block(b, data, "conv_block_1", 32, 2);
  struct Block {
    int64_t depthwise, pointwise;
    bool downsample;
  };
  const Block blocks[] = {{32, 64, false},    {64, 128, true},   {128, 128, false},
                          {128, 256, true},   {256, 256, false}, {256, 512, true},
                          {512, 512, false},  {512, 512, false}, {512, 512, false},
                          {512, 512, false},  {512, 512, false}, {512, 1024, true},
                          {1024, 1024, false}};
  int index = 1;
  for (const Block& block : blocks) {
    body = separable_conv_block(b, body, "separable_conv_block_" + std::to_string(index++),
                                block.depthwise, block.pointwise, block.downsample);
  }
  body = b.flatten(b.global_avg_pool(body, "pool"), "flatten");
  finish_classifier(b, b.dense(body, "logits", 1000, 1.0f));
}

}  // namespace tessera::zoo::detail
