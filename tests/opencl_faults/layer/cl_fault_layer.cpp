// The fault-injecting OpenCL loader layer (see cl_fault_layer.h): the layer entry points
// (clGetLayerInfo, clInitLayer), the wrappers that count objects and fail armed calls, the rules
// and their control functions. Every wrapper forwards to the next dispatch table (the loader's,
// which reaches the driver) unless its rule fires.
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include "cl_fault_layer.h"

#include <CL/cl_icd.h>
#include <CL/cl_layer.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#define CL_FAULT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Rule {
  bool armed = false;
  int64_t skip = 0;
  int64_t times = 0;  // -1: until reset
  cl_int error = 0;
  int64_t calls = 0;
  int64_t injected = 0;
};

struct Tracked {
  cl_fault_object kind;
  int64_t refs;
};

constexpr std::array<cl_int, CL_FAULT_CLASS_COUNT> kDefaultError = {
    CL_BUILD_PROGRAM_FAILURE, CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_MEM_OBJECT_ALLOCATION_FAILURE,
    CL_OUT_OF_RESOURCES, CL_OUT_OF_RESOURCES};

constexpr std::array<const char*, CL_FAULT_CLASS_COUNT> kClassNames = {
    "build_program", "create_buffer", "create_image", "enqueue_kernel", "device_lost"};

struct State {
  std::mutex mutex;
  std::array<Rule, CL_FAULT_CLASS_COUNT> rules;
  std::unordered_map<const void*, Tracked> objects;
  std::array<int64_t, CL_FAULT_OBJ_KIND_COUNT> live{};
};

State& state() {
  static State s;
  return s;
}

bool g_active = false;
const cl_icd_dispatch* g_next = nullptr;
cl_icd_dispatch g_layer;

// Counts a call of `c`; true (with *error set) when its rule fails this call.
bool counted_call_fails(cl_fault_class c, cl_int* error) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Rule& r = state().rules[c];
  ++r.calls;
  if (!r.armed || r.calls <= r.skip) return false;
  if (r.times >= 0 && r.injected >= r.times) return false;
  ++r.injected;
  *error = r.error != 0 ? r.error : kDefaultError[c];
  return true;
}

// A call on `queue`: counts it as device_lost and, for kernel launches, as enqueue_kernel too.
// A failed call first waits for the real queue to drain: a device that fails has stopped, so
// nothing the application enqueued before still runs on the real driver behind the error (and
// reads or writes host memory the application believes is idle).
bool queue_call_fails(cl_command_queue queue, bool kernel_launch, cl_int* error) {
  cl_int lost = CL_SUCCESS, launch = CL_SUCCESS;
  const bool lost_fails = counted_call_fails(CL_FAULT_DEVICE_LOST, &lost);
  const bool launch_fails = kernel_launch && counted_call_fails(CL_FAULT_ENQUEUE_KERNEL, &launch);
  if (!lost_fails && !launch_fails) return false;
  *error = lost_fails ? lost : launch;
  if (queue) g_next->clFinish(queue);
  return true;
}

void track_new(const void* handle, cl_fault_object kind) {
  if (!handle) return;
  std::lock_guard<std::mutex> lock(state().mutex);
  auto [it, inserted] = state().objects.try_emplace(handle, Tracked{kind, 1});
  if (inserted) {
    ++state().live[kind];
  } else {
    // The driver reused the address of an object the layer did not see released.
    it->second = Tracked{kind, 1};
  }
}

void track_retain(const void* handle) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().objects.find(handle);
  if (it != state().objects.end()) ++it->second.refs;
}

void track_release(const void* handle) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().objects.find(handle);
  if (it == state().objects.end()) return;
  if (--it->second.refs == 0) {
    --state().live[it->second.kind];
    state().objects.erase(it);
  }
}

// An event a queue call handed back (only when it succeeded and the caller asked for one).
cl_int track_event(cl_int err, cl_event* event) {
  if (err == CL_SUCCESS && event) track_new(*event, CL_FAULT_OBJ_EVENT);
  return err;
}

template <class T>
T fail_create(cl_int* errcode_ret, cl_int error) {
  if (errcode_ret) *errcode_ret = error;
  return nullptr;
}

// ---- contexts and queues ----

cl_context CL_API_CALL CreateContext(const cl_context_properties* properties, cl_uint num_devices,
                                     const cl_device_id* devices,
                                     void(CL_CALLBACK* notify)(const char*, const void*, size_t,
                                                               void*),
                                     void* user_data, cl_int* errcode_ret) {
  cl_context c =
      g_next->clCreateContext(properties, num_devices, devices, notify, user_data, errcode_ret);
  track_new(c, CL_FAULT_OBJ_CONTEXT);
  return c;
}

cl_context CL_API_CALL CreateContextFromType(const cl_context_properties* properties,
                                             cl_device_type type,
                                             void(CL_CALLBACK* notify)(const char*, const void*,
                                                                       size_t, void*),
                                             void* user_data, cl_int* errcode_ret) {
  cl_context c = g_next->clCreateContextFromType(properties, type, notify, user_data, errcode_ret);
  track_new(c, CL_FAULT_OBJ_CONTEXT);
  return c;
}

cl_command_queue CL_API_CALL CreateCommandQueue(cl_context context, cl_device_id device,
                                                cl_command_queue_properties properties,
                                                cl_int* errcode_ret) {
  cl_command_queue q = g_next->clCreateCommandQueue(context, device, properties, errcode_ret);
  track_new(q, CL_FAULT_OBJ_QUEUE);
  return q;
}

cl_command_queue CL_API_CALL CreateCommandQueueWithProperties(cl_context context,
                                                              cl_device_id device,
                                                              const cl_queue_properties* properties,
                                                              cl_int* errcode_ret) {
  cl_command_queue q =
      g_next->clCreateCommandQueueWithProperties(context, device, properties, errcode_ret);
  track_new(q, CL_FAULT_OBJ_QUEUE);
  return q;
}

// ---- memory objects ----

cl_mem CL_API_CALL CreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr,
                                cl_int* errcode_ret) {
  cl_int error = CL_SUCCESS;
  if (counted_call_fails(CL_FAULT_CREATE_BUFFER, &error)) {
    return fail_create<cl_mem>(errcode_ret, error);
  }
  cl_mem m = g_next->clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
  track_new(m, CL_FAULT_OBJ_MEM);
  return m;
}

cl_mem CL_API_CALL CreateSubBuffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type,
                                   const void* info, cl_int* errcode_ret) {
  cl_int error = CL_SUCCESS;
  if (counted_call_fails(CL_FAULT_CREATE_BUFFER, &error)) {
    return fail_create<cl_mem>(errcode_ret, error);
  }
  cl_mem m = g_next->clCreateSubBuffer(buffer, flags, type, info, errcode_ret);
  track_new(m, CL_FAULT_OBJ_MEM);
  return m;
}

cl_mem CL_API_CALL CreateImage(cl_context context, cl_mem_flags flags,
                               const cl_image_format* format, const cl_image_desc* desc,
                               void* host_ptr, cl_int* errcode_ret) {
  cl_int error = CL_SUCCESS;
  if (counted_call_fails(CL_FAULT_CREATE_IMAGE, &error)) {
    return fail_create<cl_mem>(errcode_ret, error);
  }
  cl_mem m = g_next->clCreateImage(context, flags, format, desc, host_ptr, errcode_ret);
  track_new(m, CL_FAULT_OBJ_MEM);
  return m;
}

cl_mem CL_API_CALL CreateImage2D(cl_context context, cl_mem_flags flags,
                                 const cl_image_format* format, size_t width, size_t height,
                                 size_t row_pitch, void* host_ptr, cl_int* errcode_ret) {
  cl_int error = CL_SUCCESS;
  if (counted_call_fails(CL_FAULT_CREATE_IMAGE, &error)) {
    return fail_create<cl_mem>(errcode_ret, error);
  }
  cl_mem m = g_next->clCreateImage2D(context, flags, format, width, height, row_pitch, host_ptr,
                                     errcode_ret);
  track_new(m, CL_FAULT_OBJ_MEM);
  return m;
}

cl_mem CL_API_CALL CreateImage3D(cl_context context, cl_mem_flags flags,
                                 const cl_image_format* format, size_t width, size_t height,
                                 size_t depth, size_t row_pitch, size_t slice_pitch, void* host_ptr,
                                 cl_int* errcode_ret) {
  cl_int error = CL_SUCCESS;
  if (counted_call_fails(CL_FAULT_CREATE_IMAGE, &error)) {
    return fail_create<cl_mem>(errcode_ret, error);
  }
  cl_mem m = g_next->clCreateImage3D(context, flags, format, width, height, depth, row_pitch,
                                     slice_pitch, host_ptr, errcode_ret);
  track_new(m, CL_FAULT_OBJ_MEM);
  return m;
}

// ---- programs and kernels ----

cl_program CL_API_CALL CreateProgramWithSource(cl_context context, cl_uint count,
                                               const char** strings, const size_t* lengths,
                                               cl_int* errcode_ret) {
  cl_program p = g_next->clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  track_new(p, CL_FAULT_OBJ_PROGRAM);
  return p;
}

cl_program CL_API_CALL CreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                               const cl_device_id* devices, const size_t* lengths,
                                               const unsigned char** binaries,
                                               cl_int* binary_status, cl_int* errcode_ret) {
  cl_program p = g_next->clCreateProgramWithBinary(context, num_devices, devices, lengths, binaries,
                                                   binary_status, errcode_ret);
  track_new(p, CL_FAULT_OBJ_PROGRAM);
  return p;
}

cl_program CL_API_CALL CreateProgramWithBuiltInKernels(cl_context context, cl_uint num_devices,
                                                       const cl_device_id* devices,
                                                       const char* names, cl_int* errcode_ret) {
  cl_program p =
      g_next->clCreateProgramWithBuiltInKernels(context, num_devices, devices, names, errcode_ret);
  track_new(p, CL_FAULT_OBJ_PROGRAM);
  return p;
}

cl_program CL_API_CALL CreateProgramWithIL(cl_context context, const void* il, size_t length,
                                           cl_int* errcode_ret) {
  cl_program p = g_next->clCreateProgramWithIL(context, il, length, errcode_ret);
  track_new(p, CL_FAULT_OBJ_PROGRAM);
  return p;
}

cl_program CL_API_CALL LinkProgram(cl_context context, cl_uint num_devices,
                                   const cl_device_id* devices, const char* options,
                                   cl_uint num_programs, const cl_program* programs,
                                   void(CL_CALLBACK* notify)(cl_program, void*), void* user_data,
                                   cl_int* errcode_ret) {
  cl_program p = g_next->clLinkProgram(context, num_devices, devices, options, num_programs,
                                       programs, notify, user_data, errcode_ret);
  track_new(p, CL_FAULT_OBJ_PROGRAM);
  return p;
}

cl_int CL_API_CALL BuildProgram(cl_program program, cl_uint num_devices,
                                const cl_device_id* devices, const char* options,
                                void(CL_CALLBACK* notify)(cl_program, void*), void* user_data) {
  cl_int error = CL_SUCCESS;
  if (counted_call_fails(CL_FAULT_BUILD_PROGRAM, &error)) return error;
  return g_next->clBuildProgram(program, num_devices, devices, options, notify, user_data);
}

cl_kernel CL_API_CALL CreateKernel(cl_program program, const char* name, cl_int* errcode_ret) {
  cl_kernel k = g_next->clCreateKernel(program, name, errcode_ret);
  track_new(k, CL_FAULT_OBJ_KERNEL);
  return k;
}

cl_int CL_API_CALL CreateKernelsInProgram(cl_program program, cl_uint num_kernels,
                                          cl_kernel* kernels, cl_uint* num_kernels_ret) {
  const cl_int err =
      g_next->clCreateKernelsInProgram(program, num_kernels, kernels, num_kernels_ret);
  if (err == CL_SUCCESS && kernels) {
    for (cl_uint i = 0; i < num_kernels; ++i) track_new(kernels[i], CL_FAULT_OBJ_KERNEL);
  }
  return err;
}

cl_kernel CL_API_CALL CloneKernel(cl_kernel source, cl_int* errcode_ret) {
  cl_kernel k = g_next->clCloneKernel(source, errcode_ret);
  track_new(k, CL_FAULT_OBJ_KERNEL);
  return k;
}

cl_event CL_API_CALL CreateUserEvent(cl_context context, cl_int* errcode_ret) {
  cl_event e = g_next->clCreateUserEvent(context, errcode_ret);
  track_new(e, CL_FAULT_OBJ_EVENT);
  return e;
}

// ---- retain / release ----

#define CL_FAULT_REFCOUNT(Type, Object)                   \
  cl_int CL_API_CALL Retain##Object(Type handle) {        \
    const cl_int err = g_next->clRetain##Object(handle);  \
    if (err == CL_SUCCESS) track_retain(handle);          \
    return err;                                           \
  }                                                       \
  cl_int CL_API_CALL Release##Object(Type handle) {       \
    const cl_int err = g_next->clRelease##Object(handle); \
    if (err == CL_SUCCESS) track_release(handle);         \
    return err;                                           \
  }
CL_FAULT_REFCOUNT(cl_context, Context)
CL_FAULT_REFCOUNT(cl_command_queue, CommandQueue)
CL_FAULT_REFCOUNT(cl_mem, MemObject)
CL_FAULT_REFCOUNT(cl_program, Program)
CL_FAULT_REFCOUNT(cl_kernel, Kernel)
CL_FAULT_REFCOUNT(cl_event, Event)
#undef CL_FAULT_REFCOUNT

// ---- queue calls (device_lost; kernel launches also enqueue_kernel) ----

cl_int CL_API_CALL EnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                        const size_t* offset, const size_t* global,
                                        const size_t* local, cl_uint num_wait, const cl_event* wait,
                                        cl_event* event) {
  cl_int error = CL_SUCCESS;
  if (queue_call_fails(queue, true, &error)) return error;
  return track_event(g_next->clEnqueueNDRangeKernel(queue, kernel, dims, offset, global, local,
                                                    num_wait, wait, event),
                     event);
}

cl_int CL_API_CALL EnqueueTask(cl_command_queue queue, cl_kernel kernel, cl_uint num_wait,
                               const cl_event* wait, cl_event* event) {
  cl_int error = CL_SUCCESS;
  if (queue_call_fails(queue, true, &error)) return error;
  return track_event(g_next->clEnqueueTask(queue, kernel, num_wait, wait, event), event);
}

// The other enqueue calls differ only in their arguments: one wrapper shape for all of them.
#define CL_FAULT_ENQUEUE(Name, Params, Args)              \
  cl_int CL_API_CALL Name Params {                        \
    cl_int error = CL_SUCCESS;                            \
    if (queue_call_fails(q, false, &error)) return error; \
    return track_event(g_next->cl##Name Args, event);     \
  }

CL_FAULT_ENQUEUE(EnqueueReadBuffer,
                 (cl_command_queue q, cl_mem m, cl_bool blocking, size_t offset, size_t size,
                  void* ptr, cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, m, blocking, offset, size, ptr, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueWriteBuffer,
                 (cl_command_queue q, cl_mem m, cl_bool blocking, size_t offset, size_t size,
                  const void* ptr, cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, m, blocking, offset, size, ptr, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueCopyBuffer,
                 (cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset,
                  size_t size, cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, src, dst, src_offset, dst_offset, size, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueFillBuffer,
                 (cl_command_queue q, cl_mem m, const void* pattern, size_t pattern_size,
                  size_t offset, size_t size, cl_uint num_wait, const cl_event* wait,
                  cl_event* event),
                 (q, m, pattern, pattern_size, offset, size, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueReadBufferRect,
                 (cl_command_queue q, cl_mem m, cl_bool blocking, const size_t* buffer_origin,
                  const size_t* host_origin, const size_t* region, size_t buffer_row_pitch,
                  size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
                  void* ptr, cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, m, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                  buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueWriteBufferRect,
                 (cl_command_queue q, cl_mem m, cl_bool blocking, const size_t* buffer_origin,
                  const size_t* host_origin, const size_t* region, size_t buffer_row_pitch,
                  size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
                  const void* ptr, cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, m, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                  buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueCopyBufferRect,
                 (cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                  const size_t* dst_origin, const size_t* region, size_t src_row_pitch,
                  size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                  cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, src, dst, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch,
                  dst_row_pitch, dst_slice_pitch, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueReadImage,
                 (cl_command_queue q, cl_mem image, cl_bool blocking, const size_t* origin,
                  const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr,
                  cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, num_wait, wait,
                  event))
CL_FAULT_ENQUEUE(EnqueueWriteImage,
                 (cl_command_queue q, cl_mem image, cl_bool blocking, const size_t* origin,
                  const size_t* region, size_t row_pitch, size_t slice_pitch, const void* ptr,
                  cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, num_wait, wait,
                  event))
CL_FAULT_ENQUEUE(EnqueueCopyImage,
                 (cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                  const size_t* dst_origin, const size_t* region, cl_uint num_wait,
                  const cl_event* wait, cl_event* event),
                 (q, src, dst, src_origin, dst_origin, region, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueFillImage,
                 (cl_command_queue q, cl_mem image, const void* color, const size_t* origin,
                  const size_t* region, cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, image, color, origin, region, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueCopyImageToBuffer,
                 (cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                  const size_t* region, size_t dst_offset, cl_uint num_wait, const cl_event* wait,
                  cl_event* event),
                 (q, src, dst, src_origin, region, dst_offset, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueCopyBufferToImage,
                 (cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                  const size_t* dst_origin, const size_t* region, cl_uint num_wait,
                  const cl_event* wait, cl_event* event),
                 (q, src, dst, src_offset, dst_origin, region, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueUnmapMemObject,
                 (cl_command_queue q, cl_mem m, void* mapped, cl_uint num_wait,
                  const cl_event* wait, cl_event* event),
                 (q, m, mapped, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueMarkerWithWaitList,
                 (cl_command_queue q, cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueBarrierWithWaitList,
                 (cl_command_queue q, cl_uint num_wait, const cl_event* wait, cl_event* event),
                 (q, num_wait, wait, event))
CL_FAULT_ENQUEUE(EnqueueMigrateMemObjects,
                 (cl_command_queue q, cl_uint num_mems, const cl_mem* mems,
                  cl_mem_migration_flags flags, cl_uint num_wait, const cl_event* wait,
                  cl_event* event),
                 (q, num_mems, mems, flags, num_wait, wait, event))
#undef CL_FAULT_ENQUEUE

void* CL_API_CALL EnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool blocking,
                                   cl_map_flags flags, size_t offset, size_t size, cl_uint num_wait,
                                   const cl_event* wait, cl_event* event, cl_int* errcode_ret) {
  cl_int error = CL_SUCCESS;
  if (queue_call_fails(q, false, &error)) return fail_create<void*>(errcode_ret, error);
  cl_int err = CL_SUCCESS;
  void* p =
      g_next->clEnqueueMapBuffer(q, m, blocking, flags, offset, size, num_wait, wait, event, &err);
  track_event(err, event);
  if (errcode_ret) *errcode_ret = err;
  return p;
}

void* CL_API_CALL EnqueueMapImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                  cl_map_flags flags, const size_t* origin, const size_t* region,
                                  size_t* row_pitch, size_t* slice_pitch, cl_uint num_wait,
                                  const cl_event* wait, cl_event* event, cl_int* errcode_ret) {
  cl_int error = CL_SUCCESS;
  if (queue_call_fails(q, false, &error)) return fail_create<void*>(errcode_ret, error);
  cl_int err = CL_SUCCESS;
  void* p = g_next->clEnqueueMapImage(q, image, blocking, flags, origin, region, row_pitch,
                                      slice_pitch, num_wait, wait, event, &err);
  track_event(err, event);
  if (errcode_ret) *errcode_ret = err;
  return p;
}

cl_int CL_API_CALL Finish(cl_command_queue queue) {
  cl_int error = CL_SUCCESS;
  if (queue_call_fails(queue, false, &error)) return error;
  return g_next->clFinish(queue);
}

cl_int CL_API_CALL Flush(cl_command_queue queue) {
  cl_int error = CL_SUCCESS;
  if (queue_call_fails(queue, false, &error)) return error;
  return g_next->clFlush(queue);
}

cl_int CL_API_CALL WaitForEvents(cl_uint num_events, const cl_event* events) {
  cl_int error = CL_SUCCESS;
  if (queue_call_fails(nullptr, false, &error)) {
    g_next->clWaitForEvents(num_events, events);  // the events' commands stop too (see above)
    return error;
  }
  return g_next->clWaitForEvents(num_events, events);
}

// ---- TESSERA_CL_FAULTS ----

cl_int parse_error(const std::string& text) {
  static const std::pair<const char*, cl_int> kNames[] = {
      {"CL_OUT_OF_RESOURCES", CL_OUT_OF_RESOURCES},
      {"CL_OUT_OF_HOST_MEMORY", CL_OUT_OF_HOST_MEMORY},
      {"CL_MEM_OBJECT_ALLOCATION_FAILURE", CL_MEM_OBJECT_ALLOCATION_FAILURE},
      {"CL_BUILD_PROGRAM_FAILURE", CL_BUILD_PROGRAM_FAILURE},
      {"CL_DEVICE_NOT_AVAILABLE", CL_DEVICE_NOT_AVAILABLE},
      {"CL_INVALID_COMMAND_QUEUE", CL_INVALID_COMMAND_QUEUE},
      {"CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
       CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST},
  };
  for (const auto& [name, code] : kNames) {
    if (text == name) return code;
  }
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v >= 0 || v < -10000) return 0;
  return static_cast<cl_int>(v);
}

bool parse_i64(const std::string& text, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0') return false;
  *out = v;
  return true;
}

// "class:skip[:times[:error]]" entries separated by commas; a bad entry is reported on stderr
// and ignored, so a typo never passes for "no fault".
void arm_from_environment() {
  const char* env = std::getenv("TESSERA_CL_FAULTS");
  if (!env || !*env) return;
  std::string all = env;
  size_t start = 0;
  while (start <= all.size()) {
    const size_t comma = all.find(',', start);
    const std::string entry =
        all.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? all.size() + 1 : comma + 1;
    if (entry.empty()) continue;
    std::string parts[4];
    int n = 0;
    size_t p = 0;
    while (n < 4) {
      const size_t colon = entry.find(':', p);
      parts[n++] = entry.substr(p, colon == std::string::npos ? std::string::npos : colon - p);
      if (colon == std::string::npos) break;
      p = colon + 1;
    }
    int cls = -1;
    for (int c = 0; c < CL_FAULT_CLASS_COUNT; ++c) {
      if (parts[0] == kClassNames[c]) cls = c;
    }
    int64_t skip = 0, times = 1;
    cl_int error = 0;
    const bool ok = cls >= 0 && n >= 2 && parse_i64(parts[1], &skip) && skip >= 0 &&
                    (n < 3 || (parse_i64(parts[2], &times) && times >= -1)) &&
                    (n < 4 || (error = parse_error(parts[3])) != 0);
    if (!ok) {
      std::fprintf(stderr,
                   "cl_fault_layer: TESSERA_CL_FAULTS entry '%s' ignored: want "
                   "class:skip[:times[:error]] with class one of build_program, create_buffer, "
                   "create_image, enqueue_kernel, device_lost\n",
                   entry.c_str());
      continue;
    }
    cl_fault_arm(static_cast<cl_fault_class>(cls), skip, times, error);
  }
}

}  // namespace

// ---- the layer entry points (cl_loader_layers) ----

CL_FAULT_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name, size_t param_value_size,
                                                  void* param_value, size_t* param_value_size_ret) {
  static const char kName[] = "tessera fault-injection test layer";
  const void* src = nullptr;
  size_t size = 0;
  cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  switch (param_name) {
    case CL_LAYER_API_VERSION:
      src = &version;
      size = sizeof(version);
      break;
    case CL_LAYER_NAME:
      src = kName;
      size = sizeof(kName);
      break;
    default:
      return CL_INVALID_VALUE;
  }
  if (param_value) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    std::memcpy(param_value, src, size);
  }
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

CL_FAULT_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries,
                                               const cl_icd_dispatch* target_dispatch,
                                               cl_uint* num_entries_ret,
                                               const cl_icd_dispatch** layer_dispatch_ret) {
  constexpr cl_uint kEntries = sizeof(cl_icd_dispatch) / sizeof(void*);
  if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret) return CL_INVALID_VALUE;
  // Slots the loader does not have stay null in our copy, so the loader sees them as absent.
  std::memset(&g_layer, 0, sizeof(g_layer));
  std::memcpy(&g_layer, target_dispatch,
              sizeof(void*) * (num_entries < kEntries ? num_entries : kEntries));
  g_next = target_dispatch;
#define CL_FAULT_WRAP(Name) \
  if (g_layer.cl##Name) g_layer.cl##Name = Name
  CL_FAULT_WRAP(CreateContext);
  CL_FAULT_WRAP(CreateContextFromType);
  CL_FAULT_WRAP(RetainContext);
  CL_FAULT_WRAP(ReleaseContext);
  CL_FAULT_WRAP(CreateCommandQueue);
  CL_FAULT_WRAP(CreateCommandQueueWithProperties);
  CL_FAULT_WRAP(RetainCommandQueue);
  CL_FAULT_WRAP(ReleaseCommandQueue);
  CL_FAULT_WRAP(CreateBuffer);
  CL_FAULT_WRAP(CreateSubBuffer);
  CL_FAULT_WRAP(CreateImage);
  CL_FAULT_WRAP(CreateImage2D);
  CL_FAULT_WRAP(CreateImage3D);
  CL_FAULT_WRAP(RetainMemObject);
  CL_FAULT_WRAP(ReleaseMemObject);
  CL_FAULT_WRAP(CreateProgramWithSource);
  CL_FAULT_WRAP(CreateProgramWithBinary);
  CL_FAULT_WRAP(CreateProgramWithBuiltInKernels);
  CL_FAULT_WRAP(CreateProgramWithIL);
  CL_FAULT_WRAP(LinkProgram);
  CL_FAULT_WRAP(BuildProgram);
  CL_FAULT_WRAP(RetainProgram);
  CL_FAULT_WRAP(ReleaseProgram);
  CL_FAULT_WRAP(CreateKernel);
  CL_FAULT_WRAP(CreateKernelsInProgram);
  CL_FAULT_WRAP(CloneKernel);
  CL_FAULT_WRAP(RetainKernel);
  CL_FAULT_WRAP(ReleaseKernel);
  CL_FAULT_WRAP(CreateUserEvent);
  CL_FAULT_WRAP(RetainEvent);
  CL_FAULT_WRAP(ReleaseEvent);
  CL_FAULT_WRAP(EnqueueNDRangeKernel);
  CL_FAULT_WRAP(EnqueueTask);
  CL_FAULT_WRAP(EnqueueReadBuffer);
  CL_FAULT_WRAP(EnqueueWriteBuffer);
  CL_FAULT_WRAP(EnqueueCopyBuffer);
  CL_FAULT_WRAP(EnqueueFillBuffer);
  CL_FAULT_WRAP(EnqueueReadBufferRect);
  CL_FAULT_WRAP(EnqueueWriteBufferRect);
  CL_FAULT_WRAP(EnqueueCopyBufferRect);
  CL_FAULT_WRAP(EnqueueReadImage);
  CL_FAULT_WRAP(EnqueueWriteImage);
  CL_FAULT_WRAP(EnqueueCopyImage);
  CL_FAULT_WRAP(EnqueueFillImage);
  CL_FAULT_WRAP(EnqueueCopyImageToBuffer);
  CL_FAULT_WRAP(EnqueueCopyBufferToImage);
  CL_FAULT_WRAP(EnqueueMapBuffer);
  CL_FAULT_WRAP(EnqueueMapImage);
  CL_FAULT_WRAP(EnqueueUnmapMemObject);
  CL_FAULT_WRAP(EnqueueMarkerWithWaitList);
  CL_FAULT_WRAP(EnqueueBarrierWithWaitList);
  CL_FAULT_WRAP(EnqueueMigrateMemObjects);
  CL_FAULT_WRAP(Finish);
  CL_FAULT_WRAP(Flush);
  CL_FAULT_WRAP(WaitForEvents);
#undef CL_FAULT_WRAP
  *num_entries_ret = kEntries;
  *layer_dispatch_ret = &g_layer;
  g_active = true;
  arm_from_environment();
  return CL_SUCCESS;
}

// ---- control ----

CL_FAULT_EXPORT int cl_fault_layer_active(void) {
  return g_active ? 1 : 0;
}

CL_FAULT_EXPORT void cl_fault_arm(cl_fault_class fault_class, int64_t skip, int64_t times,
                                  int32_t error) {
  if (fault_class < 0 || fault_class >= CL_FAULT_CLASS_COUNT) return;
  std::lock_guard<std::mutex> lock(state().mutex);
  Rule& r = state().rules[fault_class];
  r = Rule{};
  r.armed = true;
  r.skip = skip < 0 ? 0 : skip;
  r.times = times < -1 ? -1 : times;
  r.error = error;
}

CL_FAULT_EXPORT void cl_fault_reset(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  for (Rule& r : state().rules) r = Rule{};
}

CL_FAULT_EXPORT int64_t cl_fault_calls(cl_fault_class fault_class) {
  if (fault_class < 0 || fault_class >= CL_FAULT_CLASS_COUNT) return 0;
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().rules[fault_class].calls;
}

CL_FAULT_EXPORT int64_t cl_fault_injected(cl_fault_class fault_class) {
  if (fault_class < 0 || fault_class >= CL_FAULT_CLASS_COUNT) return 0;
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().rules[fault_class].injected;
}

CL_FAULT_EXPORT int64_t cl_fault_live(cl_fault_object kind) {
  if (kind < 0 || kind >= CL_FAULT_OBJ_KIND_COUNT) return 0;
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().live[kind];
}

CL_FAULT_EXPORT const char* cl_fault_object_name(cl_fault_object kind) {
  static const char* const kNames[] = {"cl_context", "cl_command_queue", "cl_mem",
                                       "cl_program", "cl_kernel",        "cl_event"};
  return kind >= 0 && kind < CL_FAULT_OBJ_KIND_COUNT ? kNames[kind] : "?";
}
