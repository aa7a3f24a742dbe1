// VGG-16 after relay.testing.vgg with batch_norm=True: five groups of 3x3 convs (with bias) +
// BN + ReLU, each group closed by 2x2 max pooling, then dense 4096 -> 4096 -> classes with ReLU
// and dropout. About 138 M parameters (550 MB of fp32 weights).
#include <string>

#include "networks.hpp"

namespace tessera::zoo::detail {

void build_vgg16(ModelBuilder& b, int64_t batch) {
  constexpr float kBnEpsilon = 1e-5f;
  const int64_t layers[] = {2, 2, 3, 3, 3};
  const int64_t filters[] = {64, 128, 256, 512, 512};
  b.compensate_batch_norm(/*fixed_gamma=*/false);
  Sym net = b.input("data", {batch, 3, 224, 224});
  for (int i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < layers[i]; ++j) {
      const std::string name = "conv" + std::to_string(i + 1) + "_" + std::to_string(j + 1);
      ConvSpec spec{filters[i], {3, 3}, {1, 1}, {1, 1}};
      spec.bias = true;
      net = b.conv(net, name, spec);
      net = b.batch_norm(net, name + "_bn", kBnEpsilon);
      net = b.relu(net, name + "_relu");
    }
    net = b.max_pool(net, "pool" + std::to_string(i + 1), PoolSpec{});
  }
  net = b.flatten(net, "flatten");
  net = b.dropout(b.relu(b.dense(net, "fc6", 4096, kReluGain), "relu6"), "drop6");
  net = b.dropout(b.relu(b.dense(net, "fc7", 4096, kReluGain), "relu7"), "drop7");
  finish_classifier(b, b.dense(net, "logits", 1000, 1.0f));
}

}  // namespace tessera::zoo::detail
