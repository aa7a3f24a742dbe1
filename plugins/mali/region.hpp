// The mali plugin's view of a tsr_region and its compiled form.
//
// NodeView (shared, tessera_opencl/plugin_support.hpp): typed access to one node of a region.
// Lowering: what an op's lower() uses to turn a node into kernel launches: device buffers per
// value (constants uploaded once, aliases for Reshape-like ops), programs built through the
// binary cache, and steps with their arguments bound at compile time.
// CompiledRegion: the result; execute() writes inputs, launches every step, reads outputs.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedules.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/plugin_support.hpp"
#include "tessera_opencl/runtime.hpp"

namespace tessera::mali {

// Embedded kernels/<name> source, or nullptr.
const char* kernel_source(const char* name);

// NodeView and numel_of are the shared ones of tessera_opencl/plugin_support.hpp.
using opencl::support::NodeView;
using opencl::support::numel_of;

// One kernel launch (shared: tessera_opencl/plugin_support.hpp).
using opencl::support::Step;

// execute() writes inputs, launches every step, reads outputs (shared CompiledSteps); the mali
// part is the buffers the steps use.
class CompiledRegion : public opencl::support::CompiledSteps {
 public:
  std::vector<std::shared_ptr<opencl::Buffer>> keep_alive;
};

// Programs built once per context and option set from the mali kernels; shared by every region of
// the device.
class ProgramPool : public opencl::support::ProgramPool {
 public:
  ProgramPool() : opencl::support::ProgramPool("mali", kernel_source) {}
};

class Lowering {
 public:
  Lowering(const tsr_region& region, std::shared_ptr<opencl::Context> context, ProgramPool& pool,
           std::string extra_build_options);

  const tsr_region& region() const { return region_; }
  opencl::Context& context() { return *context_; }
  const opencl::DeviceInfo& device() const { return context_->device(); }

  // The device buffer of value `id` (float32): created on first use; constants are uploaded.
  const opencl::Buffer& buffer(int32_t id);
  // Uploads host floats into a new buffer owned by the region (folded weights, BN scale/shift).
  const opencl::Buffer& upload(const std::vector<float>& values);
  // Makes value `out` share the buffer of value `in` (Reshape, Flatten, Identity, Dropout).
  void alias(int32_t out, int32_t in);

  // A kernel of `schedule` built with its build-time knobs from `config` as -D defines.
  opencl::Kernel kernel(const Config& config, const std::string& extra_defines = "");
  // Adds a launch; `local` empty or all-zero means the driver picks. Clamps the work-group size
  // to the kernel's own limit so CL_INVALID_WORK_GROUP_SIZE does not happen at run time.
  void add_step(int32_t node, opencl::Kernel kernel, std::vector<size_t> global,
                std::vector<size_t> local, const Config& config);

  // Configs core asked for (tsr_compile_options.node_configs), by region node index.
  std::map<int32_t, opencl::support::RequestedConfig> requests;
  // Set by compile_region when tsr_compile_options.dump_dir is given: kernel() then records
  // each program it hands out (with `current_node` as its user) for writing after the compile.
  bool record_sources = false;
  std::string current_node;
  opencl::support::KernelDump sources;

  // Finishes: binds region inputs/outputs to buffers.
  std::unique_ptr<CompiledRegion> finish();

 private:
  std::shared_ptr<opencl::Buffer> buffer_ptr(int32_t id);

  const tsr_region& region_;
  std::shared_ptr<opencl::Context> context_;
  ProgramPool& pool_;
  std::string extra_build_options_;
  std::map<int32_t, std::shared_ptr<opencl::Buffer>> buffers_;
  std::map<int32_t, int32_t> aliases_;
  std::unique_ptr<CompiledRegion> compiled_;
};

}  // namespace tessera::mali
