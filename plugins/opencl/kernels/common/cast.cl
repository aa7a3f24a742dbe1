// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Cast between the dtypes device memory holds: TSR_SRC and TSR_DST are float, long, int, char or
// uchar (bool), one build per pair, as core's Cast: float to integer rounds toward zero and
// saturates, NaN giving 0 (TSR_CONVERT, a convert_<type>_sat_rtz); integers narrow by their low
// bits and bool reads as 0 / 1 (a C conversion); TSR_TO_BOOL makes any non-zero value true.
#ifndef TSR_SRC
#define TSR_SRC float
#endif
#ifndef TSR_DST
#define TSR_DST float
#endif

__kernel void cast_any(__global const TSR_SRC* x, __global TSR_DST* y, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
#ifdef TSR_TO_BOOL
  y[i] = (TSR_DST)(x[i] != (TSR_SRC)0);
#elif defined(TSR_CONVERT)
  y[i] = TSR_CONVERT(x[i]);
#else
  y[i] = (TSR_DST)x[i];
#endif
}
