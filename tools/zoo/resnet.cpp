// ResNet-18/34/50 after relay.testing.resnet: ResNet v2 ordering ("pre-activation": BN -> ReLU ->
// conv inside each unit, identity or 1x1-conv shortcut taken from the first activation), a
// scale-free BN on the input, basic blocks for 18/34 and bottlenecks for 50. Like the original,
// the first unit of every stage (stage 1 included) has a projection shortcut.
#include <cmath>
#include <string>
#include <vector>

#include "networks.hpp"
#include "tessera/error.hpp"

namespace tessera::zoo::detail {
namespace {

constexpr float kBnEpsilon = 2e-5f;

struct ResidualScale {
  // Batch norm here uses fixed statistics, so nothing renormalises the residual sum: with
  // Kaiming gains every unit would double the variance of the trunk. Scaling the last conv of
  // each branch by 1/sqrt(units) (as in Fixup) keeps the trunk O(1) over the whole network.
  float last_conv_gain;
};

Sym residual_unit(ModelBuilder& b, const Sym& data, int64_t num_filter, int64_t stride,
                  bool dim_match, const std::string& name, bool bottle_neck,
                  const ResidualScale& scale) {
  const Sym bn1 = b.batch_norm(data, name + "_bn1", kBnEpsilon);
  const Sym act1 = b.relu(bn1, name + "_relu1");
  Sym body;
  if (bottle_neck) {
    const int64_t mid = num_filter / 4;
    ConvSpec c1{mid, {1, 1}, {stride, stride}, {0, 0}};
    const Sym conv1 = b.conv(act1, name + "_conv1", c1);
    const Sym act2 = b.relu(b.batch_norm(conv1, name + "_bn2", kBnEpsilon), name + "_relu2");
    ConvSpec c2{mid, {3, 3}, {1, 1}, {1, 1}};
    const Sym conv2 = b.conv(act2, name + "_conv2", c2);
    const Sym act3 = b.relu(b.batch_norm(conv2, name + "_bn3", kBnEpsilon), name + "_relu3");
    ConvSpec c3{num_filter, {1, 1}, {1, 1}, {0, 0}};
    c3.gain = scale.last_conv_gain;
    body = b.conv(act3, name + "_conv3", c3);
  } else {
    ConvSpec c1{num_filter, {3, 3}, {stride, stride}, {1, 1}};
    const Sym conv1 = b.conv(act1, name + "_conv1", c1);
    const Sym act2 = b.relu(b.batch_norm(conv1, name + "_bn2", kBnEpsilon), name + "_relu2");
    ConvSpec c2{num_filter, {3, 3}, {1, 1}, {1, 1}};
    c2.gain = scale.last_conv_gain;
    body = b.conv(act2, name + "_conv2", c2);
  }
  Sym shortcut = data;
  if (!dim_match) {
    ConvSpec sc{num_filter, {1, 1}, {stride, stride}, {0, 0}};
    shortcut = b.conv(act1, name + "_sc", sc);
  }
  return b.add(body, shortcut, name + "_plus");
}

}  // namespace

void build_resnet(ModelBuilder& b, int64_t batch, int num_layers) {
  std::vector<int64_t> units;
  if (num_layers == 18) {
    units = {2, 2, 2, 2};
  } else if (num_layers == 34 || num_layers == 50) {
    units = {3, 4, 6, 3};
  } else {
    throw Error("zoo: resnet-" + std::to_string(num_layers) + " is not built; use 18, 34 or 50");
  }
  const bool bottle_neck = num_layers >= 50;
  const std::vector<int64_t> filters = bottle_neck ? std::vector<int64_t>{64, 256, 512, 1024, 2048}
                                                   : std::vector<int64_t>{64, 64, 128, 256, 512};
  int64_t total_units = 0;
  for (int64_t u : units) total_units += u;
  const ResidualScale scale{kReluGain / std::sqrt(static_cast<float>(total_units))};

  b.compensate_batch_norm(/*fixed_gamma=*/false);
  const Sym data = b.input("data", {batch, 3, 224, 224});
  Sym body = b.batch_norm(data, "bn_data", kBnEpsilon, /*fixed_gamma=*/true);
  body = b.conv(body, "conv0", ConvSpec{filters[0], {7, 7}, {2, 2}, {3, 3}});
  body = b.relu(b.batch_norm(body, "bn0", kBnEpsilon), "relu0");
  body = b.max_pool(body, "pooling0", PoolSpec{{3, 3}, {2, 2}, {1, 1}});
  for (size_t i = 0; i < units.size(); ++i) {
    const int64_t stride = i == 0 ? 1 : 2;
    const std::string stage = "stage" + std::to_string(i + 1);
    body =
        residual_unit(b, body, filters[i + 1], stride, false, stage + "_unit1", bottle_neck, scale);
    for (int64_t j = 1; j < units[i]; ++j) {
      body = residual_unit(b, body, filters[i + 1], 1, true,
                           stage + "_unit" + std::to_string(j + 1), bottle_neck, scale);
    }
  }
  body = b.relu(b.batch_norm(body, "bn1", kBnEpsilon), "relu1");
  body = b.flatten(b.global_avg_pool(body, "pool1"), "flatten0");
  finish_classifier(b, b.dense(body, "logits", 1000, 1.0f));
}

}  // namespace tessera::zoo::detail
