// Max and average pooling over NCHW (ops/max_pool.cpp, ops/average_pool.cpp): one invocation per
// output element; the output size (ceil_mode included) comes from the graph.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int PLANES = 1;  // N * C
layout(constant_id = 1) const int H = 1;
layout(constant_id = 2) const int W = 1;
layout(constant_id = 3) const int OH = 1;
layout(constant_id = 4) const int OW = 1;
layout(constant_id = 5) const int KH = 1;
layout(constant_id = 6) const int KW = 1;
layout(constant_id = 7) const int SH = 1;
layout(constant_id = 8) const int SW = 1;
layout(constant_id = 9) const int PH = 0;
layout(constant_id = 10) const int PW = 0;
layout(constant_id = 11) const int DH = 1;
layout(constant_id = 12) const int DW = 1;
layout(constant_id = 13) const int IS_MAX = 1;
layout(constant_id = 14) const int COUNT_PAD = 0;  // average: divide by the padded window
layout(constant_id = 15) const int PH_END = 0;     // end pads (the padded window's extent)
layout(constant_id = 16) const int PW_END = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { STORE y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(PLANES * OH * OW)) return;
  const int ow = int(o) % OW;
  const int oh = (int(o) / OW) % OH;
  const int plane = int(o) / (OW * OH);
  const int base = plane * H * W;
  float acc = IS_MAX != 0 ? -3.402823466e38 : 0.0;
  int count = 0;
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = oh * SH - PH + kh * DH;
    if (ih < 0 || ih >= H) continue;
    for (int kw = 0; kw < KW; ++kw) {
      const int iw = ow * SW - PW + kw * DW;
      if (iw < 0 || iw >= W) continue;
      const float v = float(x[base + ih * W + iw]);
      acc = IS_MAX != 0 ? max(acc, v) : acc + v;
      ++count;
    }
  }
  if (IS_MAX == 0) {
    if (COUNT_PAD != 0) {
      // The window clipped to the padded input (ONNX count_include_pad).
      const int h0 = oh * SH - PH;
      const int w0 = ow * SW - PW;
      const int h1 = min(h0 + (KH - 1) * DH + 1, H + PH_END);
      const int w1 = min(w0 + (KW - 1) * DW + 1, W + PW_END);
      count = ((h1 - h0 + DH - 1) / DH) * ((w1 - w0 + DW - 1) / DW);
    }
    acc = count > 0 ? acc / float(count) : 0.0;
  }
  y[o] = STORE(acc);
}
