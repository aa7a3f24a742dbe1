// See accuracy.hpp.
#include "accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tessera/error.hpp"

namespace tessera::cli {
namespace {

std::vector<int64_t> top_k(const float* row, int64_t n, int64_t k) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int64_t a, int64_t b) { return row[a] > row[b]; });
  order.resize(static_cast<size_t>(k));
  return order;
}

}  // namespace

AccuracyCheck::AccuracyCheck(std::vector<std::string> output_names) {
  for (std::string& name : output_names) outputs_.push_back({std::move(name)});
}

void AccuracyCheck::add(const std::vector<Tensor>& got, const std::vector<Tensor>& ref) {
  if (got.size() != outputs_.size() || ref.size() != outputs_.size()) {
    throw Error("accuracy check: the two sessions gave " + std::to_string(got.size()) + " and " +
                std::to_string(ref.size()) + " outputs, the graph has " +
                std::to_string(outputs_.size()));
  }
  ++samples_;
  for (size_t o = 0; o < outputs_.size(); ++o) {
    OutputAccuracy& acc = outputs_[o];
    const Tensor& x = got[o];
    const Tensor& r = ref[o];
    if (x.dtype() != DType::kFloat32 || r.dtype() != DType::kFloat32) continue;
    if (x.shape() != r.shape()) {
      throw Error("accuracy check: output '" + acc.name + "' has shape " + shape_str(x.shape()) +
                  " here and " + shape_str(r.shape()) + " in fp32");
    }
    const float* xp = x.data<float>();
    const float* rp = r.data<float>();
    double max_abs = 0.0, scale = 0.0;
    for (int64_t i = 0; i < r.numel(); ++i) {
      if (!std::isfinite(rp[i])) continue;
      scale = std::max(scale, std::fabs(static_cast<double>(rp[i])));
      if (!std::isfinite(xp[i])) {
        acc.non_finite = true;
        continue;
      }
      max_abs = std::max(max_abs, std::fabs(static_cast<double>(xp[i]) - rp[i]));
    }
    acc.max_abs = std::max(acc.max_abs, max_abs);
    acc.max_rel = std::max(acc.max_rel, max_abs / (scale > 0.0 ? scale : 1.0));
    if (r.shape().size() == 2 && r.shape()[1] >= 5) {
      const int64_t classes = r.shape()[1];
      for (int64_t row = 0; row < r.shape()[0]; ++row) {
        const std::vector<int64_t> a = top_k(xp + row * classes, classes, 5);
        const std::vector<int64_t> b = top_k(rp + row * classes, classes, 5);
        ++acc.rows;
        if (a[0] == b[0]) ++acc.top1_agree;
        int64_t common = 0;
        for (int64_t c : a) common += std::count(b.begin(), b.end(), c);
        acc.top5_overlap += static_cast<double>(common) / 5.0;
      }
    }
  }
}

double AccuracyCheck::worst_rel() const {
  double worst = 0.0;
  for (const OutputAccuracy& o : outputs_) {
    if (o.non_finite) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, o.max_rel);
  }
  return worst;
}

}  // namespace tessera::cli
