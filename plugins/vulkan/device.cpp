// Instance creation (validation layer, debug messenger), physical device probing and the logical
// device regions run on.
#include "device.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include <unistd.h>

#include "shaders.hpp"
#include "tessera/plugin.hpp"

namespace tessera::vulkan {

using plugin::Failure;

namespace {
constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  (void)severity;
  (void)type;
  static_cast<ValidationLog*>(user)->add(data && data->pMessage ? data->pMessage : "(no text)");
  return VK_FALSE;
}

std::string vendor_name(uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x10DE:
      return "NVIDIA";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x1010:
      return "Imagination";
    case 0x144D:
      return "Samsung";
    case 0x10005:
      return "Mesa";
    default: {
      char text[16];
      std::snprintf(text, sizeof(text), "0x%04x", vendor_id);
      return text;
    }
  }
}

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}
}  // namespace

void ValidationLog::add(std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  messages_.push_back(std::move(message));
}

std::vector<std::string> ValidationLog::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(messages_, {});
}

bool PhysicalDevice::has_extension(const std::string& name) const {
  for (const std::string& e : extensions) {
    if (e == name) return true;
  }
  return false;
}

std::string PhysicalDevice::features() const {
  std::string f = "vulkan" + std::to_string(VK_API_VERSION_MAJOR(api_version)) + "." +
                  std::to_string(VK_API_VERSION_MINOR(api_version));
  if (storage_16bit) f += " storage16";
  if (shader_float16) f += " fp16";
  if (storage_8bit) f += " storage8";
  if (shader_int8) f += " int8";
  if (shader_int64) f += " int64";
  if (integer_dot_product) f += " int_dot";
  if (cooperative_matrix) f += " coopmat";
  if (cooperative_matrix_nv) f += " coopmat_nv";
  f += " " + limits();
  return f;
}

std::string PhysicalDevice::limits() const {
  return "subgroup=" + std::to_string(subgroup_size) +
         " shared_mem=" + std::to_string(shared_memory_bytes) +
         " max_wg=" + std::to_string(max_workgroup_invocations);
}

// ---- Instance ----

Instance::Instance(const Options& options) : options_(options) {
  if (!loader_.problem().empty()) {
    problem_ = loader_.problem();
    return;
  }
  try {
    create_instance();
    enumerate();
  } catch (const std::exception& e) {
    problem_ = e.what();
  }
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE && vki_.vkDestroyDebugUtilsMessengerEXT != nullptr) {
    vki_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vki_.vkDestroyInstance(instance_, nullptr);
}

void Instance::create_instance() {
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (loader_.vkEnumerateInstanceVersion != nullptr) {
    loader_.vkEnumerateInstanceVersion(&loader_version);
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tessera";
  app.pEngineName = "tessera-plugin-vulkan";
  app.apiVersion = loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_1;
  if (loader_version < VK_API_VERSION_1_1) {
    throw Failure(TSR_UNSUPPORTED, "the Vulkan loader speaks " + version_text(loader_version) +
                                       "; the plugin needs Vulkan 1.1");
  }
  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  VkDebugUtilsMessengerCreateInfoEXT messenger{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = &on_validation_message;
  messenger.pUserData = &log_;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  if (options_.validation) {
    uint32_t count = 0;
    loader_.vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> found(count);
    loader_.vkEnumerateInstanceLayerProperties(&count, found.data());
    bool present = false;
    for (const VkLayerProperties& l : found)
      present |= std::strcmp(l.layerName, kValidationLayer) == 0;
    if (!present) {
      throw Failure(TSR_UNSUPPORTED, std::string("option validation=on: the layer ") +
                                         kValidationLayer +
                                         " is not installed (Debian: vulkan-validationlayers)");
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    info.pNext = &messenger;  // also reports instance creation itself
  }
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  const VkResult made = loader_.vkCreateInstance(&info, nullptr, &instance_);
  if (made == VK_ERROR_INCOMPATIBLE_DRIVER) {
    throw Failure(TSR_UNSUPPORTED,
                  "no Vulkan driver: vkCreateInstance found no ICD (Debian: mesa-vulkan-drivers "
                  "for lavapipe; a GPU driver's icd.d JSON, or VK_DRIVER_FILES naming it)");
  }
  check(made, "vkCreateInstance");
  vki_.load(loader_, instance_);
  if (options_.validation) {
    check(vki_.vkCreateDebugUtilsMessengerEXT(instance_, &messenger, nullptr, &messenger_),
          "vkCreateDebugUtilsMessengerEXT");
  }
}

void Instance::enumerate() {
  uint32_t count = 0;
  check(vki_.vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(count);
  check(vki_.vkEnumeratePhysicalDevices(instance_, &count, handles.data()),
        "vkEnumeratePhysicalDevices");
  for (size_t i = 0; i < handles.size(); ++i) devices_.push_back(describe(handles[i], i));
  if (devices_.empty()) problem_ = "the Vulkan loader lists no physical device";
}

PhysicalDevice Instance::describe(VkPhysicalDevice handle, size_t index) const {
  PhysicalDevice d;
  d.handle = handle;
  d.id = "vk" + std::to_string(index);
  uint32_t count = 0;
  vki_.vkEnumerateDeviceExtensionProperties(handle, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vki_.vkEnumerateDeviceExtensionProperties(handle, nullptr, &count, extensions.data());
  for (const VkExtensionProperties& e : extensions) d.extensions.emplace_back(e.extensionName);

  VkPhysicalDeviceProperties base{};
  vki_.vkGetPhysicalDeviceProperties(handle, &base);
  d.api_version = base.apiVersion;
  const bool v12 = base.apiVersion >= VK_API_VERSION_1_2;
  const bool v13 = base.apiVersion >= VK_API_VERSION_1_3;

  // Properties: subgroup (1.1), driver (1.2 or VK_KHR_driver_properties).
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  const bool has_driver = v12 || d.has_extension(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (has_driver) subgroup.pNext = &driver;
  vki_.vkGetPhysicalDeviceProperties2(handle, &props);
  const VkPhysicalDeviceLimits& l = base.limits;
  d.name = base.deviceName;
  d.vendor = vendor_name(base.vendorID) + " (Vulkan)";
  d.driver = has_driver ? std::string(driver.driverName) + " " + driver.driverInfo
                        : "driver " + std::to_string(base.driverVersion);
  d.type = base.deviceType;
  d.subgroup_size = subgroup.subgroupSize;
  d.shared_memory_bytes = l.maxComputeSharedMemorySize;
  d.max_workgroup_invocations = l.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    d.max_workgroup_size[i] = l.maxComputeWorkGroupSize[i];
    d.max_workgroup_count[i] = l.maxComputeWorkGroupCount[i];
  }
  d.max_storage_buffer_range = l.maxStorageBufferRange;
  d.max_bound_descriptor_sets = l.maxBoundDescriptorSets;
  d.max_storage_buffers_per_stage = l.maxPerStageDescriptorStorageBuffers;
  d.timestamp_period_ns = l.timestampPeriod;

  // Features: chain only the structs this device knows (validation checks that).
  VkPhysicalDevice16BitStorageFeatures s16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features f16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  void** tail = &features.pNext;
  auto chain = [&tail](auto& s) {
    *tail = &s;
    tail = &s.pNext;
  };
  chain(s16);
  if (v12 || d.has_extension(VK_KHR_8BIT_STORAGE_EXTENSION_NAME)) chain(s8);
  if (v12 || d.has_extension(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) chain(f16);
  if (v13 || d.has_extension(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) chain(dot);
  vki_.vkGetPhysicalDeviceFeatures2(handle, &features);
  d.storage_16bit = s16.storageBuffer16BitAccess;
  d.storage_8bit = s8.storageBuffer8BitAccess;
  d.shader_float16 = f16.shaderFloat16;
  d.shader_int8 = f16.shaderInt8;
  d.shader_int64 = features.features.shaderInt64 && options_.shader_int64;
  d.integer_dot_product = dot.shaderIntegerDotProduct;
  d.cooperative_matrix = d.has_extension("VK_KHR_cooperative_matrix");
  d.cooperative_matrix_nv = d.has_extension("VK_NV_cooperative_matrix");

  uint32_t families = 0;
  vki_.vkGetPhysicalDeviceQueueFamilyProperties(handle, &families, nullptr);
  std::vector<VkQueueFamilyProperties> queues(families);
  vki_.vkGetPhysicalDeviceQueueFamilyProperties(handle, &families, queues.data());
  for (uint32_t i = 0; i < families; ++i) {
    if ((queues[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && d.compute_queue_family < 0) {
      d.compute_queue_family = static_cast<int32_t>(i);
      d.timestamp_bits = queues[i].timestampValidBits;
    }
  }
  VkPhysicalDeviceMemoryProperties memory{};
  vki_.vkGetPhysicalDeviceMemoryProperties(handle, &memory);
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      d.device_local_bytes += static_cast<int64_t>(memory.memoryHeaps[i].size);
    }
  }
  if (d.compute_queue_family < 0) {
    d.unusable_reason = "no queue family with compute";
  } else if (base.apiVersion < VK_API_VERSION_1_1) {
    d.unusable_reason = "Vulkan " + version_text(base.apiVersion) + "; the plugin needs 1.1";
  } else if (l.maxComputeWorkGroupInvocations < 256 || l.maxComputeSharedMemorySize < 16384) {
    d.unusable_reason =
        "compute limits below what the shaders use (256 invocations, 16 KiB "
        "shared memory): " +
        d.limits();
  }
  return d;
}

const PhysicalDevice* Instance::find(const std::string& id) const {
  for (const PhysicalDevice& d : devices_) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

void Instance::check_validation(const std::string& what) {
  if (!options_.validation) return;
  const std::vector<std::string> messages = log_.take();
  if (messages.empty()) return;
  std::string text = what + ": the Vulkan validation layer reported " +
                     std::to_string(messages.size()) + " message(s): " + messages.front();
  if (text.size() > 900) text.resize(900);
  throw Failure(TSR_ERROR, text);
}

// ---- Buffer ----

Buffer::Buffer(Device& d, uint64_t size, bool host_visible, const std::string& what)
    : device(d), bytes(size == 0 ? 4 : size) {
  const DeviceFunctions& vk = device.vk();
  if (device.instance().options().fault == Fault::kAlloc) {
    check(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory for " + what + " (injected fault)");
  }
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vk.vkCreateBuffer(device.handle(), &info, nullptr, &handle), "vkCreateBuffer for " + what);
  VkMemoryRequirements req{};
  vk.vkGetBufferMemoryRequirements(device.handle(), handle, &req);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex =
      host_visible ? device.memory_type(
                         req.memoryTypeBits,
                         VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                   : device.memory_type(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  const VkResult got = vk.vkAllocateMemory(device.handle(), &alloc, nullptr, &memory);
  if (got != VK_SUCCESS) {
    vk.vkDestroyBuffer(device.handle(), handle, nullptr);
    handle = VK_NULL_HANDLE;
    check(got, "vkAllocateMemory of " + std::to_string(req.size) + " bytes for " + what);
  }
  check(vk.vkBindBufferMemory(device.handle(), handle, memory, 0), "vkBindBufferMemory");
  if (host_visible) {
    check(vk.vkMapMemory(device.handle(), memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
  }
}

Buffer::~Buffer() {
  const DeviceFunctions& vk = device.vk();
  if (mapped != nullptr) vk.vkUnmapMemory(device.handle(), memory);
  if (handle != VK_NULL_HANDLE) vk.vkDestroyBuffer(device.handle(), handle, nullptr);
  if (memory != VK_NULL_HANDLE) vk.vkFreeMemory(device.handle(), memory, nullptr);
}

// ---- Device ----

Device::Device(Instance& instance, const PhysicalDevice& physical)
    : instance_(instance), physical_(physical) {
  const InstanceFunctions& vki = instance.vki();
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = static_cast<uint32_t>(physical.compute_queue_family);
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  // Enable the 16-bit features the fp16 shaders use, where the device has them.
  VkPhysicalDevice16BitStorageFeatures s16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  s16.storageBuffer16BitAccess = physical.storage_16bit ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceShaderFloat16Int8Features f16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  f16.shaderFloat16 = physical.shader_float16 ? VK_TRUE : VK_FALSE;
  std::vector<const char*> extensions;
  const bool v12 = physical.api_version >= VK_API_VERSION_1_2;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &s16;
  if (physical.shader_float16) {
    s16.pNext = &f16;
    if (!v12) extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  }
  // shaderInt64 where the device has it: the shaders of non-float values (typed.glsl) compute in
  // int64_t; without it those ops are refused (ops/typed.cpp).
  VkPhysicalDeviceFeatures enabled{};
  enabled.shaderInt64 = physical.shader_int64 ? VK_TRUE : VK_FALSE;
  info.pEnabledFeatures = &enabled;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  check(vki.vkCreateDevice(physical.handle, &info, nullptr, &device_),
        "vkCreateDevice on " + physical.name);
  vk_.load(vki, device_);
  vk_.vkGetDeviceQueue(device_, queue.queueFamilyIndex, 0, &queue_);
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.queueFamilyIndex = queue.queueFamilyIndex;
  check(vk_.vkCreateCommandPool(device_, &pool, nullptr, &command_pool_), "vkCreateCommandPool");
  VkPipelineCacheCreateInfo cache{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  check(vk_.vkCreatePipelineCache(device_, &cache, nullptr, &pipeline_cache_),
        "vkCreatePipelineCache");
  vki.vkGetPhysicalDeviceMemoryProperties(physical.handle, &memory_);
}

Device::~Device() {
  if (device_ == VK_NULL_HANDLE) return;
  vk_.vkDeviceWaitIdle(device_);
  for (auto& [name, module] : shaders_) vk_.vkDestroyShaderModule(device_, module, nullptr);
  if (pipeline_cache_ != VK_NULL_HANDLE)
    vk_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  if (command_pool_ != VK_NULL_HANDLE) vk_.vkDestroyCommandPool(device_, command_pool_, nullptr);
  vk_.vkDestroyDevice(device_, nullptr);
}

uint32_t Device::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                             VkMemoryPropertyFlags preferred) const {
  int32_t fallback = -1;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
    if (!(type_bits & (1u << i)) || (flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback < 0) fallback = static_cast<int32_t>(i);
  }
  if (fallback < 0) {
    throw Failure(TSR_OUT_OF_MEMORY, "no Vulkan memory type with the properties a buffer needs");
  }
  return static_cast<uint32_t>(fallback);
}

VkShaderModule Device::shader(const std::string& name) {
  auto found = shaders_.find(name);
  if (found != shaders_.end()) return found->second;
  const SpirvBlob blob = spirv(name);
  if (blob.words == nullptr) throw Failure(TSR_ERROR, "no embedded shader '" + name + "'");
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = blob.count * sizeof(uint32_t);
  info.pCode = blob.words;
  VkShaderModule module = VK_NULL_HANDLE;
  check(vk_.vkCreateShaderModule(device_, &info, nullptr, &module),
        "vkCreateShaderModule for shaders/" + name + ".comp");
  shaders_[name] = module;
  return module;
}

void Device::use_pipeline_cache_file(const std::string& path) {
  if (path == cache_file_) return;
  cache_file_ = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = data.size();
  info.pInitialData = data.data();
  VkPipelineCache loaded = VK_NULL_HANDLE;
  // A cache the driver does not accept (another driver, a torn file) is ignored: it is only a
  // cache, and the driver checks its header.
  if (vk_.vkCreatePipelineCache(device_, &info, nullptr, &loaded) != VK_SUCCESS) return;
  vk_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  pipeline_cache_ = loaded;
}

void Device::save_pipeline_cache() {
  if (cache_file_.empty()) return;
  size_t size = 0;
  if (vk_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr) != VK_SUCCESS) return;
  std::string data(size, '\0');
  if (vk_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()) != VK_SUCCESS) {
    return;
  }
  // Other processes (tuner workers) read the folder at the same time: write, then rename.
  const std::string temp = cache_file_ + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(size));
    if (!out) return;
  }
  std::rename(temp.c_str(), cache_file_.c_str());
}

}  // namespace tessera::vulkan
