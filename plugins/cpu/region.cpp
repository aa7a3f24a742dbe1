// Compile: pick fusions (Conv+BatchNormalization, then +Add, +Relu/Clip, +MaxPool; Gemm/MatMul/Add/
// BN + Relu/Clip) where the intermediate value has no other reader, then build one step per kept
// node.
#include "region.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdint>
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
  arena_ = std::make_unique<tbb::task_arena>(threads);
  {
    // oneTBB runs every task of an arena, on any thread, with the floating-point settings of
    // the thread that initialized it: initialized here with subnormals flushed, every kernel
    // thread of this region flushes them, and no other arena or thread is touched.
    const FlushSubnormals flush;
    arena_->initialize();
  }
  const size_t nv = static_cast<size_t>(region.num_values());
  values_.assign(nv, nullptr);
  std::vector<int32_t> aliases(nv, -1);
  std::vector<bool> is_output(nv, false);
  std::vector<bool> external(nv, false);  // core's buffers: region inputs and outputs
  for (int32_t i = 0; i < region.num_inputs(); ++i) {
    inputs_.push_back(region.input_index(i));
    external[static_cast<size_t>(region.input_index(i))] = true;
  }
  for (int32_t i = 0; i < region.num_outputs(); ++i) {
    outputs_.push_back(region.output_index(i));
    output_bytes_.push_back(plugin::tensor_nbytes(region.value(region.output_index(i))));
    is_output[static_cast<size_t>(region.output_index(i))] = true;
    external[static_cast<size_t>(region.output_index(i))] = true;
  }
  std::vector<std::vector<int32_t>> readers(nv);
  std::vector<int32_t> producer(nv, -1);
  for (int32_t n = 0; n < region.num_nodes(); ++n) {
    const NodeView node = region.node(n);
    for (int32_t i = 0; i < node.num_inputs(); ++i) {
      if (node.input_index(i) >= 0) readers[static_cast<size_t>(node.input_index(i))].push_back(n);
    }
    for (int32_t i = 0; i < node.num_outputs(); ++i) {
      if (node.output_index(i) >= 0) producer[static_cast<size_t>(node.output_index(i))] = n;
    }
  }
  // The single later reader of `value`, when nothing else (other nodes, core) reads it.
  auto sole_reader = [&](int32_t value, int32_t after) -> int32_t {
    const std::vector<int32_t>& r = readers[static_cast<size_t>(value)];
    return is_output[static_cast<size_t>(value)] || r.size() != 1 || r[0] <= after ? -1 : r[0];
  };
  // The same, when it reads `value` as its first input (an op applied to it).
  auto only_reader = [&](int32_t value, int32_t after) -> int32_t {
    const int32_t r = sole_reader(value, after);
    return r >= 0 && region.node(r).input_index(0) == value ? r : -1;
  };
  // The other input of `add`, a reader of `value`, when the Add can run in the epilogue of
  // `value`'s producer `n`: a same-shape float32 Add whose other input is ready before n runs.
  // -1 otherwise.
  auto residual_input = [&](const NodeView& add, int32_t value, int32_t n) -> int32_t {
    if (!same_shape_add(add)) return -1;
    const int32_t a = add.input_index(0), b = add.input_index(1);
    const int32_t other = a == value ? b : a;
    if (other < 0 || other == value) return -1;
    return producer[static_cast<size_t>(other)] < n ? other : -1;
  };

  // The BatchNormalization that alone reads conv's output `value` and can fold into it, or -1.
  auto bn_after = [&](const NodeView& conv, int32_t value, int32_t after) -> int32_t {
    const int32_t r = only_reader(value, after);
    if (r < 0) return -1;
    const NodeView bn = region.node(r);
    const bool folds = bn.op_type() == "BatchNormalization" &&
                       query_batch_norm(region, bn).empty() && bn.input(1) != nullptr &&
                       numel(*bn.input(1)) == conv.output(0)->dims[1];
    return folds ? r : -1;
  };
  // The Relu/Clip that alone reads `value` and can run in its producer's epilogue, or -1.
  auto activation_after = [&](int32_t value, int32_t after, Activation* act) -> int32_t {
    const int32_t r = only_reader(value, after);
    if (r < 0 || !query_unary(region, region.node(r)).empty()) return -1;
    return activation_of(region, region.node(r), act) ? r : -1;
  };
  // The Mul that alone reads `a` and multiplies it by `b` (in either order), or -1.
  auto mul_with = [&](int32_t a, int32_t b, int32_t after) -> int32_t {
    const int32_t m = sole_reader(a, after);
    if (m < 0) return -1;
    const NodeView mul = region.node(m);
    const bool pair = mul.op_type() == "Mul" && mul.num_inputs() == 2 &&
                      ((mul.input_index(0) == a && mul.input_index(1) == b) ||
                       (mul.input_index(0) == b && mul.input_index(1) == a));
    return pair && query_binary(region, mul).empty() ? m : -1;
  };
  // The Mul that makes `sigmoid` (reading `x`) a SiLU: it alone reads the Sigmoid's output and
  // multiplies it by x. -1 otherwise.
  auto silu_mul = [&](const NodeView& sigmoid, int32_t x, int32_t after) -> int32_t {
    if (sigmoid.op_type() != "Sigmoid" || sigmoid.input_index(0) != x) return -1;
    return mul_with(sigmoid.output_index(0), x, after);
  };
  // Whether node input i is a float32 scalar constant within 1e-4 of `want`.
  auto is_scalar = [&](const NodeView& node, int32_t i, float want) {
    const tsr_tensor* t = node.input(i);
    const float* v = constant_f32(t);
    return v != nullptr && numel(*t) == 1 && std::fabs(v[0] - want) <= 1e-4f;
  };
  // The sole later reader of `value` when it is `op` reading `value` as one of its inputs, or -1.
  auto next_op = [&](int32_t value, int32_t after, const char* op) -> int32_t {
    const int32_t r = sole_reader(value, after);
    return r >= 0 && region.node(r).op_type() == op ? r : -1;
  };
  // GELU as PyTorch exports it before opset 20, reading x from `div` (one of x's two readers):
  // Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5). Returns the nodes after x, or an empty list.
  auto gelu_erf_chain = [&](const NodeView& div, int32_t x, int32_t after) {
    std::vector<int32_t> none;
    if (div.op_type() != "Div" || div.input_index(0) != x || !is_scalar(div, 1, 1.41421356f))
      return none;
    const int32_t e = next_op(div.output_index(0), after, "Erf");
    if (e < 0) return none;
    const int32_t a = next_op(region.node(e).output_index(0), after, "Add");
    if (a < 0) return none;
    const NodeView add = region.node(a);
    const int32_t erf_out = region.node(e).output_index(0);
    const int32_t one = add.input_index(0) == erf_out ? 1 : 0;
    if (add.input_index(1 - one) != erf_out || !is_scalar(add, one, 1.0f)) return none;
    const int32_t m = next_op(add.output_index(0), after, "Mul");
    if (m < 0) return none;
    const NodeView mul = region.node(m);
    const bool pair = (mul.input_index(0) == x && mul.input_index(1) == add.output_index(0)) ||
                      (mul.input_index(1) == x && mul.input_index(0) == add.output_index(0));
    if (!pair) return none;
    const int32_t h = next_op(mul.output_index(0), after, "Mul");
    if (h < 0) return none;
    const NodeView half = region.node(h);
    const int32_t k = half.input_index(0) == mul.output_index(0) ? 1 : 0;
    if (half.input_index(1 - k) != mul.output_index(0) || !is_scalar(half, k, 0.5f)) return none;
    for (int32_t n : {e, a, m, h}) {
      if (!query_unary(region, region.node(n)).empty() &&
          !query_binary(region, region.node(n)).empty()) {
        return none;
      }
    }
    return std::vector<int32_t>{e, a, m, h};
  };
  // A pointwise op that alone reads `value` (or the Sigmoid-Mul pair of a SiLU, or PyTorch's
  // Erf form of GELU, whose first nodes both read it) and can run in place right after its
  // producer: fills `post` and the nodes it absorbs, returns the value the chain ends in, or -1.
  auto pointwise_after = [&](int32_t value, int32_t after, UnaryFn* post,
                             std::vector<int32_t>* nodes) -> int32_t {
    if (is_output[static_cast<size_t>(value)]) return -1;
    const std::vector<int32_t>& r = readers[static_cast<size_t>(value)];
    if (r.size() == 1 && r[0] > after) {
      const NodeView u = region.node(r[0]);
      // A QDQ model's activation quantization: QuantizeLinear read only by the matching
      // DequantizeLinear is a float -> float rounding and clamp.
      if (u.op_type() == "QuantizeLinear" && u.input_index(0) == value) {
        const int32_t d = sole_reader(u.output_index(0), r[0]);
        if (d < 0 || !query_quantize(region, u).empty() ||
            !query_quantize(region, region.node(d)).empty() ||
            !quant_pair_fn(u, region.node(d), post)) {
          return -1;
        }
        nodes->insert(nodes->end(), {r[0], d});
        return region.node(d).output_index(0);
      }
      if (u.input_index(0) != value || !query_unary(region, u).empty()) return -1;
      if (!unary_fn_of(region, u, post) || post->is_clamp_only()) return -1;
      nodes->push_back(r[0]);
      return u.output_index(0);
    }
    if (r.size() == 2 && r[0] > after && r[1] > after) {
      for (int32_t s : r) {
        const int32_t m = silu_mul(region.node(s), value, after);
        if (m < 0 || (m != r[0] && m != r[1])) continue;
        *post = UnaryFn{};
        post->op = UnaryOp::kSilu;
        nodes->insert(nodes->end(), {s, m});
        return region.node(m).output_index(0);
      }
      for (int32_t d : r) {
        const std::vector<int32_t> chain = gelu_erf_chain(region.node(d), value, after);
        // The chain's Mul must be x's other reader.
        if (chain.empty() || (chain[2] != r[0] && chain[2] != r[1])) continue;
        *post = UnaryFn{};
        post->op = UnaryOp::kGelu;
        nodes->push_back(d);
        nodes->insert(nodes->end(), chain.begin(), chain.end());
        return region.node(chain.back()).output_index(0);
      }
    }
    return -1;
  };

  // A squeeze-excitation block starting at `pool` (node n): the pool's sole reader a 1x1 conv
  // (squeeze_excite_fc), a clamp or a fusable pointwise op after it, a second 1x1 conv back to
  // the pool's channels, a Sigmoid / HardSigmoid gate, and the Mul of the gate with the pool's
  // own input. Returns the block's nodes after the pool (the first conv first, the second conv,
  // the gate and the Mul last) and fills se's activations, or an empty list.
  auto squeeze_excite_chain = [&](const NodeView& pool, int32_t n,
                                  SqueezeExcite* se) -> std::vector<int32_t> {
    const std::vector<int32_t> none;
    const std::string_view op = pool.op_type();
    const bool pools =
        (op == "GlobalAveragePool" && query_global_average_pool(region, pool).empty()) ||
        (op == "ReduceMean" && query_reduce(region, pool).empty());
    const tsr_tensor* x = pool.input(0);
    const tsr_tensor* s0 = pool.output(0);
    if (!pools || x->rank != 4 || s0->rank != 4 || s0->dims[0] != x->dims[0] ||
        s0->dims[1] != x->dims[1] || s0->dims[2] != 1 || s0->dims[3] != 1) {
      return none;
    }
    const int32_t c1 = only_reader(pool.output_index(0), n);
    if (c1 < 0 || !squeeze_excite_fc(region, region.node(c1), x->dims[1])) return none;
    std::vector<int32_t> chain = {c1};
    int32_t value = region.node(c1).output_index(0), at = c1;
    UnaryFn act1;
    Activation clamp;
    std::vector<int32_t> pointwise;
    if (const int32_t a = activation_after(value, at, &clamp); a >= 0) {
      act1.lo = clamp.lo;
      act1.hi = clamp.hi;
      chain.push_back(a);
      value = region.node(a).output_index(0);
      at = a;
    } else if (const int32_t end = pointwise_after(value, at, &act1, &pointwise); end >= 0) {
      chain.insert(chain.end(), pointwise.begin(), pointwise.end());
      value = end;
      at = *std::max_element(pointwise.begin(), pointwise.end());
    }
    const int32_t c2 = only_reader(value, at);
    if (c2 < 0 || !squeeze_excite_fc(region, region.node(c2), region.node(c1).output(0)->dims[1]) ||
        region.node(c2).output(0)->dims[1] != x->dims[1]) {
      return none;
    }
    const int32_t g = only_reader(region.node(c2).output_index(0), c2);
    UnaryFn gate;
    if (g < 0 ||
        (region.node(g).op_type() != "Sigmoid" && region.node(g).op_type() != "HardSigmoid") ||
        !query_unary(region, region.node(g)).empty() ||
        !unary_fn_of(region, region.node(g), &gate)) {
      return none;
    }
    const int32_t m = mul_with(region.node(g).output_index(0), pool.input_index(0), g);
    if (m < 0 || dims(*region.node(m).output(0)) != dims(*x)) return none;
    se->act1 = act1;
    se->gate = gate;
    chain.insert(chain.end(), {c2, g, m});
    return chain;
  };

  profile_.assign(static_cast<size_t>(region.num_nodes()), 0.0);
  std::vector<std::vector<int32_t>> step_values;
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
    // Takes node r into this node's step: the chain now ends in r's output.
    auto absorb = [&](int32_t r, const char* how) {
      absorbed[static_cast<size_t>(r)] = true;
      output = region.node(r).output_index(0);
      last = r;
      notes_.push_back(std::string(node.name()) + ": " + how + " " + region.node(r).describe());
    };
    std::optional<NodeView> bn;
    const std::string op(node.op_type());
    if (op == "Conv") {
      const int32_t r = bn_after(node, output, n);
      if (r >= 0) {
        bn.emplace(region.node(r));
        absorb(r, "folded");
      }
    }
    // nn.Linear on activations of rank 3 or more exports as MatMul then an Add of the constant
    // bias, in transformer blocks often followed by the residual Add: both run in the GEMM's
    // epilogue, and a GELU after them fuses below as a post op (vit_small: 85 such Adds were
    // separate passes over the MatMul outputs).
    const float* col_bias = nullptr;
    if (op == "MatMul") {
      const int32_t r = sole_reader(output, last);
      if (r >= 0 && query_binary(region, region.node(r)).empty()) {
        col_bias = matmul_column_bias(region.node(r), output);
      }
      if (col_bias != nullptr) absorb(r, "fused");
    }
    // A residual Add after the conv (resnet blocks, mobilenet_v2's projections) or the MatMul
    // (transformer blocks) runs in its epilogue; a Relu after the Add fuses below as usual.
    int32_t residual = -1;
    if (op == "Conv" || op == "MatMul") {
      const int32_t r = sole_reader(output, last);
      if (r >= 0) residual = residual_input(region.node(r), output, n);
      if (residual >= 0) absorb(r, "fused");
    }
    // A QuantizeLinear -> DequantizeLinear pair that had nothing to fuse into (it reads a region
    // input, a view, or a value with other readers): one fake-quantization pass over floats
    // instead of a pass to 8 bits and one back (a QDQ model's input: 187 us of mobilenet_v2's 6.8
    // ms at 2 threads went to the scalar QuantizeLinear).
    std::optional<UnaryFn> fake_quant;
    if (op == "QuantizeLinear") {
      const int32_t d = sole_reader(output, n);
      UnaryFn fn;
      if (d >= 0 && query_quantize(region, region.node(d)).empty() &&
          quant_pair_fn(node, region.node(d), &fn)) {
        fake_quant = fn;
        absorb(d, "fake quantization with");
      }
    }
    // A Sigmoid whose reader multiplies it by the Sigmoid's input computes SiLU in one pass.
    bool silu = false;
    if (op == "Sigmoid") {
      const int32_t m = silu_mul(node, node.input_index(0), n);
      if (m >= 0) {
        silu = true;
        absorb(m, "SiLU with");
      }
    }
    // timm's LayerNorm2d as exported (ConvNeXt, EdgeNeXt): Transpose to NHWC, LayerNormalization
    // over the channels, and usually the Transpose back to NCHW, as one pass over the NCHW
    // tensor: neither transposed copy is made.
    std::optional<NodeView> channel_ln;
    if (op == "Transpose") {
      const int32_t r = only_reader(output, n);
      if (r >= 0 && channel_layer_norm_fusable(region, node, region.node(r))) {
        channel_ln.emplace(region.node(r));
        absorb(r, "fused");
        const int32_t t = only_reader(output, r);
        if (t >= 0 && is_transpose(region.node(t), {0, 3, 1, 2})) absorb(t, "fused");
      }
    }
    // Squeeze-excitation (squeeze_excite.cpp): the pool, its two 1x1 convs with the activation
    // between them, the gate and the Mul back onto the pooled tensor run as one step.
    SqueezeExcite se;
    std::optional<NodeView> se_fc1, se_fc2;
    const std::vector<int32_t> se_chain = squeeze_excite_chain(node, n, &se);
    const bool squeeze_excite = !se_chain.empty();
    if (squeeze_excite) {
      se_fc1.emplace(region.node(se_chain.front()));
      se_fc2.emplace(region.node(se_chain[se_chain.size() - 3]));
      se.fc1 = &*se_fc1;
      se.fc2 = &*se_fc2;
      for (const int32_t f : se_chain) absorb(f, "squeeze-excitation with");
    }
    // Ops whose steps clamp their result with ctx.act (a fused Relu/Clip).
    const bool takes_clamp =
        !squeeze_excite &&
        (op == "Conv" || op == "Gemm" || op == "MatMul" || op == "BatchNormalization" ||
         op == "GlobalAveragePool" || query_binary(region, node).empty() ||
         query_unary(region, node).empty() || op.rfind("Reduce", 0) == 0);
    Activation act;
    if (takes_clamp) {
      const int32_t r = activation_after(output, last, &act);
      if (r >= 0) absorb(r, "fused");
    }
    // A 3x3 stride-2 MaxPool after a stem conv (and its Relu) pools the conv's rows while they
    // are in cache: the full-size conv output is never stored.
    std::optional<NodeView> pool;
    if (op == "Conv" && residual < 0) {
      const int32_t r = only_reader(output, n);
      if (r >= 0 && region.node(r).op_type() == "MaxPool" &&
          query_pool(region, region.node(r)).empty() && conv_pool_fusable(node, region.node(r))) {
        pool.emplace(region.node(r));
        absorbed[static_cast<size_t>(r)] = true;
        output = pool->output_index(0);
        notes_.push_back(std::string(node.name()) + ": fused " + pool->describe());
      }
    }
    // A depthwise conv after a 1x1 conv (mobilenet_v2's expansions) computes its rows from the
    // 1x1 conv's rows while they are in cache: the expanded tensor is never stored.
    std::optional<NodeView> dw, dw_bn;
    Activation dw_act;
    if (op == "Conv" && residual < 0 && !pool) {
      const int32_t r = only_reader(output, n);
      if (r >= 0 && region.node(r).op_type() == "Conv" &&
          query_conv(region, region.node(r)).empty() &&
          conv_depthwise_fusable(node, region.node(r))) {
        dw.emplace(region.node(r));
        absorbed[static_cast<size_t>(r)] = true;
        output = dw->output_index(0);
        notes_.push_back(std::string(node.name()) + ": fused " + dw->describe());
        const int32_t b = bn_after(*dw, output, r);
        if (b >= 0) {
          dw_bn.emplace(region.node(b));
          absorbed[static_cast<size_t>(b)] = true;
          output = dw_bn->output_index(0);
          notes_.push_back(std::string(dw->name()) + ": folded " + dw_bn->describe());
        }
        const int32_t a = activation_after(output, b >= 0 ? b : r, &dw_act);
        if (a >= 0) {
          absorbed[static_cast<size_t>(a)] = true;
          output = region.node(a).output_index(0);
          notes_.push_back(std::string(dw->name()) + ": fused " + region.node(a).describe());
        }
      }
    }
    // A pointwise op after the chain (HardSwish, SiLU, Sigmoid, GELU, ...) runs in place over
    // the chain's output right after its step. Not after ops whose output aliases another
    // value (reshape-likes, Concat's in-place inputs) or after a pointwise op itself.
    UnaryFn post;
    const bool writes_own_buffer = entry->build != build_view && entry->build != build_cast &&
                                   entry->build != build_concat && entry->build != build_unary;
    if (writes_own_buffer && !silu) {
      std::vector<int32_t> fused;
      const int32_t end = pointwise_after(output, std::max(last, n), &post, &fused);
      if (end >= 0) {
        for (int32_t f : fused) {
          absorbed[static_cast<size_t>(f)] = true;
          notes_.push_back(std::string(node.name()) + ": fused " + region.node(f).describe());
        }
        output = end;
      }
    }
    const NodeView* bn_ptr = bn ? &*bn : nullptr;
    const plugin::NodeConfig* config = nullptr;
    for (const plugin::NodeConfig& c : node_configs) {
      if (c.node == n) config = &c;
    }
    BuildContext ctx{region,
                     node,
                     threads,
                     output,
                     act,
                     bn_ptr,
                     &external,
                     &aliases,
                     &views_,
                     &notes_,
                     config,
                     residual,
                     pool ? &*pool : nullptr,
                     dw ? &*dw : nullptr,
                     dw_bn ? &*dw_bn : nullptr,
                     dw_act,
                     post,
                     silu};
    ctx.channel_ln = channel_ln ? &*channel_ln : nullptr;
    ctx.col_bias = col_bias;
    try {
      Step step = channel_ln       ? build_channel_layer_norm(ctx)
                  : fake_quant     ? build_fake_quant(ctx, *fake_quant)
                  : squeeze_excite ? build_squeeze_excite(ctx, se)
                                   : entry->build(ctx);
      if (!post.is_clamp_only() && !ctx.post_done) {
        const int64_t count = numel(region.value(output));
        step = [step = std::move(step), post, output, count](std::vector<float*>& v) {
          step(v);
          unary_parallel(post, v[static_cast<size_t>(output)], v[static_cast<size_t>(output)],
                         count);
        };
      }
      steps_.push_back(std::move(step));
      step_node_.push_back(n);
      // What the step may read or write: the kept node's inputs and outputs and the value the
      // fused chain ends in (absorbed nodes only add constants). A fused node's own first output
      // is never written (the chain's end is), so it gets no buffer.
      std::vector<int32_t> touched = {output, residual};
      for (int32_t i = 0; i < node.num_inputs(); ++i) touched.push_back(node.input_index(i));
      for (int32_t i = output == node.output_index(0) ? 0 : 1; i < node.num_outputs(); ++i) {
        touched.push_back(node.output_index(i));
      }
      step_values.push_back(std::move(touched));
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
