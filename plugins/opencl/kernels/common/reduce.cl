// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Reductions over the trailing `cols` elements of each row, one work-item per row.
// op: 0 L2 norm (sqrt of the sum of squares), 1 mean, 2 sum.
__kernel void reduce_rows_f32(__global const float* x, __global float* y, int rows, int cols,
                              int op) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  __global const float* p = x + (size_t)r * cols;
  float acc = 0.0f;
  if (op == 0) {
    for (int j = 0; j < cols; ++j) acc += p[j] * p[j];
    y[r] = sqrt(acc);
    return;
  }
  for (int j = 0; j < cols; ++j) acc += p[j];
  y[r] = op == 1 ? acc / (float)cols : acc;
}

// The input offset of the r-th reduced element from `base`: r decomposed over the reduced dims.
inline size_t tsr_reduced_offset(size_t base, int r, const int* rd, const int* st) {
  for (int d = 7; d >= 0; --d) {
    base += (size_t)(r % rd[d]) * st[d];
    r /= rd[d];
  }
  return base;
}

// The input offset of output o's first reduced element, and the reduced dims and strides as
// arrays (rd, st) for tsr_reduced_offset.
inline size_t tsr_reduce_setup(int o, int8 out_dims, int8 red_dims, int8 strides, int* rd,
                               int* st) {
  const int od[8] = {out_dims.s0, out_dims.s1, out_dims.s2, out_dims.s3,
                     out_dims.s4, out_dims.s5, out_dims.s6, out_dims.s7};
  vstore8(red_dims, 0, rd);
  vstore8(strides, 0, st);
  size_t base = 0;
  int rest = o;
  for (int d = 7; d >= 0; --d) {
    base += (size_t)(rest % od[d]) * st[d];
    rest /= od[d];
  }
  return base;
}

// acc with v folded in by reduction `op` (the codes of reduce_axes_f32; peak: log-sum-exp's max).
inline float tsr_reduce_step(float acc, float v, int op, float peak) {
  switch (op) {
    case 2: return fmax(acc, v);
    case 3: return fmin(acc, v);
    case 4: return acc * v;
    case 5: return acc + v * v;
    case 6: return acc + fabs(v);
    case 7: return acc + exp(v - peak);
    default: return acc + v;
  }
}

// A reduction over any set of axes of a tensor of rank <= 8: one work-item per output element.
// `out_dims` are the input's dims with the reduced ones 1, `red_dims` the reduced dims (1 for the
// kept ones), `strides` the input's row-major strides; `count` = product of red_dims.
// op: 0 sum, 1 mean, 2 max, 3 min, 4 product, 5 sum of squares, 6 L1 (sum of |x|),
// 7 log-sum-exp, 8 log of the sum.
__kernel void reduce_axes_f32(__global const float* x, __global float* y, int n_out, int count,
                              int8 out_dims, int8 red_dims, int8 strides, int op) {
  const int o = get_global_id(0);
  if (o >= n_out) return;
  int rd[8], st[8];
  const size_t base = tsr_reduce_setup(o, out_dims, red_dims, strides, rd, st);
  float acc = op == 2 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1.0f : 0.0f;
  float peak = -INFINITY;
  if (op == 7) {
    for (int r = 0; r < count; ++r) peak = fmax(peak, x[tsr_reduced_offset(base, r, rd, st)]);
  }
  for (int r = 0; r < count; ++r) {
    const float v = x[tsr_reduced_offset(base, r, rd, st)];
    acc = tsr_reduce_step(acc, v, op, peak);
  }
  if (op == 1) acc /= (float)count;
  if (op == 7) acc = peak + log(acc);
  if (op == 8) acc = log(acc);
  y[o] = acc;
}

// `v` of every work-item of the work-group combined (kind 0 sum, 1 max, 2 min, 3 product)
// through `part` (__local, local_size(0) floats, a power of two); every work-item gets the result
// and must call it (it holds barriers).
inline float tsr_group_fold(float v, __local float* part, int kind) {
  const int t = get_local_id(0);
  part[t] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = get_local_size(0) / 2; step > 0; step /= 2) {
    if (t < step) {
      const float a = part[t], b = part[t + step];
      part[t] = kind == 1 ? fmax(a, b) : kind == 2 ? fmin(a, b) : kind == 3 ? a * b : a + b;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float r = part[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // part[] is written again by the next call
  return r;
}

// reduce_axes_f32 with a work-group per output (a few outputs of long reductions, which one
// work-item each would leave a GPU idle, e.g. a linear attention's sum over its tokens): work-item
// t folds reduced elements t, t + local_size(0), ... (consecutive work-items read consecutive
// elements when the reduced axes are the innermost), then the group combines its partials.
// Global size n_out * local_size(0); `part`: local_size(0) floats.
__kernel void reduce_axes_group_f32(__global const float* x, __global float* y, int n_out,
                                    int count, int8 out_dims, int8 red_dims, int8 strides, int op,
                                    __local float* part) {
  const int o = get_group_id(0);
  const int t = get_local_id(0), threads = get_local_size(0);
  int rd[8], st[8];
  const size_t base = tsr_reduce_setup(o, out_dims, red_dims, strides, rd, st);
  float peak = -INFINITY;
  if (op == 7) {
    for (int r = t; r < count; r += threads) {
      peak = fmax(peak, x[tsr_reduced_offset(base, r, rd, st)]);
    }
    peak = tsr_group_fold(peak, part, 1);
  }
  float acc = op == 2 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1.0f : 0.0f;
  for (int r = t; r < count; r += threads) {
    const float v = x[tsr_reduced_offset(base, r, rd, st)];
    acc = tsr_reduce_step(acc, v, op, peak);
  }
  acc = tsr_group_fold(acc, part, op == 2 ? 1 : op == 3 ? 2 : op == 4 ? 3 : 0);
  if (t != 0) return;
  if (op == 1) acc /= (float)count;
  if (op == 7) acc = peak + log(acc);
  if (op == 8) acc = log(acc);
  y[o] = acc;
}
