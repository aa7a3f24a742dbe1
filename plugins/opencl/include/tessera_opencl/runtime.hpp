// tessera_opencl: the small OpenCL runtime shared by the GPU plugins (mali, adreno, ...).
//
// Device probing through the ICD loader, a context with one in-order profiling queue, program
// builds with an on-disk binary cache, RAII buffers, typed kernel-argument binding and profiling
// events. Every OpenCL failure throws ClError whose message names the kernel (or program),
// the device and the CL error name; plugins turn it into a tsr_status at their boundary.
// Core never links this library.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::opencl {

// "CL_OUT_OF_RESOURCES" for -5, "CL_UNKNOWN_ERROR(-1234)" for codes it does not know.
std::string cl_error_name(cl_int code);

// An OpenCL failure. `code` is the CL status (0 when the failure is not a CL call, e.g. a
// program build whose log is in the message).
class ClError : public Error {
 public:
  ClError(cl_int code, const std::string& message) : Error(message), code_(code) {}
  cl_int code() const { return code_; }
  // True for a failure to build a program (as opposed to a run-time failure).
  bool is_build_failure() const {
    return code_ == CL_BUILD_PROGRAM_FAILURE || code_ == CL_INVALID_BUILD_OPTIONS ||
           code_ == CL_COMPILER_NOT_AVAILABLE;
  }

 private:
  cl_int code_;
};

// What probing reports of one device; plain values so it can be copied around freely.
struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  // "cl<platform>.<device>": the device's place in the ICD loader's enumeration, which stays the
  // same between probes and processes while the machine's set of OpenCL drivers does not change.
  std::string stable_id;
  std::string platform_name;
  std::string vendor;
  std::string name;
  std::string driver_version;
  std::string device_version;  // "OpenCL 3.0 ..."
  std::string kind;            // "gpu", "cpu", "accelerator"
  int32_t compute_units = 0;
  int64_t global_memory_bytes = 0;
  int64_t local_memory_bytes = 0;
  int64_t max_work_group_size = 0;
  std::vector<int64_t> max_work_item_sizes;
  std::vector<std::string> extensions;
  bool image_support = false;
  bool fp16 = false;

  bool has_extension(const std::string& ext) const;
  // "Mali-G78 (ARM, driver 3.1)" for messages.
  std::string describe() const;
};

struct ProbeResult {
  std::vector<DeviceInfo> devices;
  // Set when no device could be listed at all (no ICD, no platform); says why.
  std::string error;
};

// Lists every device of every platform the ICD loader knows. Never throws.
ProbeResult probe_devices();

class Context;

// A device buffer (cl_mem) owned by this object.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Context& context, size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  cl_mem get() const { return mem_; }
  size_t bytes() const { return bytes_; }

 private:
  cl_mem mem_ = nullptr;
  size_t bytes_ = 0;
};

// A profiling event of one enqueued command.
class Event {
 public:
  Event() = default;
  explicit Event(cl_event event) : event_(event) {}
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool valid() const { return event_ != nullptr; }
  cl_event get() const { return event_; }
  // Device time between start and end of the command, microseconds; waits for completion.
  double duration_us() const;

 private:
  cl_event event_ = nullptr;
};

// Typed kernel arguments, bound in order: args.buffer(x).buffer(y).i32(n).f32(alpha).
// The kernel name is kept so a rejected argument names kernel and position.
class Kernel;
class KernelArgs {
 public:
  explicit KernelArgs(const Kernel& kernel) : kernel_(kernel) {}
  KernelArgs& buffer(const Buffer& b) { return buffer(b.get()); }
  KernelArgs& buffer(cl_mem mem);
  KernelArgs& i32(int32_t v);
  KernelArgs& i32x4(int32_t a, int32_t b, int32_t c, int32_t d);
  KernelArgs& i32x8(const std::array<int32_t, 8>& v);
  KernelArgs& f32(float v);
  KernelArgs& local(size_t bytes);  // __local scratch of `bytes` bytes
  cl_uint count() const { return index_; }

 private:
  void set(size_t size, const void* value, const char* what);
  const Kernel& kernel_;
  cl_uint index_ = 0;
};

// A kernel object; owns the cl_kernel, keeps the program alive.
class Kernel {
 public:
  Kernel() = default;
  Kernel(cl_kernel kernel, std::string name, std::shared_ptr<const void> program_keepalive,
         std::string device);
  ~Kernel();
  Kernel(Kernel&& other) noexcept;
  Kernel& operator=(Kernel&& other) noexcept;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  cl_kernel get() const { return kernel_; }
  const std::string& name() const { return name_; }
  const std::string& device() const { return device_; }
  // Starts binding arguments from index 0.
  KernelArgs args() const { return KernelArgs(*this); }
  // CL_KERNEL_WORK_GROUP_SIZE for this kernel on its device.
  size_t max_work_group_size() const;

 private:
  cl_kernel kernel_ = nullptr;
  std::string name_;
  std::shared_ptr<const void> program_;
  std::string device_;
};

// A built program; kernels are created from it by name.
class Program {
 public:
  Program(cl_program program, std::string label, std::string device, bool from_cache);
  Kernel kernel(const std::string& name) const;
  bool loaded_from_cache() const { return from_cache_; }
  cl_program get() const { return static_cast<cl_program>(const_cast<void*>(handle_.get())); }

 private:
  std::shared_ptr<const void> handle_;  // releases the cl_program when the last user goes
  std::string label_;
  std::string device_;
  bool from_cache_;
};

// Counters of the binary cache, for tests and `tessera info`.
struct CacheStats {
  int64_t binary_loads = 0;       // programs created from a cached binary
  int64_t source_builds = 0;      // programs compiled from source
  int64_t rejected_binaries = 0;  // cache files found but corrupt, stale or refused by the driver
  int64_t writes = 0;             // cache files written
  // Cache paths holding something other than a regular file (a FIFO, a directory), or that could
  // not be opened: left unread, with a note on stderr, and built from source.
  int64_t ignored_entries = 0;
};

// One device's context (shared by every Context of the process on that device, see
// runtime.cpp) and an in-order profiling queue of its own, plus the program cache.
class Context {
 public:
  // cache_dir "" disables the on-disk cache.
  Context(const DeviceInfo& device, std::string cache_dir);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& device() const { return device_; }
  cl_context get() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  const std::string& cache_dir() const { return cache_dir_; }
  const CacheStats& cache_stats() const { return stats_; }

  // Builds `source` with `options`. Tries the binary cache first (a corrupt, stale or rejected
  // binary is rebuilt from source and the cache file replaced; an entry that is not a regular
  // file is never opened for reading in a way that could block, and is ignored). On failure throws
  // ClError whose message holds `label` (e.g. the .cl file name), the device and the full build
  // log.
  Program build(const std::string& label, const std::string& source, const std::string& options);

  // Path of the cache file build() would use; for tests.
  std::string cache_path(const std::string& source, const std::string& options) const;

  // Enqueues a 1-3 D range; `local` may be empty (driver chooses). Returns the profiling event,
  // or an empty Event with `timed` false (no event is created: drivers pay for each one).
  Event launch(const Kernel& kernel, const std::vector<size_t>& global,
               const std::vector<size_t>& local, bool timed = true);
  // Enqueues a write; `data` must stay valid until the queue finishes.
  void write(const Buffer& buffer, const void* data, size_t bytes, size_t offset = 0);
  // Writes and returns once the driver has copied `data`, so the caller may free it at once, also
  // when the call throws.
  void write_and_wait(const Buffer& buffer, const void* data, size_t bytes);
  void read(const Buffer& buffer, void* data, size_t bytes, size_t offset = 0);
  void copy(const Buffer& src, const Buffer& dst, size_t bytes, size_t src_offset = 0,
            size_t dst_offset = 0);
  // The same for buffers of this context owned elsewhere (another plugin's region output).
  void copy(cl_mem src, cl_mem dst, size_t bytes, size_t src_offset = 0, size_t dst_offset = 0);
  void finish();
  // Waits for every enqueued command, ignoring errors: after a failure, nothing enqueued before
  // may still read or write host memory or buffers the caller is about to free.
  void drain() noexcept;

 private:
  cl_program build_from_source(const std::string& label, const std::string& source,
                               const std::string& options);
  cl_program load_cached(const std::string& path, const std::string& key,
                         const std::string& options);
  void store_cached(const std::string& path, const std::string& key, cl_program program);

  DeviceInfo device_;
  std::string cache_dir_;
  std::shared_ptr<void> shared_;  // keeps the process's context of this device alive
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  CacheStats stats_;
};

// Throws ClError "<what> on <device>: <CL_ERROR_NAME>" unless code == CL_SUCCESS.
void check(cl_int code, const std::string& what, const std::string& device);

// The cache directory to use: `explicit_dir` if non-empty, else $TESSERA_CACHE_DIR, else
// $HOME/.cache/tessera; "" when none can be determined. Appends "/opencl".
std::string default_cache_dir(const std::string& explicit_dir);

}  // namespace tessera::opencl
