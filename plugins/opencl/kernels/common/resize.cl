// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Nearest-neighbour Resize of a tensor of rank <= 4 seen as (d0, d1, d2, d3): output element
// (i0, i1, i2, i3) copies input (t0[i0], t1[i1], t2[i2], t3[i3]), the source index along each
// axis computed on the host (ONNX coordinate transformation and nearest_mode) and packed as
// floats in `index` (t0 first, then t1, t2, t3).
__kernel void resize_nearest_f32(__global const float* x, __global const float* index,
                                 __global float* y, int4 out_dims, int4 in_dims) {
  const int i = get_global_id(0);
  const int n = out_dims.x * out_dims.y * out_dims.z * out_dims.w;
  if (i >= n) return;
  const int c3 = i % out_dims.w, c2 = (i / out_dims.w) % out_dims.z;
  const int c1 = (i / (out_dims.w * out_dims.z)) % out_dims.y;
  const int c0 = i / (out_dims.w * out_dims.z * out_dims.y);
  const int s0 = (int)index[c0];
  const int s1 = (int)index[out_dims.x + c1];
  const int s2 = (int)index[out_dims.x + out_dims.y + c2];
  const int s3 = (int)index[out_dims.x + out_dims.y + out_dims.z + c3];
  y[i] = x[((s0 * in_dims.y + s1) * in_dims.z + s2) * in_dims.w + s3];
}
