// Vulkan devices: the VkInstance of one plugin instance (with the Khronos validation layer when
// the target asks for it), what every physical device offers (PhysicalDevice: limits, features,
// driver), and the logical device compiled regions run on (Device: queue, command pool, memory
// types, shader modules, pipeline cache).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vk_api.hpp"

namespace tessera::vulkan {

// A driver call the target asks to fail (target option `inject_fault`), so tests see how a
// driver failure is reported: the error names the node, and the process goes on.
enum class Fault { kNone, kAlloc, kPipeline, kSubmit };

// The target options of one plugin instance, parsed once (plugin.cpp check_options).
struct Options {
  bool validation = false;  // enable VK_LAYER_KHRONOS_validation; any message fails the call
  Fault fault = Fault::kNone;
  // false (target option `shader_int64=off`): devices are used as if they lacked shaderInt64, so
  // tests see the ops whose shaders compute in int64_t refused with the reason on any device.
  bool shader_int64 = true;
};

// Messages of the validation layer, collected by the debug messenger.
class ValidationLog {
 public:
  void add(std::string message);
  // Every message since the last take().
  std::vector<std::string> take();

 private:
  std::mutex mutex_;
  std::vector<std::string> messages_;
};

// What one physical device offers, as probed.
struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string id;  // "vk<index in the loader's enumeration>"
  std::string name;
  std::string vendor;  // "<vendor> (Vulkan)", the key targets/devices families match
  std::string driver;  // driver name and version
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0;
  int32_t compute_queue_family = -1;  // -1: none
  int64_t device_local_bytes = 0;
  uint32_t subgroup_size = 0;
  uint32_t shared_memory_bytes = 0;
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_size[3] = {0, 0, 0};
  uint32_t max_workgroup_count[3] = {0, 0, 0};
  uint32_t max_storage_buffer_range = 0;
  uint32_t max_bound_descriptor_sets = 0;
  uint32_t max_storage_buffers_per_stage = 0;
  uint32_t max_specialization_bytes = 0;  // not a Vulkan limit: spec data is unbounded
  float timestamp_period_ns = 0;
  uint32_t timestamp_bits = 0;  // of the compute queue family; 0: no timestamps
  bool storage_16bit = false;   // storageBuffer16BitAccess
  bool storage_8bit = false;    // storageBuffer8BitAccess
  bool shader_float16 = false;  // shaderFloat16
  bool shader_int8 = false;     // shaderInt8
  bool shader_int64 = false;    // shaderInt64: the value shaders (cast, compare, ...) use int64_t
  bool integer_dot_product = false;
  bool cooperative_matrix = false;     // VK_KHR_cooperative_matrix
  bool cooperative_matrix_nv = false;  // VK_NV_cooperative_matrix
  std::vector<std::string> extensions;
  std::string unusable_reason;  // empty: usable

  bool has_extension(const std::string& name) const;
  // "fp16 storage16 int8 ..." for tessera info.
  std::string features() const;
  // Subgroup, shared memory, work-group limits as text for tessera info.
  std::string limits() const;
};

// The VkInstance of one plugin instance and the physical devices it sees.
class Instance {
 public:
  explicit Instance(const Options& options);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  // Empty when devices could be listed; else why not (no loader, no driver, no layer).
  const std::string& problem() const { return problem_; }
  const std::vector<PhysicalDevice>& devices() const { return devices_; }
  const PhysicalDevice* find(const std::string& id) const;

  const Loader& loader() const { return loader_; }
  const InstanceFunctions& vki() const { return vki_; }
  VkInstance handle() const { return instance_; }
  const Options& options() const { return options_; }
  ValidationLog& validation_log() { return log_; }
  // Throws Failure naming `what` and the messages when validation is on and the layer spoke.
  void check_validation(const std::string& what);

 private:
  void create_instance();
  void enumerate();
  PhysicalDevice describe(VkPhysicalDevice handle, size_t index) const;

  Options options_;
  Loader loader_;
  InstanceFunctions vki_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  ValidationLog log_;
  std::vector<PhysicalDevice> devices_;
  std::string problem_;
};

// A buffer and its memory. Storage buffers live in device-local memory; staging buffers for a
// region's inputs and outputs in host-visible, coherent memory (mapped while they live).
class Device;
struct Buffer {
  Buffer(Device& device, uint64_t bytes, bool host_visible, const std::string& what);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Device& device;
  VkBuffer handle = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t bytes = 0;
  void* mapped = nullptr;  // host-visible buffers only
};

// The logical device of one physical device, for one plugin instance: every region compiled for
// the device shares it (queue submissions are serialised by queue_mutex).
class Device {
 public:
  Device(Instance& instance, const PhysicalDevice& physical);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Instance& instance() { return instance_; }
  const PhysicalDevice& physical() const { return physical_; }
  const DeviceFunctions& vk() const { return vk_; }
  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  VkCommandPool command_pool() const { return command_pool_; }
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }
  std::mutex& queue_mutex() { return queue_mutex_; }
  std::mutex& pool_mutex() { return pool_mutex_; }

  // A memory type index with `required` flags (preferring `preferred` too) among `type_bits`.
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                       VkMemoryPropertyFlags preferred) const;
  // The shader module of embedded SPIR-V `name` (shaders/<name>.comp), made once.
  VkShaderModule shader(const std::string& name);
  // Loads the pipeline cache file `path` (keyed by device, driver and shaders) if it exists and
  // remembers it; save_pipeline_cache writes the cache there (a new file renamed into place).
  void use_pipeline_cache_file(const std::string& path);
  void save_pipeline_cache();

 private:
  Instance& instance_;
  PhysicalDevice physical_;
  DeviceFunctions vk_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  std::map<std::string, VkShaderModule> shaders_;
  std::string cache_file_;
  std::mutex queue_mutex_;
  std::mutex pool_mutex_;
};

}  // namespace tessera::vulkan
