// A region compiled for Vulkan. Lowering turns the region's nodes into dispatches: a device
// buffer per value (constants uploaded once at compile; Reshape-like ops alias their input), a
// pipeline per (shader, specialization constants), a descriptor set per dispatch. finish()
// records the region's one command buffer (copy inputs in, dispatches with a barrier wherever a
// dispatch touches what an earlier one wrote, copy outputs out; in half precision the copies are
// conversions from and to float32); CompiledRegion::execute copies the host inputs into staging
// memory, submits that command buffer again and copies the outputs back. Nothing is recorded or
// created per run.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "device.hpp"
#include "tessera/plugin.hpp"

namespace tessera::vulkan {

using plugin::NodeView;
using plugin::RegionView;

// One compute shader specialised for a workload: `constants` are its specialization constants
// 0..n-1 (shapes, strides, knobs; floats as their bits), `groups` the work-group count.
struct Kernel {
  std::string shader;  // shaders/<shader>.comp
  std::vector<int32_t> constants;
  uint32_t groups[3] = {1, 1, 1};
};

// A pipeline made once per device for a (shader, constants, bindings) key.
struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
};

struct Dispatch {
  int32_t node = -1;
  Pipeline pipeline;
  VkDescriptorSet set = VK_NULL_HANDLE;
  uint32_t groups[3] = {1, 1, 1};
  std::vector<const Buffer*> reads;
  std::vector<const Buffer*> writes;
};

// Pipelines of one device, shared by its regions (made under the instance's config mutex,
// which core holds around compile).
class PipelineSet {
 public:
  explicit PipelineSet(Device& device) : device_(device) {}
  ~PipelineSet();
  // The pipeline for `kernel` with `bindings` storage buffers; `what` names the node for errors.
  Pipeline get(const Kernel& kernel, uint32_t bindings, const std::string& what);

 private:
  Device& device_;
  std::map<std::string, Pipeline> pipelines_;
  std::map<uint32_t, std::pair<VkDescriptorSetLayout, VkPipelineLayout>> layouts_;
};

class CompiledRegion : public plugin::CompiledRegion {
 public:
  explicit CompiledRegion(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  ~CompiledRegion() override;
  void execute(const void* const* inputs, void* const* outputs) override;
  // Per-node device times of the last run from timestamps around each dispatch (when the
  // compile asked for profiling and the queue has timestamps); a fused node reads 0.
  std::vector<double> last_profile() override { return profile_us_; }

 private:
  friend class Lowering;
  void submit_and_wait(const std::string& what);

  std::shared_ptr<Device> device_;
  std::vector<std::unique_ptr<Buffer>> buffers_;  // values, constants, staging
  std::vector<Buffer*> input_staging_;
  std::vector<Buffer*> output_staging_;
  std::vector<size_t> input_bytes_;
  std::vector<size_t> output_bytes_;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::string first_node_;  // names the region in run-time errors
  struct Check {
    Buffer* flag;
    std::string what;  // "<node>: <why>"
  };
  std::vector<Check> checks_;  // Lowering::check_flag
  // Timestamps: one before the first dispatch and one after each; dispatch_nodes_[i] is the
  // region node of dispatch i.
  VkQueryPool queries_ = VK_NULL_HANDLE;
  std::vector<int32_t> dispatch_nodes_;
  int32_t num_nodes_ = 0;
  std::vector<double> profile_us_;
  void read_profile();
};

// How a region stores and computes its float values (CompileOptions::precision).
enum class Precision {
  kFp32,       // "fp32"
  kHalfStore,  // "fp16-acc32": half buffers, float arithmetic
  kHalf,       // "fp16": half buffers, half products and sums in conv and matmul
};
// The precision `name` names, or throws Failure(TSR_UNSUPPORTED) naming the choices.
Precision parse_precision(const std::string& name);
// Why `device` cannot run `precision`, or "".
std::string precision_problem(const PhysicalDevice& device, Precision precision);
// IEEE half of `value`, rounded to nearest even.
uint16_t to_half(float value);

// Bytes per element of a value of `dtype` in device memory: float32 (4, or 2 in half regions,
// which Lowering::stored_bytes applies), int64 (8), int32 (4), int8, uint8 and bool (1); 0 for
// a dtype the plugin does not keep on the device. Integer and bool buffers hold their elements
// packed as on the host and rounded up to whole 32-bit words (shaders/typed.glsl reads and
// writes them as uint words, so no 8-bit storage feature is needed).
size_t element_bytes(int32_t dtype);

// Element type codes of shaders/typed.glsl (a specialization constant per operand).
enum class TypeCode : int32_t {
  kF32 = 0,
  kF16 = 1,  // a float32 value of a half region
  kI64 = 2,
  kI32 = 3,
  kI8 = 4,
  kU8 = 5,
  kBool = 6
};

class Lowering {
 public:
  Lowering(std::shared_ptr<Device> device, PipelineSet& pipelines, const RegionView& region,
           const plugin::CompileOptions& options);

  const RegionView& region() const { return region_; }
  Device& device() { return *device_; }
  // The device buffer of value `id` (made on first use; constants are uploaded at finish()).
  const Buffer& buffer(int32_t id);
  // A device buffer holding `data` as it is (converted indices), uploaded at finish().
  const Buffer& constant(const void* data, size_t bytes);
  // A device buffer of float values in the region's storage type (folded weights).
  const Buffer& constant_floats(const std::vector<float>& values);
  // The typed.glsl code of value `t` in this region's storage (float32 is kF16 in half regions).
  int32_t type_code(const tsr_tensor& t) const;
  // A 4-byte flag a shader of node `node` sets (nonzero) when the run must fail with `what`
  // (an index it read is out of range: nothing can refuse it before the kernel reads it). The
  // flag is host-visible memory, cleared before every run and read after it: a set flag fails
  // that run naming the node, and the next run starts clean.
  const Buffer& check_flag(const NodeView& node, const std::string& what);
  // A 4-byte buffer bound where a shader's optional operand is absent.
  const Buffer& dummy();
  // The config core chose for node `node` (a pack, the tuner), or nullptr.
  const plugin::NodeConfig* config(int32_t node) const { return options_.config_for(node); }
  // Value `out` shares value `in`'s buffer (Reshape, Flatten, Squeeze, Identity...).
  void alias(int32_t out, int32_t in);
  // Adds a dispatch of `kernel` for node `node`, its storage buffers bound 0..n-1: the `reads`
  // then the `writes`.
  void dispatch(const NodeView& node, const Kernel& kernel, std::vector<const Buffer*> reads,
                std::vector<const Buffer*> writes);

  // Node `index` is computed inside an earlier node's kernel (an activation in a conv's
  // epilogue): its own lowering adds nothing.
  void fuse(int32_t index) { fused_.insert(index); }
  bool fused(int32_t index) const { return fused_.count(index) != 0; }
  // The one node reading value `id`, or -1 (several, none, or a region output).
  int32_t sole_reader(int32_t id) const { return readers_.sole_reader(id); }
  // The region node writing value `id`, or -1 (a region input or a constant).
  int32_t producer(int32_t id) const;

  // Records the command buffer and uploads the constants.
  std::unique_ptr<CompiledRegion> finish();

 private:
  void upload_constants();
  void record();
  void record_dispatch(VkCommandBuffer cb, Dispatch& d);
  Dispatch make_dispatch(int32_t node, const Kernel& kernel, std::vector<const Buffer*> reads,
                         std::vector<const Buffer*> writes);
  // Half regions: conversions of the inputs from and outputs to float32 staging.
  void add_conversions();
  // Bytes of `t`'s values in this region's storage.
  size_t stored_bytes(const tsr_tensor& t) const;

  std::shared_ptr<Device> device_;
  PipelineSet& pipelines_;
  const RegionView& region_;
  const plugin::CompileOptions& options_;
  Buffer* dummy_ = nullptr;
  plugin::ValueReaders readers_;
  std::map<int32_t, Buffer*> values_;
  std::vector<std::pair<Buffer*, std::vector<unsigned char>>> uploads_;
  std::vector<Dispatch> dispatches_;
  std::vector<Dispatch> input_conversions_;
  std::vector<Dispatch> output_conversions_;
  Precision precision_ = Precision::kFp32;
  std::set<int32_t> fused_;
  std::unique_ptr<CompiledRegion> compiled_;
  int32_t sets_needed_ = 0;
  int32_t bindings_needed_ = 0;
  std::string current_;
};

}  // namespace tessera::vulkan
