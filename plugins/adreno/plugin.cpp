// The adreno plugin's C entry: device claim (Qualcomm Adreno by default; the selector "any"
// takes any OpenCL device with image support), per-node support answers, region compile and
// execute. Exceptions become a tsr_status plus message here.
//
// Precision: "fp32" (default) or "fp16" (activations stored in CL_HALF_FLOAT images, arithmetic
// and weights in float; read_imagef converts on load, so no cl_khr_fp16 is needed).
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "ops/op.hpp"
#include "region.hpp"
#include "tessera/plugin_abi.h"

struct tsr_region_handle_s {
  std::unique_ptr<tessera::adreno::CompiledRegion> region;
};

namespace tessera::adreno {
namespace {

using opencl::support::contains_ci;
using opencl::support::write_message;

struct DeviceRuntime {
  std::shared_ptr<opencl::Context> context;
  ProgramPool pool;
};

struct State {
  std::mutex mutex;
  std::vector<opencl::DeviceInfo> devices;  // index = device id handed to core
  std::deque<std::string> strings;          // strings handed out; live until shutdown
  std::map<std::pair<int32_t, std::string>, std::unique_ptr<DeviceRuntime>> runtimes;
};

State& state() {
  static State s;
  return s;
}

const char* keep(const std::string& s) {
  state().strings.push_back(s);
  return state().strings.back().c_str();
}

bool is_adreno(const opencl::DeviceInfo& d) {
  return contains_ci(d.name, "adreno") || contains_ci(d.vendor, "qualcomm");
}

// "" when device `d` may be used under `selector`, else why not.
std::string claim(const opencl::DeviceInfo& d, const std::string& sel) {
  if (!d.image_support) {
    return "device has no OpenCL image support (CL_DEVICE_IMAGE_SUPPORT is false); the adreno "
           "kernels read activations through image2d textures";
  }
  if (sel.empty() || sel == "default") {
    if (!is_adreno(d)) {
      return "not a Qualcomm Adreno device; use the target 'adreno:any' to run the texture "
             "kernels on it";
    }
  } else if (sel != "any" && !contains_ci(d.name, sel)) {
    return "device name does not contain the selector '" + sel + "'";
  }
  const ImageLimits limits = image_limits(d);
  if (limits.max_width <= 0 || limits.max_height <= 0) return "device reports no image2d size";
  return "";
}

tsr_status probe(const char* selector, tsr_device_info* out, int32_t capacity, int32_t* count,
                 tsr_message message) {
  try {
    std::lock_guard<std::mutex> lock(state().mutex);
    const std::string sel = selector ? selector : "";
    opencl::ProbeResult probe = opencl::probe_devices();
    *count = 0;
    state().devices.clear();
    if (probe.devices.empty()) {
      if (capacity > 0) {
        tsr_device_info info{};
        info.struct_size = sizeof(tsr_device_info);
        info.vendor = keep("");
        info.name = keep("(no OpenCL device)");
        info.driver_version = keep("");
        info.kind = keep("gpu");
        info.features = keep("");
        info.score = 0;
        info.unusable_reason = keep("adreno: " + probe.error);
        out[0] = info;
        *count = 1;
      }
      state().devices.emplace_back();  // placeholder so index 0 stays valid and unusable
      return TSR_OK;
    }
    for (size_t i = 0; i < probe.devices.size() && static_cast<int32_t>(i) < capacity; ++i) {
      const opencl::DeviceInfo& d = probe.devices[i];
      std::string features = "opencl";
      if (d.fp16) features += " fp16";
      if (d.image_support) features += " image2d";
      tsr_device_info info{};
      info.struct_size = sizeof(tsr_device_info);
      info.vendor = keep(d.vendor);
      info.name = keep(d.name);
      info.driver_version = keep(d.driver_version);
      info.kind = keep(d.kind);
      info.compute_units = d.compute_units;
      info.memory_bytes = d.global_memory_bytes;
      info.features = keep(features);
      const std::string reason = claim(d, sel);
      info.score = reason.empty() ? (d.kind == "gpu" ? (is_adreno(d) ? 100 : 50) : 10) : 0;
      info.unusable_reason = reason.empty() ? nullptr : keep("adreno: " + reason);
      out[i] = info;
      *count = static_cast<int32_t>(i + 1);
      // Unusable devices keep their slot (ids are indices) but carry no cl_device_id.
      state().devices.push_back(reason.empty() ? d : opencl::DeviceInfo{});
    }
    return TSR_OK;
  } catch (const std::exception& e) {
    write_message(message, std::string("adreno: probe failed: ") + e.what());
    return TSR_ERROR;
  }
}

const opencl::DeviceInfo* device_at(int32_t device) {
  if (device < 0 || device >= static_cast<int32_t>(state().devices.size())) return nullptr;
  const opencl::DeviceInfo& d = state().devices[static_cast<size_t>(device)];
  return d.id ? &d : nullptr;
}

tsr_status query_node(int32_t device, const tsr_region* region, int32_t node,
                      tsr_support* support) {
  support->supported = 0;
  support->preferred_layout = TSR_LAYOUT_IMAGE2D;
  support->cost_us = 0.0;
  support->reason[0] = '\0';
  auto say = [&](const std::string& text) {
    std::snprintf(support->reason, sizeof(support->reason), "%s", text.c_str());
  };
  try {
    std::lock_guard<std::mutex> lock(state().mutex);
    const opencl::DeviceInfo* d = device_at(device);
    if (!d) {
      say("adreno: device " + std::to_string(device) + " is not a usable OpenCL device");
      return TSR_OK;
    }
    if (!region || node < 0 || node >= region->num_nodes) {
      say("adreno: node index out of range");
      return TSR_INVALID_ARGUMENT;
    }
    NodeView view(*region, node);
    const OpLowering* op = find_lowering(view.op_type());
    if (!op) {
      say("adreno has no kernel for op '" + view.op_type() + "'");
      return TSR_OK;
    }
    const Device dev{*d, image_limits(*d)};
    const std::string reason = op->check(view, dev);
    if (!reason.empty()) {
      say("adreno " + view.op_type() + ": " + reason);
      return TSR_OK;
    }
    support->supported = 1;
    const std::string op_type = view.op_type();
    if (op_type == "Gemm" || op_type == "Flatten" || op_type == "Reshape") {
      support->preferred_layout = TSR_LAYOUT_NCHW;
      say("runs on NCHW buffers: the 4-D texture layout does not fit its operands");
    }
    // Rough: a launch (~10 us) plus output bytes at ~10 GB/s.
    support->cost_us = 10.0 + static_cast<double>(numel_of(view.output(0))) * 4.0 / 1e4;
    return TSR_OK;
  } catch (const std::exception& e) {
    say(std::string("adreno: ") + e.what());
    return TSR_OK;
  }
}

tsr_status compile_region(int32_t device, const tsr_region* region,
                          const tsr_compile_options* options, tsr_region_handle* handle,
                          tsr_message message) {
  *handle = nullptr;
  try {
    std::lock_guard<std::mutex> lock(state().mutex);
    const opencl::DeviceInfo* d = device_at(device);
    if (!d) {
      write_message(message, "adreno: device " + std::to_string(device) + " is not usable");
      return TSR_INVALID_ARGUMENT;
    }
    // fp16 and fp16-acc32 both store activations in half-float images (CL_HALF_FLOAT, read and
    // written through read_imagef/write_imagef) and compute in float: that is fp16-acc32 exactly,
    // and what fp16 means on devices without cl_khr_fp16. Half arithmetic (read_imageh) where the
    // extension exists is not written yet.
    const std::string precision = options && options->precision ? options->precision : "fp32";
    if (precision != "fp32" && precision != "fp16" && precision != "fp16-acc32") {
      write_message(message, "adreno: precision '" + precision +
                                 "' is not implemented (fp32, fp16, fp16-acc32)");
      return TSR_UNSUPPORTED;
    }
    const Device dev{*d, image_limits(*d)};
    for (int32_t i = 0; i < region->num_nodes; ++i) {
      NodeView view(*region, i);
      const OpLowering* op = find_lowering(view.op_type());
      const std::string reason =
          op ? op->check(view, dev) : "no kernel for op '" + view.op_type() + "'";
      if (!reason.empty()) {
        write_message(message, "adreno: " + view.where() + ": " + reason);
        return TSR_UNSUPPORTED;
      }
    }
    const std::string cache_dir =
        opencl::default_cache_dir(options && options->cache_dir ? options->cache_dir : "");
    auto& runtime = state().runtimes[{device, cache_dir}];
    if (!runtime) {
      runtime = std::make_unique<DeviceRuntime>();
      runtime->context = std::make_shared<opencl::Context>(*d, cache_dir);
    }
    Lowering lowering(*region, runtime->context, runtime->pool, precision != "fp32");
    lowering.requests = opencl::support::requested_configs(options);
    const char* dump = opencl::support::dump_dir(options);
    lowering.record_sources = dump != nullptr;
    for (int32_t i = 0; i < region->num_nodes; ++i) {
      NodeView view(*region, i);
      lowering.current_node = view.name();
      try {
        find_lowering(view.op_type())->lower(lowering, view, i);
      } catch (const opencl::ClError& e) {
        throw opencl::ClError(e.code(), view.where() + ": " + e.what());
      }
    }
    auto compiled = lowering.finish();
    if (dump) lowering.sources.write(dump, "adreno");
    *handle = new tsr_region_handle_s{std::move(compiled)};
    return TSR_OK;
  } catch (const opencl::ClError& e) {
    write_message(message, std::string("adreno: ") + e.what());
    return e.code() == CL_OUT_OF_HOST_MEMORY || e.code() == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
                   e.code() == CL_OUT_OF_RESOURCES
               ? TSR_OUT_OF_MEMORY
               : TSR_COMPILE_FAILED;
  } catch (const std::bad_alloc&) {
    write_message(message, "adreno: out of host memory while compiling");
    return TSR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    write_message(message, std::string("adreno: ") + e.what());
    return TSR_COMPILE_FAILED;
  }
}

tsr_status execute_region(tsr_region_handle handle, const void* const* inputs, void* const* outputs,
                          tsr_message message) {
  if (!handle || !handle->region) {
    write_message(message, "adreno: null region handle");
    return TSR_INVALID_ARGUMENT;
  }
  try {
    handle->region->execute(inputs, outputs);
    return TSR_OK;
  } catch (const opencl::ClError& e) {
    write_message(message, std::string("adreno: ") + e.what());
    return TSR_DEVICE_LOST;
  } catch (const std::exception& e) {
    write_message(message, std::string("adreno: ") + e.what());
    return TSR_ERROR;
  }
}

void release_region(tsr_region_handle handle) {
  delete handle;
}

void shutdown() {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().runtimes.clear();
  state().devices.clear();
  state().strings.clear();
}

tsr_status last_profile(tsr_region_handle handle, double* times_us, int32_t capacity,
                        int32_t* count) {
  if (!handle || !handle->region) return TSR_INVALID_ARGUMENT;
  const auto& t = handle->region->last_times_us;
  const int32_t n = std::min<int32_t>(capacity, static_cast<int32_t>(t.size()));
  for (int32_t i = 0; i < n; ++i) times_us[i] = t[static_cast<size_t>(i)];
  *count = n;
  return TSR_OK;
}

// Schedules of the node's op (the heuristic's first), the canonical key and flops. Nodes the
// plugin cannot run or does not tune answer num_schedules = 0.
tsr_status describe_node(int32_t device, const tsr_region* region, int32_t node,
                         tsr_node_tuning* tuning, tsr_message message) {
  try {
    std::lock_guard<std::mutex> lock(state().mutex);
    const opencl::DeviceInfo* d = device_at(device);
    if (!d) {
      write_message(message, "adreno: device " + std::to_string(device) + " is not usable");
      return TSR_INVALID_ARGUMENT;
    }
    if (!region || !tuning || node < 0 || node >= region->num_nodes) {
      write_message(message, "adreno: node index out of range");
      return TSR_INVALID_ARGUMENT;
    }
    NodeView view(*region, node);
    const Device dev{*d, image_limits(*d)};
    std::vector<Config> options;
    const OpLowering* op = find_lowering(view.op_type());
    const TuningOptionsFn fn = find_tuning(view.op_type());
    if (op && fn && op->check(view, dev).empty()) options = fn(view, dev);
    static thread_local opencl::support::TuningAnswer answer;
    answer.fill(tuning, opencl::support::workload_key(view, "image2d"),
                opencl::support::node_flops(view), options);
    return TSR_OK;
  } catch (const std::exception& e) {
    write_message(message, std::string("adreno: ") + e.what());
    return TSR_ERROR;
  }
}

const tsr_plugin kPlugin = {
    sizeof(tsr_plugin),
    TESSERA_PLUGIN_ABI_MAJOR,
    TESSERA_PLUGIN_ABI_MINOR,
    "adreno",
    "0.1.0",
    "OpenCL image2d (texture) kernels in an NCHW4c texel layout for Qualcomm Adreno GPUs "
    "('adreno:any' for any OpenCL device with images)",
    probe,
    query_node,
    compile_region,
    execute_region,
    release_region,
    shutdown,
    last_profile,
    describe_node,
};

}  // namespace
}  // namespace tessera::adreno

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t host_abi_major,
                                                                        uint32_t host_abi_minor) {
  (void)host_abi_minor;
  if (host_abi_major != TESSERA_PLUGIN_ABI_MAJOR) return nullptr;
  return &tessera::adreno::kPlugin;
}
