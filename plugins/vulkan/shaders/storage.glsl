// The element type of every float buffer and the type of the products the conv and matmul
// kernels accumulate, per build variant (CMakeLists.txt compiles each shader three times):
//   <name>       STORE float,     MATH float      (fp32)
//   <name>_f16   STORE float16_t, MATH float      (fp16-acc32: half storage, fp32 arithmetic)
//   <name>_f16m  STORE float16_t, MATH float16_t  (fp16: half products and sums in conv/matmul)
// Reductions and normalisations accumulate in float in every variant. Buffer reads are
// converted to float before arithmetic (a float16_t operand alone would keep it in half);
// writes convert with STORE(...).
#ifndef TESSERA_VULKAN_STORAGE_GLSL
#define TESSERA_VULKAN_STORAGE_GLSL

#ifdef TESSERA_FP16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define STORE float16_t
#else
#define STORE float
#endif

#ifdef TESSERA_FP16_MATH
#define MATH float16_t
#else
#define MATH float
#endif

#endif
