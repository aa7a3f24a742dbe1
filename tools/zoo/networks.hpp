// The network definitions, one .cpp each, written against ModelBuilder. Each adds input "data"
// and outputs "output" (softmax) and "logits" (its input) to the builder.
#pragma once

#include <cstdint>

#include "builder.hpp"

namespace tessera::zoo::detail {

void build_resnet(ModelBuilder& b, int64_t batch, int num_layers);  // 18, 34 or 50
void build_mobilenet(ModelBuilder& b, int64_t batch);
void build_mobilenet_v2(ModelBuilder& b, int64_t batch);
void build_squeezenet_v1_1(ModelBuilder& b, int64_t batch);
void build_vgg16(ModelBuilder& b, int64_t batch);
void build_inception_v3(ModelBuilder& b, int64_t batch);

// The common tail: `logits` [batch, classes] is softmaxed into "output"; both become outputs.
inline void finish_classifier(ModelBuilder& b, const Sym& logits) {
  const Sym probabilities = b.softmax(logits, "output");
  b.output(probabilities);
  b.output(logits);
}

}  // namespace tessera::zoo::detail
