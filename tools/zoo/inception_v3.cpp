// Inception v3 after relay.testing.inception_v3 (itself the MXNet symbol): 299x299 input, a stem
// of plain convs and max pools, Inception modules A (x3), B, C (x4), D, E (x2), an 8x8 average
// pool and a dense classifier. Every conv is conv (no bias) + BN with fixed gamma + ReLU; average
// pools inside modules count the padding, as MXNet does.
#include <string>
#include <vector>

#include "networks.hpp"

namespace tessera::zoo::detail {
namespace {

constexpr float kBnEpsilon = 2e-5f;

struct Net {
  ModelBuilder& b;

  Sym conv(const Sym& data, int64_t filters, const std::string& name,
           std::array<int64_t, 2> kernel = {1, 1}, std::array<int64_t, 2> stride = {1, 1},
           std::array<int64_t, 2> pad = {0, 0}) {
    const Sym c = b.conv(data, name + "_conv2d", ConvSpec{filters, kernel, stride, pad});
    const Sym bn = b.batch_norm(c, name + "_batchnorm", kBnEpsilon, /*fixed_gamma=*/true);
    return b.relu(bn, name + "_relu");
  }

  Sym pool(const Sym& data, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
           std::array<int64_t, 2> pad, bool max, const std::string& name) {
    const PoolSpec spec{kernel, stride, pad};
    return max ? b.max_pool(data, name, spec)
               : b.avg_pool(data, name, spec, /*count_include_pad=*/true);
  }

  Sym inception_a(const Sym& data, int64_t num_1x1, int64_t num_3x3_red, int64_t num_3x3_1,
                  int64_t num_3x3_2, int64_t num_5x5_red, int64_t num_5x5, bool max_pool,
                  int64_t proj, const std::string& name) {
    const Sym tower_1x1 = conv(data, num_1x1, name + "_conv");
    Sym tower_5x5 = conv(data, num_5x5_red, name + "_tower_conv");
    tower_5x5 = conv(tower_5x5, num_5x5, name + "_tower_conv_1", {5, 5}, {1, 1}, {2, 2});
    Sym tower_3x3 = conv(data, num_3x3_red, name + "_tower_1_conv");
    tower_3x3 = conv(tower_3x3, num_3x3_1, name + "_tower_1_conv_1", {3, 3}, {1, 1}, {1, 1});
    tower_3x3 = conv(tower_3x3, num_3x3_2, name + "_tower_1_conv_2", {3, 3}, {1, 1}, {1, 1});
    const Sym pooling = pool(data, {3, 3}, {1, 1}, {1, 1}, max_pool, name + "_pool");
    const Sym cproj = conv(pooling, proj, name + "_tower_2_conv");
    return b.concat({tower_1x1, tower_5x5, tower_3x3, cproj}, name + "_concat");
  }

  Sym inception_b(const Sym& data, int64_t num_3x3, int64_t num_d3x3_red, int64_t num_d3x3_1,
                  int64_t num_d3x3_2, const std::string& name) {
    const Sym tower_3x3 = conv(data, num_3x3, name + "_conv", {3, 3}, {2, 2}, {0, 0});
    Sym tower_d3x3 = conv(data, num_d3x3_red, name + "_tower_conv");
    tower_d3x3 = conv(tower_d3x3, num_d3x3_1, name + "_tower_conv_1", {3, 3}, {1, 1}, {1, 1});
    tower_d3x3 = conv(tower_d3x3, num_d3x3_2, name + "_tower_conv_2", {3, 3}, {2, 2}, {0, 0});
    const Sym pooling = pool(data, {3, 3}, {2, 2}, {0, 0}, true, name + "_pool");
    return b.concat({tower_3x3, tower_d3x3, pooling}, name + "_concat");
  }

  Sym inception_c(const Sym& data, int64_t num_1x1, int64_t num_d7_red, int64_t num_d7_1,
                  int64_t num_d7_2, int64_t num_q7_red, int64_t num_q7_1, int64_t num_q7_2,
                  int64_t num_q7_3, int64_t num_q7_4, int64_t proj, const std::string& name) {
    const Sym tower_1x1 = conv(data, num_1x1, name + "_conv");
    Sym tower_d7 = conv(data, num_d7_red, name + "_tower_conv");
    tower_d7 = conv(tower_d7, num_d7_1, name + "_tower_conv_1", {1, 7}, {1, 1}, {0, 3});
    tower_d7 = conv(tower_d7, num_d7_2, name + "_tower_conv_2", {7, 1}, {1, 1}, {3, 0});
    Sym tower_q7 = conv(data, num_q7_red, name + "_tower_1_conv");
    tower_q7 = conv(tower_q7, num_q7_1, name + "_tower_1_conv_1", {7, 1}, {1, 1}, {3, 0});
    tower_q7 = conv(tower_q7, num_q7_2, name + "_tower_1_conv_2", {1, 7}, {1, 1}, {0, 3});
    tower_q7 = conv(tower_q7, num_q7_3, name + "_tower_1_conv_3", {7, 1}, {1, 1}, {3, 0});
    tower_q7 = conv(tower_q7, num_q7_4, name + "_tower_1_conv_4", {1, 7}, {1, 1}, {0, 3});
    const Sym pooling = pool(data, {3, 3}, {1, 1}, {1, 1}, false, name + "_pool");
    const Sym cproj = conv(pooling, proj, name + "_tower_2_conv");
    return b.concat({tower_1x1, tower_d7, tower_q7, cproj}, name + "_concat");
  }

  Sym inception_d(const Sym& data, int64_t num_3x3_red, int64_t num_3x3, int64_t num_d7_3x3_red,
                  int64_t num_d7_1, int64_t num_d7_2, int64_t num_d7_3x3, const std::string& name) {
    Sym tower_3x3 = conv(data, num_3x3_red, name + "_tower_conv");
    tower_3x3 = conv(tower_3x3, num_3x3, name + "_tower_conv_1", {3, 3}, {2, 2}, {0, 0});
    Sym tower_d7 = conv(data, num_d7_3x3_red, name + "_tower_1_conv");
    tower_d7 = conv(tower_d7, num_d7_1, name + "_tower_1_conv_1", {1, 7}, {1, 1}, {0, 3});
    tower_d7 = conv(tower_d7, num_d7_2, name + "_tower_1_conv_2", {7, 1}, {1, 1}, {3, 0});
    tower_d7 = conv(tower_d7, num_d7_3x3, name + "_tower_1_conv_3", {3, 3}, {2, 2}, {0, 0});
    const Sym pooling = pool(data, {3, 3}, {2, 2}, {0, 0}, true, name + "_pool");
    return b.concat({tower_3x3, tower_d7, pooling}, name + "_concat");
  }

  Sym inception_e(const Sym& data, int64_t num_1x1, int64_t num_d3_red, int64_t num_d3_1,
                  int64_t num_d3_2, int64_t num_3x3_d3_red, int64_t num_3x3, int64_t num_3x3_d3_1,
                  int64_t num_3x3_d3_2, bool max_pool, int64_t proj, const std::string& name) {
    const Sym tower_1x1 = conv(data, num_1x1, name + "_conv");
    const Sym tower_d3 = conv(data, num_d3_red, name + "_tower_conv");
    const Sym tower_d3_a =
        conv(tower_d3, num_d3_1, name + "_tower_mixed_conv", {1, 3}, {1, 1}, {0, 1});
    const Sym tower_d3_b =
        conv(tower_d3, num_d3_2, name + "_tower_mixed_conv_1", {3, 1}, {1, 1}, {1, 0});
    Sym tower_3x3_d3 = conv(data, num_3x3_d3_red, name + "_tower_1_conv");
    tower_3x3_d3 = conv(tower_3x3_d3, num_3x3, name + "_tower_1_conv_1", {3, 3}, {1, 1}, {1, 1});
    const Sym tower_3x3_d3_a =
        conv(tower_3x3_d3, num_3x3_d3_1, name + "_tower_1_mixed_conv", {1, 3}, {1, 1}, {0, 1});
    const Sym tower_3x3_d3_b =
        conv(tower_3x3_d3, num_3x3_d3_2, name + "_tower_1_mixed_conv_1", {3, 1}, {1, 1}, {1, 0});
    const Sym pooling = pool(data, {3, 3}, {1, 1}, {1, 1}, max_pool, name + "_pool");
    const Sym cproj = conv(pooling, proj, name + "_tower_2_conv");
    return b.concat({tower_1x1, tower_d3_a, tower_d3_b, tower_3x3_d3_a, tower_3x3_d3_b, cproj},
                    name + "_concat");
  }
};

}  // namespace

void build_inception_v3(ModelBuilder& b, int64_t batch) {
  Net n{b};
  b.compensate_batch_norm(/*fixed_gamma=*/true);
  const Sym data = b.input("data", {batch, 3, 299, 299});
  // Stage 1.
  Sym x = n.conv(data, 32, "conv", {3, 3}, {2, 2});
  x = n.conv(x, 32, "conv_1", {3, 3});
  x = n.conv(x, 64, "conv_2", {3, 3}, {1, 1}, {1, 1});
  x = n.pool(x, {3, 3}, {2, 2}, {0, 0}, true, "pool");
  // Stage 2.
  x = n.conv(x, 80, "conv_3");
  x = n.conv(x, 192, "conv_4", {3, 3});
  x = n.pool(x, {3, 3}, {2, 2}, {0, 0}, true, "pool1");
  // Stage 3.
  x = n.inception_a(x, 64, 64, 96, 96, 48, 64, false, 32, "mixed");
  x = n.inception_a(x, 64, 64, 96, 96, 48, 64, false, 64, "mixed_1");
  x = n.inception_a(x, 64, 64, 96, 96, 48, 64, false, 64, "mixed_2");
  x = n.inception_b(x, 384, 64, 96, 96, "mixed_3");
  // Stage 4.
  x = n.inception_c(x, 192, 128, 128, 192, 128, 128, 128, 128, 192, 192, "mixed_4");
  x = n.inception_c(x, 192, 160, 160, 192, 160, 160, 160, 160, 192, 192, "mixed_5");
  x = n.inception_c(x, 192, 160, 160, 192, 160, 160, 160, 160, 192, 192, "mixed_6");
  x = n.inception_c(x, 192, 192, 192, 192, 192, 192, 192, 192, 192, 192, "mixed_7");
  x = n.inception_d(x, 192, 320, 192, 192, 192, 192, "mixed_8");
  // Stage 5.
  x = n.inception_e(x, 320, 384, 384, 384, 448, 384, 384, 384, false, 192, "mixed_9");
  x = n.inception_e(x, 320, 384, 384, 384, 448, 384, 384, 384, true, 192, "mixed_10");
  x = n.pool(x, {8, 8}, {1, 1}, {0, 0}, false, "global_pool");
  x = b.flatten(x, "flatten");
  finish_classifier(b, b.dense(x, "logits", 1000, 1.0f));
}

}  // namespace tessera::zoo::detail
