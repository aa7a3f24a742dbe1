// The OpenCL plugins' shared plugin class, on the one plugin SDK (tessera/plugin.hpp): device
// probing and claiming by selector, per-node answers, compile (lowering every node through the
// plugin's op registry), tuning descriptions, target options, and the buffers values between
// regions live in. A plugin names itself, its types and the few places where the plugins differ
// in a Traits struct and defines its entry with TESSERA_DEFINE_PLUGIN(OpenClPlugin<Traits>, ...).
// Each instance (one per target) owns its claimed devices, contexts and program pools.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/plugin.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/lowering.hpp"
#include "tessera_opencl/plugin_support.hpp"
#include "tessera_opencl/runtime.hpp"

namespace tessera::opencl::support {

// tsr_support::reason = `text` (truncated to the field).
void write_reason(tsr_support* support, const std::string& text);

// The configs core asked for, by region node.
std::map<int32_t, RequestedConfig> requested_configs(
    const std::vector<plugin::NodeConfig>& configs);

// A compiled region of an OpenCL plugin (CompiledSteps underneath) seen through the SDK. A
// failing OpenCL call while it runs means the device is gone for this run: TSR_DEVICE_LOST.
template <class Region>
class OpenClRegion : public plugin::CompiledRegion {
 public:
  OpenClRegion(std::unique_ptr<Region> region, const char* plugin)
      : region_(std::move(region)), plugin_(plugin) {}
  void execute(const void* const* inputs, void* const* outputs) override {
    guarded([&] { region_->execute(inputs, outputs); });
  }
  void execute_io(const tsr_io* inputs, const tsr_io* outputs) override {
    guarded([&] { region_->execute(inputs, outputs); });
  }
  std::vector<double> last_profile() override { return region_->last_times_us; }

 private:
  template <class Fn>
  void guarded(Fn&& fn) {
    try {
      fn();
    } catch (const ClError& e) {
      throw plugin::Failure(TSR_DEVICE_LOST, std::string(plugin_) + ": " + e.what());
    } catch (const std::exception& e) {
      throw plugin::Failure(TSR_ERROR, std::string(plugin_) + ": " + e.what());
    }
  }
  std::unique_ptr<Region> region_;
  const char* plugin_;
};

// The plugin class of one OpenCL plugin. Traits gives:
//   kName                                prefixes every message
//   kLayout, kLayoutKey                  query's preferred layout; workload_key's layout
//   kWrapAllLowerErrors                  every error of an op's lower() is a build failure,
//                                        instead of only ClErrors keeping their code
//   kOutOfResourcesIsOom                 CL_OUT_OF_RESOURCES while compiling is out-of-memory
//   ProgramPool                          the plugin's programs
//   select(view, device)                 the op that runs a node (support::select_in over the
//                                        plugin's tables; mali and adreno: select_op, their
//                                        own ops before the shared ops of plugins/opencl/ops)
//   make_lowering(region, context, pool, options)  the Lowering of a region for the precision
//                                        and target options
//   lower_node(lowering, op, view, index)  lowers one node
//   is_native(d), claim(d, index, selector)  own device?; "" when the index-th probed device is
//                                        usable under selector, else why
//   device(d)                            the Device OpLowering::check and tuning functions take
//   fill_support(view, support)          cost (and layout) of a supported node
//   unsupported_precision(precision)     "" or why that precision cannot be compiled
//   check_option(name, value)            "" when the target option is known and its value
//                                        valid, else why not (naming the option and what is
//                                        allowed)
//   fuses_after_conv(op_type)            whether a Conv's kernel computes an activation of this
//                                        op that alone reads its output
template <class Traits>
class OpenClPlugin : public plugin::Plugin {
 public:
  std::vector<plugin::DeviceInfo> probe(const std::string& selector) override {
    ProbeResult probe = probe_devices();
    std::vector<plugin::DeviceInfo> out;
    if (probe.devices.empty()) {
      plugin::DeviceInfo none;
      none.id = "none";
      none.name = "(no OpenCL device)";
      none.kind = "gpu";
      none.score = 0;
      none.unusable_reason = prefixed(probe.error);
      out.push_back(none);
      return out;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < probe.devices.size(); ++i) {
      const DeviceInfo& d = probe.devices[i];
      plugin::DeviceInfo info;
      info.id = d.stable_id;
      info.vendor = d.vendor;
      info.name = d.name;
      info.driver_version = d.driver_version;
      info.kind = d.kind;
      info.compute_units = d.compute_units;
      info.memory_bytes = d.global_memory_bytes;
      info.features = "opencl";
      if (d.fp16) info.features += " fp16";
      if (d.image_support) info.features += " image2d";
      const std::string reason = Traits::claim(d, i, selector);
      info.score = reason.empty() ? (d.kind == "gpu" ? (Traits::is_native(d) ? 100 : 50) : 10) : 0;
      info.unusable_reason = reason.empty() ? "" : prefixed(reason);
      out.push_back(std::move(info));
      // A device once claimed stays usable in this instance: ids name hardware, and a later
      // probe with another selector does not take it away from regions compiled for it. Never
      // replaced: other threads may hold a pointer to it (device_at).
      if (reason.empty()) usable_.emplace(d.stable_id, d);
    }
    return out;
  }

  plugin::Support query(const std::string& device, const plugin::RegionView& region,
                        const plugin::NodeView& node) override {
    try {
      const DeviceInfo* d = device_at(device);
      if (!d) return plugin::Support::no(prefixed(no_device(device)));
      NodeView view(region.raw(), node.index());
      const auto op = Traits::select(view, Traits::device(*d));
      if (!op.lowering) {
        return plugin::Support::no(std::string(Traits::kName) +
                                   (op.known ? " " + view.op_type() + ": " : " has ") + op.reason);
      }
      tsr_support raw{};
      raw.struct_size = sizeof(raw);
      raw.preferred_layout = Traits::kLayout;
      Traits::fill_support(view, &raw);
      plugin::Support yes = plugin::Support::yes(raw.cost_us, raw.reason);
      yes.preferred_layout = static_cast<tsr_layout>(raw.preferred_layout);
      return yes;
    } catch (const std::exception& e) {
      return plugin::Support::no(prefixed(e.what()));
    }
  }

  // Answers over a subgraph that price the activations a plugin computes in a convolution's
  // kernel (Traits::fuses_after_conv: mali's Relu, Clip, LeakyRelu after a Conv whose output
  // nothing else reads) as free.
  std::vector<plugin::Support> query_subgraph(const std::string& device,
                                              const plugin::RegionView& region) override {
    std::vector<plugin::Support> answers = plugin::Plugin::query_subgraph(device, region);
    plugin::mark_fused_readers(
        region, answers, [](const plugin::NodeView& producer, const plugin::NodeView& reader) {
          return producer.op_type() == "Conv" && Traits::fuses_after_conv(reader.op_type());
        });
    return answers;
  }

  std::unique_ptr<plugin::CompiledRegion> compile(const std::string& device,
                                                  const plugin::RegionView& region,
                                                  const plugin::CompileOptions& options) override {
    const DeviceInfo* d = device_at(device);
    if (!d) throw plugin::Failure(TSR_INVALID_ARGUMENT, prefixed(no_device(device)));
    const std::string precision = Traits::unsupported_precision(options.precision);
    if (!precision.empty()) throw plugin::Failure(TSR_UNSUPPORTED, prefixed(precision));
    const tsr_region& raw = region.raw();
    const auto& dev = Traits::device(*d);
    for (int32_t i = 0; i < raw.num_nodes; ++i) {
      NodeView view(raw, i);
      const auto op = Traits::select(view, dev);
      if (!op.lowering) {
        throw plugin::Failure(TSR_UNSUPPORTED, prefixed(view.describe() + ": " + op.reason));
      }
    }
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      DeviceRuntime& runtime = runtime_for(*d, options.cache_dir);
      auto compiled = lower_region(raw, options, runtime);
      using Region = typename decltype(compiled)::element_type;
      return std::make_unique<OpenClRegion<Region>>(std::move(compiled), Traits::kName);
    } catch (const ClError& e) {
      const bool oom = e.code() == CL_OUT_OF_HOST_MEMORY ||
                       e.code() == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
                       (Traits::kOutOfResourcesIsOom && e.code() == CL_OUT_OF_RESOURCES);
      throw plugin::Failure(oom ? TSR_OUT_OF_MEMORY : TSR_COMPILE_FAILED, prefixed(e.what()));
    } catch (const std::bad_alloc&) {
      throw plugin::Failure(TSR_OUT_OF_MEMORY, prefixed("out of host memory while compiling"));
    } catch (const std::exception& e) {
      throw plugin::Failure(TSR_COMPILE_FAILED, prefixed(e.what()));
    }
  }

  // Schedules of the node's op (the heuristic's first), the canonical key and flops. Nodes the
  // plugin cannot run or does not tune list no schedule.
  plugin::NodeTuning describe(const std::string& device, const plugin::RegionView& region,
                              const plugin::NodeView& node) override {
    const DeviceInfo* d = device_at(device);
    if (!d) throw plugin::Failure(TSR_INVALID_ARGUMENT, prefixed(no_device(device)));
    NodeView view(region.raw(), node.index());
    const auto& dev = Traits::device(*d);
    std::vector<typename Traits::Config> configs;
    const auto op = Traits::select(view, dev);
    if (op.lowering && op.tuning) configs = op.tuning(view, dev);
    plugin::NodeTuning tuning;
    tuning.workload_key = workload_key(view, Traits::kLayoutKey);
    tuning.flops = node_flops(view);
    for (const typename Traits::Config& config : configs) {
      plugin::Schedule schedule;
      schedule.name = config.schedule->id;
      const auto& knobs = config.schedule->knobs;
      for (size_t k = 0; k < knobs.size(); ++k) {
        plugin::KnobSpace space;
        space.name = knobs[k].name;
        space.values.assign(knobs[k].candidates.begin(), knobs[k].candidates.end());
        space.default_value = k < config.values.size() ? config.values[k] : 0;
        schedule.knobs.push_back(std::move(space));
      }
      tuning.schedules.push_back(std::move(schedule));
    }
    return tuning;
  }

  void check_options(const std::vector<plugin::TargetOption>& options) override {
    for (const plugin::TargetOption& o : options) {
      const std::string reason = Traits::check_option(o.name, o.value);
      if (!reason.empty()) throw plugin::Failure(TSR_INVALID_ARGUMENT, prefixed(reason));
    }
  }

  // Values between regions stay in cl_mem buffers of the process's one context per device
  // (runtime.cpp), shared by every OpenCL plugin: the domain names the device, and a tsr_buffer
  // of it is the cl_mem.
  std::string buffer_domain(const std::string& device) override {
    const DeviceInfo* d = device_at(device);
    if (!d) return "";
    char domain[64];
    std::snprintf(domain, sizeof(domain), "opencl:%p", static_cast<void*>(d->id));
    return domain;
  }

  tsr_buffer alloc_buffer(const std::string& device, uint64_t bytes) override {
    const DeviceInfo* d = device_at(device);
    if (!d) throw plugin::Failure(TSR_INVALID_ARGUMENT, prefixed(no_device(device)));
    std::lock_guard<std::mutex> lock(mutex_);
    // Any of the instance's runtimes of the device will do: they share the device's context.
    const Context* context = nullptr;
    for (const auto& [key, runtime] : runtimes_) {
      if (key.first == d->stable_id) context = runtime->context.get();
    }
    if (context == nullptr) context = runtime_for(*d, "").context.get();
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context->get(), CL_MEM_READ_WRITE,
                                static_cast<size_t>(std::max<uint64_t>(bytes, 1)), nullptr, &err);
    if (err != CL_SUCCESS) {
      const bool oom = err == CL_OUT_OF_HOST_MEMORY || err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
                       err == CL_OUT_OF_RESOURCES;
      throw plugin::Failure(oom ? TSR_OUT_OF_MEMORY : TSR_ERROR,
                            prefixed("clCreateBuffer(" + std::to_string(bytes) +
                                     " bytes) for a value between regions on " + d->describe() +
                                     ": " + cl_error_name(err)));
    }
    return reinterpret_cast<tsr_buffer>(mem);
  }

  void free_buffer(tsr_buffer buffer) override {
    if (buffer) clReleaseMemObject(reinterpret_cast<cl_mem>(buffer));
  }

 private:
  struct DeviceRuntime {
    std::shared_ptr<Context> context;
    typename Traits::ProgramPool pool;
  };

  static std::string prefixed(const std::string& text) {
    return std::string(Traits::kName) + ": " + text;
  }

  static std::string no_device(const std::string& device) {
    return "device '" + device + "' is not a device this instance's probe claimed";
  }

  const DeviceInfo* device_at(const std::string& device) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = usable_.find(device);
    return it == usable_.end() ? nullptr : &it->second;
  }

  // The instance's context, queue and program pool of device `d` for kernel cache `cache_dir`.
  DeviceRuntime& runtime_for(const DeviceInfo& d, const std::string& cache_dir) {
    const std::string dir = default_cache_dir(cache_dir);
    auto& runtime = runtimes_[{d.stable_id, dir}];
    if (!runtime) {
      runtime = std::make_unique<DeviceRuntime>();
      runtime->context = std::make_shared<Context>(d, dir);
    }
    return *runtime;
  }

  // Lowers every node of `region` and binds its inputs and outputs. A failure drains the queue
  // before the Lowering (and the buffers and host data its enqueued writes use) goes away.
  static auto lower_region(const tsr_region& region, const plugin::CompileOptions& options,
                           DeviceRuntime& runtime) {
    try {
      auto lowering = Traits::make_lowering(region, runtime.context, runtime.pool, options);
      const auto dev = Traits::device(runtime.context->device());
      lowering.requests = requested_configs(options.node_configs);
      lowering.record_sources = !options.dump_dir.empty();
      for (int32_t i = 0; i < region.num_nodes; ++i) {
        NodeView view(region, i);
        lowering.current_node = view.name();
        try {
          const auto op = Traits::select(view, dev);
          Traits::lower_node(lowering, *op.lowering, view, i);
        } catch (const ClError& e) {
          throw ClError(Traits::kWrapAllLowerErrors ? CL_BUILD_PROGRAM_FAILURE : e.code(),
                        view.describe() + ": " + e.what());
        } catch (const std::exception& e) {
          if (!Traits::kWrapAllLowerErrors) throw;
          throw ClError(CL_BUILD_PROGRAM_FAILURE, view.describe() + ": " + e.what());
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
        compiled->node_labels.push_back(NodeView(region, i).describe());
      }
      compiled->profile = options.profile;
      if (!options.dump_dir.empty())
        lowering.sources.write(options.dump_dir.c_str(), Traits::kName);
      return compiled;
    } catch (...) {
      runtime.context->drain();
      throw;
    }
  }

  // Guards the maps below: core serializes an instance's configuration calls, but buffers are
  // allocated and freed from the threads that run sessions.
  std::mutex mutex_;
  std::map<std::string, DeviceInfo> usable_;  // devices some probe claimed, by stable id
  std::map<std::pair<std::string, std::string>, std::unique_ptr<DeviceRuntime>> runtimes_;
};

}  // namespace tessera::opencl::support
