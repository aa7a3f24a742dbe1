// The clml plugin's compiled form of a tsr_region: CLML tensors and ops on the device's shared
// OpenCL context, run in node order on the instance's queue.
//
// Every value inside the region is a CLML tensor in the driver's OPTIMAL layout (a layout only
// the driver knows: the plugin never reads that memory itself). Region inputs and outputs cross
// in dense NCHW: from host memory with clEnqueueWrite/ReadMLTensorDataQCOM, from and to another
// OpenCL plugin's cl_mem with clEnqueueCopyMLTensorDataQCOM (an NCHW tensor over that cl_mem on
// one side), so a value handed over between clml and adreno or mali never visits the host.
// Tensors of rank < 4 are described as (n, c, h, w) with the missing trailing dims 1.
// With precision fp16 / fp16-acc32 the tensors hold halves and boundary values are converted by
// a small OpenCL kernel (float <-> half, vload_half/vstore_half) next to the copy.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "interface.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/plugin_support.hpp"
#include "tessera_opencl/runtime.hpp"

namespace tessera::clml {

using opencl::support::NodeView;

enum class Precision { kFp32, kFp16, kFp16Acc32 };

// (n, c, h, w) of a tensor of rank <= 4 (trailing dims 1).
std::array<cl_uint, 4> dims4(const tsr_tensor& t);

// Throws opencl::ClError "<call> on <device>: <status>" unless `err` is CL_SUCCESS.
void check_call(cl_int err, const std::string& call, const std::string& device);

// One CLML subgraph as JSON for `tessera plan --dump-clml` (tsr_compile_options.dump_dir).
class SubgraphDump {
 public:
  void add(const std::string& json_op) { ops_.push_back(json_op); }
  void set_header(const std::string& json_fields) { header_ = json_fields; }
  // Writes <dir>/clml-subgraph-<k>.json with the first k not taken; returns the paths written.
  std::vector<std::string> write(const char* dir, const char* plugin) const;

 private:
  std::string header_;
  std::vector<std::string> ops_;
};

// Owns every CLML object of one compiled region.
class CompiledRegion {
 public:
  CompiledRegion() = default;
  ~CompiledRegion();
  CompiledRegion(const CompiledRegion&) = delete;
  CompiledRegion& operator=(const CompiledRegion&) = delete;

  void execute(const void* const* in, void* const* out);
  void execute(const tsr_io* in, const tsr_io* out);

  std::vector<std::string> node_labels;
  std::vector<double> last_times_us;  // per node; empty unless `profile`
  bool profile = true;                // an event per op (tsr_compile_options.profile)

 private:
  friend class Lowering;
  struct Boundary {
    cl_ml_tensor_qcom tensor = nullptr;  // the region's OPTIMAL tensor of the value
    cl_mem memory = nullptr;
    cl_ml_tensor_qcom nchw = nullptr;  // NCHW description of the same value (no memory of its own)
    size_t bytes = 0;                  // float32 bytes of the value
    size_t elements = 0;
    std::shared_ptr<opencl::Buffer> staging;  // float32 (fp32: unused) and half NCHW buffers
    std::shared_ptr<opencl::Buffer> half;
  };
  struct OpStep {
    int32_t node;
    cl_ml_op_qcom op;
    std::string what;  // "clCreateMLOpConvolutionForwardQCOM op of node 'x' (Conv)"
  };
  void enqueue_in(const Boundary& b, const tsr_io& io);
  void enqueue_out(const Boundary& b, const tsr_io& io);
  void convert(const Boundary& b, bool to_half);

  std::shared_ptr<const Api> api_;
  std::shared_ptr<opencl::Context> context_;
  bool half_ = false;
  int32_t num_nodes_ = 0;
  std::vector<Boundary> inputs_, outputs_;
  std::vector<OpStep> ops_;
  std::vector<cl_ml_tensor_qcom> tensors_;
  std::vector<std::shared_ptr<opencl::Buffer>> memory_;
  cl_ml_tensor_mem_desc_set_qcom set_ = nullptr;
  cl_ml_tuningcache_qcom tuning_cache_ = nullptr;
  opencl::Kernel to_half_, to_float_;
  std::string region_label_;
};

// Programs of the fp16 boundary conversions, per context (the OpenClPlugin pool slot).
struct ProgramPool {};

// Builds one CompiledRegion: node lowerings create tensors and ops through it; finish() sizes and
// allocates the tensors' memory, writes the constants and binds everything in a descriptor set.
class Lowering {
 public:
  Lowering(const tsr_region& region, std::shared_ptr<opencl::Context> context,
           std::shared_ptr<const Api> api, Precision precision);
  ~Lowering();
  Lowering(const Lowering&) = delete;
  Lowering& operator=(const Lowering&) = delete;
  Lowering(Lowering&&) = default;

  // Filled by the shared OpenClPlugin: configs core asked for (CLML has no knobs), the dump.
  std::map<int32_t, opencl::support::RequestedConfig> requests;
  bool record_sources = false;
  std::string current_node;
  SubgraphDump sources;
  // Target option tuning: "off", "use" (load the device's tuning cache), "build" (tune every op
  // and store the cache).
  std::string tuning = "use";
  std::string tuning_cache_path;

  const tsr_region& region() const { return region_; }
  const Api& api() const { return *api_; }
  const std::string& device() const { return device_; }
  cl_context context() const { return context_->get(); }
  cl_arithmetic_mode_qcom mode() const;
  cl_channel_type data_type() const { return half_ ? CL_HALF_FLOAT : CL_FLOAT; }
  // The region's tuning cache, passed to every op creation (null with tuning "off"); created at
  // the first call and filled from tuning_cache_path when that file exists.
  cl_ml_tuningcache_qcom tuning_cache();

  // The OPTIMAL tensor of value `id` for an op to read (a constant is written in finish()).
  cl_ml_tensor_qcom input(int32_t id);
  // The OPTIMAL tensor of value `id`, written by the current node.
  cl_ml_tensor_qcom output(int32_t id);
  // A constant tensor of `dims` holding `values` (NCHW order), written in finish().
  cl_ml_tensor_qcom constant(const std::array<cl_uint, 4>& dims, std::vector<float> values);
  // A tensor standing for an absent optional operand (CL_TENSOR_UNUSED_QCOM, no memory).
  cl_ml_tensor_qcom unused();

  // Registers op `op` (created by `call`) as node `node`'s work; throws naming call and status
  // when `err` is not CL_SUCCESS (the op, if any, is released).
  void add_op(int32_t node, cl_int err, cl_ml_op_qcom op, const char* call,
              const std::string& json_attributes);

  // Node `node` is computed by an earlier node's op (an activation fused into a convolution).
  void fuse(int32_t node) { fused_.insert(node); }
  bool fused(int32_t node) const { return fused_.count(node) != 0; }
  const std::vector<int32_t>& consumers(int32_t value) const;
  bool is_region_output(int32_t value) const;

  std::unique_ptr<CompiledRegion> finish();

 private:
  cl_ml_tensor_qcom make_tensor(const std::array<cl_uint, 4>& dims, cl_ml_tensor_layout_qcom layout,
                                cl_channel_type type);
  std::string json_value(int32_t id) const;

  const tsr_region& region_;
  std::shared_ptr<opencl::Context> context_;
  std::shared_ptr<const Api> api_;
  std::string device_;
  bool half_;
  Precision precision_;
  std::map<int32_t, cl_ml_tensor_qcom> values_;
  std::vector<std::pair<cl_ml_tensor_qcom, std::vector<float>>> constants_;
  std::set<int32_t> fused_;
  std::map<int32_t, std::vector<int32_t>> consumers_;
  std::vector<int32_t> op_inputs_, op_outputs_;  // value ids the current op touched, for the dump
  std::vector<std::string> op_constants_;        // constants it created, as JSON
  std::vector<cl_ml_tensor_qcom> unused_;
  // Half copies of the constants of an fp16 region: the weight writes are asynchronous, and on a
  // failure the queue is drained by ~CompiledRegion (compiled_, declared last, goes first).
  std::vector<std::vector<uint16_t>> halves_;
  bool tuning_ready_ = false;
  std::unique_ptr<CompiledRegion> compiled_;
};

}  // namespace tessera::clml
