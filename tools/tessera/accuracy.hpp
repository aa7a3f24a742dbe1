// `run --check-accuracy`: how far a reduced-precision session's outputs are from the same model
// run in fp32 on the same targets, over a batch of inputs.
#pragma once

#include <string>
#include <vector>

#include "tessera/tensor.hpp"

namespace tessera::cli {

// One output's agreement over every sample added.
struct OutputAccuracy {
  std::string name;
  double max_abs = 0.0;  // largest |x - ref| over the samples
  // Largest per-sample max |x - ref| / max |ref| (the error against the output's own scale;
  // a reference that is all zero counts as scale 1).
  double max_rel = 0.0;
  // Class-score outputs ([rows, classes], classes >= 5) only: rows compared, rows whose argmax
  // agrees, and the summed overlap |top5(x) n top5(ref)| / 5 of each row.
  int64_t rows = 0;
  int64_t top1_agree = 0;
  double top5_overlap = 0.0;
  bool non_finite = false;  // x held a NaN or Inf where ref did not
};

class AccuracyCheck {
 public:
  explicit AccuracyCheck(std::vector<std::string> output_names);
  // One sample: the session's outputs and the fp32 reference's, in graph output order.
  void add(const std::vector<Tensor>& got, const std::vector<Tensor>& ref);
  int samples() const { return samples_; }
  const std::vector<OutputAccuracy>& outputs() const { return outputs_; }
  // The largest max_rel over the outputs (infinite if one went non-finite).
  double worst_rel() const;

 private:
  std::vector<OutputAccuracy> outputs_;
  int samples_ = 0;
};

}  // namespace tessera::cli
