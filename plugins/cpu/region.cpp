// Compile: one step per node the fusion plan keeps (fusion.hpp), intermediates placed by liveness
// in one arena; execute runs the steps in the region's TBB arena.
#include "region.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>
#include <utility>

#include "fusion.hpp"

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

namespace {

// The most threads a region runs on. oneTBB sizes an arena's slots and mailboxes by the count
// when the arena starts and crashes there (SIGSEGV) on counts like 1000000; no machine this
// plugin runs on has more cores than this, and core's own entry points refuse more too.
constexpr int32_t kMaxThreads = 1024;

// `num_threads` as the compile options give it (0 = default), checked before any arena exists.
int32_t region_threads(int32_t num_threads) {
  if (num_threads < 0 || num_threads > kMaxThreads) {
    throw plugin::Failure(TSR_INVALID_ARGUMENT,
                          "cpu: num_threads " + std::to_string(num_threads) + " is outside 0.." +
                              std::to_string(kMaxThreads) +
                              " (0 = one per physical core); the cpu plugin cannot run a "
                              "region on that many threads");
  }
  return num_threads > 0 ? num_threads : physical_cores();
}

}  // namespace

CpuRegion::CpuRegion(const RegionView& region, int32_t num_threads,
                     const std::vector<plugin::NodeConfig>& node_configs) {
  const int32_t threads = region_threads(num_threads);
  start_arena(threads);
  const std::vector<bool> external = bind_io(region);
  std::vector<int32_t> aliases(static_cast<size_t>(region.num_values()), -1);
  const std::vector<std::vector<int32_t>> step_values =
      build_steps(region, threads, node_configs, external, &aliases);
  place_values(region, step_values, external, aliases);
}

void CpuRegion::start_arena(int32_t threads) {
  arena_ = std::make_unique<tbb::task_arena>(threads);
  // oneTBB runs every task of an arena, on any thread, with the floating-point settings of
  // the thread that initialized it: initialized here with subnormals flushed, every kernel
  // thread of this region flushes them, and no other arena or thread is touched.
  const FlushSubnormals flush;
  arena_->initialize();
}

std::vector<bool> CpuRegion::bind_io(const RegionView& region) {
  const size_t nv = static_cast<size_t>(region.num_values());
  values_.assign(nv, nullptr);
  std::vector<bool> external(nv, false);
  for (int32_t i = 0; i < region.num_inputs(); ++i) {
    inputs_.push_back(region.input_index(i));
    external[static_cast<size_t>(region.input_index(i))] = true;
  }
  for (int32_t i = 0; i < region.num_outputs(); ++i) {
    outputs_.push_back(region.output_index(i));
    output_bytes_.push_back(plugin::tensor_nbytes(region.value(region.output_index(i))));
    external[static_cast<size_t>(region.output_index(i))] = true;
  }
  return external;
}

std::vector<std::vector<int32_t>> CpuRegion::build_steps(
    const RegionView& region, int32_t threads, const std::vector<plugin::NodeConfig>& configs,
    const std::vector<bool>& external, std::vector<int32_t>* aliases) {
  profile_.assign(static_cast<size_t>(region.num_nodes()), 0.0);
  std::vector<std::vector<int32_t>> step_values;
  FusionPlanner planner(region);
  for (int32_t n = 0; n < region.num_nodes(); ++n) {
    if (planner.absorbed(n)) continue;
    const NodeView node = region.node(n);
    const OpEntry* entry = find_op(node.op_type());
    if (entry == nullptr) {
      throw plugin::Failure(TSR_UNSUPPORTED, node.describe() + ": op not implemented by cpu");
    }
    const std::string why = entry->query(region, node);
    if (!why.empty()) throw plugin::Failure(TSR_UNSUPPORTED, node.describe() + ": " + why);
    const Fusion f = planner.plan(n, *entry);
    notes_.insert(notes_.end(), f.notes.begin(), f.notes.end());
    const plugin::NodeConfig* config = nullptr;
    for (const plugin::NodeConfig& c : configs) {
      if (c.node == n) config = &c;
    }
    BuildContext ctx{region,
                     f.node,
                     threads,
                     f.output,
                     f.act,
                     f.bn ? &*f.bn : nullptr,
                     &external,
                     aliases,
                     &views_,
                     &notes_,
                     config,
                     f.residual,
                     f.pool ? &*f.pool : nullptr,
                     f.dw ? &*f.dw : nullptr,
                     f.dw_bn ? &*f.dw_bn : nullptr,
                     f.dw_act,
                     f.post,
                     f.silu};
    ctx.channel_ln = f.channel_ln ? &*f.channel_ln : nullptr;
    ctx.col_bias = f.col_bias;
    step_values.push_back(build_step(f, *entry, ctx));
  }
  return step_values;
}

// Builds the step of one fusion (the kept node's op, or the fused block's own builder) and the
// pass of its post op where the builder did not take it; returns the values the step touches.
std::vector<int32_t> CpuRegion::build_step(const Fusion& f, const OpEntry& entry,
                                           BuildContext& ctx) {
  const NodeView& node = f.node;
  const int32_t output = f.output;
  try {
    const SqueezeExcite se = f.squeeze_excite_block();
    Step step = f.channel_ln         ? build_channel_layer_norm(ctx)
                : f.fake_quant       ? build_fake_quant(ctx, *f.fake_quant)
                : f.squeeze_excite() ? build_squeeze_excite(ctx, se)
                                     : entry.build(ctx);
    if (!f.post.is_clamp_only() && !ctx.post_done) {
      const int64_t count = numel(ctx.region.value(output));
      step = [step = std::move(step), post = f.post, output, count](std::vector<float*>& v) {
        step(v);
        unary_parallel(post, v[static_cast<size_t>(output)], v[static_cast<size_t>(output)], count);
      };
    }
    steps_.push_back(std::move(step));
    step_node_.push_back(node.index());
    // What the step may read or write: the kept node's inputs and outputs and the value the
    // fused chain ends in (absorbed nodes only add constants). A fused node's own first output
    // is never written (the chain's end is), so it gets no buffer.
    std::vector<int32_t> touched = {output, f.residual};
    for (int32_t i = 0; i < node.num_inputs(); ++i) touched.push_back(node.input_index(i));
    for (int32_t i = output == node.output_index(0) ? 0 : 1; i < node.num_outputs(); ++i) {
      touched.push_back(node.output_index(i));
    }
    return touched;
  } catch (const plugin::Failure&) {
    throw;
  } catch (const std::exception& e) {
    throw plugin::Failure(TSR_COMPILE_FAILED, node.describe() + ": " + e.what());
  }
}

// Buffers: constants point at core's data (valid until release); region inputs/outputs are
// core's; aliases (reshape-likes) share their source's buffer. Every other value lives in one
// arena at an offset chosen by liveness, so values whose step ranges do not overlap share
// memory: the working set of a network stays cache-sized instead of one buffer per
// intermediate (mobilenet_v2: ~6 MiB instead of ~50 MiB, and its 1x1 convs ran 2x slower
// writing outputs that had fallen out of L3).
void CpuRegion::place_values(const RegionView& region,
                             const std::vector<std::vector<int32_t>>& step_values,
                             const std::vector<bool>& external,
                             const std::vector<int32_t>& aliases) {
  const size_t nv = static_cast<size_t>(region.num_values());
  auto root = [&](int32_t v) {
    for (size_t hops = 0; hops < nv && aliases[static_cast<size_t>(v)] >= 0; ++hops) {
      v = aliases[static_cast<size_t>(v)];
    }
    return v;
  };
  std::vector<int64_t> first(nv, -1), last(nv, -1);
  for (size_t s = 0; s < step_values.size(); ++s) {
    for (int32_t t : step_values[s]) {
      if (t < 0) continue;
      const size_t r = static_cast<size_t>(root(t));
      if (first[r] < 0) first[r] = static_cast<int64_t>(s);
      last[r] = static_cast<int64_t>(s);
    }
  }
  constexpr int64_t kAlign = 16;  // floats: 64 bytes, a cache line
  struct Slot {
    size_t value;
    int64_t floats, offset;
  };
  std::vector<Slot> slots;
  for (size_t v = 0; v < nv; ++v) {
    const tsr_tensor& t = region.value(static_cast<int32_t>(v));
    if (t.data != nullptr) {
      values_[v] = const_cast<float*>(static_cast<const float*>(t.data));
    } else if (!external[v] && aliases[v] < 0 && first[v] >= 0) {
      const int64_t bytes = static_cast<int64_t>(plugin::tensor_nbytes(t));
      const int64_t floats = (bytes + 4 * kAlign - 1) / (4 * kAlign) * kAlign;
      slots.push_back(Slot{v, std::max<int64_t>(floats, kAlign), 0});
    }
  }
  // Largest first, each at the lowest offset clear of every placed value live at the same time.
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) {
    return a.floats != b.floats ? a.floats > b.floats : a.value < b.value;
  });
  int64_t arena_floats = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of live placed values
    for (size_t j = 0; j < i; ++j) {
      const size_t a = slots[i].value, b = slots[j].value;
      if (first[a] <= last[b] && first[b] <= last[a]) {
        busy.emplace_back(slots[j].offset, slots[j].offset + slots[j].floats);
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + slots[i].floats <= begin) break;
      offset = std::max(offset, end);
    }
    slots[i].offset = offset;
    arena_floats = std::max(arena_floats, offset + slots[i].floats);
  }
  memory_.assign(static_cast<size_t>(arena_floats + kAlign), 0.0f);
  float* base = memory_.data();
  base += (kAlign - (reinterpret_cast<uintptr_t>(base) / sizeof(float)) % kAlign) % kAlign;
  for (const Slot& slot : slots) values_[slot.value] = base + slot.offset;
  notes_.push_back("intermediates: " + std::to_string(slots.size()) + " values in a " +
                   std::to_string(arena_floats * 4 / 1024) + " KiB arena");
}

void CpuRegion::execute(const void* const* inputs, void* const* outputs) {
  std::vector<float*> v = values_;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    v[static_cast<size_t>(outputs_[i])] = static_cast<float*>(outputs[i]);
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    v[static_cast<size_t>(inputs_[i])] = const_cast<float*>(static_cast<const float*>(inputs[i]));
  }
  // Inner views first resolve against their base, which may itself be a view made later.
  for (auto it = views_.rbegin(); it != views_.rend(); ++it) {
    v[static_cast<size_t>(it->value)] = v[static_cast<size_t>(it->base)] + it->offset;
  }
  std::fill(profile_.begin(), profile_.end(), 0.0);
  // The calling thread runs steps too; its own control bits come back after the run.
  const FlushSubnormals flush;
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
