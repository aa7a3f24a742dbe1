// tessera_opencl runtime: probing, context/queue, program builds with the binary cache, buffers,
// kernels and events. See runtime.hpp.
#include "tessera_opencl/runtime.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>

#include "tessera_opencl/regular_file.hpp"

namespace tessera::opencl {

std::string cl_error_name(cl_int code) {
  switch (code) {
#define TSR_CL_CASE(x) \
  case x:              \
    return #x;
    TSR_CL_CASE(CL_SUCCESS)
    TSR_CL_CASE(CL_DEVICE_NOT_FOUND)
    TSR_CL_CASE(CL_DEVICE_NOT_AVAILABLE)
    TSR_CL_CASE(CL_COMPILER_NOT_AVAILABLE)
    TSR_CL_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TSR_CL_CASE(CL_OUT_OF_RESOURCES)
    TSR_CL_CASE(CL_OUT_OF_HOST_MEMORY)
    TSR_CL_CASE(CL_PROFILING_INFO_NOT_AVAILABLE)
    TSR_CL_CASE(CL_MEM_COPY_OVERLAP)
    TSR_CL_CASE(CL_IMAGE_FORMAT_MISMATCH)
    TSR_CL_CASE(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    TSR_CL_CASE(CL_BUILD_PROGRAM_FAILURE)
    TSR_CL_CASE(CL_MAP_FAILURE)
    TSR_CL_CASE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    TSR_CL_CASE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    TSR_CL_CASE(CL_COMPILE_PROGRAM_FAILURE)
    TSR_CL_CASE(CL_LINKER_NOT_AVAILABLE)
    TSR_CL_CASE(CL_LINK_PROGRAM_FAILURE)
    TSR_CL_CASE(CL_DEVICE_PARTITION_FAILED)
    TSR_CL_CASE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    TSR_CL_CASE(CL_INVALID_VALUE)
    TSR_CL_CASE(CL_INVALID_DEVICE_TYPE)
    TSR_CL_CASE(CL_INVALID_PLATFORM)
    TSR_CL_CASE(CL_INVALID_DEVICE)
    TSR_CL_CASE(CL_INVALID_CONTEXT)
    TSR_CL_CASE(CL_INVALID_QUEUE_PROPERTIES)
    TSR_CL_CASE(CL_INVALID_COMMAND_QUEUE)
    TSR_CL_CASE(CL_INVALID_HOST_PTR)
    TSR_CL_CASE(CL_INVALID_MEM_OBJECT)
    TSR_CL_CASE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    TSR_CL_CASE(CL_INVALID_IMAGE_SIZE)
    TSR_CL_CASE(CL_INVALID_SAMPLER)
    TSR_CL_CASE(CL_INVALID_BINARY)
    TSR_CL_CASE(CL_INVALID_BUILD_OPTIONS)
    TSR_CL_CASE(CL_INVALID_PROGRAM)
    TSR_CL_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
    TSR_CL_CASE(CL_INVALID_KERNEL_NAME)
    TSR_CL_CASE(CL_INVALID_KERNEL_DEFINITION)
    TSR_CL_CASE(CL_INVALID_KERNEL)
    TSR_CL_CASE(CL_INVALID_ARG_INDEX)
    TSR_CL_CASE(CL_INVALID_ARG_VALUE)
    TSR_CL_CASE(CL_INVALID_ARG_SIZE)
    TSR_CL_CASE(CL_INVALID_KERNEL_ARGS)
    TSR_CL_CASE(CL_INVALID_WORK_DIMENSION)
    TSR_CL_CASE(CL_INVALID_WORK_GROUP_SIZE)
    TSR_CL_CASE(CL_INVALID_WORK_ITEM_SIZE)
    TSR_CL_CASE(CL_INVALID_GLOBAL_OFFSET)
    TSR_CL_CASE(CL_INVALID_EVENT_WAIT_LIST)
    TSR_CL_CASE(CL_INVALID_EVENT)
    TSR_CL_CASE(CL_INVALID_OPERATION)
    TSR_CL_CASE(CL_INVALID_GL_OBJECT)
    TSR_CL_CASE(CL_INVALID_BUFFER_SIZE)
    TSR_CL_CASE(CL_INVALID_MIP_LEVEL)
    TSR_CL_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
    TSR_CL_CASE(CL_INVALID_PROPERTY)
    TSR_CL_CASE(CL_INVALID_IMAGE_DESCRIPTOR)
    TSR_CL_CASE(CL_INVALID_COMPILER_OPTIONS)
    TSR_CL_CASE(CL_INVALID_LINKER_OPTIONS)
    TSR_CL_CASE(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef TSR_CL_CASE
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_UNKNOWN_ERROR(" + std::to_string(code) + ")";
  }
}

void check(cl_int code, const std::string& what, const std::string& device) {
  if (code != CL_SUCCESS) {
    throw ClError(code, what + " on " + device + ": " + cl_error_name(code));
  }
}

namespace {

std::string device_string(cl_device_id id, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(id, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (clGetDeviceInfo(id, param, size, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <typename T>
T device_value(cl_device_id id, cl_device_info param) {
  T value{};
  if (clGetDeviceInfo(id, param, sizeof(T), &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

std::string platform_string(cl_platform_id id, cl_platform_info param) {
  size_t size = 0;
  if (clGetPlatformInfo(id, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (clGetPlatformInfo(id, param, size, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

uint64_t fnv1a(std::string_view data, uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0) {
    return "(no build log)";
  }
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log.empty() ? "(empty build log)" : log;
}

constexpr char kCacheMagic[8] = {'T', 'S', 'R', 'C', 'L', 'B', 'N', '1'};
// A cache file's fields: magic, key size, key, payload size, checksum, payload.
constexpr uint64_t kMaxCacheKeyBytes = uint64_t{1} << 20;
constexpr uint64_t kMaxCachePayloadBytes = uint64_t{1} << 31;
constexpr uint64_t kMaxCacheFileBytes =
    sizeof(kCacheMagic) + 3 * sizeof(uint64_t) + kMaxCacheKeyBytes + kMaxCachePayloadBytes;

// The identity of a cached binary: everything that changes the compiled code.
std::string cache_key(const DeviceInfo& device, const std::string& source,
                      const std::string& options) {
  return device.name + "\n" + device.driver_version + "\n" + device.device_version + "\n" +
         options + "\n" + hex64(fnv1a(source)) + "\n" + std::to_string(source.size());
}

// The ICD loader (and through it the vendor drivers it opened) stays mapped for the life of the
// process once this runtime has used it, as it does in an application that links libOpenCL.
// Otherwise it leaves with the last GPU plugin: drivers' worker threads and exit handlers then
// point into unmapped code, and the loader's platform list, allocated once and never freed, is
// reported as a leak from an unknown module under LeakSanitizer. dladdr finds whichever library
// provides the entry points (libOpenCL.so.1 on Linux, a vendor's libOpenCL.so on Android).
void pin_opencl_loader() {
  static const bool pinned = [] {
    Dl_info info{};
    const auto entry = reinterpret_cast<void*>(&clGetPlatformIDs);
    if (dladdr(entry, &info) == 0 || info.dli_fname == nullptr) return false;
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
  }();
  (void)pinned;
}

}  // namespace

bool DeviceInfo::has_extension(const std::string& ext) const {
  for (const std::string& e : extensions) {
    if (e == ext) return true;
  }
  return false;
}

std::string DeviceInfo::describe() const {
  return "'" + name + "' (" + vendor + ", driver " + driver_version + ")";
}

ProbeResult probe_devices() {
  pin_opencl_loader();
  ProbeResult result;
  cl_uint num_platforms = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (err != CL_SUCCESS || num_platforms == 0) {
    result.error = err == CL_SUCCESS || err == -1001
                       ? "no OpenCL platform is installed (the ICD loader found no driver in "
                         "/etc/OpenCL/vendors)"
                       : "clGetPlatformIDs failed: " + cl_error_name(err);
    return result;
  }
  std::vector<cl_platform_id> platforms(num_platforms);
  clGetPlatformIDs(num_platforms, platforms.data(), nullptr);
  for (size_t p = 0; p < platforms.size(); ++p) {
    cl_platform_id platform = platforms[p];
    cl_uint num_devices = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices) != CL_SUCCESS ||
        num_devices == 0) {
      continue;
    }
    std::vector<cl_device_id> ids(num_devices);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, num_devices, ids.data(), nullptr);
    for (size_t i = 0; i < ids.size(); ++i) {
      const cl_device_id id = ids[i];
      DeviceInfo d;
      d.platform = platform;
      d.id = id;
      d.stable_id = "cl" + std::to_string(p) + "." + std::to_string(i);
      d.platform_name = platform_string(platform, CL_PLATFORM_NAME);
      d.vendor = device_string(id, CL_DEVICE_VENDOR);
      d.name = device_string(id, CL_DEVICE_NAME);
      d.driver_version = device_string(id, CL_DRIVER_VERSION);
      d.device_version = device_string(id, CL_DEVICE_VERSION);
      const auto type = device_value<cl_device_type>(id, CL_DEVICE_TYPE);
      d.kind = (type & CL_DEVICE_TYPE_GPU)   ? "gpu"
               : (type & CL_DEVICE_TYPE_CPU) ? "cpu"
                                             : "accelerator";
      d.compute_units =
          static_cast<int32_t>(device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
      d.global_memory_bytes =
          static_cast<int64_t>(device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE));
      d.local_memory_bytes =
          static_cast<int64_t>(device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE));
      d.max_work_group_size =
          static_cast<int64_t>(device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
      const auto dims = device_value<cl_uint>(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
      if (dims > 0 && dims <= 8) {
        std::vector<size_t> sizes(dims);
        if (clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t) * dims, sizes.data(),
                            nullptr) == CL_SUCCESS) {
          for (size_t s : sizes) d.max_work_item_sizes.push_back(static_cast<int64_t>(s));
        }
      }
      std::istringstream ext(device_string(id, CL_DEVICE_EXTENSIONS));
      for (std::string e; ext >> e;) d.extensions.push_back(e);
      d.image_support = device_value<cl_bool>(id, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE;
      d.fp16 = d.has_extension("cl_khr_fp16");
      result.devices.push_back(std::move(d));
    }
  }
  if (result.devices.empty()) result.error = "OpenCL platforms exist but list no device";
  return result;
}

// ---- Buffer ----

Buffer::Buffer(const Context& context, size_t bytes, cl_mem_flags flags) : bytes_(bytes) {
  cl_int err = CL_SUCCESS;
  // A zero-sized cl_mem is invalid; keep one element so empty tensors still bind.
  mem_ = clCreateBuffer(context.get(), flags, bytes == 0 ? 4 : bytes, nullptr, &err);
  check(err, "clCreateBuffer(" + std::to_string(bytes) + " bytes)", context.device().describe());
}

Buffer::~Buffer() {
  if (mem_) clReleaseMemObject(mem_);
}

Buffer::Buffer(Buffer&& other) noexcept : mem_(other.mem_), bytes_(other.bytes_) {
  other.mem_ = nullptr;
  other.bytes_ = 0;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (mem_) clReleaseMemObject(mem_);
    mem_ = other.mem_;
    bytes_ = other.bytes_;
    other.mem_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

// ---- Event ----

Event::~Event() {
  if (event_) clReleaseEvent(event_);
}

Event::Event(Event&& other) noexcept : event_(other.event_) {
  other.event_ = nullptr;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_) clReleaseEvent(event_);
    event_ = other.event_;
    other.event_ = nullptr;
  }
  return *this;
}

double Event::duration_us() const {
  if (!event_) return 0.0;
  if (clWaitForEvents(1, &event_) != CL_SUCCESS) return 0.0;
  cl_ulong start = 0, end = 0;
  if (clGetEventProfilingInfo(event_, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr) !=
          CL_SUCCESS ||
      clGetEventProfilingInfo(event_, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr) !=
          CL_SUCCESS) {
    return 0.0;
  }
  return end > start ? static_cast<double>(end - start) / 1000.0 : 0.0;
}

// ---- KernelArgs / Kernel ----

void KernelArgs::set(size_t size, const void* value, const char* what) {
  const cl_int err = clSetKernelArg(kernel_.get(), index_, size, value);
  check(err,
        "kernel '" + kernel_.name() + "': setting argument " + std::to_string(index_) + " (" +
            what + ")",
        kernel_.device());
  ++index_;
}

KernelArgs& KernelArgs::buffer(cl_mem mem) {
  set(sizeof(cl_mem), &mem, "buffer");
  return *this;
}

KernelArgs& KernelArgs::i32(int32_t v) {
  const cl_int value = v;
  set(sizeof(value), &value, "int");
  return *this;
}

KernelArgs& KernelArgs::i32x8(const std::array<int32_t, 8>& v) {
  cl_int8 value;
  for (size_t i = 0; i < 8; ++i) value.s[i] = v[i];
  set(sizeof(value), &value, "int8");
  return *this;
}

KernelArgs& KernelArgs::i32x4(int32_t a, int32_t b, int32_t c, int32_t d) {
  cl_int4 value;
  value.s[0] = a;
  value.s[1] = b;
  value.s[2] = c;
  value.s[3] = d;
  set(sizeof(value), &value, "int4");
  return *this;
}

KernelArgs& KernelArgs::f32(float v) {
  const cl_float value = v;
  set(sizeof(value), &value, "float");
  return *this;
}

KernelArgs& KernelArgs::local(size_t bytes) {
  set(bytes, nullptr, "__local");
  return *this;
}

Kernel::Kernel(cl_kernel kernel, std::string name, std::shared_ptr<const void> program_keepalive,
               std::string device)
    : kernel_(kernel),
      name_(std::move(name)),
      program_(std::move(program_keepalive)),
      device_(std::move(device)) {}

Kernel::~Kernel() {
  if (kernel_) clReleaseKernel(kernel_);
}

Kernel::Kernel(Kernel&& other) noexcept
    : kernel_(other.kernel_),
      name_(std::move(other.name_)),
      program_(std::move(other.program_)),
      device_(std::move(other.device_)) {
  other.kernel_ = nullptr;
}

Kernel& Kernel::operator=(Kernel&& other) noexcept {
  if (this != &other) {
    if (kernel_) clReleaseKernel(kernel_);
    kernel_ = other.kernel_;
    name_ = std::move(other.name_);
    program_ = std::move(other.program_);
    device_ = std::move(other.device_);
    other.kernel_ = nullptr;
  }
  return *this;
}

size_t Kernel::max_work_group_size() const {
  size_t size = 0;
  cl_device_id device = nullptr;
  cl_program program = static_cast<cl_program>(const_cast<void*>(program_.get()));
  check(clGetProgramInfo(program, CL_PROGRAM_DEVICES, sizeof(device), &device, nullptr),
        "kernel '" + name_ + "': clGetProgramInfo(CL_PROGRAM_DEVICES)", device_);
  check(clGetKernelWorkGroupInfo(kernel_, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(size), &size,
                                 nullptr),
        "kernel '" + name_ + "': clGetKernelWorkGroupInfo", device_);
  return size;
}

// ---- Program ----

Program::Program(cl_program program, std::string label, std::string device, bool from_cache)
    : handle_(
          program,
          [](const void* p) { clReleaseProgram(static_cast<cl_program>(const_cast<void*>(p))); }),
      label_(std::move(label)),
      device_(std::move(device)),
      from_cache_(from_cache) {}

Kernel Program::kernel(const std::string& name) const {
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(get(), name.c_str(), &err);
  check(err, "kernel '" + name + "' of program " + label_ + ": clCreateKernel", device_);
  return Kernel(k, name, handle_, device_);
}

// ---- Context ----

namespace {

// One cl_context per OpenCL device in the process, shared by every Context on that device: the
// instances of all OpenCL plugins (mali, adreno, ...) then allocate in one context, so a buffer
// one plugin's region wrote is an input another plugin's region reads without the host. The
// registry holds weak references: the context goes when the last Context using it does.
struct SharedContext {
  cl_context context = nullptr;
  ~SharedContext() {
    if (context) clReleaseContext(context);
  }
};

// The registry is an ordinary static: destroyed when this library is unloaded, after the plugins
// that use it (and so every context) are gone. A leaked one would be reported as a leak once the
// library is unmapped.
std::shared_ptr<SharedContext> shared_context(const DeviceInfo& device) {
  static std::mutex mutex;
  static std::map<cl_device_id, std::weak_ptr<SharedContext>> contexts;
  std::lock_guard<std::mutex> lock(mutex);
  std::weak_ptr<SharedContext>& slot = contexts[device.id];
  if (std::shared_ptr<SharedContext> live = slot.lock()) return live;
  cl_int err = CL_SUCCESS;
  const cl_context_properties props[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device.platform), 0};
  auto made = std::make_shared<SharedContext>();
  made->context = clCreateContext(props, 1, &device.id, nullptr, nullptr, &err);
  check(err, "clCreateContext", device.describe());
  slot = made;
  return made;
}

}  // namespace

Context::Context(const DeviceInfo& device, std::string cache_dir)
    : device_(device), cache_dir_(std::move(cache_dir)) {
  std::shared_ptr<SharedContext> shared = shared_context(device_);
  context_ = shared->context;
  shared_ = std::move(shared);
  cl_int err = CL_SUCCESS;
  queue_ = clCreateCommandQueue(context_, device_.id, CL_QUEUE_PROFILING_ENABLE, &err);
  check(err, "clCreateCommandQueue(profiling)", device_.describe());
}

Context::~Context() {
  if (queue_) {
    clFinish(queue_);
    clReleaseCommandQueue(queue_);
  }
}

std::string Context::cache_path(const std::string& source, const std::string& options) const {
  if (cache_dir_.empty()) return "";
  std::string stem;
  for (char c : device_.name) {
    stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
    if (stem.size() >= 40) break;
  }
  return cache_dir_ + "/" + stem + "-" + hex64(fnv1a(cache_key(device_, source, options))) +
         ".clbin";
}

cl_program Context::build_from_source(const std::string& label, const std::string& source,
                                      const std::string& options) {
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context_, 1, &text, &length, &err);
  check(err, "program " + label + ": clCreateProgramWithSource", device_.describe());
  err = clBuildProgram(program, 1, &device_.id, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = build_log(program, device_.id);
    clReleaseProgram(program);
    throw ClError(err, "program " + label + " failed to build on " + device_.describe() + ": " +
                           cl_error_name(err) + " (options '" + options + "')\nbuild log:\n" + log);
  }
  ++stats_.source_builds;
  return program;
}

cl_program Context::load_cached(const std::string& path, const std::string& key,
                                const std::string& options) {
  auto reject = [&]() -> cl_program {
    ++stats_.rejected_binaries;
    return nullptr;
  };
  const RegularFile file = read_regular_file(path, kMaxCacheFileBytes);
  switch (file.state) {
    case RegularFile::State::kMissing:
      return nullptr;  // not cached yet: not a rejection
    case RegularFile::State::kNotRegular:
      // A cache only saves build time: what sits in an entry's place costs a build, not the run.
      ++stats_.ignored_entries;
      std::fprintf(stderr,
                   "opencl: note: kernel cache entry '%s' %s; ignored, building from source\n",
                   path.c_str(), file.problem.c_str());
      return nullptr;
    case RegularFile::State::kTooLarge:
      return reject();
    case RegularFile::State::kRead:
      break;
  }
  const std::string_view bytes = file.bytes;
  size_t at = 0;
  auto take = [&](void* dst, size_t n) {
    if (bytes.size() - at < n) return false;
    std::memcpy(dst, bytes.data() + at, n);
    at += n;
    return true;
  };
  char magic[sizeof(kCacheMagic)];
  uint64_t key_size = 0, payload_size = 0, checksum = 0;
  if (!take(magic, sizeof(magic)) || std::memcmp(magic, kCacheMagic, sizeof(magic)) != 0) {
    return reject();
  }
  if (!take(&key_size, sizeof(key_size)) || key_size > kMaxCacheKeyBytes ||
      bytes.size() - at < key_size || bytes.substr(at, key_size) != key) {
    return reject();  // stale: another driver/device/source hashed to the same file name
  }
  at += key_size;
  if (!take(&payload_size, sizeof(payload_size)) || !take(&checksum, sizeof(checksum)) ||
      payload_size == 0 || payload_size > kMaxCachePayloadBytes) {
    return reject();
  }
  // Exactly the payload is left: fewer bytes is a truncated file, more a damaged one.
  const std::string_view payload = bytes.substr(at);
  if (payload.size() != payload_size || fnv1a(payload) != checksum) return reject();
  const auto* binary = reinterpret_cast<const unsigned char*>(payload.data());
  const size_t size = payload.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl_program program =
      clCreateProgramWithBinary(context_, 1, &device_.id, &size, &binary, &binary_status, &err);
  if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
    if (program) clReleaseProgram(program);
    return reject();
  }
  if (clBuildProgram(program, 1, &device_.id, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    clReleaseProgram(program);
    return reject();
  }
  ++stats_.binary_loads;
  return program;
}

void Context::store_cached(const std::string& path, const std::string& key, cl_program program) {
  // Best effort: a cache that cannot be written only costs build time next run.
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) !=
          CL_SUCCESS ||
      size == 0) {
    return;
  }
  std::string payload(size, '\0');
  unsigned char* ptr = reinterpret_cast<unsigned char*>(payload.data());
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS) {
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(cache_dir_, ec);
  if (ec) return;
  // Write to a unique temp file, then rename: readers never see a half-written file.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                          hex64(fnv1a(key + std::to_string(reinterpret_cast<uintptr_t>(this))));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    const uint64_t key_size = key.size(), payload_size = payload.size(), checksum = fnv1a(payload);
    out.write(kCacheMagic, sizeof(kCacheMagic));
    out.write(reinterpret_cast<const char*>(&key_size), sizeof(key_size));
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(reinterpret_cast<const char*>(&payload_size), sizeof(payload_size));
    out.write(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return;
  }
  ++stats_.writes;
}

Program Context::build(const std::string& label, const std::string& source,
                       const std::string& options) {
  const std::string path = cache_path(source, options);
  const std::string key = cache_key(device_, source, options);
  if (!path.empty()) {
    if (cl_program cached = load_cached(path, key, options)) {
      return Program(cached, label, device_.describe(), /*from_cache=*/true);
    }
  }
  cl_program program = build_from_source(label, source, options);
  if (!path.empty()) store_cached(path, key, program);
  return Program(program, label, device_.describe(), /*from_cache=*/false);
}

Event Context::launch(const Kernel& kernel, const std::vector<size_t>& global,
                      const std::vector<size_t>& local, bool timed) {
  if (global.empty() || global.size() > 3 || (!local.empty() && local.size() != global.size())) {
    throw ClError(CL_INVALID_WORK_DIMENSION, "kernel '" + kernel.name() + "' on " +
                                                 device_.describe() +
                                                 ": bad launch dimensions (internal error)");
  }
  cl_event event = nullptr;
  const cl_int err = clEnqueueNDRangeKernel(
      queue_, kernel.get(), static_cast<cl_uint>(global.size()), nullptr, global.data(),
      local.empty() ? nullptr : local.data(), 0, nullptr, timed ? &event : nullptr);
  if (err == CL_SUCCESS) return Event(event);
  // The message is built only on failure: this is the per-launch hot path.
  std::string dims;
  for (size_t i = 0; i < global.size(); ++i) {
    dims += (i ? "x" : "") + std::to_string(global[i]);
  }
  if (!local.empty()) {
    dims += " local ";
    for (size_t i = 0; i < local.size(); ++i) dims += (i ? "x" : "") + std::to_string(local[i]);
  }
  check(err, "kernel '" + kernel.name() + "' launch (global " + dims + ")", device_.describe());
  return Event();
}

void Context::write(const Buffer& buffer, const void* data, size_t bytes, size_t offset) {
  if (bytes == 0) return;
  check(clEnqueueWriteBuffer(queue_, buffer.get(), CL_FALSE, offset, bytes, data, 0, nullptr,
                             nullptr),
        "clEnqueueWriteBuffer(" + std::to_string(bytes) + " bytes)", device_.describe());
}

void Context::write_and_wait(const Buffer& buffer, const void* data, size_t bytes) {
  if (bytes == 0) return;
  check(clEnqueueWriteBuffer(queue_, buffer.get(), CL_TRUE, 0, bytes, data, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer(" + std::to_string(bytes) + " bytes, blocking)", device_.describe());
}

void Context::read(const Buffer& buffer, void* data, size_t bytes, size_t offset) {
  if (bytes == 0) return;
  check(
      clEnqueueReadBuffer(queue_, buffer.get(), CL_TRUE, offset, bytes, data, 0, nullptr, nullptr),
      "clEnqueueReadBuffer(" + std::to_string(bytes) + " bytes)", device_.describe());
}

void Context::copy(const Buffer& src, const Buffer& dst, size_t bytes, size_t src_offset,
                   size_t dst_offset) {
  copy(src.get(), dst.get(), bytes, src_offset, dst_offset);
}

void Context::copy(cl_mem src, cl_mem dst, size_t bytes, size_t src_offset, size_t dst_offset) {
  if (bytes == 0) return;
  check(clEnqueueCopyBuffer(queue_, src, dst, src_offset, dst_offset, bytes, 0, nullptr, nullptr),
        "clEnqueueCopyBuffer(" + std::to_string(bytes) + " bytes)", device_.describe());
}

void Context::finish() {
  check(clFinish(queue_), "clFinish", device_.describe());
}

void Context::drain() noexcept {
  if (queue_) clFinish(queue_);
}

std::string default_cache_dir(const std::string& explicit_dir) {
  std::string base = explicit_dir;
  if (base.empty()) {
    if (const char* env = std::getenv("TESSERA_CACHE_DIR"); env && *env) base = env;
  }
  if (base.empty()) {
    if (const char* home = std::getenv("HOME"); home && *home) {
      base = std::string(home) + "/.cache/tessera";
    }
  }
  return base.empty() ? "" : base + "/opencl";
}

}  // namespace tessera::opencl
