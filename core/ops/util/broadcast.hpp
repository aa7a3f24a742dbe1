// NumPy-style multidirectional broadcasting shared by the elementwise ops (and MatMul/Gemm batch
// dims): the broadcast output shape, and a mapper from a flat output index to the flat offset of
// the matching element in one (smaller) input.
//
// Header-only on purpose: core/CMakeLists.txt globs core/ops/*.cpp only, so a .cpp in util/
// would not be compiled.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/tensor.hpp"

namespace tessera::ops {

// Broadcasts shapes right-aligned: a dim of 1 stretches, otherwise dims must be equal. Throws
// tessera::Error "<where>: cannot broadcast shapes [2, 3] and [4]: dim ... " on a mismatch.
inline Shape broadcast_shapes(const std::vector<Shape>& shapes, const std::string& where) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    const size_t lead = rank - s.size();  // s is padded on the left with 1s
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = out[lead + d];
      if (s[d] == o || s[d] == 1) continue;
      if (o == 1) {
        o = s[d];
        continue;
      }
      std::string all;
      for (const Shape& t : shapes) all += (all.empty() ? "" : " and ") + shape_str(t);
      throw Error(where + ": cannot broadcast shapes " + all + ": output dim " +
                  std::to_string(lead + d) + " is " + std::to_string(o) + " but input " +
                  std::to_string(k) + " has " + std::to_string(s[d]) +
                  " (numpy rules: trailing dims must be equal or 1)");
    }
  }
  return out;
}

inline Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& where) {
  return broadcast_shapes(std::vector<Shape>{a, b}, where);
}

// Maps a flat (row-major) index of the broadcast output to the flat offset in an input whose
// shape broadcasts to `output_shape`. O(rank) per call: meant for reference kernels.
class BroadcastIndexer {
 public:
  // `input_shape` must broadcast to `output_shape` (checked: throws tessera::Error otherwise).
  BroadcastIndexer(const Shape& input_shape, const Shape& output_shape)
      : output_shape_(output_shape),
        output_strides_(shape_strides(output_shape)),
        input_strides_(output_shape.size(), 0) {
    if (input_shape.size() > output_shape.size()) {
      throw Error("BroadcastIndexer: input " + shape_str(input_shape) +
                  " has a higher rank than output " + shape_str(output_shape));
    }
    const size_t lead = output_shape.size() - input_shape.size();
    const std::vector<int64_t> strides = shape_strides(input_shape);
    for (size_t d = 0; d < input_shape.size(); ++d) {
      if (input_shape[d] == output_shape[lead + d]) {
        input_strides_[lead + d] = strides[d];
      } else if (input_shape[d] != 1) {
        throw Error("BroadcastIndexer: input " + shape_str(input_shape) +
                    " does not broadcast to " + shape_str(output_shape));
      }  // a stretched dim of 1 keeps stride 0
    }
  }

  int64_t offset(int64_t output_index) const {
    int64_t off = 0;
    for (size_t d = 0; d < output_shape_.size(); ++d) {
      const int64_t coord = (output_index / output_strides_[d]) % output_shape_[d];
      off += coord * input_strides_[d];
    }
    return off;
  }

 private:
  Shape output_shape_;
  std::vector<int64_t> output_strides_;
  std::vector<int64_t> input_strides_;  // 0 where the input is broadcast
};

}  // namespace tessera::ops
