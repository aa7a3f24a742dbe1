// The OpenCL lowering every OpenCL plugin compiles with: one Lowering that turns the nodes of a
// tsr_region into kernel launches, with a storage kind per value, and the op registry its ops
// plug into (ops written once live in plugins/opencl/ops; a plugin adds the ops whose kernels
// only it has, in its own registry, which is looked up first).
//
// Storage kinds (one per value, chosen by the node that writes it):
//   kNchw    a dense NCHW float buffer: region inputs, outputs and constants always arrive so;
//   kNchw4c  a float buffer [N][ceil(C/4)][H][W][4] with zero-padded lanes (rank-4 values only);
//   kImage   an image2d in the texture layout of tessera_opencl/image.hpp (rank <= 4).
// A node reads a value in the storage it asks for; the Lowering inserts the conversion kernel
// (once per value and storage, charged to the first node that needs it). A [N, C, 1, 1] value
// with C % 4 == 0 has the same bytes as NCHW and NCHW4c and is never converted between them.
//
// The plugin brings a Flavor (its name, its schedule table and how it picks default knob values)
// and LoweringOptions (its activation storage, half images, extra build options, forced knobs).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tessera/plugin_abi.h"
#include "tessera_opencl/image.hpp"
#include "tessera_opencl/op_registry.hpp"
#include "tessera_opencl/plugin_support.hpp"
#include "tessera_opencl/runtime.hpp"

namespace tessera::opencl {

using support::Config;
using support::ConfigOverrides;
using support::Knob;
using support::NodeView;
using support::Schedule;

enum class Storage { kNchw, kNchw4c, kImage };

// What a plugin tells the shared lowering and ops about itself.
struct Flavor {
  const char* name;  // "mali": prefixes messages
  // The schedule of `id` (throws tessera::Error naming it when the plugin has none).
  const Schedule& (*schedule)(const std::string& id);
  // A config of `schedule_id` with the plugin's default knob values for `work_dim0` items along
  // dimension 0, `overrides` taking precedence.
  Config (*default_config)(const std::string& schedule_id, const DeviceInfo& device,
                           int64_t work_dim0, const ConfigOverrides& overrides);
};

// The device an op's check and tuning functions see.
struct Device {
  const DeviceInfo& info;
  const Flavor& flavor;
  ImageLimits limits;  // zero where the plugin stores nothing in images

  // The shared helpers that need only the OpenCL device take a Device as its DeviceInfo.
  operator const DeviceInfo&() const { return info; }  // NOLINT(google-explicit-constructor)

  // flavor.default_config on this device.
  Config config(const std::string& schedule_id, int64_t work_dim0,
                const ConfigOverrides& overrides = {}) const {
    return flavor.default_config(schedule_id, info, work_dim0, overrides);
  }
};

// Knob values a target forces on every schedule that has the knob (the options `knob.<name>`,
// e.g. `knob.opw: 2`), for experiments and for tests that sweep the knob spaces.
using ForcedKnobs = std::vector<std::pair<std::string, int32_t>>;
inline constexpr const char* kKnobOptionPrefix = "knob.";
// "" when target option `name` = `value` forces a knob some schedule of `schedules` has to one of
// its candidates, else why not (naming the option and `plugin`).
std::string check_knob_option(const std::vector<Schedule>& schedules, const char* plugin,
                              const std::string& name, const std::string& value);
// `config` with the forced knobs it has; a value that is not a candidate of its schedule throws
// tessera::Error naming the option and the schedule.
Config apply_forced_knobs(Config config, const ForcedKnobs& forced);

struct LoweringOptions {
  // Where rank-4 activations live by default: ops with a StorageRule follow it (kNchw4c), and
  // ops written for image storage read and write images (kImage).
  Storage activation = Storage::kNchw;
  bool half_images = false;         // images hold CL_HALF_FLOAT (precision fp16, fp16-acc32)
  std::string extra_build_options;  // appended to every kernel build
  ForcedKnobs forced_knobs;
};

// Whether `t` is stored as NCHW4c with the same bytes as NCHW ([N, C, 1, 1], C % 4 == 0).
bool same_bytes_in_nchw4c(const tsr_tensor& t);
// Elements of `t`'s buffer in `storage` (NCHW4c pads C up to a multiple of 4; images: 0).
int64_t stored_numel(const tsr_tensor& t, Storage storage);
// Bytes per element of a value that device memory may hold (float32, int64, int32, int8, uint8,
// bool); throws naming the value for any other dtype.
size_t element_bytes(const tsr_tensor& t);

class Lowering;

// What an op's storage rule answers under the NCHW4c activation storage: the storage its rank-4
// outputs get and which inputs it reads in that storage (the others are read as NCHW).
struct StoragePlan {
  Storage output = Storage::kNchw;
  std::vector<int32_t> inputs;
};
using StorageRule = StoragePlan (*)(const NodeView& node, const Lowering& lowering);

// One compiled region: the shared launches plus the memory they use.
class CompiledRegion : public support::CompiledSteps {
 public:
  std::vector<std::shared_ptr<Buffer>> buffers;
  std::vector<std::shared_ptr<Image>> images;
};

class Lowering {
 public:
  Lowering(const tsr_region& region, std::shared_ptr<Context> context, support::ProgramPool& pool,
           const Flavor& flavor, LoweringOptions options);

  const tsr_region& region() const { return region_; }
  Context& context() { return *context_; }
  const DeviceInfo& device() const { return context_->device(); }
  // The device as op checks and tuning functions see it.
  const Device& op_device() const { return op_device_; }
  const Flavor& flavor() const { return flavor_; }
  Storage activation() const { return options_.activation; }
  bool half_images() const { return options_.half_images; }

  // Starts node `index`: its inputs are read as NCHW unless `rule` (applied under the NCHW4c
  // activation storage) plans another storage for them and its outputs. The compile loop calls
  // it before the node's lower().
  void begin_node(const NodeView& node, int32_t index, StorageRule rule);
  int32_t current_index() const { return current_index_; }

  // The storage value `id` was written in (kNchw until a producer said otherwise).
  Storage storage(int32_t id) const;

  // Value `id` as a buffer, as the current node uses it: an input in the storage the node reads
  // it in (converted where needed), any other value in its own storage (created on first use;
  // constants are uploaded).
  cl_mem buffer(int32_t id);
  // Value `id` as a texture-layout image: an input of the current node converted where needed,
  // any other value a new image the current node writes.
  cl_mem image(int32_t id);
  // Value `id` in `storage`, converted where needed; the conversion is charged to node `node`.
  cl_mem read_as(int32_t id, Storage storage, int32_t node);
  // Value `out` shares the memory the current node reads value `in` from (Reshape, Flatten,
  // Identity, Dropout).
  void alias(int32_t out, int32_t in);
  // Host floats uploaded once into memory the region owns (folded weights, BN scale/shift).
  cl_mem constant_buffer(const std::vector<float>& values);
  // Device memory of `floats` floats the region owns, for partial results one step writes and a
  // later step of the same node reads (its content between runs is undefined).
  cl_mem scratch_buffer(int64_t floats);
  // One int of device memory a kernel of node `node` sets to non-zero when its input breaks a
  // rule it can check only on the device (a run-time index out of range): cleared before every
  // run, read after it, and a set flag fails the run with "<node>: <what>".
  cl_mem check_flag(int32_t node, const std::string& what);
  // A constant float image of `width` x `height` RGBA texels.
  cl_mem constant_image(int64_t width, int64_t height, const std::vector<float>& rgba);

  // Nodes reading value `id` (computed once per region).
  const std::vector<int32_t>& consumers(int32_t id);
  bool is_region_output(int32_t id) const;
  // Node `index` is computed by an earlier node's kernel (a Conv with a fused activation): its
  // rank-4 outputs get `storage` now, and its own lowering adds no step.
  void fuse(int32_t index, Storage storage);
  bool fused(int32_t index) const { return fused_.count(index) != 0; }

  // flavor().default_config on this device with the forced knobs applied.
  Config config_for(const std::string& schedule_id, int64_t work_dim0,
                    const ConfigOverrides& overrides = {}) const;
  // Each of `configs` with the forced knobs applied.
  std::vector<Config> forced(std::vector<Config> configs) const;
  // A kernel of `config`'s schedule built with its build-time knobs as -D defines.
  Kernel kernel(const Config& config, const std::string& extra_defines = "");
  // Adds a launch; `local` empty or all-zero lets the driver pick. fit_launch() keeps the group
  // within the kernel's own limit so CL_INVALID_WORK_GROUP_SIZE does not happen at run time.
  void add_step(int32_t node, Kernel kernel, std::vector<size_t> global, std::vector<size_t> local,
                const Config& config);
  // The same with the config's wg_x (and wg_y for 2-D and 3-D ranges) as the group.
  void add_step(int32_t node, Kernel kernel, std::vector<size_t> global, const Config& config);
  // An element-wise launch over n items (ceil(n / vec) work-items when the schedule has a `vec`
  // knob) with the config's wg_x.
  void add_1d_step(int32_t node, Kernel kernel, int64_t n, const Config& config);

  // Configs core asked for (tsr_compile_options.node_configs), by region node index.
  std::map<int32_t, support::RequestedConfig> requests;
  // Set by compile_region when tsr_compile_options.dump_dir is given: kernel() then records
  // each program it hands out (with `current_node` as its user) for writing after the compile.
  bool record_sources = false;
  std::string current_node;
  support::KernelDump sources;

  // Binds region inputs and outputs (NCHW buffers) and hands the compiled region over.
  std::unique_ptr<CompiledRegion> finish();

 private:
  struct Held {
    std::shared_ptr<Buffer> buffer;
    std::shared_ptr<Image> image;
    cl_mem mem() const { return buffer ? buffer->get() : image->get(); }
  };
  // The memory of value `id` in its own storage, created on first use.
  const Held& own(int32_t id);
  Held convert(int32_t id, const Held& from, Storage from_storage, Storage to, int32_t node);
  std::string value_name(int32_t id) const;

  const tsr_region& region_;
  std::shared_ptr<Context> context_;
  support::ProgramPool& pool_;
  const Flavor& flavor_;
  LoweringOptions options_;
  Device op_device_;
  std::map<int32_t, Storage> storage_;               // absent: NCHW
  std::map<int32_t, std::map<Storage, Held>> held_;  // value -> storage -> memory
  std::map<int32_t, Storage> reads_;                 // current node's inputs -> storage
  std::map<int32_t, int32_t> producer_;              // value -> node that wrote it
  std::map<int32_t, std::vector<int32_t>> consumers_;
  bool consumers_built_ = false;
  std::set<int32_t> fused_;
  int32_t current_index_ = 0;
  std::unique_ptr<CompiledRegion> compiled_;
};

// ---- the op registry ----

using CheckFn = std::string (*)(const NodeView& node, const Device& device);
using LowerFn = void (*)(Lowering& lowering, const NodeView& node, int32_t node_index);
// The configs a node can run with, the heuristic's first; one per schedule.
using TuningOptionsFn = std::vector<Config> (*)(const NodeView& node, const Device& device);

// How an op plugs in: check() (can this node run here? "" = yes, else the reason), lower() (turn
// it into kernel launches) and, for ops with NCHW4c kernels, a storage rule.
struct OpLowering {
  const char* op_type;
  CheckFn check;
  LowerFn lower;
  StorageRule rule = nullptr;
};

// The ops written once (plugins/opencl/ops), shared by every OpenCL plugin. Defined in
// libtessera-opencl, not in this header, so every plugin sees the one table its op files fill.
struct SharedOps {
  using Op = OpLowering;
  using Tuning = TuningOptionsFn;
  static const OpLowering* find_lowering(const std::string& op_type);
  static TuningOptionsFn find_tuning(const std::string& op_type);
  // Every op type of the table (tests list them).
  static std::vector<std::string> op_types();
  struct LoweringRegistrar {
    explicit LoweringRegistrar(const OpLowering& op);
  };
  struct TuningRegistrar {
    TuningRegistrar(const char* op_type, TuningOptionsFn fn);
  };
};

// The schedules of the ops in plugins/opencl/ops, each described once in its op file and
// registered there (TESSERA_OPENCL_SCHEDULE); a plugin's schedule lookup falls back to them.
struct SharedSchedules {
  // nullptr when no shared op registered `id`.
  static const Schedule* find(const std::string& id);
  // Every shared schedule, by id.
  static std::vector<Schedule> all();
  struct Registrar {
    explicit Registrar(const Schedule& schedule);
  };
};
// A wg_x knob with the candidates the shared schedules use (0 = driver's choice).
Knob wg_x_knob();

// The lowering that runs a node: the plugin's own op of its type when that accepts the node
// (its storage-specific kernels), else the shared op when that does.
template <class Registry>
support::SelectedOp<OpLowering, TuningOptionsFn> select_op(const NodeView& node,
                                                           const Device& device) {
  return support::select_in<Registry, SharedOps>(node, device);
}

// Lowers node `index` with `op`: its storage rule applied first, nothing when an earlier node's
// kernel computes it (Lowering::fuse).
inline void lower_node(Lowering& lowering, const OpLowering& op, const NodeView& node,
                       int32_t index) {
  lowering.begin_node(node, index, op.rule);
  if (!lowering.fused(index)) op.lower(lowering, node, index);
}

// The OpenClPlugin Traits members every plugin that compiles with the shared Lowering has alike.
// A plugin's Traits derives from it, naming itself (for its lowering_options), its own op table
// and its Flavor.
template <class Traits, class Registry, const Flavor& (*kFlavor)()>
struct LoweringTraits {
  using Config = opencl::Config;
  static const Flavor& flavor() { return kFlavor(); }
  // The plugin's own GPU family: its device name or vendor contains one of Traits::kFamilyMarks
  // (case-insensitive).
  static bool is_native(const DeviceInfo& d) {
    for (const char* mark : Traits::kFamilyMarks) {
      if (support::contains_ci(d.name, mark) || support::contains_ci(d.vendor, mark)) return true;
    }
    return false;
  }
  // "" when the selector takes the index-th probed device; Traits::kNotNativeHint says how to
  // run the plugin's kernels on a device of another family.
  static std::string claim(const DeviceInfo& d, size_t index, const std::string& selector) {
    return support::selector_reason(d, index, selector, Traits::is_native(d),
                                    Traits::kNotNativeHint);
  }
  static support::SelectedOp<OpLowering, TuningOptionsFn> select(const NodeView& view,
                                                                 const Device& device) {
    return select_op<Registry>(view, device);
  }
  static Lowering make_lowering(const tsr_region& region, std::shared_ptr<Context> context,
                                support::ProgramPool& pool, const plugin::CompileOptions& options) {
    return Lowering(region, std::move(context), pool, flavor(), Traits::lowering_options(options));
  }
  static void lower_node(Lowering& lowering, const OpLowering& op, const NodeView& view,
                         int32_t index) {
    opencl::lower_node(lowering, op, view, index);
  }
};

}  // namespace tessera::opencl

// Declares, in an OpenCL plugin's namespace, its own op table over the shared Lowering (looked
// up before the shared ops: select_op), with OpLowering and TuningOptionsFn in scope.
#define TESSERA_OPENCL_LOWERING_OPS(Tag)    \
  using ::tessera::opencl::OpLowering;      \
  using ::tessera::opencl::TuningOptionsFn; \
  struct Tag;                               \
  TESSERA_OPENCL_OP_REGISTRY(OpLowering, TuningOptionsFn, Tag)
// Registers an op of plugins/opencl/ops (every OpenCL plugin runs it).
#define TESSERA_OPENCL_OP(op_type, check_fn, lower_fn)                            \
  static const ::tessera::opencl::SharedOps::LoweringRegistrar TSR_OPENCL_CONCAT( \
      opencl_op_, __LINE__)(::tessera::opencl::OpLowering{op_type, check_fn, lower_fn, nullptr})
// Registers `schedule` (a Schedule with static storage) as a shared schedule.
#define TESSERA_OPENCL_SCHEDULE(schedule)                                                        \
  static const ::tessera::opencl::SharedSchedules::Registrar TSR_OPENCL_CONCAT(opencl_schedule_, \
                                                                               __LINE__)(schedule)
#define TESSERA_OPENCL_TUNABLE(op_type, fn)                                     \
  static const ::tessera::opencl::SharedOps::TuningRegistrar TSR_OPENCL_CONCAT( \
      opencl_tunable_, __LINE__)(op_type, fn)
