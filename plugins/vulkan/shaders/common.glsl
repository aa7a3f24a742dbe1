// Shared by the shaders: the linear invocation index of a 1-D range dispatched as x * y groups
// (ops/op.cpp linear_kernel()), and float constants passed as their bits.
#ifndef TESSERA_VULKAN_COMMON_GLSL
#define TESSERA_VULKAN_COMMON_GLSL

// A macro, not a function: gl_WorkGroupSize read in a function defined before the shader's
// local_size layout is (1, 1, 1).
#define linear_id() \
  (gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x)

#endif
