// The mali plugin's C entry: device claim (ARM Mali by default, any OpenCL device with the
// selector "any"), per-node support answers, region compile and execute. Everything C++ stays on
// this side: exceptions become a tsr_status plus message here.
//
// Environment: TESSERA_MALI_BUILD_OPTIONS is appended to every kernel build (for experiments
// and for tests that force a build failure).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "ops/op.hpp"
#include "region.hpp"
#include "tessera/plugin_abi.h"

struct tsr_region_handle_s {
  std::unique_ptr<tessera::mali::CompiledRegion> region;
};

namespace tessera::mali {
namespace {

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

using opencl::support::contains_ci;
using opencl::support::write_message;

bool is_mali(const opencl::DeviceInfo& d) {
  return contains_ci(d.name, "mali") || contains_ci(d.vendor, "mali");
}

tsr_status probe(const char* selector, tsr_device_info* out, int32_t capacity, int32_t* count,
                 tsr_message message) {
  try {
    std::lock_guard<std::mutex> lock(state().mutex);
    const std::string sel = selector ? selector : "";
    opencl::ProbeResult probe = opencl::probe_devices();
    *count = 0;
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
        info.unusable_reason = keep("mali: " + probe.error);
        out[0] = info;
        *count = 1;
      }
      state().devices.clear();
      state().devices.emplace_back();  // placeholder so index 0 stays valid and unusable
      return TSR_OK;
    }
    state().devices = probe.devices;
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
      std::string reason;
      if (sel.empty() || sel == "default") {
        if (!is_mali(d)) {
          reason = "not an ARM Mali device; use the target 'mali:any' to run mali kernels on it";
        }
      } else if (sel != "any" && !contains_ci(d.name, sel)) {
        reason = "device name does not contain the selector '" + sel + "'";
      }
      info.score = reason.empty() ? (d.kind == "gpu" ? (is_mali(d) ? 100 : 50) : 10) : 0;
      info.unusable_reason = reason.empty() ? nullptr : keep("mali: " + reason);
      out[i] = info;
      *count = static_cast<int32_t>(i + 1);
    }
    return TSR_OK;
  } catch (const std::exception& e) {
    write_message(message, std::string("mali: probe failed: ") + e.what());
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
  support->preferred_layout = TSR_LAYOUT_NCHW;
  support->cost_us = 0.0;
  support->reason[0] = '\0';
  auto say = [&](const std::string& text) {
    std::snprintf(support->reason, sizeof(support->reason), "%s", text.c_str());
  };
  try {
    std::lock_guard<std::mutex> lock(state().mutex);
    const opencl::DeviceInfo* d = device_at(device);
    if (!d) {
      say("mali: device " + std::to_string(device) + " is not a probed OpenCL device");
      return TSR_OK;
    }
    if (!region || node < 0 || node >= region->num_nodes) {
      say("mali: node index out of range");
      return TSR_INVALID_ARGUMENT;
    }
    NodeView view(*region, node);
    const OpLowering* op = find_lowering(view.op_type());
    if (!op) {
      say("mali has no kernel for op '" + view.op_type() + "'");
      return TSR_OK;
    }
    const std::string reason = op->check(view, *d);
    if (!reason.empty()) {
      say("mali " + view.op_type() + ": " + reason);
      return TSR_OK;
    }
    support->supported = 1;
    // Rough: a launch (~10 us on Mali) plus output bytes at ~10 GB/s.
    int64_t elements = 0;
    for (int32_t i = 0; i < view.num_outputs(); ++i) {
      if (view.output_id(i) >= 0) elements += numel_of(view.output(i));
    }
    support->cost_us = 10.0 + static_cast<double>(elements) * 4.0 / 1e4;
    return TSR_OK;
  } catch (const std::exception& e) {
    say(std::string("mali: ") + e.what());
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
      write_message(message, "mali: device " + std::to_string(device) + " is not usable");
      return TSR_INVALID_ARGUMENT;
    }
    if (options && options->precision && std::strcmp(options->precision, "fp32") != 0) {
      write_message(message, std::string("mali: precision '") + options->precision +
                                 "' is not implemented (fp32 only)");
      return TSR_UNSUPPORTED;
    }
    for (int32_t i = 0; i < region->num_nodes; ++i) {
      NodeView view(*region, i);
      const OpLowering* op = find_lowering(view.op_type());
      const std::string reason =
          op ? op->check(view, *d) : "no kernel for op '" + view.op_type() + "'";
      if (!reason.empty()) {
        write_message(message, "mali: " + view.where() + ": " + reason);
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
    const char* extra = std::getenv("TESSERA_MALI_BUILD_OPTIONS");
    Lowering lowering(*region, runtime->context, runtime->pool, extra ? extra : "");
    lowering.requests = opencl::support::requested_configs(options);
    const char* dump = opencl::support::dump_dir(options);
    lowering.record_sources = dump != nullptr;
    for (int32_t i = 0; i < region->num_nodes; ++i) {
      NodeView view(*region, i);
      lowering.current_node = view.name();
      try {
        find_lowering(view.op_type())->lower(lowering, view, i);
      } catch (const std::exception& e) {
        throw opencl::ClError(CL_BUILD_PROGRAM_FAILURE, view.where() + ": " + e.what());
      }
    }
    auto compiled = lowering.finish();
    if (dump) lowering.sources.write(dump, "mali");
    *handle = new tsr_region_handle_s{std::move(compiled)};
    return TSR_OK;
  } catch (const opencl::ClError& e) {
    write_message(message, std::string("mali: ") + e.what());
    return e.code() == CL_OUT_OF_HOST_MEMORY || e.code() == CL_MEM_OBJECT_ALLOCATION_FAILURE
               ? TSR_OUT_OF_MEMORY
               : TSR_COMPILE_FAILED;
  } catch (const std::bad_alloc&) {
    write_message(message, "mali: out of host memory while compiling");
    return TSR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    write_message(message, std::string("mali: ") + e.what());
    return TSR_COMPILE_FAILED;
  }
}

tsr_status execute_region(tsr_region_handle handle, const void* const* inputs, void* const* outputs,
                          tsr_message message) {
  if (!handle || !handle->region) {
    write_message(message, "mali: null region handle");
    return TSR_INVALID_ARGUMENT;
  }
  try {
    handle->region->execute(inputs, outputs);
    return TSR_OK;
  } catch (const opencl::ClError& e) {
    write_message(message, std::string("mali: ") + e.what());
    return TSR_DEVICE_LOST;
  } catch (const std::exception& e) {
    write_message(message, std::string("mali: ") + e.what());
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
      write_message(message, "mali: device " + std::to_string(device) + " is not usable");
      return TSR_INVALID_ARGUMENT;
    }
    if (!region || !tuning || node < 0 || node >= region->num_nodes) {
      write_message(message, "mali: node index out of range");
      return TSR_INVALID_ARGUMENT;
    }
    NodeView view(*region, node);
    std::vector<Config> options;
    const OpLowering* op = find_lowering(view.op_type());
    const TuningOptionsFn fn = find_tuning(view.op_type());
    if (op && fn && op->check(view, *d).empty()) options = fn(view, *d);
    static thread_local opencl::support::TuningAnswer answer;
    answer.fill(tuning, opencl::support::workload_key(view, "nchw"),
                opencl::support::node_flops(view), options);
    return TSR_OK;
  } catch (const std::exception& e) {
    write_message(message, std::string("mali: ") + e.what());
    return TSR_ERROR;
  }
}

const tsr_plugin kPlugin = {
    sizeof(tsr_plugin),
    TESSERA_PLUGIN_ABI_MAJOR,
    TESSERA_PLUGIN_ABI_MINOR,
    "mali",
    "0.1.0",
    "OpenCL buffer kernels with tunable schedules for ARM Mali GPUs ('mali:any' for any OpenCL "
    "device)",
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
}  // namespace tessera::mali

extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(uint32_t host_abi_major,
                                                                        uint32_t host_abi_minor) {
  if (host_abi_major != TESSERA_PLUGIN_ABI_MAJOR) return nullptr;
  return &tessera::mali::kPlugin;
}
