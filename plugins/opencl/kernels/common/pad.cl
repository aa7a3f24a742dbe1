// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Pad of a row-major tensor (rank <= 6, shapes padded on the left with 1): one work-item per
// output element; the input coordinate along each axis is the output's minus `before`, mapped by
// `mode` when it falls outside: 0 constant (`value`), 1 reflect (mirror without the edge), 2 edge
// (clamp). od / id: output and input dims (s0..s5).
int pad_source(int c, int n, int mode) {
  if (c >= 0 && c < n) return c;
  if (mode == 2) return c < 0 ? 0 : n - 1;
  if (n == 1) return 0;
  const int period = 2 * (n - 1);
  int m = c % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

__kernel void pad_f32(__global const float* x, __global float* y, int n, int8 od, int8 id,
                      int8 before, int mode, float value) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int o[6] = {od.s0, od.s1, od.s2, od.s3, od.s4, od.s5};
  const int in[6] = {id.s0, id.s1, id.s2, id.s3, id.s4, id.s5};
  const int b[6] = {before.s0, before.s1, before.s2, before.s3, before.s4, before.s5};
  int r = i, src = 0, stride = 1;
  for (int d = 5; d >= 0; --d) {
    const int c = r % o[d] - b[d];
    r /= o[d];
    if ((c < 0 || c >= in[d]) && mode == 0) {
      y[i] = value;
      return;
    }
    src += pad_source(c, in[d], mode) * stride;
    stride *= in[d];
  }
  y[i] = x[src];
}
