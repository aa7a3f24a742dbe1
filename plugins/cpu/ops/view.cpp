// Reshape-like ops (Flatten, Reshape, Squeeze, Unsqueeze, Identity of any element type; Dropout
// in inference and a float32-to-float32 Cast) and Concat (any element type). The reshape-likes move
// no data: their output aliases the input buffer, unless it is a region output (core owns that
// buffer), where one copy is needed.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_view(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  if (x == nullptr || y == nullptr || x->dtype != y->dtype || numel(*x) != numel(*y)) {
    return "input and output must have the same dtype and element count";
  }
  // A view moves no data, so any element type is fine (int64 ids, bool masks); Dropout is
  // defined on floats.
  if (node.op_type() == "Dropout" && x->dtype != TSR_DTYPE_FLOAT32) {
    return "only float32 is implemented";
  }
  if (node.op_type() == "Dropout") {
    if (node.num_outputs() > 1 && node.output_index(1) >= 0)
      return "Dropout mask output is not implemented";
    if (node.input(2) != nullptr) {
      const tsr_tensor* t = node.input(2);
      if (t->data == nullptr || t->dtype != TSR_DTYPE_BOOL ||
          *static_cast<const uint8_t*>(t->data) != 0) {
        return "Dropout in training mode is not implemented";
      }
    }
  }
  return "";
}

Step build_view(BuildContext& ctx) {
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const size_t bytes = plugin::tensor_nbytes(*ctx.node.output(0));
  bool is_region_output = false;
  for (int32_t i = 0; i < ctx.region.num_outputs(); ++i) {
    is_region_output |= ctx.region.output_index(i) == out;
  }
  if (!is_region_output) {
    (*ctx.aliases)[static_cast<size_t>(out)] = in;
    return [=](std::vector<float*>& v) { v[out] = v[in]; };
  }
  return [=](std::vector<float*>& v) {
    if (v[out] != v[in]) std::memcpy(v[out], v[in], bytes);
  };
}

std::string query_concat(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* y = node.output(0);
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (copy_element_bytes(node.input(i), y) == 0) return "inputs and output dtypes differ";
  }
  return "";
}

Step build_concat(BuildContext& ctx) {
  const tsr_tensor* y = ctx.node.output(0);
  int64_t axis = ctx.node.attr_int("axis", 0);
  if (axis < 0) axis += y->rank;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y->dims[d];
  std::vector<int32_t> ins;
  std::vector<int64_t> chunk;  // elements per outer index, per input
  for (int32_t i = 0; i < ctx.node.num_inputs(); ++i) {
    ins.push_back(ctx.node.input_index(i));
    chunk.push_back(numel(*ctx.node.input(i)) / std::max<int64_t>(1, outer));
  }
  int64_t total = 0;
  for (int64_t c : chunk) total += c;
  const int32_t out = ctx.output;
  const int64_t bytes = copy_element_bytes(ctx.node.input(0), y);
  // With one outer index each input is one contiguous slice of the output. An input computed in
  // this region (not core's buffer, not a constant, not already stored elsewhere, not repeated)
  // becomes a view of its slice: its producer writes there and nothing is copied.
  std::vector<bool> copy(ins.size(), true);
  // Views are offsets in floats, so only 4-byte elements become views.
  if (outer == 1 && bytes == 4) {
    int64_t offset = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      const int32_t value = ins[i];
      // A value already a view (of an earlier Concat) has its alias set, so it is left alone.
      const bool ok = value >= 0 && value != out && !(*ctx.external)[static_cast<size_t>(value)] &&
                      ctx.region.value(value).data == nullptr &&
                      (*ctx.aliases)[static_cast<size_t>(value)] < 0 &&
                      std::count(ins.begin(), ins.end(), value) == 1;
      if (ok) {
        (*ctx.aliases)[static_cast<size_t>(value)] = out;
        ctx.views->push_back(View{value, out, offset});
        copy[i] = false;
      }
      offset += chunk[i];
    }
    const int64_t viewed = std::count(copy.begin(), copy.end(), false);
    ctx.notes->push_back(std::string(ctx.node.name()) + ": " + std::to_string(viewed) + " of " +
                         std::to_string(ins.size()) + " inputs written in place");
  }
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, outer, [&](int64_t o) {
      auto* dst = reinterpret_cast<unsigned char*>(v[out]) + o * total * bytes;
      for (size_t i = 0; i < ins.size(); ++i) {
        if (copy[i]) {
          const auto* src = reinterpret_cast<const unsigned char*>(v[ins[i]]);
          std::memcpy(dst, src + o * chunk[i] * bytes, static_cast<size_t>(chunk[i] * bytes));
        }
        dst += chunk[i] * bytes;
      }
    });
  };
}

}  // namespace tessera::cpu
