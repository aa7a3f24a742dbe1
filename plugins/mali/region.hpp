// The mali plugin's view of a tsr_region and its compiled form.
//
// NodeView: read-only typed access to one node of a region (attributes, input/output tensors).
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
#include "tessera_opencl/runtime.hpp"

namespace tessera::mali {

// Embedded kernels/<name> source, or nullptr.
const char* kernel_source(const char* name);

class NodeView {
 public:
  NodeView(const tsr_region& region, int32_t index);

  const tsr_node& node() const { return *node_; }
  std::string op_type() const { return node_->op_type ? node_->op_type : ""; }
  std::string name() const { return node_->name ? node_->name : ""; }
  int64_t opset() const { return region_->opset; }
  // "node 'conv1' (Conv)" for messages.
  std::string where() const;

  int32_t num_inputs() const { return node_->num_inputs; }
  int32_t num_outputs() const { return node_->num_outputs; }
  bool has_input(int32_t i) const { return i < node_->num_inputs && node_->inputs[i] >= 0; }
  int32_t input_id(int32_t i) const { return node_->inputs[i]; }
  int32_t output_id(int32_t i) const { return node_->outputs[i]; }
  const tsr_tensor& input(int32_t i) const { return region_->values[node_->inputs[i]]; }
  const tsr_tensor& output(int32_t i) const { return region_->values[node_->outputs[i]]; }

  const tsr_attribute* attr(const char* name) const;
  int64_t attr_int(const char* name, int64_t fallback) const;
  float attr_float(const char* name, float fallback) const;
  std::string attr_string(const char* name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const char* name, const std::vector<int64_t>& fallback) const;

 private:
  const tsr_region* region_;
  const tsr_node* node_;
};

std::vector<int64_t> dims_of(const tsr_tensor& t);
int64_t numel_of(const tsr_tensor& t);

// One kernel launch of a compiled region.
struct Step {
  int32_t node = 0;  // region node index, for per-node profiling
  opencl::Kernel kernel;
  std::vector<size_t> global;
  std::vector<size_t> local;
  std::string config;  // Config::str(), for messages
};

class CompiledRegion {
 public:
  std::shared_ptr<opencl::Context> context;
  int32_t num_nodes = 0;
  std::vector<std::shared_ptr<opencl::Buffer>> inputs;  // per region input
  std::vector<size_t> input_bytes;
  std::vector<std::shared_ptr<opencl::Buffer>> outputs;  // per region output
  std::vector<size_t> output_bytes;
  std::vector<Step> steps;
  std::vector<double> last_times_us;  // per node
  std::vector<std::shared_ptr<opencl::Buffer>> keep_alive;

  // Throws opencl::ClError naming the kernel and device.
  void execute(const void* const* in, void* const* out);
};

// Programs built once per context and option set; shared by every region of the device.
class ProgramPool {
 public:
  const opencl::Program& get(opencl::Context& context, const std::string& file,
                             const std::string& options);

 private:
  std::map<std::string, std::unique_ptr<opencl::Program>> programs_;
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
