// Finding a device's CLML interface: the two exported entry points (from the process's OpenCL
// library, else through clGetExtensionFunctionAddressForPlatform), the interface versions the
// driver offers, and the newest one this plugin has a table for (majors 3 and 2), normalised
// into one struct of function pointers so the rest of the plugin does not care which major it got.
#pragma once

#include <memory>
#include <string>

#include "api/clml_api.h"
#include "tessera_opencl/runtime.hpp"

namespace tessera::clml {

// The functions the plugin calls, taken from the chosen interface table.
struct Api {
  int major = 0;
  int minor = 0;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpConvolutionForwardQCOM) create_convolution = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpFusedConvolutionActivationForwardQCOM)
      create_convolution_activation = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpBatchNormForwardQCOM) create_batchnorm = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpActivationForwardQCOM) create_activation = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpPoolingForwardQCOM) create_pooling = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpFullyConnectedQCOM) create_fully_connected = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpBinaryQCOM) create_binary = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpSoftmaxQCOM) create_softmax = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpConcatQCOM) create_concat = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpReshapeQCOM) create_reshape = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpResizeBilinearQCOM) create_resize_bilinear = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpPadQCOM) create_pad = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLOpClipQCOM) create_clip = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLTensorQCOM) create_tensor = nullptr;
  decltype(CLMLInterfaceV3QCOM::clGetMLTensorMemorySizeQCOM) tensor_memory_size = nullptr;
  decltype(CLMLInterfaceV3QCOM::clReleaseMLOpQCOM) release_op = nullptr;
  decltype(CLMLInterfaceV3QCOM::clReleaseMLTensorQCOM) release_tensor = nullptr;
  decltype(CLMLInterfaceV3QCOM::clEnqueueMLOpQCOM) enqueue_op = nullptr;
  decltype(CLMLInterfaceV3QCOM::clEnqueueReadMLTensorDataQCOM) read_tensor = nullptr;
  decltype(CLMLInterfaceV3QCOM::clEnqueueWriteMLTensorDataQCOM) write_tensor = nullptr;
  decltype(CLMLInterfaceV3QCOM::clEnqueueCopyMLTensorDataQCOM) copy_tensor = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLTuningCacheQCOM) create_tuning_cache = nullptr;
  decltype(CLMLInterfaceV3QCOM::clTuneMLOpQCOM) tune_op = nullptr;
  decltype(CLMLInterfaceV3QCOM::clSaveMLTuningCacheQCOM) save_tuning_cache = nullptr;
  decltype(CLMLInterfaceV3QCOM::clLoadMLTuningCacheQCOM) load_tuning_cache = nullptr;
  decltype(CLMLInterfaceV3QCOM::clReleaseMLTuningCacheQCOM) release_tuning_cache = nullptr;
  decltype(CLMLInterfaceV3QCOM::clCreateMLTensorMemoryDescriptorSetQCOM) create_desc_set = nullptr;
  decltype(CLMLInterfaceV3QCOM::clReleaseMLTensorMemoryDescriptorSetQCOM) release_desc_set =
      nullptr;
  decltype(CLMLInterfaceV3QCOM::clUpdateMLTensorMemoryDescriptorSetQCOM) update_desc_set = nullptr;
};

struct Interface {
  std::shared_ptr<const Api> api;  // null when unusable
  std::string offered;             // "3.0, 2.1" as the driver listed them
  std::string reason;              // why unusable, "" when api is set
};

// The interface of `device` (cached per platform: the entry points and tables are the driver's).
// Never throws. A device without the cl_qcom_ml_ops extension, an Adreno older than the 6xx
// series, a driver whose entry points cannot be found or that offers no major this plugin has a
// table for gets a reason and no api.
Interface find_interface(const opencl::DeviceInfo& device);

// "CL_ML_OP_NOT_ACCELERATED_QCOM" for CLML's own codes, else the OpenCL name.
std::string clml_error_name(cl_int code);

}  // namespace tessera::clml
