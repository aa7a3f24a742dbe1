// Helpers shared by the OpenCL plugins, declared here and compiled into libtessera-opencl
// (src/plugin_support.cpp): typed read access to one node of a tsr_region (NodeView), shape
// helpers, 2-D window padding, schedules with knob spaces described as data, small string helpers
// for device claims, kernel-source dumps (tsr_compile_options.dump_dir), and the compiled-region
// pieces both plugins share (Step, CompiledSteps::execute, ProgramPool).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/plugin.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/regular_file.hpp"
#include "tessera_opencl/runtime.hpp"

namespace tessera::opencl::support {

// Read-only view of one node of a tsr_region. input_index, output_index, find_attribute and
// describe are named and behave as in tessera::plugin::NodeView; input() and output() return
// references to present values (check has_input first).
class NodeView {
 public:
  NodeView(const tsr_region& region, int32_t index)
      : region_(&region), node_(&region.nodes[index]) {}

  const tsr_region& region() const { return *region_; }
  const tsr_node& raw() const { return *node_; }
  std::string op_type() const { return node_->op_type ? node_->op_type : ""; }
  std::string name() const { return node_->name ? node_->name : ""; }
  int64_t opset() const { return region_->opset; }
  // "node 'conv1' (Conv)" for messages.
  std::string describe() const { return "node '" + name() + "' (" + op_type() + ")"; }

  int32_t num_inputs() const { return node_->num_inputs; }
  int32_t num_outputs() const { return node_->num_outputs; }
  // Value index of input/output i in the region's value table; -1 when omitted or out of range.
  int32_t input_index(int32_t i) const {
    return i >= 0 && i < node_->num_inputs ? node_->inputs[i] : -1;
  }
  int32_t output_index(int32_t i) const {
    return i >= 0 && i < node_->num_outputs ? node_->outputs[i] : -1;
  }
  bool has_input(int32_t i) const { return input_index(i) >= 0; }
  const tsr_tensor& input(int32_t i) const { return region_->values[node_->inputs[i]]; }
  const tsr_tensor& output(int32_t i) const { return region_->values[node_->outputs[i]]; }

  const tsr_attribute* find_attribute(const char* name) const;
  int64_t attr_int(const char* name, int64_t fallback) const;
  float attr_float(const char* name, float fallback) const;
  std::string attr_string(const char* name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const char* name, const std::vector<int64_t>& fallback) const;

 private:
  const tsr_region* region_;
  const tsr_node* node_;
};

bool contains_ci(const std::string& hay, const std::string& needle);

// "" when device `d`, the `index`-th the plugin probed, may be used under `selector`, else why
// not: the default selector takes only the plugin's own devices (`native`; `not_native` says why
// not), "any" takes every device, the device's id (`tessera info` shows it) only that device, a
// selector of digits only the device of that index ("0" must not match a name containing a
// zero), any other selector a device whose name contains it.
std::string selector_reason(const DeviceInfo& d, size_t index, const std::string& selector,
                            bool native, const char* not_native);

void write_message(tsr_message message, const std::string& text);

// The 2-D window of a Conv or pooling node: `kernel` (KH, KW) and the strides, dilations and
// pads core wrote out for it (normalise_window_attributes: no auto_pad reaches a plugin).
struct Window2d {
  std::array<int64_t, 2> kernel, strides, dilations;
  std::array<int64_t, 4> pads;  // top, left, bottom, right
};

// A node with a rank-3 input (a 1-D window) gets the 2-D window of height 1: its strides,
// dilations and pads with a height axis of 1 / 0 in front (pass kernel {1, K}).
Window2d window_2d(const NodeView& node, const std::array<int64_t, 2>& kernel);

// A pooling node's window: the kernel from its kernel_shape attribute (1-D: height 1).
Window2d pool_window_2d(const NodeView& node);

// NCHW dims of a rank-4 tensor, or of a rank-3 [N, C, L] one as [N, C, 1, L] (the same bytes):
// the geometry under which 1-D convs and pools run the 2-D buffer kernels.
std::array<int64_t, 4> nchw_dims(const tsr_tensor& t);

// "" when `t` (called `what`) has a dtype device memory holds (float32, int64, int32, int8,
// uint8, bool), a known shape and few enough elements for 32-bit kernel indexing; else the
// reason. The checks of ops that move or compare elements without float arithmetic.
std::string check_data_tensor(const tsr_tensor& t, const std::string& what);

// "" when `node` can share its input's buffer as its output (Reshape, Flatten, Identity,
// Dropout without a mask, a Cast to the same dtype): one dtype device memory holds in and out,
// the same element count, no optional outputs.
std::string check_alias(const NodeView& node);

// ---- schedules: kernel variants with knob spaces, described once as data ----

struct Knob {
  const char* name;
  std::vector<int32_t> candidates;
  bool build_time;  // a -D define: a new value means a new program build
  // The define's name when it is not the knob's name upper-cased (the kernels' spelling).
  const char* macro = nullptr;
};

struct Schedule {
  const char* id;           // "conv2d.image.direct"
  const char* kernel_file;  // kernels/<file>
  const char* kernel_name;  // entry point
  std::vector<Knob> knobs;
};

// One choice of knob values, in the schedule's knob order.
struct Config {
  const Schedule* schedule = nullptr;
  std::vector<int32_t> values;

  int32_t get(const std::string& knob) const;
  void set(const std::string& knob, int32_t value);
  // "conv2d.image.direct{wg_x=16,outputs_per_item=4}"
  std::string str() const;
  // Build-time knobs as " -DNAME=value" (names upper-cased).
  std::string defines() const;
};

// The largest `wg_x` candidate within the device limits (capped at `cap`) that does not exceed
// the work along dim 0; 0 (driver's choice) when the schedule has none.
int32_t default_wg_x(const Schedule& s, const DeviceInfo& device, int64_t work_dim0,
                     int64_t cap = 64);

// ---- split reductions (the conv2d gemm kernels of mali and adreno) ----
// A work-group of lx work-items along the outputs x ks slices of the reduction: slices 1..ks-1
// leave `tile_bytes` of partial sums each in __local memory for slice 0 to add.

// Work-items that keep `device` busy: a GPU wants many resident warps per compute unit to hide
// memory latency; a CPU device runs one work-group per core at a time.
int64_t busy_work_items(const DeviceInfo& device);

int64_t split_local_bytes(int64_t lx, int64_t ks, int64_t tile_bytes);

// The group (lx, ks) of a split launch: `wg_x` work-items along the outputs (0: 64 / ks), fewer
// until the group and its partial sums fit the device; nullopt when ks slices of one work-item
// do not (such a config is refused for the node).
std::optional<std::pair<int64_t, int64_t>> split_group(int64_t wg_x, int64_t ks, int64_t tile_bytes,
                                                       const DeviceInfo& device);

// A split launch over dim0 x dim1 outputs (each work-item of slice 0 owning `tile_bytes` of
// sums): its ranges, (dim0, dim1, ks) over (lx, 1, ks), and the __local scratch it binds.
struct SplitLaunch {
  std::vector<size_t> global, local;
  size_t scratch_bytes = 0;
};
SplitLaunch split_launch(const std::pair<int64_t, int64_t>& group, int64_t tile_bytes, int64_t dim0,
                         int64_t dim1);

// The heuristic's split: doubled (up to 32) while the launch's `items` work-items leave the
// device idle and every slice keeps at least four of the reduction's `blocks`.
int32_t default_split(int64_t items, int64_t blocks, const DeviceInfo& device);

size_t round_up(size_t global, size_t local);

// A launch made valid for `kernel`: `local` empty or all-zero lets the driver pick; otherwise
// zero entries become 1 and the group shrinks (halving dim 0, then dim 1, then dim 2) until it
// fits the kernel's own limit (registers, private arrays), so CL_INVALID_WORK_GROUP_SIZE does not
// happen at run time; `global` is rounded up to whole groups (kernels guard the overhang) and an
// empty range becomes one idle work-item.
void fit_launch(const Kernel& kernel, std::vector<size_t>& global, std::vector<size_t>& local);

// ---- tuning: workload keys, flops, requested configs ----

// Canonical key of a node's workload: op, every input's shape (constants marked 'c'), output
// shapes, every attribute sorted by name, dtype and the plugin's activation layout. Node and value
// names never enter, so equal keys mean interchangeable configs.
std::string workload_key(const NodeView& node, const char* layout);

// Floating-point operations of a node: 2 per multiply-add for Conv/Gemm/MatMul, one per output
// element otherwise.
double node_flops(const NodeView& node);

// A config core asked for one node, copied out of the compile options.
struct RequestedConfig {
  std::string schedule;
  std::vector<std::pair<std::string, int64_t>> knobs;
};

// "opw=2" style integer text of option `name`; throws tessera::Error naming the option.
int32_t option_int(const std::string& name, const std::string& value);

// The requested config when it names one of `options`' schedules and gives every knob of it a
// candidate value (and nothing else); nullopt otherwise. ConfigT is the plugin's Config type
// (schedule pointer + values in knob order).
template <class ConfigT>
std::optional<ConfigT> apply_request(const RequestedConfig* request,
                                     const std::vector<ConfigT>& options) {
  if (!request) return std::nullopt;
  for (const ConfigT& option : options) {
    if (request->schedule != option.schedule->id) continue;
    const auto& knobs = option.schedule->knobs;
    if (request->knobs.size() != knobs.size()) return std::nullopt;
    ConfigT c;
    c.schedule = option.schedule;
    for (const auto& k : knobs) {
      const auto it = std::find_if(request->knobs.begin(), request->knobs.end(),
                                   [&](const auto& r) { return r.first == k.name; });
      if (it == request->knobs.end()) return std::nullopt;
      if (std::find(k.candidates.begin(), k.candidates.end(), it->second) == k.candidates.end()) {
        return std::nullopt;
      }
      c.values.push_back(static_cast<int32_t>(it->second));
    }
    return c;
  }
  return std::nullopt;
}

// ---- compiled regions: launches, execution, programs ----

// One kernel launch of a compiled region.
struct Step {
  int32_t node = 0;  // region node index, for per-node profiling
  Kernel kernel;
  std::vector<size_t> global;
  std::vector<size_t> local;
  std::string config;  // Config::str(), for messages
};

// What execute() needs of a plugin's CompiledRegion (which adds the memory it keeps alive).
class CompiledSteps {
 public:
  std::shared_ptr<Context> context;
  int32_t num_nodes = 0;
  std::vector<std::string> node_labels;  // per region node: "node 'conv1' (Conv)", for errors
  std::vector<std::shared_ptr<Buffer>> inputs;  // per region input
  std::vector<size_t> input_bytes;
  std::vector<std::shared_ptr<Buffer>> outputs;  // per region output
  std::vector<size_t> output_bytes;
  std::vector<Step> steps;
  // Conditions kernels report through a flag (an index out of range, ...): each flag is cleared
  // before the launches and read after them; a set flag fails the run naming the node.
  struct Check {
    int32_t node;
    std::shared_ptr<Buffer> flag;  // one int
    std::string what;
  };
  std::vector<Check> checks;
  std::vector<double> last_times_us;  // per node; empty unless `profile`
  // Time each launch with an event (tsr_compile_options.profile). Off, a run enqueues its
  // launches with no event and no host work between them.
  bool profile = true;

  // Appends a launch of `kernel` for region node `node`, made valid by fit_launch().
  void add_step(int32_t node, Kernel kernel, std::vector<size_t> global, std::vector<size_t> local,
                const std::string& config);

  // Writes the inputs, launches every step, reads the outputs and records per-node times.
  // Throws ClError naming the node and kernel (or the phase: input, output, finish), the device
  // and the CL error. On any failure the queue is drained first, so no command still reads `in`
  // or writes `out` once this returns: the caller frees them.
  void execute(const void* const* in, void* const* out);

  // The same with each input and output in host memory or in a cl_mem of this context (a
  // tsr_buffer of the plugin's domain): those are copied on the device, never through the host.
  void execute(const tsr_io* in, const tsr_io* out);

 private:
  std::string where(int phase, size_t at) const;
  std::string label(int32_t node) const;
  // "the region of node 'a' (Conv) .. node 'b' (Relu)" for failures not tied to one launch.
  std::string all_nodes() const;
};

// Programs built once per context and option set from the plugin's embedded kernels/<file> with
// common.cl prepended; shared by every region of the device.
class ProgramPool {
 public:
  // `kernel_source` returns the embedded kernels/<name> source, or nullptr; `plugin` names the
  // plugin in messages.
  using SourceFn = const char* (*)(const char* name);
  ProgramPool(const char* plugin, SourceFn kernel_source)
      : plugin_(plugin), kernel_source_(kernel_source) {}

  const Program& get(Context& context, const std::string& file, const std::string& options);

  // What get() builds for kernels/<file>: common.cl, the shared helpers.cl where the plugin
  // embeds it (plugins/opencl/kernels/common), then the file.
  std::string source(const std::string& file) const;

 private:
  const char* plugin_;
  SourceFn kernel_source_;
  std::map<std::string, std::unique_ptr<Program>> programs_;
};

// ---- kernel-source dumps (tsr_compile_options.dump_dir) ----

// Writes `content` as `dir`/`stem`.cl, or `stem`.2.cl, .3.cl ... when a file of that name holds
// something else (a file with the same content is reused, never rewritten; a FIFO, a directory or
// anything else that is not a regular file is passed over unopened, as reading it could block).
// Each file appears complete or not at all: a temporary file is written and then hard-linked to
// the name, which fails instead of replacing a file another writer created meanwhile. Returns
// the path; throws tessera::Error naming the path on failure.
std::string write_new_source_file(const std::string& dir, const std::string& stem,
                                  const std::string& content);

// The programs one compile_region call used, recorded as they are built (or found in a program
// cache) and written once the region compiled.
class KernelDump {
 public:
  // `kernel` of the program built from `source` with `build_options` runs node `node`.
  void add(const std::string& kernel, const std::string& file, const std::string& source,
           const std::string& build_options, const std::string& node);

  // Writes one <kernel>.cl per recorded program into `dir`; returns the paths.
  std::vector<std::string> write(const std::string& dir, const std::string& plugin) const;

  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    std::string kernel;
    std::string file;
    std::string source;
    std::string build_options;
    std::vector<std::string> nodes;
  };
  std::vector<Entry> entries_;
};

// The kernel of `config`'s schedule from the pool, built with `options`; with `dump` set, the
// program's source (exactly what the pool built) is recorded there with `node` as its user.
Kernel pooled_kernel(ProgramPool& pool, Context& context, const Config& config,
                     const std::string& options, KernelDump* dump, const std::string& node);

}  // namespace tessera::opencl::support
