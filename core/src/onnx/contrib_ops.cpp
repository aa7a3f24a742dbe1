// com.microsoft operators and QLinearConv / QLinearMatMul lowered to default-domain ONNX.
//
// ONNX Runtime's tools write these into the models users get: `quantize_static` in QOperator
// form (QLinearConv, QLinearAdd, QLinearConcat, ...), the transformer optimizer (Gelu, FastGelu,
// SkipLayerNormalization) and saved optimized graphs (FusedConv, FusedGemm). Each is defined by
// ONNX Runtime's contrib-op documentation as a composition of default-domain ops, and is written
// here as exactly that composition, so every plugin that runs the parts runs the model, and the
// int8 pass sees the same DequantizeLinear -> op -> QuantizeLinear units as in QDQ models.
#include "onnx/contrib_ops.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::importer {
namespace {

constexpr const char* kMicrosoft = "com.microsoft";

onnx::AttributeProto int_attr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto float_attr(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

float attr_float(const onnx::NodeProto& n, const std::string& name, float fallback) {
  const onnx::AttributeProto* a = find_attr(n, name);
  return a != nullptr ? a->f() : fallback;
}

int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* a = find_attr(n, name);
  return a != nullptr ? a->i() : fallback;
}

class Rewriter {
 public:
  Rewriter(onnx::GraphProto& graph, const std::string& source) : g_(graph), source_(source) {
    for (const auto& v : g_.input()) taken_.insert(v.name());
    for (const auto& v : g_.output()) taken_.insert(v.name());
    for (const auto& t : g_.initializer()) {
      taken_.insert(t.name());
      initializers_[t.name()] = &t;
    }
    for (const auto& n : g_.node()) {
      for (const auto& o : n.output()) taken_.insert(o);
    }
    const auto declare = [&](const onnx::ValueInfoProto& v) {
      if (v.type().tensor_type().has_shape()) {
        ranks_[v.name()] = v.type().tensor_type().shape().dim_size();
      }
    };
    for (const auto& v : g_.input()) declare(v);
    for (const auto& v : g_.value_info()) declare(v);
  }

  void run() {
    std::vector<onnx::NodeProto> out;
    out.reserve(static_cast<size_t>(g_.node_size()));
    for (int i = 0; i < g_.node_size(); ++i) {
      onnx::NodeProto& n = *g_.mutable_node(i);
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) lower_contrib_ops(*a.mutable_g(), source_);
        for (auto& sub : *a.mutable_graphs()) lower_contrib_ops(sub, source_);
      }
      out_ = &out;
      node_ = &n;
      name_ = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
      if (!lower(n)) out.push_back(n);
    }
    g_.clear_node();
    for (auto& n : out) *g_.add_node() = std::move(n);
    // Initializers were added while lowering; the pointers into them are not used after this.
    initializers_.clear();
  }

 private:
  using Inputs = std::vector<std::string>;
  using Attrs = std::vector<onnx::AttributeProto>;

  bool lower(const onnx::NodeProto& n) {
    const std::string& op = n.op_type();
    if (n.domain().empty() || n.domain() == "ai.onnx") {
      if (op == "QLinearConv") return qlinear_conv();
      if (op == "QLinearMatMul") return qlinear_matmul();
      return false;
    }
    if (n.domain() != kMicrosoft) return false;
    if (op == "QLinearAdd" || op == "QLinearMul") return qlinear_binary(op.substr(7));
    if (op == "QLinearConcat") return qlinear_concat();
    if (op == "QLinearGlobalAveragePool" || op == "QLinearAveragePool") return qlinear_pool();
    if (op == "QLinearSigmoid") return qlinear_unary("Sigmoid", {});
    if (op == "QLinearLeakyRelu") {
      return qlinear_unary("LeakyRelu", {float_attr("alpha", attr_float(n, "alpha", 0.01f))});
    }
    if (op == "QGemm") return qgemm();
    if (op == "FusedConv" || op == "FusedGemm") return fused(op.substr(5));
    if (op == "Gelu") {
      require({0});
      return gelu(in(0));
    }
    if (op == "BiasGelu") {
      require({0, 1});
      return gelu(emit("Add", {in(0), in(1)}, "biased"));
    }
    if (op == "FastGelu") return fast_gelu();
    if (op == "QuickGelu") return quick_gelu();
    if (op == "SkipLayerNormalization") return skip_layer_norm();
    if (op == "LayerNormalization") return layer_norm();
    if (op == "Attention") return attention();
    return false;
  }

  // ---- building blocks ----

  [[noreturn]] void fail(const std::string& why) const {
    throw Error(source_ + ": node '" + name_ + "' (" + node_->domain() + ":" + node_->op_type() +
                "): " + why);
  }

  // Input i's name, "" when absent or omitted.
  std::string in(int i) const { return i < node_->input_size() ? node_->input(i) : std::string(); }
  // Fails naming the first of the required inputs `indices` that is absent.
  void require(std::initializer_list<int> indices) const {
    for (int i : indices) {
      if (in(i).empty()) fail("required input " + std::to_string(i) + " is missing");
    }
  }
  std::string out(int i) const {
    return i < node_->output_size() ? node_->output(i) : std::string();
  }

  std::string fresh(const std::string& hint) {
    std::string name = name_ + "/" + hint;
    for (int k = 2; taken_.count(name) != 0; ++k) name = name_ + "/" + hint + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

  // Emits `op` reading `inputs`; its one output is `output`, or a fresh value named after `hint`.
  std::string emit(const std::string& op, const Inputs& inputs, const std::string& hint,
                   const Attrs& attrs = {}, const std::string& output = "") {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(name_ + "/" + hint);
    for (const std::string& i : inputs) n.add_input(i);
    const std::string result = output.empty() ? fresh(hint) : output;
    n.add_output(result);
    for (const auto& a : attrs) *n.add_attribute() = a;
    out_->push_back(std::move(n));
    return result;
  }

  std::string scalar(float value, const std::string& hint) {
    const std::string name = fresh(hint);
    onnx::TensorProto* t = g_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(value);
    return name;
  }

  std::string dequantize(const std::string& x, const std::string& scale, const std::string& zero,
                         const std::string& hint, std::optional<int64_t> axis = std::nullopt) {
    Attrs attrs;
    if (axis) attrs.push_back(int_attr("axis", *axis));
    return emit("DequantizeLinear", zero.empty() ? Inputs{x, scale} : Inputs{x, scale, zero}, hint,
                attrs);
  }

  void quantize(const std::string& y, const std::string& scale, const std::string& zero,
                const std::string& output) {
    emit("QuantizeLinear", zero.empty() ? Inputs{y, scale} : Inputs{y, scale, zero}, "q", {},
         output);
  }

  // The per-channel axis of a weight whose scale is an initializer with more than one element.
  std::optional<int64_t> channel_axis(const std::string& scale, int64_t axis) const {
    auto it = initializers_.find(scale);
    if (it == initializers_.end()) return std::nullopt;
    int64_t count = 1;
    for (int64_t d : it->second->dims()) count *= d;
    return count > 1 ? std::optional<int64_t>(axis) : std::nullopt;
  }

  std::optional<int64_t> rank_of_initializer(const std::string& name) const {
    auto it = initializers_.find(name);
    if (it == initializers_.end()) return std::nullopt;
    return it->second->dims_size();
  }

  // Copies the node's attributes but those named in `skip`.
  Attrs attrs_except(const std::set<std::string>& skip) const {
    Attrs attrs;
    for (const auto& a : node_->attribute()) {
      if (skip.count(a.name()) == 0) attrs.push_back(a);
    }
    return attrs;
  }

  // ---- quantized ops: DequantizeLinear -> float op -> QuantizeLinear ----

  bool qlinear_binary(const std::string& op) {
    require({0, 1, 3, 4, 6});
    const std::string a = dequantize(in(0), in(1), in(2), "dq_a");
    const std::string b = dequantize(in(3), in(4), in(5), "dq_b");
    quantize(emit(op, {a, b}, "float"), in(6), in(7), out(0));
    return true;
  }

  bool qlinear_unary(const std::string& op, const Attrs& attrs) {
    require({0, 1, 3});
    const std::string x = dequantize(in(0), in(1), in(2), "dq_x");
    quantize(emit(op, {x}, "float", attrs), in(3), in(4), out(0));
    return true;
  }

  bool qlinear_concat() {
    require({0});
    if ((node_->input_size() - 2) % 3 != 0 || node_->input_size() < 5) {
      fail("inputs are Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input; got " +
           std::to_string(node_->input_size()) + " inputs");
    }
    Inputs parts;
    for (int i = 2; i + 2 < node_->input_size(); i += 3) {
      require({i, i + 1});
      parts.push_back(dequantize(in(i), in(i + 1), in(i + 2), "dq_" + std::to_string(i / 3)));
    }
    quantize(emit("Concat", parts, "float", {int_attr("axis", attr_int(*node_, "axis", 0))}), in(0),
             in(1), out(0));
    return true;
  }

  bool qlinear_pool() {
    require({0, 1, 3});
    const bool global = node_->op_type() == "QLinearGlobalAveragePool";
    const bool last = attr_int(*node_, "channels_last", 0) != 0;
    std::string x = dequantize(in(0), in(1), in(2), "dq_x");
    onnx::AttributeProto to_nchw, to_nhwc;
    if (last) {
      // Channels-last pools are rank 4 in ONNX Runtime's quantizer output (NHWC).
      to_nchw.set_name("perm");
      to_nchw.set_type(onnx::AttributeProto::INTS);
      for (int64_t p : {0, 3, 1, 2}) to_nchw.add_ints(p);
      to_nhwc = to_nchw;
      to_nhwc.clear_ints();
      for (int64_t p : {0, 2, 3, 1}) to_nhwc.add_ints(p);
      x = emit("Transpose", {x}, "to_nchw", {to_nchw});
    }
    std::string y = global ? emit("GlobalAveragePool", {x}, "float")
                           : emit("AveragePool", {x}, "float", attrs_except({"channels_last"}));
    if (last) y = emit("Transpose", {y}, "to_nhwc", {to_nhwc});
    quantize(y, in(3), in(4), out(0));
    return true;
  }

  // The int32 bias of a quantized Conv or Gemm: scale x_scale * w_scale (per output channel).
  std::string dequantize_bias(const std::string& bias, const std::string& x_scale,
                              const std::string& w_scale) {
    const std::string scale = emit("Mul", {x_scale, w_scale}, "bias_scale");
    return dequantize(bias, scale, "", "dq_bias", channel_axis(w_scale, 0));
  }

  bool qlinear_conv() {
    require({0, 1, 3, 4, 6});
    const std::string x = dequantize(in(0), in(1), in(2), "dq_x");
    const std::string w = dequantize(in(3), in(4), in(5), "dq_w", channel_axis(in(4), 0));
    Inputs conv{x, w};
    if (!in(8).empty()) conv.push_back(dequantize_bias(in(8), in(1), in(4)));
    quantize(emit("Conv", conv, "float", attrs_except({})), in(6), in(7), out(0));
    return true;
  }

  bool qlinear_matmul() {
    require({0, 1, 3, 4, 6});
    const std::string a = dequantize(in(0), in(1), in(2), "dq_a");
    // A per-column scale of B runs along its last axis.
    std::optional<int64_t> axis;
    if (auto rank = rank_of_initializer(in(3)); rank && *rank >= 1) {
      axis = channel_axis(in(4), *rank - 1);
    }
    const std::string b = dequantize(in(3), in(4), in(5), "dq_b", axis);
    quantize(emit("MatMul", {a, b}, "float"), in(6), in(7), out(0));
    return true;
  }

  bool qgemm() {
    require({0, 1, 3, 4});
    const bool trans_b = attr_int(*node_, "transB", 0) != 0;
    const std::string a = dequantize(in(0), in(1), in(2), "dq_a");
    const std::string b = dequantize(in(3), in(4), in(5), "dq_b", channel_axis(in(4), trans_b ? 0 : 1));
    Inputs gemm{a, b};
    if (!in(6).empty()) gemm.push_back(dequantize_bias(in(6), in(1), in(4)));
    const Attrs attrs = attrs_except({});
    if (in(7).empty()) {  // no output scale: the result stays float
      emit("Gemm", gemm, "float", attrs, out(0));
    } else {
      quantize(emit("Gemm", gemm, "float", attrs), in(7), in(8), out(0));
    }
    return true;
  }

  // ---- fusions ONNX Runtime saves into optimized models ----

  bool fused(const std::string& op) {
    require({0, 1});
    const std::string activation =
        find_attr(*node_, "activation") ? find_attr(*node_, "activation")->s() : "";
    // FusedConv lists the activation's parameters in activation_params; FusedGemm names them
    // activation_alpha and activation_beta.
    std::vector<float> params;
    if (const onnx::AttributeProto* p = find_attr(*node_, "activation_params")) {
      params.assign(p->floats().begin(), p->floats().end());
    } else if (const onnx::AttributeProto* alpha = find_attr(*node_, "activation_alpha")) {
      params.push_back(alpha->f());
      if (const onnx::AttributeProto* beta = find_attr(*node_, "activation_beta")) {
        params.push_back(beta->f());
      }
    }
    const auto param = [&](size_t i, float fallback) {
      return i < params.size() ? params[i] : fallback;
    };
    Inputs inputs{in(0), in(1)};
    if (!in(2).empty()) inputs.push_back(in(2));
    const Attrs attrs = attrs_except({"activation", "activation_params", "activation_alpha",
                                      "activation_beta", "activation_gamma"});
    // FusedConv's fourth input Z is added before the activation; the last step writes out(0).
    const bool sum = op == "Conv" && !in(3).empty();
    const bool act = !activation.empty();
    std::string y = emit(op, inputs, "op", attrs, sum || act ? "" : out(0));
    if (sum) y = emit("Add", {y, in(3)}, "sum", {}, act ? "" : out(0));
    if (!act) return true;
    if (activation == "Relu" || activation == "Tanh" || activation == "Sigmoid") {
      emit(activation, {y}, "act", {}, out(0));
    } else if (activation == "LeakyRelu") {
      emit("LeakyRelu", {y}, "act", {float_attr("alpha", param(0, 0.01f))}, out(0));
    } else if (activation == "HardSigmoid") {
      emit("HardSigmoid", {y}, "act",
           {float_attr("alpha", param(0, 0.2f)), float_attr("beta", param(1, 0.5f))}, out(0));
    } else if (activation == "Clip") {
      if (params.size() < 2) fail("activation Clip needs activation_params [min, max]");
      emit("Clip", {y, scalar(params[0], "min"), scalar(params[1], "max")}, "act", {}, out(0));
    } else {
      fail("activation '" + activation + "' is not one Tessera knows for a fused op");
    }
    return true;
  }

  // Gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), ONNX Runtime's exact form.
  bool gelu(const std::string& x) {
    const std::string scaled = emit("Mul", {x, scalar(0.7071067811865476f, "inv_sqrt2")}, "scaled");
    const std::string erf = emit("Erf", {scaled}, "erf");
    const std::string one_plus = emit("Add", {erf, scalar(1.0f, "one")}, "one_plus");
    const std::string half_x = emit("Mul", {x, scalar(0.5f, "half")}, "half_x");
    emit("Mul", {half_x, one_plus}, "gelu", {}, out(0));
    return true;
  }

  // FastGelu(x [+ bias]) = 0.5 y (1 + tanh(sqrt(2/pi) (y + 0.044715 y^3))), y = x + bias.
  bool fast_gelu() {
    require({0});
    const std::string y = in(1).empty() ? in(0) : emit("Add", {in(0), in(1)}, "biased");
    const std::string cube = emit("Mul", {emit("Mul", {y, y}, "square"), y}, "cube");
    const std::string inner =
        emit("Add", {y, emit("Mul", {cube, scalar(0.044715f, "c")}, "cubic_term")}, "inner");
    const std::string t = emit(
        "Tanh", {emit("Mul", {inner, scalar(0.7978845608028654f, "sqrt_2_over_pi")}, "arg")}, "tanh");
    const std::string one_plus = emit("Add", {t, scalar(1.0f, "one")}, "one_plus");
    const std::string half_y = emit("Mul", {y, scalar(0.5f, "half")}, "half_y");
    emit("Mul", {half_y, one_plus}, "gelu", {}, out(0));
    return true;
  }

  // QuickGelu(x) = x * sigmoid(alpha x).
  bool quick_gelu() {
    require({0});
    const float alpha = attr_float(*node_, "alpha", 1.702f);
    const std::string s =
        emit("Sigmoid", {emit("Mul", {in(0), scalar(alpha, "alpha")}, "scaled")}, "sigmoid");
    emit("Mul", {in(0), s}, "quick_gelu", {}, out(0));
    return true;
  }

  // SkipLayerNormalization(input, skip, gamma, beta?, bias?): LayerNorm over the last axis of
  // input + skip (+ bias); output 3 is that sum. Outputs 1 and 2 (mean, inverse std) are not
  // produced by ONNX Runtime's own kernels either, so a model that reads them is refused.
  bool skip_layer_norm() {
    require({0, 1, 2});
    if (!out(1).empty() || !out(2).empty()) fail("outputs 1 and 2 (mean, inv_std_var) are not supported");
    std::string sum = emit("Add", {in(0), in(1)}, "skip_sum", {}, in(4).empty() ? out(3) : "");
    if (!in(4).empty()) sum = emit("Add", {sum, in(4)}, "bias_sum", {}, out(3));
    Inputs ln{sum, in(2)};
    if (!in(3).empty()) ln.push_back(in(3));
    emit("LayerNormalization", ln, "layer_norm",
         {int_attr("axis", -1), float_attr("epsilon", attr_float(*node_, "epsilon", 1e-12f))},
         out(0));
    return true;
  }

  std::string ints(const std::vector<int64_t>& values, const std::string& hint) {
    const std::string name = fresh(hint);
    onnx::TensorProto* t = g_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return name;
  }

  onnx::AttributeProto perm(const std::vector<int64_t>& order) const {
    onnx::AttributeProto a;
    a.set_name("perm");
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t v : order) a.add_ints(v);
    return a;
  }

  // x [B, S, H * d] -> [B, H, S, d] (or [B, H, d, S] with `transposed`).
  std::string heads(const std::string& x, int64_t num_heads, int64_t head_size, bool transposed,
                    const std::string& hint) {
    const std::string split =
        emit("Reshape", {x, ints({0, 0, num_heads, head_size}, hint + "_shape")}, hint + "_split");
    return emit("Transpose", {split}, hint + "_heads",
                {perm(transposed ? std::vector<int64_t>{0, 2, 3, 1}
                                 : std::vector<int64_t>{0, 2, 1, 3})});
  }

  // ONNX Runtime's Attention (BERT form, as its transformer optimizer writes it): one input
  // projection to Q, K and V, scaled dot-product attention per head, an optional raw 2-D mask
  // (1 keep, 0 mask) turned into mask_filter_value added to the scores. Past state,
  // unidirectional (causal) attention and other mask forms are refused naming the node.
  bool attention() {
    require({0, 1});
    if (!in(4).empty() || !out(1).empty()) fail("past / present state is not supported");
    if (attr_int(*node_, "unidirectional", 0) != 0) fail("unidirectional attention is not supported");
    if (attr_int(*node_, "do_rotary", 0) != 0) fail("rotary embeddings are not supported");
    const int64_t num_heads = attr_int(*node_, "num_heads", 0);
    if (num_heads <= 0) fail("attribute 'num_heads' must be positive");
    std::vector<int64_t> sizes;
    if (const onnx::AttributeProto* q = find_attr(*node_, "qkv_hidden_sizes")) {
      sizes.assign(q->ints().begin(), q->ints().end());
    } else if (auto it = initializers_.find(in(1)); it != initializers_.end() &&
                                                   it->second->dims_size() == 2 &&
                                                   it->second->dims(1) % 3 == 0) {
      sizes.assign(3, it->second->dims(1) / 3);
    }
    if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] % num_heads != 0 ||
        sizes[2] % num_heads != 0) {
      fail("the Q, K and V widths must be known (qkv_hidden_sizes, or a constant weight of "
           "3 x hidden columns), Q's equal K's, and each a multiple of num_heads");
    }
    std::string qkv = emit("MatMul", {in(0), in(1)}, "qkv");
    if (!in(2).empty()) qkv = emit("Add", {qkv, in(2)}, "qkv_bias");
    const auto part = [&](int64_t begin, int64_t end, const std::string& hint) {
      return emit("Slice", {qkv, ints({begin}, hint + "_begin"), ints({end}, hint + "_end"),
                            ints({-1}, hint + "_axis")},
                  hint);
    };
    const int64_t dq = sizes[0] / num_heads, dv = sizes[2] / num_heads;
    const std::string q = heads(part(0, sizes[0], "q"), num_heads, dq, false, "q");
    const std::string k = heads(part(sizes[0], sizes[0] + sizes[1], "k"), num_heads, dq, true, "k");
    const std::string v =
        heads(part(sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2], "v"), num_heads, dv, false, "v");
    const float scale = attr_float(*node_, "scale", 1.0f / std::sqrt(static_cast<float>(dq)));
    std::string scores = emit("Mul", {emit("MatMul", {q, k}, "qk"), scalar(scale, "scale")}, "scores");
    if (!in(3).empty()) {
      // Only the raw [batch, sequence] mask: its other forms (per-batch lengths, 3-D) would
      // broadcast to something else without an error.
      auto rank = ranks_.find(in(3));
      if (rank == ranks_.end() || rank->second != 2) {
        fail("its mask_index must be declared a 2-D [batch, sequence] raw mask (1 keep, 0 mask)");
      }
      const std::string keep = emit("Cast", {in(3)}, "mask_float", {int_attr("to", onnx::TensorProto::FLOAT)});
      const std::string masked = emit("Sub", {scalar(1.0f, "one"), keep}, "masked");
      const std::string penalty =
          emit("Mul", {masked, scalar(attr_float(*node_, "mask_filter_value", -10000.0f), "filter")},
               "penalty");
      scores = emit("Add", {scores, emit("Reshape", {penalty, ints({0, 1, 1, -1}, "mask_shape")},
                                        "mask_heads")},
                    "scores_masked");
    }
    if (!in(5).empty()) scores = emit("Add", {scores, in(5)}, "scores_biased");
    const std::string probs = emit("Softmax", {scores}, "probs", {int_attr("axis", -1)});
    const std::string context = emit("Transpose", {emit("MatMul", {probs, v}, "context")},
                                     "context_heads", {perm({0, 2, 1, 3})});
    emit("Reshape", {context, ints({0, 0, -1}, "merged_shape")}, "merged", {}, out(0));
    return true;
  }

  // com.microsoft's LayerNormalization predates ONNX's (opset 17) and means the same.
  bool layer_norm() {
    require({0, 1});
    onnx::NodeProto n = *node_;
    n.set_domain("");
    // stash_type only picks the intermediate precision; Tessera computes float32 throughout.
    n.clear_attribute();
    for (const auto& a : node_->attribute()) {
      if (a.name() != "stash_type") *n.add_attribute() = a;
    }
    out_->push_back(std::move(n));
    return true;
  }

  onnx::GraphProto& g_;
  const std::string& source_;
  std::set<std::string> taken_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::map<std::string, int> ranks_;  // declared ranks of graph inputs and value_info entries
  std::vector<onnx::NodeProto>* out_ = nullptr;
  const onnx::NodeProto* node_ = nullptr;
  std::string name_;
};

}  // namespace

void lower_contrib_ops(onnx::GraphProto& graph, const std::string& source) {
  Rewriter(graph, source).run();
}

}  // namespace tessera::importer
