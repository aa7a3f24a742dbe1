// Header-only C entry shared by the OpenCL plugins: the tsr_plugin function table and its
// functions (create, destroy, probe, query_node, compile_region, execute_region, release_region,
// last_profile, describe_node), the device-claim glue and the per-instance state behind them
// (the target's options, claimed devices by id, strings handed to core, one context and program
// pool per device and cache dir). A plugin names
// itself, its types and the few places where the plugins differ in a Traits struct (see
// PluginEntry); everything C++ stays on this side: exceptions become a tsr_status plus message.
#pragma once

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tessera/plugin_abi.h"
#include "tessera_opencl/plugin_support.hpp"
#include "tessera_opencl/runtime.hpp"

namespace tessera::opencl::support {

// "" when device `d`, the `index`-th the plugin probed, may be used under `selector`, else why
// not: the default selector takes only the plugin's own devices (`native`; `not_native` says why
// not), "any" takes every device, the device's id (`tessera info` shows it) only that device, a
// selector of digits only the device of that index ("0" must not match a name containing a
// zero), any other selector a device whose name contains it.
inline std::string selector_reason(const DeviceInfo& d, size_t index, const std::string& selector,
                                   bool native, const char* not_native) {
  if (selector.empty() || selector == "default") return native ? "" : not_native;
  if (selector == "any" || selector == d.stable_id) return "";
  if (std::all_of(selector.begin(), selector.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // Compared as text without leading zeros: no integer parse to overflow on a long selector.
    const size_t first = std::min(selector.find_first_not_of('0'), selector.size() - 1);
    if (selector.substr(first) == std::to_string(index)) return "";
    return "device index " + std::to_string(index) + " is not the selector's index " +
           selector.substr(first);
  }
  if (!contains_ci(d.name, selector)) {
    return "device name does not contain the selector '" + selector + "'";
  }
  return "";
}

// tsr_support::reason = `text` (truncated to the field).
inline void write_reason(tsr_support* support, const std::string& text) {
  std::snprintf(support->reason, sizeof(support->reason), "%s", text.c_str());
}

// The C entry of one OpenCL plugin. Traits gives:
//   kName, kVersion, kDescription        the tsr_plugin strings; kName prefixes every message
//   kLayout, kLayoutKey                  query_node's preferred layout; workload_key's layout
//   kWrapAllLowerErrors                  every error of an op's lower() is a build failure,
//                                        instead of only ClErrors keeping their code
//   kOutOfResourcesIsOom                 CL_OUT_OF_RESOURCES while compiling is out-of-memory
//   Handle (= tsr_region_handle_s, holding unique_ptr<CompiledRegion> region), ProgramPool,
//   Lowering, Config, Registry (OpRegistry: find_lowering, find_tuning)
//   is_native(d), claim(d, index, selector)  own device?; "" when the index-th probed device is
//                                        usable under selector, else why
//   device(d)                            what OpLowering::check and the tuning functions take
//   fill_support(view, support)          cost (and layout) of a supported node
//   unsupported_precision(options)       "" or why options->precision cannot be compiled
//   check_option(name, value)            "" when the target option is known and its value
//                                        valid, else why not (naming the option and what is
//                                        allowed); create asks it per option
//   make_lowering(region, context, pool, options, target_options)  the instance's options
template <class Traits>
class PluginEntry {
 private:
  using Handle = typename Traits::Handle;

  struct DeviceRuntime {
    std::shared_ptr<Context> context;
    typename Traits::ProgramPool pool;
  };

  // One plugin instance: nothing here is shared with another instance.
  struct Instance {
    std::mutex mutex;
    TargetOptions options;                     // as create accepted them
    std::map<std::string, DeviceInfo> usable;  // devices some probe claimed, by stable id
    std::deque<std::string> strings;           // strings handed out; live until destroy
    std::map<std::pair<std::string, std::string>, std::unique_ptr<DeviceRuntime>> runtimes;
    // describe_node's answer per calling thread, valid until that thread's next call (not
    // thread_local: that would pin the library in memory).
    std::map<std::thread::id, TuningAnswer> answers;

    const char* keep(const std::string& s) {
      strings.push_back(s);
      return strings.back().c_str();
    }
  };

  static Instance* of(tsr_instance instance) { return reinterpret_cast<Instance*>(instance); }

  static std::string prefixed(const std::string& text) {
    return std::string(Traits::kName) + ": " + text;
  }

  static tsr_status create(const tsr_host_api* host, const tsr_target_option* options,
                           int32_t count, tsr_instance* instance, tsr_message message) {
    (void)host;
    try {
      *instance = nullptr;
      auto made = std::make_unique<Instance>();
      for (int32_t i = 0; i < count && options; ++i) {
        const std::string name = options[i].name ? options[i].name : "";
        const std::string value = options[i].value ? options[i].value : "";
        const std::string reason = Traits::check_option(name, value);
        if (!reason.empty()) {
          write_message(message, prefixed(reason));
          return TSR_INVALID_ARGUMENT;
        }
        made->options.emplace_back(name, value);
      }
      *instance = reinterpret_cast<tsr_instance>(made.release());
      return TSR_OK;
    } catch (const std::exception& e) {
      write_message(message, prefixed(e.what()));
      return TSR_ERROR;
    }
  }

  static void destroy(tsr_instance instance) { delete of(instance); }

  static tsr_status probe(tsr_instance instance, const char* selector, tsr_device_info* out,
                          int32_t capacity, int32_t* count, tsr_message message) {
    try {
      Instance& s = *of(instance);
      std::lock_guard<std::mutex> lock(s.mutex);
      const std::string sel = selector ? selector : "";
      ProbeResult probe = probe_devices();
      *count = 0;
      if (probe.devices.empty()) {
        if (capacity > 0) {
          tsr_device_info info{};
          info.struct_size = sizeof(tsr_device_info);
          info.id = s.keep("none");
          info.vendor = s.keep("");
          info.name = s.keep("(no OpenCL device)");
          info.driver_version = s.keep("");
          info.kind = s.keep("gpu");
          info.features = s.keep("");
          info.score = 0;
          info.unusable_reason = s.keep(prefixed(probe.error));
          out[0] = info;
          *count = 1;
        }
        return TSR_OK;
      }
      for (size_t i = 0; i < probe.devices.size() && static_cast<int32_t>(i) < capacity; ++i) {
        const DeviceInfo& d = probe.devices[i];
        std::string features = "opencl";
        if (d.fp16) features += " fp16";
        if (d.image_support) features += " image2d";
        tsr_device_info info{};
        info.struct_size = sizeof(tsr_device_info);
        info.id = s.keep(d.stable_id);
        info.vendor = s.keep(d.vendor);
        info.name = s.keep(d.name);
        info.driver_version = s.keep(d.driver_version);
        info.kind = s.keep(d.kind);
        info.compute_units = d.compute_units;
        info.memory_bytes = d.global_memory_bytes;
        info.features = s.keep(features);
        const std::string reason = Traits::claim(d, i, sel);
        info.score =
            reason.empty() ? (d.kind == "gpu" ? (Traits::is_native(d) ? 100 : 50) : 10) : 0;
        info.unusable_reason = reason.empty() ? nullptr : s.keep(prefixed(reason));
        out[i] = info;
        *count = static_cast<int32_t>(i + 1);
        // A device once claimed stays usable in this instance: ids name hardware, and a later
        // probe with another selector does not take it away from regions compiled for it.
        if (reason.empty()) s.usable[d.stable_id] = d;
      }
      return TSR_OK;
    } catch (const std::exception& e) {
      write_message(message, prefixed(std::string("probe failed: ") + e.what()));
      return TSR_ERROR;
    }
  }

  static const DeviceInfo* device_at(Instance& s, const char* device) {
    const auto it = s.usable.find(device ? device : "");
    return it == s.usable.end() ? nullptr : &it->second;
  }

  static std::string no_device(const char* device) {
    return "device '" + std::string(device ? device : "") +
           "' is not a device this instance's probe claimed";
  }

  static tsr_status query_node(tsr_instance instance, const char* device, const tsr_region* region,
                               int32_t node, tsr_support* support) {
    support->supported = 0;
    support->preferred_layout = Traits::kLayout;
    support->cost_us = 0.0;
    support->reason[0] = '\0';
    try {
      Instance& s = *of(instance);
      std::lock_guard<std::mutex> lock(s.mutex);
      const DeviceInfo* d = device_at(s, device);
      if (!d) {
        write_reason(support, prefixed(no_device(device)));
        return TSR_OK;
      }
      if (!region || node < 0 || node >= region->num_nodes) {
        write_reason(support, prefixed("node index out of range"));
        return TSR_INVALID_ARGUMENT;
      }
      NodeView view(*region, node);
      const auto* op = Traits::Registry::find_lowering(view.op_type());
      if (!op) {
        write_reason(support,
                     std::string(Traits::kName) + " has no kernel for op '" + view.op_type() + "'");
        return TSR_OK;
      }
      const auto& dev = Traits::device(*d);
      const std::string reason = op->check(view, dev);
      if (!reason.empty()) {
        write_reason(support, std::string(Traits::kName) + " " + view.op_type() + ": " + reason);
        return TSR_OK;
      }
      support->supported = 1;
      Traits::fill_support(view, support);
      return TSR_OK;
    } catch (const std::exception& e) {
      write_reason(support, prefixed(e.what()));
      return TSR_OK;
    }
  }

  static tsr_status compile_region(tsr_instance instance, const char* device,
                                   const tsr_region* region, const tsr_compile_options* options,
                                   tsr_region_handle* handle, tsr_message message) {
    *handle = nullptr;
    try {
      Instance& s = *of(instance);
      std::lock_guard<std::mutex> lock(s.mutex);
      const DeviceInfo* d = device_at(s, device);
      if (!d) {
        write_message(message, prefixed(no_device(device)));
        return TSR_INVALID_ARGUMENT;
      }
      const std::string precision = Traits::unsupported_precision(options);
      if (!precision.empty()) {
        write_message(message, prefixed(precision));
        return TSR_UNSUPPORTED;
      }
      const auto& dev = Traits::device(*d);
      for (int32_t i = 0; i < region->num_nodes; ++i) {
        NodeView view(*region, i);
        const auto* op = Traits::Registry::find_lowering(view.op_type());
        const std::string reason =
            op ? op->check(view, dev) : "no kernel for op '" + view.op_type() + "'";
        if (!reason.empty()) {
          write_message(message, prefixed(view.where() + ": " + reason));
          return TSR_UNSUPPORTED;
        }
      }
      const std::string cache_dir =
          default_cache_dir(options && options->cache_dir ? options->cache_dir : "");
      auto& runtime = s.runtimes[{d->stable_id, cache_dir}];
      if (!runtime) {
        runtime = std::make_unique<DeviceRuntime>();
        runtime->context = std::make_shared<Context>(*d, cache_dir);
      }
      auto compiled = lower_region(*region, options, s.options, *runtime);
      *handle = new Handle{std::move(compiled)};
      return TSR_OK;
    } catch (const ClError& e) {
      write_message(message, prefixed(e.what()));
      return e.code() == CL_OUT_OF_HOST_MEMORY || e.code() == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
                     (Traits::kOutOfResourcesIsOom && e.code() == CL_OUT_OF_RESOURCES)
                 ? TSR_OUT_OF_MEMORY
                 : TSR_COMPILE_FAILED;
    } catch (const std::bad_alloc&) {
      write_message(message, prefixed("out of host memory while compiling"));
      return TSR_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
      write_message(message, prefixed(e.what()));
      return TSR_COMPILE_FAILED;
    }
  }

  // Lowers every node of `region` and binds its inputs and outputs. A failure drains the queue
  // before the Lowering (and the buffers and host data its enqueued writes use) goes away.
  static auto lower_region(const tsr_region& region, const tsr_compile_options* options,
                           const TargetOptions& target_options, DeviceRuntime& runtime) {
    try {
      typename Traits::Lowering lowering =
          Traits::make_lowering(region, runtime.context, runtime.pool, options, target_options);
      lowering.requests = requested_configs(options);
      const char* dump = dump_dir(options);
      lowering.record_sources = dump != nullptr;
      for (int32_t i = 0; i < region.num_nodes; ++i) {
        NodeView view(region, i);
        lowering.current_node = view.name();
        try {
          Traits::Registry::find_lowering(view.op_type())->lower(lowering, view, i);
        } catch (const ClError& e) {
          throw ClError(Traits::kWrapAllLowerErrors ? CL_BUILD_PROGRAM_FAILURE : e.code(),
                        view.where() + ": " + e.what());
        } catch (const std::exception& e) {
          if (!Traits::kWrapAllLowerErrors) throw;
          throw ClError(CL_BUILD_PROGRAM_FAILURE, view.where() + ": " + e.what());
        }
      }
      auto compiled = [&] {
        try {
          return lowering.finish();
        } catch (const ClError& e) {
          throw ClError(e.code(),
                        "binding the region's inputs and outputs: " + std::string(e.what()));
        }
      }();
      for (int32_t i = 0; i < region.num_nodes; ++i) {
        compiled->node_labels.push_back(NodeView(region, i).where());
      }
      if (dump) lowering.sources.write(dump, Traits::kName);
      return compiled;
    } catch (...) {
      runtime.context->drain();
      throw;
    }
  }

  static tsr_status execute_region(tsr_region_handle handle, const void* const* inputs,
                                   void* const* outputs, tsr_message message) {
    Handle* h = handle;
    if (!h || !h->region) {
      write_message(message, prefixed("null region handle"));
      return TSR_INVALID_ARGUMENT;
    }
    try {
      h->region->execute(inputs, outputs);
      return TSR_OK;
    } catch (const ClError& e) {
      write_message(message, prefixed(e.what()));
      return TSR_DEVICE_LOST;
    } catch (const std::exception& e) {
      write_message(message, prefixed(e.what()));
      return TSR_ERROR;
    }
  }

  static void release_region(tsr_region_handle handle) {
    Handle* h = handle;
    delete h;
  }

  static tsr_status last_profile(tsr_region_handle handle, double* times_us, int32_t capacity,
                                 int32_t* count) {
    Handle* h = handle;
    if (!h || !h->region) return TSR_INVALID_ARGUMENT;
    const auto& t = h->region->last_times_us;
    const int32_t n = std::min<int32_t>(capacity, static_cast<int32_t>(t.size()));
    for (int32_t i = 0; i < n; ++i) times_us[i] = t[static_cast<size_t>(i)];
    *count = n;
    return TSR_OK;
  }

  // Schedules of the node's op (the heuristic's first), the canonical key and flops. Nodes the
  // plugin cannot run or does not tune answer num_schedules = 0.
  static tsr_status describe_node(tsr_instance instance, const char* device,
                                  const tsr_region* region, int32_t node, tsr_node_tuning* tuning,
                                  tsr_message message) {
    try {
      Instance& s = *of(instance);
      std::lock_guard<std::mutex> lock(s.mutex);
      const DeviceInfo* d = device_at(s, device);
      if (!d) {
        write_message(message, prefixed(no_device(device)));
        return TSR_INVALID_ARGUMENT;
      }
      if (!region || !tuning || node < 0 || node >= region->num_nodes) {
        write_message(message, prefixed("node index out of range"));
        return TSR_INVALID_ARGUMENT;
      }
      NodeView view(*region, node);
      const auto& dev = Traits::device(*d);
      std::vector<typename Traits::Config> options;
      const auto* op = Traits::Registry::find_lowering(view.op_type());
      const auto fn = Traits::Registry::find_tuning(view.op_type());
      if (op && fn && op->check(view, dev).empty()) options = fn(view, dev);
      TuningAnswer& answer = s.answers[std::this_thread::get_id()];
      answer.fill(tuning, workload_key(view, Traits::kLayoutKey), node_flops(view), options);
      return TSR_OK;
    } catch (const std::exception& e) {
      write_message(message, prefixed(e.what()));
      return TSR_ERROR;
    }
  }

 public:
  // The table tessera_plugin_entry hands to core.
  static constexpr tsr_plugin kTable = {
      sizeof(tsr_plugin),
      TESSERA_PLUGIN_ABI_MAJOR,
      TESSERA_PLUGIN_ABI_MINOR,
      Traits::kName,
      Traits::kVersion,
      Traits::kDescription,
      create,
      destroy,
      probe,
      query_node,
      compile_region,
      execute_region,
      release_region,
      last_profile,
      describe_node,
  };
};

}  // namespace tessera::opencl::support
