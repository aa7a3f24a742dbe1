// `tessera zoo`: the image-classification networks of TVM's relay.testing (the ones TVM's
// mobile-GPU tuning guides tune), rebuilt as ONNX models with seeded random weights.
//
// The models exist so that import, partitioning, tuning and benchmarks can be exercised on real
// network shapes without downloading anything. Weights are random but scaled so activations stay
// O(1) through the whole network, and batch-norm layers carry non-trivial statistics, so numeric
// comparisons against other runtimes are meaningful.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::zoo {

struct ZooOptions {
  int64_t batch = 1;  // first dimension of "data", "logits" and "output"
  uint64_t seed = 0;  // same seed -> byte-identical model
};

// resnet-18, resnet-34, resnet-50, mobilenet, mobilenet_v2, squeezenet_v1.1, vgg-16, inception_v3.
std::vector<std::string> zoo_names();

// Serialized ONNX ModelProto (opset 13) of network `name`, already accepted by the ONNX checker.
// Input "data" [batch, 3, 224, 224] (299x299 for inception_v3); outputs "output" [batch, 1000]
// (softmax probabilities) and "logits" [batch, 1000] (the values fed to the softmax, which is
// what numeric comparisons should look at).
// Throws tessera::Error for an unknown name (listing the valid ones) or a batch < 1.
std::string build_zoo_model(const std::string& name, const ZooOptions& options);

// Builds the model and writes it to `path` atomically (temporary file in the same directory, then
// rename). Refuses to replace an existing file unless `overwrite` is set. Throws tessera::Error.
void write_zoo_model(const std::string& name, const ZooOptions& options, const std::string& path,
                     bool overwrite);

}  // namespace tessera::zoo
