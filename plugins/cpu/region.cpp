// Compile: pick fusions (Conv+BatchNormalization, then +Relu/Clip; Gemm/MatMul/Add/BN + Relu/Clip)
// where the intermediate value has no other reader, then build one step per kept node.
#include "region.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <thread>
#include <utility>

namespace tessera::cpu {

int32_t physical_cores() {
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string line, package = "0";
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "physical id") package = value;
    if (key == "core id") cores.insert({package, value});
  }
  // aarch64 kernels print no core ids; every listed processor is a core there.
  int32_t n = !cores.empty()
                  ? static_cast<int32_t>(cores.size())
                  : static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  // Never more threads than CPUs this process may run on (taskset, container cpusets).
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    n = std::min(n, std::max(1, CPU_COUNT(&allowed)));
  }
  return n;
}

CpuRegion::CpuRegion(const RegionView& region, int32_t num_threads,
                     const std::vector<plugin::NodeConfig>& node_configs) {
  const int32_t threads = num_threads > 0 ? num_threads : physical_cores();
  arena_ = std::make_unique<tbb::task_arena>(threads);
  const size_t nv = static_cast<size_t>(region.num_values());
  values_.assign(nv, nullptr);
  scratch_.resize(nv);
  std::vector<int32_t> aliases(nv, -1);
  std::vector<bool> is_output(nv, false);
  for (int32_t i = 0; i < region.num_inputs(); ++i) inputs_.push_back(region.input_index(i));
  for (int32_t i = 0; i < region.num_outputs(); ++i) {
    outputs_.push_back(region.output_index(i));
    output_bytes_.push_back(plugin::tensor_nbytes(region.value(region.output_index(i))));
    is_output[static_cast<size_t>(region.output_index(i))] = true;
  }
  std::vector<std::vector<int32_t>> readers(nv);
  for (int32_t n = 0; n < region.num_nodes(); ++n) {
    const NodeView node = region.node(n);
    for (int32_t i = 0; i < node.num_inputs(); ++i) {
      if (node.input_index(i) >= 0) readers[static_cast<size_t>(node.input_index(i))].push_back(n);
    }
  }
  // The single later reader of `value`, when nothing else (other nodes, core) reads it.
  auto only_reader = [&](int32_t value, int32_t after) -> int32_t {
    const std::vector<int32_t>& r = readers[static_cast<size_t>(value)];
    if (is_output[static_cast<size_t>(value)] || r.size() != 1 || r[0] <= after) return -1;
    const NodeView reader = region.node(r[0]);
    return reader.input_index(0) == value ? r[0] : -1;
  };

  profile_.assign(static_cast<size_t>(region.num_nodes()), 0.0);
  std::vector<bool> absorbed(static_cast<size_t>(region.num_nodes()), false);
  for (int32_t n = 0; n < region.num_nodes(); ++n) {
    if (absorbed[static_cast<size_t>(n)]) continue;
    const NodeView node = region.node(n);
    const OpEntry* entry = find_op(node.op_type());
    if (entry == nullptr) {
      throw plugin::Failure(TSR_UNSUPPORTED, node.describe() + ": op not implemented by cpu");
    }
    const std::string why = entry->query(region, node);
    if (!why.empty()) throw plugin::Failure(TSR_UNSUPPORTED, node.describe() + ": " + why);

    int32_t output = node.output_index(0);
    int32_t last = n;
    std::optional<NodeView> bn;
    const std::string op(node.op_type());
    if (op == "Conv") {
      const int32_t r = only_reader(output, n);
      if (r >= 0 && region.node(r).op_type() == "BatchNormalization" &&
          query_batch_norm(region, region.node(r)).empty() && region.node(r).input(1) != nullptr &&
          numel(*region.node(r).input(1)) == node.output(0)->dims[1]) {
        bn.emplace(region.node(r));
        absorbed[static_cast<size_t>(r)] = true;
        output = bn->output_index(0);
        last = r;
        notes_.push_back(std::string(node.name()) + ": folded " + bn->describe());
      }
    }
    Activation act;
    if (op == "Conv" || op == "Gemm" || op == "MatMul" || op == "Add" ||
        op == "BatchNormalization") {
      const int32_t r = only_reader(output, last);
      if (r >= 0 && query_activation(region, region.node(r)).empty() &&
          activation_of(region, region.node(r), &act)) {
        absorbed[static_cast<size_t>(r)] = true;
        output = region.node(r).output_index(0);
        notes_.push_back(std::string(node.name()) + ": fused " + region.node(r).describe());
      }
    }
    const NodeView* bn_ptr = bn ? &*bn : nullptr;
    const plugin::NodeConfig* config = nullptr;
    for (const plugin::NodeConfig& c : node_configs) {
      if (c.node == n) config = &c;
    }
    BuildContext ctx{region, node, threads, output, act, bn_ptr, &aliases, &notes_, config};
    try {
      steps_.push_back(entry->build(ctx));
      step_node_.push_back(n);
    } catch (const plugin::Failure&) {
      throw;
    } catch (const std::exception& e) {
      throw plugin::Failure(TSR_COMPILE_FAILED, node.describe() + ": " + e.what());
    }
  }

  // Buffers: constants point at core's data (valid until release); every other value that is
  // neither a region input/output nor an alias gets its own scratch buffer.
  std::vector<bool> external(nv, false);
  for (int32_t v : inputs_) external[static_cast<size_t>(v)] = true;
  for (int32_t v : outputs_) external[static_cast<size_t>(v)] = true;
  for (size_t v = 0; v < nv; ++v) {
    const tsr_tensor& t = region.value(static_cast<int32_t>(v));
    if (t.data != nullptr) {
      values_[v] = const_cast<float*>(static_cast<const float*>(t.data));
    } else if (!external[v] && aliases[v] < 0) {
      const size_t bytes = plugin::tensor_nbytes(t);
      scratch_[v].assign((bytes + sizeof(float) - 1) / sizeof(float), 0.0f);
      values_[v] = scratch_[v].data();
    }
  }
}

void CpuRegion::execute(const void* const* inputs, void* const* outputs) {
  std::vector<float*> v = values_;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    v[static_cast<size_t>(outputs_[i])] = static_cast<float*>(outputs[i]);
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    v[static_cast<size_t>(inputs_[i])] = const_cast<float*>(static_cast<const float*>(inputs[i]));
  }
  std::fill(profile_.begin(), profile_.end(), 0.0);
  arena_->execute([&] {
    for (size_t s = 0; s < steps_.size(); ++s) {
      const auto start = std::chrono::steady_clock::now();
      steps_[s](v);
      profile_[static_cast<size_t>(step_node_[s])] =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count();
    }
  });
  // A region input that is also an output (nothing computed it) still has to reach the output.
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const size_t o = static_cast<size_t>(outputs_[i]);
    if (v[o] != outputs[i]) std::memcpy(outputs[i], v[o], output_bytes_[i]);
  }
}

}  // namespace tessera::cpu
