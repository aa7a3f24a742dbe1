// Loading libvulkan.so.1 and the function tables.
#include "vk_api.hpp"

#include <dlfcn.h>

#include <string>

#include "tessera/plugin.hpp"

namespace tessera::vulkan {

namespace {
// This library's own folder, to find a libvulkan.so.1 carried beside it (tools/bundle.sh puts
// it two levels up, in lib/, which the run path $ORIGIN/../.. already covers for dlopen).
std::string own_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&own_dir), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}
}  // namespace

Loader::Loader() {
  // The run path ($ORIGIN, $ORIGIN/../..) and the system first, then this folder explicitly.
  for (const std::string& name : {std::string("libvulkan.so.1"), own_dir() + "/libvulkan.so.1",
                                  own_dir() + "/../../libvulkan.so.1"}) {
    library_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library_ != nullptr) break;
  }
  if (library_ == nullptr) {
    const char* why = dlerror();
    problem_ = std::string("no Vulkan loader: dlopen(libvulkan.so.1) failed (") +
               (why ? why : "not found") +
               "); install libvulkan1, or carry libvulkan.so.1 beside the plugin (tools/bundle.sh)";
    return;
  }
  get_instance_proc =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library_, "vkGetInstanceProcAddr"));
  if (get_instance_proc == nullptr) {
    problem_ = "libvulkan.so.1 has no vkGetInstanceProcAddr";
    return;
  }
#define TESSERA_VK_LOAD_GLOBAL(name) \
  name = reinterpret_cast<PFN_##name>(get_instance_proc(VK_NULL_HANDLE, #name));
  TESSERA_VK_GLOBAL_FUNCTIONS(TESSERA_VK_LOAD_GLOBAL)
#undef TESSERA_VK_LOAD_GLOBAL
  if (vkCreateInstance == nullptr || vkEnumerateInstanceLayerProperties == nullptr ||
      vkEnumerateInstanceExtensionProperties == nullptr) {
    problem_ = "the Vulkan loader lacks vkCreateInstance";
  }
}

Loader::~Loader() {
  if (library_ != nullptr) dlclose(library_);
}

void InstanceFunctions::load(const Loader& loader, VkInstance instance) {
#define TESSERA_VK_LOAD_INSTANCE(name)                                                     \
  name = reinterpret_cast<PFN_##name>(loader.get_instance_proc(instance, #name));          \
  if (name == nullptr) {                                                                   \
    throw plugin::Failure(TSR_ERROR, "the Vulkan loader has no instance function " #name); \
  }
  TESSERA_VK_INSTANCE_FUNCTIONS(TESSERA_VK_LOAD_INSTANCE)
#undef TESSERA_VK_LOAD_INSTANCE
  // Present only when VK_EXT_debug_utils was enabled (validation).
  vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      loader.get_instance_proc(instance, "vkCreateDebugUtilsMessengerEXT"));
  vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      loader.get_instance_proc(instance, "vkDestroyDebugUtilsMessengerEXT"));
}

void DeviceFunctions::load(const InstanceFunctions& vki, VkDevice device) {
#define TESSERA_VK_LOAD_DEVICE(name)                                                     \
  name = reinterpret_cast<PFN_##name>(vki.vkGetDeviceProcAddr(device, #name));           \
  if (name == nullptr) {                                                                 \
    throw plugin::Failure(TSR_ERROR, "the Vulkan driver has no device function " #name); \
  }
  TESSERA_VK_DEVICE_FUNCTIONS(TESSERA_VK_LOAD_DEVICE)
#undef TESSERA_VK_LOAD_DEVICE
}

const char* result_name(VkResult result) {
  switch (result) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_NOT_READY:
      return "VK_NOT_READY";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    case VK_INCOMPLETE:
      return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
      return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT:
      return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
      return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
      return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL:
      return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY:
      return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV:
      return "VK_ERROR_INVALID_SHADER_NV";
    default:
      return "VK_ERROR_UNKNOWN";
  }
}

void check(VkResult result, const std::string& what) {
  if (result == VK_SUCCESS) return;
  tsr_status status = TSR_ERROR;
  if (result == VK_ERROR_OUT_OF_HOST_MEMORY || result == VK_ERROR_OUT_OF_DEVICE_MEMORY) {
    status = TSR_OUT_OF_MEMORY;
  } else if (result == VK_ERROR_DEVICE_LOST) {
    status = TSR_DEVICE_LOST;
  }
  throw plugin::Failure(status, what + ": " + result_name(result));
}

}  // namespace tessera::vulkan
