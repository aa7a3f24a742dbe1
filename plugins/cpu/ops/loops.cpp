// Broadcast and strided-copy planning (ops/loops.hpp).
#include "ops/loops.hpp"

#include <cstring>

namespace tessera::cpu {

int64_t BroadcastPlan::outer_count() const {
  int64_t n = 1;
  for (int64_t e : outer) n *= e;
  return n;
}

void BroadcastPlan::offsets(int64_t o, int64_t* out) const {
  for (size_t i = 0; i < strides.size(); ++i) out[i] = 0;
  for (size_t d = outer.size(); d-- > 0;) {
    const int64_t idx = o % outer[d];
    o /= outer[d];
    for (size_t i = 0; i < strides.size(); ++i) out[i] += idx * strides[i][d];
  }
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return -1;
  return axis < 0 ? axis + rank : axis;
}

std::string plan_broadcast(const std::vector<int64_t>& out,
                           const std::vector<std::vector<int64_t>>& inputs, BroadcastPlan* plan) {
  const size_t rank = out.size(), k = inputs.size();
  if (k == 0 || k > 8) return "broadcasting takes 1 to 8 operands";
  // Each operand's dims aligned right to the output's rank, with its own row-major strides.
  std::vector<std::vector<int64_t>> aligned(k, std::vector<int64_t>(rank, 1));
  std::vector<std::vector<int64_t>> own(k);
  for (size_t i = 0; i < k; ++i) {
    if (inputs[i].size() > rank) return "an input has a higher rank than the output";
    const size_t lead = rank - inputs[i].size();
    for (size_t d = 0; d < inputs[i].size(); ++d) aligned[i][lead + d] = inputs[i][d];
    own[i] = row_major_strides(aligned[i]);
    for (size_t d = 0; d < rank; ++d) {
      if (aligned[i][d] != out[d] && aligned[i][d] != 1) {
        return "input dim " + std::to_string(aligned[i][d]) + " does not broadcast to " +
               std::to_string(out[d]);
      }
    }
  }
  // Merged loops: consecutive output dims (extent > 1) with the same broadcast pattern chain
  // their strides and become one loop.
  struct Loop {
    int64_t extent;
    std::vector<int64_t> stride;  // per operand, 0 = broadcast
  };
  std::vector<Loop> loops;
  std::vector<bool> last_pattern;
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    std::vector<bool> pattern(k);
    for (size_t i = 0; i < k; ++i) pattern[i] = aligned[i][d] != 1;
    if (!loops.empty() && pattern == last_pattern) {
      Loop& l = loops.back();
      l.extent *= out[d];
      for (size_t i = 0; i < k; ++i) l.stride[i] = pattern[i] ? own[i][d] : 0;
    } else {
      Loop l{out[d], std::vector<int64_t>(k)};
      for (size_t i = 0; i < k; ++i) l.stride[i] = pattern[i] ? own[i][d] : 0;
      loops.push_back(std::move(l));
    }
    last_pattern = pattern;
  }
  plan->outer.clear();
  plan->strides.assign(k, {});
  plan->step.assign(k, 0);
  plan->run = 1;
  if (loops.empty()) return "";
  const Loop inner = loops.back();
  loops.pop_back();
  plan->run = inner.extent;
  for (size_t i = 0; i < k; ++i) plan->step[i] = inner.stride[i] == 0 ? 0 : 1;
  for (const Loop& l : loops) {
    plan->outer.push_back(l.extent);
    for (size_t i = 0; i < k; ++i) plan->strides[i].push_back(l.stride[i]);
  }
  return "";
}

CopyPlan merge_copy_plan(std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t offset) {
  CopyPlan plan;
  plan.offset = offset;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!plan.dims.empty() && plan.strides.back() == strides[d] * dims[d]) {
      plan.dims.back() *= dims[d];
      plan.strides.back() = strides[d];
    } else {
      plan.dims.push_back(dims[d]);
      plan.strides.push_back(strides[d]);
    }
  }
  if (plan.dims.empty()) {
    plan.dims = {1};
    plan.strides = {1};
  }
  return plan;
}

void strided_copy(const CopyPlan& plan, const float* src, float* dst) {
  const size_t rank = plan.dims.size();
  const int64_t run = plan.dims.back(), run_stride = plan.strides.back();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= plan.dims[d];
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, run));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, rows, grain),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      for (int64_t row = r.begin(); row != r.end(); ++row) {
                        int64_t o = row, off = plan.offset;
                        for (size_t d = rank - 1; d-- > 0;) {
                          off += (o % plan.dims[d]) * plan.strides[d];
                          o /= plan.dims[d];
                        }
                        const float* s = src + off;
                        float* t = dst + row * run;
                        if (run_stride == 1) {
                          std::memcpy(t, s, static_cast<size_t>(run) * sizeof(float));
                        } else {
                          for (int64_t j = 0; j < run; ++j) t[j] = s[j * run_stride];
                        }
                      }
                    });
}

}  // namespace tessera::cpu
