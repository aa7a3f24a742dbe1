/* The CLML emulator: a test-only OpenCL loader layer (cl_loader_layers) that makes any OpenCL
 * device look like a CLML device. It is an emulator, not a driver and not Qualcomm's CLML: it
 * lives under tests/, is never installed, and computes every CLML op with plain C++ loops on the
 * host (reading and writing the cl_mem objects through the real driver underneath, PoCL in CI).
 *
 * What it adds to the device below it:
 *   - "cl_qcom_ml_ops" in CL_DEVICE_EXTENSIONS;
 *   - clQueryMLInterfaceVersionsQCOM and clGetMLInterfaceQCOM through
 *     clGetExtensionFunctionAddressForPlatform, offering interface majors 2 and 3 (or the list
 *     in TESSERA_CLML_EMU_VERSIONS, e.g. "1.0" to look like a driver too old for the plugin);
 *   - the interface functions the clml plugin uses: tensors, memory descriptor sets, the
 *     inference ops, tensor read/write/copy, and a tuning cache.
 * Its OPTIMAL layout is NHWC with channels padded to a multiple of 4 (and its own memory size),
 * so a caller that treats OPTIMAL memory as NCHW gets wrong numbers.
 *
 * Faults: a rule per interface function name fails chosen calls, from code (clml_emu_fail) or
 * from the environment, read when the loader initialises the layer:
 *   TESSERA_CLML_EMU_FAIL="clCreateMLOpPoolingForwardQCOM:0:-1:-1102,clEnqueueMLOpQCOM:3"
 * (name:skip[:times[:error]]; times -1 = every call; error defaults to CL_OUT_OF_RESOURCES). */
#ifndef TESSERA_CLML_EMULATOR_H
#define TESSERA_CLML_EMULATOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 once the loader has initialised the layer. */
int clml_emu_active(void);
/* Fails calls of interface function `name` ("clEnqueueMLOpQCOM") after `skip` calls, `times`
 * times (-1: until reset), with `error` (0: CL_OUT_OF_RESOURCES). */
void clml_emu_fail(const char* name, int64_t skip, int64_t times, int32_t error);
/* Clears every rule and call count. */
void clml_emu_reset(void);
/* Calls of `name` since the last reset. */
int64_t clml_emu_calls(const char* name);
/* Live tensors / ops / descriptor sets / tuning caches the application holds. */
int64_t clml_emu_live(const char* kind);
/* Ops created with a tuning cache that held a result for them (loaded or tuned). */
int64_t clml_emu_tuning_hits(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CLML_EMULATOR_H */
