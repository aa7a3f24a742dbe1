// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// y = a op b over row-major buffers with broadcasting: the output seen as 4 dims `d`, each
// operand's element at dot(coordinates, its strides) (0 along its broadcast dims; see
// coalesce_broadcast in tessera_opencl/op_registry.hpp). op: 0 add, 1 sub, 2 mul, 3 div, 4 pow,
// 5 max, 6 min, 7 PRelu (b the slope).
__kernel void binary_strided_f32(__global const float* a, __global const float* b,
                                 __global float* y, int4 d, int4 sa, int4 sb, int op) {
  const int i = get_global_id(0);
  if (i >= d.x * d.y * d.z * d.w) return;
  const int c3 = i % d.w, c2 = (i / d.w) % d.z, c1 = (i / (d.w * d.z)) % d.y;
  const int c0 = i / (d.w * d.z * d.y);
  const float x = a[c0 * sa.x + c1 * sa.y + c2 * sa.z + c3 * sa.w];
  const float z = b[c0 * sb.x + c1 * sb.y + c2 * sb.z + c3 * sb.w];
  switch (op) {
    case 0: y[i] = x + z; break;
    case 1: y[i] = x - z; break;
    case 2: y[i] = x * z; break;
    case 3: y[i] = x / z; break;
    // pow(x, 2) is exported LayerNorm's square; pown keeps it exact for whole exponents.
    case 4: y[i] = z == rint(z) && fabs(z) < 65536.0f ? pown(x, (int)z) : pow(x, z); break;
    case 5: y[i] = fmax(x, z); break;
    case 7: y[i] = x >= 0.0f ? x : x * z; break;
    default: y[i] = fmin(x, z); break;
  }
}

// y = a op b over integers (shape arithmetic, index math): TSR_INT is long (default) or int, the
// operands broadcast to the output `od` (s0..s5) through their strides. op: 0 add, 1 sub, 2 mul,
// 3 div (toward zero, as C and ONNX Runtime; lowest / -1 wraps; the divisor is a constant with
// no zero, op_helpers.cpp checks, and the guard only keeps a device from faulting), 5 max, 6 min.
#ifndef TSR_INT
#define TSR_INT long
#endif
__kernel void binary_strided_int(__global const TSR_INT* a, __global const TSR_INT* b,
                                 __global TSR_INT* y, int n, int8 od, int8 sa, int8 sb, int op) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int8 c = tsr_coords6(i, od);
  const TSR_INT x = a[tsr_dot6(c, sa)];
  const TSR_INT z = b[tsr_dot6(c, sb)];
  switch (op) {
    case 0: y[i] = x + z; break;
    case 1: y[i] = x - z; break;
    case 2: y[i] = x * z; break;
    case 3: y[i] = z == 0 ? 0 : z == -1 ? -x : x / z; break;
    case 5: y[i] = max(x, z); break;
    default: y[i] = min(x, z); break;
  }
}
