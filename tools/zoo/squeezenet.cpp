// SqueezeNet 1.1 after relay.testing.squeezenet: a 3x3 stride-2 conv, fire modules (1x1 squeeze,
// then 1x1 and 3x3 expand concatenated), max pooling between groups of fires, dropout, a 1x1
// conv to the classes with ReLU and global average pooling. No batch norm, convs carry biases.
// The first conv has padding 1 as in relay.testing (torchvision uses 0).
#include <string>

#include "networks.hpp"

namespace tessera::zoo::detail {
namespace {

Sym fire_conv(ModelBuilder& b, const Sym& data, const std::string& name, int64_t channels,
              int64_t kernel, int64_t pad) {
  ConvSpec spec{channels, {kernel, kernel}, {1, 1}, {pad, pad}};
  spec.bias = true;
  return b.relu(b.conv(data, name, spec), name + "_relu");
}

Sym fire(ModelBuilder& b, const Sym& data, const std::string& name, int64_t squeeze,
         int64_t expand1x1, int64_t expand3x3) {
  const Sym s = fire_conv(b, data, name + "_squeeze1x1", squeeze, 1, 0);
  const Sym left = fire_conv(b, s, name + "_expand1x1", expand1x1, 1, 0);
  const Sym right = fire_conv(b, s, name + "_expand3x3", expand3x3, 3, 1);
  return b.concat({left, right}, name + "_concat");
}

}  // namespace

void build_squeezenet_v1_1(ModelBuilder& b, int64_t batch) {
  const Sym data = b.input("data", {batch, 3, 224, 224});
  ConvSpec first{64, {3, 3}, {2, 2}, {1, 1}};
  first.bias = true;
  Sym net = b.relu(b.conv(data, "conv1", first), "conv1_relu");
  const PoolSpec pool{{3, 3}, {2, 2}, {0, 0}};
  net = b.max_pool(net, "pool1", pool);
  net = fire(b, net, "fire1", 16, 64, 64);
  net = fire(b, net, "fire2", 16, 64, 64);
  net = b.max_pool(net, "pool2", pool);
  net = fire(b, net, "fire3", 32, 128, 128);
  net = fire(b, net, "fire4", 32, 128, 128);
  net = b.max_pool(net, "pool3", pool);
  net = fire(b, net, "fire5", 48, 192, 192);
  net = fire(b, net, "fire6", 48, 192, 192);
  net = fire(b, net, "fire7", 64, 256, 256);
  net = fire(b, net, "fire8", 64, 256, 256);
  net = b.dropout(net, "dropout");
  ConvSpec classifier{1000};
  classifier.bias = true;
  net = b.relu(b.conv(net, "conv_final", classifier), "conv_final_relu");
  net = b.global_avg_pool(net, "pool_final");
  finish_classifier(b, b.flatten(net, "logits"));
}

}  // namespace tessera::zoo::detail
