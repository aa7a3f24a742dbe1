/* A fault-injecting OpenCL loader layer for tests (cl_loader_layers; not a driver).
 *
 * The ICD loader (ocl-icd >= 2.3, the Khronos loader) loads the layer named in OPENCL_LAYERS in
 * front of the real driver (PoCL in CI). The layer forwards every call and fails the calls a test
 * arms, one rule per fault class:
 *
 *   class                    calls                               default error
 *   CL_FAULT_BUILD_PROGRAM   clBuildProgram                      CL_BUILD_PROGRAM_FAILURE
 *   CL_FAULT_CREATE_BUFFER   clCreateBuffer, clCreateSubBuffer   CL_MEM_OBJECT_ALLOCATION_FAILURE
 *   CL_FAULT_CREATE_IMAGE    clCreateImage, clCreateImage2D/3D   CL_MEM_OBJECT_ALLOCATION_FAILURE
 *   CL_FAULT_ENQUEUE_KERNEL  clEnqueueNDRangeKernel, ..Task      CL_OUT_OF_RESOURCES
 *   CL_FAULT_DEVICE_LOST     every clEnqueue* call, clFinish,    CL_OUT_OF_RESOURCES
 *                            clFlush, clWaitForEvents ("the device went away mid-run")
 *
 * A rule lets `skip` calls of its class through, then fails the next `times` calls (-1: every
 * call until cl_fault_reset). The same rules can come from the environment, read once when the
 * loader initialises the layer, so a command line run can be faulted too:
 *
 *   TESSERA_CL_FAULTS="device_lost:10:-1:CL_DEVICE_NOT_AVAILABLE,build_program:0:1"
 *
 * (class:skip[:times[:error]], error by CL name or number; times defaults to 1).
 *
 * The layer also counts the live objects the application holds (created or retained and not yet
 * released) per kind, so a test can check that a failed run freed what it held. */
#ifndef TESSERA_CL_FAULT_LAYER_H
#define TESSERA_CL_FAULT_LAYER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CL_FAULT_BUILD_PROGRAM = 0,
  CL_FAULT_CREATE_BUFFER = 1,
  CL_FAULT_CREATE_IMAGE = 2,
  CL_FAULT_ENQUEUE_KERNEL = 3,
  CL_FAULT_DEVICE_LOST = 4,
  CL_FAULT_CLASS_COUNT = 5
} cl_fault_class;

typedef enum {
  CL_FAULT_OBJ_CONTEXT = 0,
  CL_FAULT_OBJ_QUEUE = 1,
  CL_FAULT_OBJ_MEM = 2, /* buffers and images */
  CL_FAULT_OBJ_PROGRAM = 3,
  CL_FAULT_OBJ_KERNEL = 4,
  CL_FAULT_OBJ_EVENT = 5,
  CL_FAULT_OBJ_KIND_COUNT = 6
} cl_fault_object;

/* 1 once the loader has initialised the layer (OPENCL_LAYERS named it and the loader supports
 * layers); 0 before, or when the layer is linked but not loaded as one. */
int cl_fault_layer_active(void);

/* Arms the rule of `fault_class`: let `skip` calls through, then fail `times` calls (-1: until
 * cl_fault_reset) with `error` (0: the class's default). Replaces an earlier rule of that class
 * and restarts its call count. */
void cl_fault_arm(cl_fault_class fault_class, int64_t skip, int64_t times, int32_t error);

/* Disarms every rule and zeroes the call and injection counts (the live counts stay). */
void cl_fault_reset(void);

/* Calls of the class seen since the last reset or arm of that class (failed ones included). */
int64_t cl_fault_calls(cl_fault_class fault_class);

/* Calls of the class failed on purpose since the last reset or arm of that class. */
int64_t cl_fault_injected(cl_fault_class fault_class);

/* Live objects of `kind` the application holds now. */
int64_t cl_fault_live(cl_fault_object kind);

/* "cl_mem" etc., for messages. */
const char* cl_fault_object_name(cl_fault_object kind);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CL_FAULT_LAYER_H */
