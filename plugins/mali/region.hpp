// The mali plugin's view of a tsr_region and its compiled form.
//
// NodeView (shared, tessera_opencl/plugin_support.hpp): typed access to one node of a region.
// Lowering: what an op's lower() uses to turn a node into kernel launches: device buffers per
// value (constants uploaded once, aliases for Reshape-like ops), programs built through the
// binary cache, and steps with their arguments bound at compile time.
// CompiledRegion: the result; execute() writes inputs, launches every step, reads outputs.
//
// Activation layouts: each value of a region has a layout, NCHW or NCHW4c ([N][ceil(C/4)][H][W][4]
// with zero padded lanes, kernels/layout.cl). The region layout (the target option `layout`,
// default nchw4c) decides whether NCHW4c is used at all. With nchw4c, each op's layout rule
// (ops/op.hpp) picks the layout its outputs get from its inputs' layouts (Conv always NCHW4c;
// BatchNorm, element-wise ops, pools and channel Concat follow their inputs; every other op NCHW),
// and begin_node() converts an input exactly where its consumer needs the other layout (once per
// value). Region inputs and constants arrive as NCHW; region outputs are converted back in
// finish(). A [N, C, 1, 1] value with C % 4 == 0 has the same bytes in both layouts and is never
// converted.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "schedules.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/plugin_support.hpp"
#include "tessera_opencl/runtime.hpp"

namespace tessera::mali {

// Embedded kernels/<name> source, or nullptr.
const char* kernel_source(const char* name);

// NodeView is the shared one of tessera_opencl/plugin_support.hpp.
using opencl::support::NodeView;

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

enum class Layout { kNchw, kNchw4c };

// The region layout of a target without a `layout` option; describe_node lists the schedules
// of this layout (it is not given the target's options).
inline constexpr Layout kDefaultLayout = Layout::kNchw4c;
// The layout the option value names ("nchw4c" or "nchw"), or nullopt.
std::optional<Layout> parse_layout(const std::string& value);
// Why `value` is not a layout, naming the option and the choices.
std::string layout_choices(const std::string& value);

// Whether `t` is stored as NCHW4c with the same bytes as NCHW ([N, C, 1, 1], C % 4 == 0).
bool same_bytes_in_nchw4c(const tsr_tensor& t);
// Elements of `t`'s buffer in `layout` (NCHW4c pads C up to a multiple of 4).
int64_t stored_numel(const tsr_tensor& t, Layout layout);

// What an op's layout rule answers: the layout its outputs get and which inputs it reads in
// NCHW4c when that is kNchw4c (the other non-constant inputs are read as NCHW).
struct LayoutPlan {
  Layout output = Layout::kNchw;
  std::vector<int32_t> nchw4c_inputs;
};

class Lowering {
 public:
  Lowering(const tsr_region& region, std::shared_ptr<opencl::Context> context, ProgramPool& pool,
           std::string extra_build_options, Layout region_layout = Layout::kNchw);

  Layout region_layout() const { return region_layout_; }
  // The layout value `id` is stored in (NCHW until a producer said otherwise).
  Layout layout(int32_t id) const;
  // Called before node `index` lowers (ops/op.hpp does it): records its outputs' layout and
  // converts its inputs to the layouts of `plan`; buffer() then hands those converted buffers to
  // the node.
  void begin_node(const NodeView& node, int32_t index, const LayoutPlan& plan);

  const tsr_region& region() const { return region_; }
  opencl::Context& context() { return *context_; }
  const opencl::DeviceInfo& device() const { return context_->device(); }

  // Nodes reading value `id` (computed once per region).
  const std::vector<int32_t>& consumers(int32_t id);
  bool is_region_output(int32_t id) const;
  // Node `index` is computed by an earlier node's kernel (a Conv with a fused activation): its
  // output gets the layout `layout` now, and its own lowering adds no step.
  void fuse(int32_t index, Layout layout);
  bool fused(int32_t index) const { return fused_.count(index) != 0; }

  // The device buffer of value `id` (float32): created on first use; constants are uploaded. For
  // an input of the node being lowered, the buffer in the layout the node reads it in.
  const opencl::Buffer& buffer(int32_t id);
  // Uploads host floats into a new buffer owned by the region (folded weights, BN scale/shift).
  const opencl::Buffer& upload(const std::vector<float>& values);
  // Makes value `out` share the buffer the current node reads value `in` from (Reshape,
  // Flatten, Identity, Dropout).
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
  // Value `id` in `want`: its own buffer, or a converted copy (made once, by a step of `node`).
  std::shared_ptr<opencl::Buffer> buffer_in(int32_t id, Layout want, int32_t node);

  const tsr_region& region_;
  std::shared_ptr<opencl::Context> context_;
  ProgramPool& pool_;
  std::string extra_build_options_;
  std::map<int32_t, std::shared_ptr<opencl::Buffer>> buffers_;
  Layout region_layout_;
  std::map<int32_t, Layout> layouts_;                             // absent: NCHW
  std::map<int32_t, std::shared_ptr<opencl::Buffer>> converted_;  // the value in the other layout
  std::map<int32_t, Layout> reads_;  // inputs of the current node -> layout it reads them in
  std::map<int32_t, int32_t> producer_;
  std::map<int32_t, std::vector<int32_t>> consumers_;
  bool consumers_built_ = false;
  std::set<int32_t> fused_;
  int32_t current_index_ = 0;
  std::unique_ptr<CompiledRegion> compiled_;
};

}  // namespace tessera::mali
