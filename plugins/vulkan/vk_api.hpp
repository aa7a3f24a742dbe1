// The Vulkan entry points the plugin calls, loaded at run time: libvulkan.so.1 is dlopen()ed and
// every function comes through vkGetInstanceProcAddr / vkGetDeviceProcAddr, so the plugin loads
// (and `tessera info` lists it as unusable, with the reason) on a machine without a Vulkan loader.
// The plugin links no Vulkan library.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace tessera::vulkan {

// Global functions (no instance needed).
#define TESSERA_VK_GLOBAL_FUNCTIONS(X)      \
  X(vkCreateInstance)                       \
  X(vkEnumerateInstanceLayerProperties)     \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkEnumerateInstanceVersion)

// Instance-level functions.
#define TESSERA_VK_INSTANCE_FUNCTIONS(X)      \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

// Device-level functions.
#define TESSERA_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                   \
  X(vkGetDeviceQueue)                  \
  X(vkDeviceWaitIdle)                  \
  X(vkCreateBuffer)                    \
  X(vkDestroyBuffer)                   \
  X(vkGetBufferMemoryRequirements)     \
  X(vkAllocateMemory)                  \
  X(vkFreeMemory)                      \
  X(vkBindBufferMemory)                \
  X(vkMapMemory)                       \
  X(vkUnmapMemory)                     \
  X(vkCreateShaderModule)              \
  X(vkDestroyShaderModule)             \
  X(vkCreateDescriptorSetLayout)       \
  X(vkDestroyDescriptorSetLayout)      \
  X(vkCreatePipelineLayout)            \
  X(vkDestroyPipelineLayout)           \
  X(vkCreatePipelineCache)             \
  X(vkDestroyPipelineCache)            \
  X(vkGetPipelineCacheData)            \
  X(vkCreateComputePipelines)          \
  X(vkDestroyPipeline)                 \
  X(vkCreateDescriptorPool)            \
  X(vkDestroyDescriptorPool)           \
  X(vkAllocateDescriptorSets)          \
  X(vkUpdateDescriptorSets)            \
  X(vkCreateCommandPool)               \
  X(vkDestroyCommandPool)              \
  X(vkAllocateCommandBuffers)          \
  X(vkFreeCommandBuffers)              \
  X(vkBeginCommandBuffer)              \
  X(vkEndCommandBuffer)                \
  X(vkCmdBindPipeline)                 \
  X(vkCmdBindDescriptorSets)           \
  X(vkCmdDispatch)                     \
  X(vkCmdPipelineBarrier)              \
  X(vkCmdCopyBuffer)                   \
  X(vkCmdFillBuffer)                   \
  X(vkCmdResetQueryPool)               \
  X(vkCmdWriteTimestamp)               \
  X(vkCreateQueryPool)                 \
  X(vkDestroyQueryPool)                \
  X(vkGetQueryPoolResults)             \
  X(vkCreateFence)                     \
  X(vkDestroyFence)                    \
  X(vkResetFences)                     \
  X(vkWaitForFences)                   \
  X(vkQueueSubmit)

#define TESSERA_VK_DECLARE(name) PFN_##name name = nullptr;

// The loader library and its global functions. One per plugin instance (dlopen is reference
// counted, so instances side by side share the mapping but no state of ours).
class Loader {
 public:
  Loader();
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Empty when the loader is usable; otherwise why not (no libvulkan.so.1, no entry point).
  const std::string& problem() const { return problem_; }
  PFN_vkGetInstanceProcAddr get_instance_proc = nullptr;
  TESSERA_VK_GLOBAL_FUNCTIONS(TESSERA_VK_DECLARE)

 private:
  void* library_ = nullptr;
  std::string problem_;
};

// Instance-level function table.
struct InstanceFunctions {
  TESSERA_VK_INSTANCE_FUNCTIONS(TESSERA_VK_DECLARE)
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
  // Loads every function; throws tessera::plugin::Failure naming the first one missing.
  void load(const Loader& loader, VkInstance instance);
};

// Device-level function table.
struct DeviceFunctions {
  TESSERA_VK_DEVICE_FUNCTIONS(TESSERA_VK_DECLARE)
  void load(const InstanceFunctions& vki, VkDevice device);
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.
const char* result_name(VkResult result);
// Throws tessera::plugin::Failure (status from the result) when `result` is not VK_SUCCESS:
// "<what>: VK_ERROR_...".
void check(VkResult result, const std::string& what);

}  // namespace tessera::vulkan
