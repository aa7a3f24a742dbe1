// CLML interface lookup (interface.hpp).
#include "interface.hpp"

#include <dlfcn.h>

#include <cctype>
#include <map>
#include <mutex>
#include <vector>

namespace tessera::clml {
namespace {

constexpr const char* kExtension = "cl_qcom_ml_ops";
// CLML ships with Adreno 6xx and later GPUs.
constexpr int kMinAdrenoSeries = 600;

// The Adreno model number in a device name ("QUALCOMM Adreno(TM) 640" -> 640), or 0.
int adreno_model(const std::string& name) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t at = lower.find("adreno");
  if (at == std::string::npos) return 0;
  size_t i = at + 6;
  while (i < lower.size() && !std::isdigit(static_cast<unsigned char>(lower[i]))) ++i;
  int model = 0;
  for (; i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i])) && model < 100000;
       ++i) {
    model = model * 10 + (lower[i] - '0');
  }
  return model;
}

// An entry point of the CLML driver: Qualcomm's libOpenCL exports both names; a driver behind an
// ICD loader (and the test emulator, an OpenCL layer) hands them out as extension functions.
void* entry_point(cl_platform_id platform, const char* name) {
  for (const char* lib : {"libOpenCL.so.1", "libOpenCL.so"}) {
    if (void* handle = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
      void* fn = dlsym(handle, name);
      dlclose(handle);
      if (fn) return fn;
    }
  }
  return clGetExtensionFunctionAddressForPlatform(platform, name);
}

template <class Table>
std::shared_ptr<const Api> from_table(const Table* t) {
  auto api = std::make_shared<Api>();
  api->major = t->majorVersion;
  api->minor = t->minorVersion;
  api->create_convolution = t->clCreateMLOpConvolutionForwardQCOM;
  api->create_convolution_activation = t->clCreateMLOpFusedConvolutionActivationForwardQCOM;
  api->create_batchnorm = t->clCreateMLOpBatchNormForwardQCOM;
  api->create_activation = t->clCreateMLOpActivationForwardQCOM;
  api->create_pooling = t->clCreateMLOpPoolingForwardQCOM;
  api->create_fully_connected = t->clCreateMLOpFullyConnectedQCOM;
  api->create_binary = t->clCreateMLOpBinaryQCOM;
  api->create_softmax = t->clCreateMLOpSoftmaxQCOM;
  api->create_concat = t->clCreateMLOpConcatQCOM;
  api->create_reshape = t->clCreateMLOpReshapeQCOM;
  api->create_resize_bilinear = t->clCreateMLOpResizeBilinearQCOM;
  api->create_pad = t->clCreateMLOpPadQCOM;
  api->create_clip = t->clCreateMLOpClipQCOM;
  api->create_tensor = t->clCreateMLTensorQCOM;
  api->tensor_memory_size = t->clGetMLTensorMemorySizeQCOM;
  api->release_op = t->clReleaseMLOpQCOM;
  api->release_tensor = t->clReleaseMLTensorQCOM;
  api->enqueue_op = t->clEnqueueMLOpQCOM;
  api->read_tensor = t->clEnqueueReadMLTensorDataQCOM;
  api->write_tensor = t->clEnqueueWriteMLTensorDataQCOM;
  api->copy_tensor = t->clEnqueueCopyMLTensorDataQCOM;
  api->create_tuning_cache = t->clCreateMLTuningCacheQCOM;
  api->tune_op = t->clTuneMLOpQCOM;
  api->save_tuning_cache = t->clSaveMLTuningCacheQCOM;
  api->load_tuning_cache = t->clLoadMLTuningCacheQCOM;
  api->release_tuning_cache = t->clReleaseMLTuningCacheQCOM;
  api->create_desc_set = t->clCreateMLTensorMemoryDescriptorSetQCOM;
  api->release_desc_set = t->clReleaseMLTensorMemoryDescriptorSetQCOM;
  api->update_desc_set = t->clUpdateMLTensorMemoryDescriptorSetQCOM;
  const void* required[] = {reinterpret_cast<const void*>(api->create_convolution),
                            reinterpret_cast<const void*>(api->create_tensor),
                            reinterpret_cast<const void*>(api->tensor_memory_size),
                            reinterpret_cast<const void*>(api->release_op),
                            reinterpret_cast<const void*>(api->release_tensor),
                            reinterpret_cast<const void*>(api->enqueue_op),
                            reinterpret_cast<const void*>(api->write_tensor),
                            reinterpret_cast<const void*>(api->read_tensor),
                            reinterpret_cast<const void*>(api->copy_tensor),
                            reinterpret_cast<const void*>(api->create_desc_set),
                            reinterpret_cast<const void*>(api->release_desc_set),
                            reinterpret_cast<const void*>(api->update_desc_set)};
  for (const void* fn : required) {
    if (fn == nullptr) return nullptr;
  }
  return api;
}

Interface lookup(const opencl::DeviceInfo& device) {
  Interface out;
  auto query = reinterpret_cast<tsr_clml_query_versions>(
      entry_point(device.platform, "clQueryMLInterfaceVersionsQCOM"));
  auto get = reinterpret_cast<tsr_clml_get_interface>(
      entry_point(device.platform, "clGetMLInterfaceQCOM"));
  if (!query || !get) {
    out.reason = std::string("the device lists ") + kExtension +
                 " but the OpenCL library exports no clQueryMLInterfaceVersionsQCOM / "
                 "clGetMLInterfaceQCOM";
    return out;
  }
  cl_uint count = 0;
  cl_int err = query(nullptr, nullptr, 0, &count);
  if (err != CL_SUCCESS || count == 0 || count > 64) {
    out.reason = "clQueryMLInterfaceVersionsQCOM failed: " +
                 (err != CL_SUCCESS ? clml_error_name(err) : std::to_string(count) + " versions");
    return out;
  }
  std::vector<cl_int> majors(count), minors(count);
  err = query(majors.data(), minors.data(), count, nullptr);
  if (err != CL_SUCCESS) {
    out.reason = "clQueryMLInterfaceVersionsQCOM failed: " + clml_error_name(err);
    return out;
  }
  int best = -1;
  for (cl_uint i = 0; i < count; ++i) {
    out.offered += (i ? ", " : "") + std::to_string(majors[i]) + "." + std::to_string(minors[i]);
    const bool known = majors[i] == 2 || majors[i] == 3;
    if (known && (best < 0 || majors[i] > majors[best] ||
                  (majors[i] == majors[best] && minors[i] > minors[best]))) {
      best = static_cast<int>(i);
    }
  }
  if (best < 0) {
    out.reason = "the driver offers CLML interface " + out.offered +
                 "; this plugin has tables for majors 2 and 3 (interface too old or too new)";
    return out;
  }
  void* table = nullptr;
  err = get(&table, majors[best], minors[best]);
  if (err != CL_SUCCESS || table == nullptr) {
    out.reason = "clGetMLInterfaceQCOM(" + std::to_string(majors[best]) + "." +
                 std::to_string(minors[best]) + ") failed: " + clml_error_name(err);
    return out;
  }
  out.api = majors[best] == 3 ? from_table(static_cast<const CLMLInterfaceV3QCOM*>(table))
                              : from_table(static_cast<const CLMLInterfaceV2QCOM*>(table));
  if (!out.api || out.api->major != majors[best]) {
    out.api = nullptr;
    out.reason = "the CLML interface table of major " + std::to_string(majors[best]) +
                 " is incomplete (a required function is null or its version field differs)";
  }
  return out;
}

}  // namespace

Interface find_interface(const opencl::DeviceInfo& device) {
  Interface none;
  if (!device.has_extension(kExtension)) {
    none.reason = std::string("device does not list the ") + kExtension +
                  " extension (Qualcomm CLML); use 'adreno' or 'mali' for its OpenCL kernels";
    return none;
  }
  const int model = adreno_model(device.name);
  // Three-digit models name the series (Adreno 540 is a 5xx); "Adreno X1-85" and later names are
  // not numbered that way and are left to the extension and the interface query.
  if (model >= 100 && model < kMinAdrenoSeries) {
    none.reason = "Adreno " + std::to_string(model) +
                  " is older than CLML's minimum (Adreno 6xx); use 'adreno' instead";
    return none;
  }
  static std::mutex mutex;
  static std::map<cl_platform_id, Interface> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device.platform);
  if (it == cache.end()) it = cache.emplace(device.platform, lookup(device)).first;
  return it->second;
}

std::string clml_error_name(cl_int code) {
  if (code == CL_ML_OP_NOT_ACCELERATED_QCOM) return "CL_ML_OP_NOT_ACCELERATED_QCOM";
  if (code == CL_ML_INVALID_TENSOR_LAYOUT_QCOM) return "CL_ML_INVALID_TENSOR_LAYOUT_QCOM";
  return opencl::cl_error_name(code);
}

}  // namespace tessera::clml

#ifndef TESSERA_CLML_USE_SDK
// The tables' slot counts are the ABI (api/clml_api.h): 60 for major 2, 75 for major 3.
static_assert(sizeof(CLMLInterfaceV2QCOM) == 8 + 60 * sizeof(void*), "major 2 table has 60 slots");
static_assert(sizeof(CLMLInterfaceV3QCOM) == 8 + 75 * sizeof(void*), "major 3 table has 75 slots");
static_assert(sizeof(cl_ml_tensor_desc_qcom) == 52, "tensor descriptor layout");
static_assert(sizeof(cl_ml_op_convolution_desc_qcom) == 80, "convolution descriptor layout");
static_assert(sizeof(cl_ml_op_pooling_desc_qcom) == 64, "pooling descriptor layout");
static_assert(sizeof(cl_ml_op_binary_desc_qcom) == 32, "binary descriptor layout");
static_assert(sizeof(cl_ml_op_pad_desc_qcom) == 48, "pad descriptor layout");
#endif
