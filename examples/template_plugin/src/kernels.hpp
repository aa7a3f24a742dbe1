// The template plugin's kernels: one op per file (relu.cpp, ...), declared here.
#pragma once

#include <cstdint>

namespace template_plugin {

// y[i] = max(x[i], 0) for n float32 elements.
void relu_f32(const float* x, float* y, int64_t n);

}  // namespace template_plugin
