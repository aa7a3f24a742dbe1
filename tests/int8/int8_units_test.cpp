// Int8 units end to end: QDQ graphs (DequantizeLinear -> Conv/MatMul/Gemm/Add [-> Relu] ->
// QuantizeLinear) become core's TesseraQLinear* units; the units' reference kernels agree with
// the float QDQ composition they replace (the ONNX definition: within one step of the output
// scale, since the unit sums exactly in int32); the cpu plugin's int8 kernels give the reference
// kernels' bytes on every Highway target this host runs; bad quantization parameters are errors
// naming the node.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "graph_builder.hpp"
#include "tessera/package.hpp"
#include "tessera/passes.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using test::GraphBuilder;

SessionOptions options_for(const std::string& target) {
  SessionOptions options;
  options.targets = {target};
  options.plugin_dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  options.threads = 2;
  return options;
}

template <typename T>
Tensor random_bytes(Shape shape, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(static_cast<size_t>(shape_numel(shape)));
  for (T& x : v) x = static_cast<T>(dist(rng));
  return Tensor::from_vector(std::move(shape), v);
}

Tensor scalar_f(float v) { return Tensor::from_vector<float>({}, {v}); }
Tensor scalar_q(DType t, int v) {
  if (t == DType::kInt8) return Tensor::from_vector<int8_t>({}, {static_cast<int8_t>(v)});
  return Tensor::from_vector<uint8_t>({}, {static_cast<uint8_t>(v)});
}

struct ConvCase {
  const char* name;
  int64_t c, h, w, oc, k, stride, pad, dilation, group;
  DType x_type, y_type;
  bool per_channel, bias, relu;
};

struct QdqConv {
  Graph graph;
  Tensor x, w, b;
  float xs, ys;
  std::vector<float> ws;
  int xz, yz;
};

// x (quantized input) -> DQ -> Conv(DQ(w), DQ(b)) [-> Relu] -> Q -> y.
QdqConv qdq_conv(const ConvCase& c, uint32_t seed) {
  QdqConv q;
  const bool xs8 = c.x_type == DType::kInt8, ys8 = c.y_type == DType::kInt8;
  q.xs = 0.02f;
  q.ys = 0.03f + 0.01f * static_cast<float>(c.k);
  q.xz = xs8 ? -7 : 121;
  q.yz = ys8 ? 5 : 118;
  const int64_t cg = c.c / c.group;
  q.w = random_bytes<int8_t>({c.oc, cg, c.k, c.k}, seed, -127, 127);
  std::mt19937 rng(seed + 1);
  std::uniform_real_distribution<float> scale(0.002f, 0.01f);
  q.ws.resize(c.per_channel ? static_cast<size_t>(c.oc) : 1);
  for (float& s : q.ws) s = scale(rng);
  std::vector<float> bias_scale;
  for (int64_t m = 0; m < c.oc; ++m) bias_scale.push_back(q.xs * q.ws[c.per_channel ? m : 0]);
  q.b = random_bytes<int32_t>({c.oc}, seed + 2, -3000, 3000);
  const Shape ws_shape = c.per_channel ? Shape{c.oc} : Shape{};
  GraphBuilder g(13);
  g.input("x", {1, c.c, c.h, c.w}, c.x_type)
      .constant("xs", scalar_f(q.xs)).constant("xz", scalar_q(c.x_type, q.xz))
      .constant("w", q.w).constant("ws", Tensor::from_vector(ws_shape, q.ws))
      .constant("b", q.b).constant("bs", Tensor::from_vector(Shape{c.oc}, bias_scale))
      .constant("ys", scalar_f(q.ys)).constant("yz", scalar_q(c.y_type, q.yz))
      .node("DequantizeLinear", {"x", "xs", "xz"}, {"xf"})
      .node("DequantizeLinear", {"w", "ws"}, {"wf"}, test::attrs({{"axis", int64_t{0}}}))
      .node("DequantizeLinear", {"b", "bs"}, {"bf"}, test::attrs({{"axis", int64_t{0}}}));
  Attributes conv;
  conv.set("strides", std::vector<int64_t>{c.stride, c.stride});
  conv.set("pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad});
  conv.set("dilations", std::vector<int64_t>{c.dilation, c.dilation});
  conv.set("group", c.group);
  g.node("Conv", c.bias ? std::vector<std::string>{"xf", "wf", "bf"}
                        : std::vector<std::string>{"xf", "wf"},
         {"yf"}, conv, "conv");
  if (c.relu) g.node("Relu", {"yf"}, {"yr"});
  g.node("QuantizeLinear", {c.relu ? "yr" : "yf", "ys", "yz"}, {"y"}).output("y");
  q.graph = g.build();
  q.x = xs8 ? random_bytes<int8_t>({1, c.c, c.h, c.w}, seed + 3, -128, 127)
            : random_bytes<uint8_t>({1, c.c, c.h, c.w}, seed + 3, 0, 255);
  return q;
}

int32_t byte_of(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

// The float QDQ composition of q, by the reference kernels of a float Conv and by hand.
std::vector<int32_t> float_composition(const ConvCase& c, const QdqConv& q, DType y_type) {
  std::vector<float> xf, wf, bf;
  for (int64_t i = 0; i < q.x.numel(); ++i) xf.push_back(static_cast<float>(byte_of(q.x, i) - q.xz) * q.xs);
  const int64_t per = q.w.numel() / c.oc;
  for (int64_t i = 0; i < q.w.numel(); ++i) {
    wf.push_back(static_cast<float>(q.w.data<int8_t>()[i]) * q.ws[c.per_channel ? i / per : 0]);
  }
  for (int64_t m = 0; m < c.oc; ++m) {
    bf.push_back(static_cast<float>(q.b.data<int32_t>()[m]) * (q.xs * q.ws[c.per_channel ? m : 0]));
  }
  Attributes conv = q.graph.nodes[3].attrs;
  GraphBuilder g(13);
  g.input("xf", q.x.shape())
      .constant("wf", Tensor::from_vector(q.w.shape(), wf))
      .constant("bf", Tensor::from_vector(Shape{c.oc}, bf));
  g.node("Conv", c.bias ? std::vector<std::string>{"xf", "wf", "bf"}
                        : std::vector<std::string>{"xf", "wf"},
         {"yf"}, conv).output("yf");
  const Tensor yf = run_reference(g.build(), {{"xf", Tensor::from_vector(q.x.shape(), xf)}})[0];
  const float lo = y_type == DType::kInt8 ? -128.0f : 0.0f, hi = y_type == DType::kInt8 ? 127.0f : 255.0f;
  std::vector<int32_t> out;
  for (int64_t i = 0; i < yf.numel(); ++i) {
    const float v = c.relu ? std::max(0.0f, yf.data<float>()[i]) : yf.data<float>()[i];
    out.push_back(static_cast<int32_t>(std::clamp(std::nearbyint(v / q.ys) + static_cast<float>(q.yz), lo, hi)));
  }
  return out;
}

// `graph` prepared as the importer prepares a model (this is where units are made).
Graph prepared(const Graph& graph) {
  Graph g = graph;
  prepare_graph(g);
  return g;
}

// Runs `graph` on `target` alone; every node must be a unit placed there.
Tensor run_on(const Graph& graph, const std::string& target, const std::map<std::string, Tensor>& in) {
  Session session(prepared(graph), options_for(target));
  for (const NodePlacement& p : session.plan().nodes) {
    EXPECT_EQ(p.op_type.rfind("TesseraQLinear", 0), 0u) << p.node << " stayed " << p.op_type;
    EXPECT_EQ(p.plugin, target) << p.node << ": " << p.reason;
  }
  return session.run(in)[0];
}

void expect_same_bytes(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  int64_t bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (byte_of(got, i) != byte_of(want, i) && bad++ < 5) {
      ADD_FAILURE() << what << " element " << i << ": got " << byte_of(got, i) << ", want "
                    << byte_of(want, i);
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

const ConvCase kConvCases[] = {
    {"pointwise_u8", 24, 9, 11, 40, 1, 1, 0, 1, 1, DType::kUInt8, DType::kUInt8, true, true, false},
    {"pointwise_s8", 16, 8, 8, 8, 1, 1, 0, 1, 1, DType::kInt8, DType::kInt8, true, true, true},
    {"k3s1_relu", 13, 10, 12, 19, 3, 1, 1, 1, 1, DType::kUInt8, DType::kUInt8, true, true, true},
    {"k3s2_s8", 8, 15, 13, 16, 3, 2, 1, 1, 1, DType::kInt8, DType::kInt8, true, false, false},
    {"k7s2_stem", 3, 20, 18, 12, 7, 2, 3, 1, 1, DType::kUInt8, DType::kUInt8, false, true, true},
    {"k3_dilated", 6, 12, 12, 10, 3, 1, 2, 2, 1, DType::kUInt8, DType::kInt8, true, true, false},
    {"k3s3_im2col", 5, 14, 14, 9, 3, 3, 1, 1, 1, DType::kInt8, DType::kUInt8, true, true, false},
    {"grouped", 16, 9, 9, 16, 3, 1, 1, 1, 4, DType::kUInt8, DType::kUInt8, true, true, true},
    {"depthwise_s1", 12, 11, 17, 12, 3, 1, 1, 1, 12, DType::kUInt8, DType::kUInt8, true, true, true},
    {"depthwise_s2_s8", 10, 16, 15, 10, 3, 2, 1, 1, 10, DType::kInt8, DType::kInt8, true, true, false},
    {"depthwise_k5", 7, 13, 13, 7, 5, 2, 2, 1, 7, DType::kUInt8, DType::kUInt8, true, false, true},
    // Rows wider than a 16-byte vector: the phase copies' overlapping last vectors.
    {"wide_k3s2_s8", 4, 9, 45, 8, 3, 2, 1, 1, 1, DType::kInt8, DType::kUInt8, true, true, false},
    {"wide_depthwise_s2", 6, 7, 70, 6, 3, 2, 1, 1, 6, DType::kUInt8, DType::kUInt8, true, true, true},
    {"wide_depthwise_s1_s8", 5, 6, 37, 5, 3, 1, 1, 1, 5, DType::kInt8, DType::kInt8, true, true, true},
};

class Int8Conv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Int8Conv, ReferenceUnitMatchesFloatComposition) {
  const ConvCase& c = GetParam();
  const QdqConv q = qdq_conv(c, 11);
  const Tensor unit = run_on(q.graph, "reference", {{"x", q.x}});
  const std::vector<int32_t> want = float_composition(c, q, c.y_type);
  ASSERT_EQ(static_cast<size_t>(unit.numel()), want.size());
  int64_t off_by_one = 0;
  for (int64_t i = 0; i < unit.numel(); ++i) {
    const int32_t d = std::abs(byte_of(unit, i) - want[static_cast<size_t>(i)]);
    ASSERT_LE(d, 1) << "element " << i;
    off_by_one += d;
  }
  // Float sums round; exact int32 sums differ only where the float result sits at a rounding edge.
  EXPECT_LE(off_by_one, std::max<int64_t>(2, unit.numel() / 100));
}

TEST_P(Int8Conv, CpuMatchesReferenceOnEveryTarget) {
  const ConvCase& c = GetParam();
  const QdqConv q = qdq_conv(c, 23);
  const Tensor want = run_on(q.graph, "reference", {{"x", q.x}});
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    expect_same_bytes(run_on(q.graph, "cpu", {{"x", q.x}}), want, hwy::TargetName(target));
  }
  hwy::SetSupportedTargetsForTest(0);
}

INSTANTIATE_TEST_SUITE_P(Cases, Int8Conv, ::testing::ValuesIn(kConvCases),
                         [](const auto& info) { return std::string(info.param.name); });

// x [..., K] -> MatMul(DQ(w [K, N])), or Gemm(transB) with a bias, quantized again.
Graph qdq_matmul(bool gemm, DType x_type, int64_t k, int64_t n, const Shape& x_shape) {
  const Tensor w = gemm ? random_bytes<int8_t>({n, k}, 3, -127, 127)
                        : random_bytes<int8_t>({k, n}, 3, -127, 127);
  std::vector<float> ws(static_cast<size_t>(n)), bs;
  for (int64_t j = 0; j < n; ++j) ws[static_cast<size_t>(j)] = 0.003f + 0.0001f * static_cast<float>(j % 7);
  for (float s : ws) bs.push_back(0.05f * s);
  GraphBuilder g(13);
  g.input("x", x_shape, x_type)
      .constant("xs", scalar_f(0.05f)).constant("xz", scalar_q(x_type, x_type == DType::kInt8 ? 3 : 130))
      .constant("w", w).constant("ws", Tensor::from_vector(Shape{n}, ws))
      .constant("b", random_bytes<int32_t>({n}, 4, -2000, 2000))
      .constant("bs", Tensor::from_vector(Shape{n}, bs))
      .constant("ys", scalar_f(0.2f)).constant("yz", scalar_q(DType::kUInt8, 100))
      .node("DequantizeLinear", {"x", "xs", "xz"}, {"xf"})
      .node("DequantizeLinear", {"w", "ws"}, {"wf"}, test::attrs({{"axis", int64_t{gemm ? 0 : 1}}}));
  if (gemm) {
    g.node("DequantizeLinear", {"b", "bs"}, {"bf"}, test::attrs({{"axis", int64_t{0}}}))
        .node("Gemm", {"xf", "wf", "bf"}, {"yf"}, test::attrs({{"transB", int64_t{1}}}), "fc");
  } else {
    g.node("MatMul", {"xf", "wf"}, {"yf"}, {}, "matmul");
  }
  g.node("QuantizeLinear", {"yf", "ys", "yz"}, {"y"}).output("y");
  return g.build();
}

TEST(Int8MatMul, CpuMatchesReferenceOnEveryTarget) {
  // Rows 10 and 7 run as GEMM tiles, rows 1 and 3 as one-row products.
  const std::pair<bool, Shape> shapes[] = {
      {false, {2, 5, 37}}, {false, {3, 37}}, {true, {7, 37}}, {true, {1, 37}}};
  for (const auto& [gemm, x_shape] : shapes) {
    for (DType x_type : {DType::kUInt8, DType::kInt8}) {
      const Graph graph = qdq_matmul(gemm, x_type, 37, 45, x_shape);
      const Tensor x = x_type == DType::kInt8
                           ? random_bytes<int8_t>(graph.value(graph.inputs[0]).shape, 8, -128, 127)
                           : random_bytes<uint8_t>(graph.value(graph.inputs[0]).shape, 8, 0, 255);
      const Tensor want = run_on(graph, "reference", {{"x", x}});
      for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        expect_same_bytes(run_on(graph, "cpu", {{"x", x}}), want,
                          std::string(gemm ? "gemm " : "matmul ") + hwy::TargetName(target));
      }
      hwy::SetSupportedTargetsForTest(0);
    }
  }
}

// The graph's output "y" by the reference kernels node by node, as imported: no units.
Tensor run_unfused(const Graph& graph, const std::map<std::string, Tensor>& in) {
  Graph unfused = graph;
  unfused.prepared = true;
  std::map<ValueId, Tensor> values;
  for (const auto& [name, t] : in) values[unfused.find_value(name)] = t;
  for (const Node& n : unfused.nodes) {
    std::vector<const Tensor*> args;
    for (ValueId v : n.inputs) {
      args.push_back(unfused.value(v).constant ? unfused.value(v).constant.get() : &values.at(v));
    }
    values[n.outputs[0]] = run_reference_node(unfused, n, args)[0];
  }
  return values.at(unfused.find_value("y"));
}

// DQ(a), DQ(b) -> Add/Mul [-> Relu] -> Q: the unit gives the bytes of the unfused float graph,
// for inputs of one shape, one input per channel (either side) and other broadcasts.
class Int8Binary : public ::testing::TestWithParam<const char*> {};

TEST_P(Int8Binary, UnitGivesTheFloatGraphsBytesOnCpu) {
  const std::string op = GetParam();
  const Shape full = {1, 6, 9, 13};
  const std::pair<Shape, Shape> shapes[] = {
      {full, full}, {full, {1, 6, 1, 1}}, {{1, 6, 1, 1}, full}, {full, {1, 6, 1, 13}}};
  for (const auto& [a_shape, b_shape] : shapes) {
    for (bool relu : {false, true}) {
      for (DType t : {DType::kUInt8, DType::kInt8}) {
        GraphBuilder g(13);
        g.input("a", a_shape, t).input("b", b_shape, t)
            .constant("as", scalar_f(0.031f)).constant("az", scalar_q(t, 9))
            .constant("bs", scalar_f(0.017f)).constant("bz", scalar_q(t, 2))
            .constant("ys", scalar_f(op == "Mul" ? 0.011f : 0.043f))
            .constant("yz", scalar_q(t, t == DType::kInt8 ? -20 : 70))
            .node("DequantizeLinear", {"a", "as", "az"}, {"af"})
            .node("DequantizeLinear", {"b", "bs", "bz"}, {"bf"})
            .node(op, {"af", "bf"}, {"sum"}, {}, "binary");
        if (relu) g.node("Relu", {"sum"}, {"r"});
        g.node("QuantizeLinear", {relu ? "r" : "sum", "ys", "yz"}, {"y"}).output("y");
        const Graph graph = g.build();
        const int lo = t == DType::kInt8 ? -128 : 0, hi = t == DType::kInt8 ? 127 : 255;
        const auto bytes = [&](const Shape& shape, uint32_t seed) {
          return t == DType::kInt8 ? random_bytes<int8_t>(shape, seed, lo, hi)
                                   : random_bytes<uint8_t>(shape, seed, lo, hi);
        };
        const std::map<std::string, Tensor> in = {{"a", bytes(a_shape, 1)},
                                                   {"b", bytes(b_shape, 2)}};
        expect_same_bytes(run_on(graph, "cpu", in), run_unfused(graph, in),
                          op + " " + shape_str(a_shape) + " " + shape_str(b_shape));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, Int8Binary, ::testing::Values("Add", "Mul"));

// DQ -> MaxPool -> Q of equal parameters becomes MaxPool on int8, with the unfused graph's bytes;
// unequal parameters keep the float pool.
TEST(Int8MaxPool, EqualParametersPoolTheInt8Values) {
  for (float q_scale : {0.04f, 0.05f}) {
    GraphBuilder g(13);
    g.input("x", {1, 5, 13, 12}, DType::kUInt8)
        .constant("s", scalar_f(0.04f)).constant("z", scalar_q(DType::kUInt8, 17))
        .constant("qs", scalar_f(q_scale))
        .node("DequantizeLinear", {"x", "s", "z"}, {"xf"})
        .node("MaxPool", {"xf"}, {"p"},
              test::attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
                           {"strides", std::vector<int64_t>{2, 2}},
                           {"pads", std::vector<int64_t>{1, 1, 1, 1}}}), "pool")
        .node("QuantizeLinear", {"p", "qs", "z"}, {"y"}).output("y");
    const Graph graph = g.build();
    const Graph ready = prepared(graph);
    const bool equal = q_scale == 0.04f;
    EXPECT_EQ(ready.nodes.size(), equal ? 1u : 3u);
    const std::map<std::string, Tensor> in = {
        {"x", random_bytes<uint8_t>({1, 5, 13, 12}, 9, 0, 255)}};
    Session session(Graph(ready), options_for("cpu"));
    expect_same_bytes(session.run(in)[0], run_unfused(graph, in), equal ? "int8 pool" : "float");
  }
}

// QuantizeLinear from float on cpu (kernels/int8.hpp's int8_quantize) against the reference:
// ties round to even, NaN goes to the type's lowest value, Inf and large values saturate.
TEST(Int8Quantize, CpuMatchesReferenceOnEveryTarget) {
  std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 0.25f, 1e9f, -1e9f,
                          std::nanf(""), INFINITY, -INFINITY, 0.0f, -0.0f, 63.5f, -64.5f};
  const std::vector<float> noise = test::random_tensor({1000}, 7).to_float_vector();
  for (float v : noise) x.push_back(v * 40.0f);
  const int64_t n = static_cast<int64_t>(x.size());
  for (DType t : {DType::kUInt8, DType::kInt8}) {
    GraphBuilder g(13);
    g.input("x", {n}).constant("s", scalar_f(0.5f)).constant("z", scalar_q(t, t == DType::kInt8 ? -3 : 7))
        .node("QuantizeLinear", {"x", "s", "z"}, {"y"}).output("y");
    const Graph graph = prepared(g.build());
    const std::map<std::string, Tensor> in = {{"x", Tensor::from_vector(Shape{n}, x)}};
    const Tensor want = run_reference(graph, in)[0];
    for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
      hwy::SetSupportedTargetsForTest(target);
      Session session(Graph(graph), options_for("cpu"));
      expect_same_bytes(session.run(in)[0], want, hwy::TargetName(target));
    }
    hwy::SetSupportedTargetsForTest(0);
  }
}

// A package of a plan with units (the replaced nodes' values kept as float32) reads back and
// runs with the same bytes.
TEST(Int8Units, PackageOfUnitsRunsTheSame) {
  const QdqConv q = qdq_conv(kConvCases[2], 9);
  Session session(prepared(q.graph), options_for("cpu"));
  const Tensor want = session.run({{"x", q.x}})[0];
  const std::string bytes = serialize_package(package_from_session(session));
  const Package package = parse_package(reinterpret_cast<const uint8_t*>(bytes.data()),
                                        bytes.size(), "units.tsp");
  Session again(package, options_for("cpu"));
  expect_same_bytes(again.run({{"x", q.x}})[0], want, "from the package");
}

// A DequantizeLinear or QuantizeLinear with a bad scale fails naming the node.
TEST(Int8Units, BadScalesNameTheNode) {
  for (float bad : {0.0f, -0.5f, std::nanf(""), INFINITY}) {
    ConvCase c = kConvCases[0];
    QdqConv q = qdq_conv(c, 5);
    // The activation's DequantizeLinear is node 0; its scale is constant "xs".
    q.graph.value(q.graph.find_value("xs")).constant = std::make_shared<const Tensor>(scalar_f(bad));
    q.graph.nodes[0].name = "dq_with_bad_scale";
    try {
      Session session(prepared(q.graph), options_for("cpu"));
      session.run({{"x", q.x}});
      ADD_FAILURE() << "scale " << bad << " was accepted";
    } catch (const std::exception& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("dq_with_bad_scale"), std::string::npos) << m;
      EXPECT_NE(m.find("positive and finite"), std::string::npos) << m;
    }
  }
}

// A zero point whose type is not its input's, and a per-channel scale of the wrong length, fail
// naming the node.
TEST(Int8Units, MismatchedZeroPointAndAxisNameTheNode) {
  const ConvCase c = kConvCases[0];
  {
    QdqConv q = qdq_conv(c, 5);
    Value& xz = q.graph.value(q.graph.find_value("xz"));
    xz.constant = std::make_shared<const Tensor>(scalar_q(DType::kInt8, 0));
    xz.dtype = DType::kInt8;
    q.graph.nodes[0].name = "dq_x";
    EXPECT_THROW(
        {
          try {
            Session session(prepared(q.graph), options_for("cpu"));
            session.run({{"x", q.x}});
          } catch (const std::exception& e) {
            EXPECT_NE(std::string(e.what()).find("dq_x"), std::string::npos) << e.what();
            throw;
          }
        },
        std::exception);
  }
  {
    QdqConv q = qdq_conv(c, 5);
    Value& ws = q.graph.value(q.graph.find_value("ws"));
    ws.constant =
        std::make_shared<const Tensor>(Tensor::from_vector(Shape{3}, std::vector<float>{1, 1, 1}));
    ws.shape = {3};
    q.graph.nodes[1].name = "dq_w";
    EXPECT_THROW(
        {
          try {
            Session session(prepared(q.graph), options_for("cpu"));
            session.run({{"x", q.x}});
          } catch (const std::exception& e) {
            EXPECT_NE(std::string(e.what()).find("dq_w"), std::string::npos) << e.what();
            throw;
          }
        },
        std::exception);
  }
}

// Weights with a non-zero zero point stay in float (units take symmetric int8 weights), and the
// graph still runs on cpu alone.
TEST(Int8Units, AsymmetricWeightsStayFloat) {
  QdqConv q = qdq_conv(kConvCases[2], 5);
  Graph g = q.graph;
  Value wz;
  wz.name = "wz";
  wz.dtype = DType::kInt8;
  wz.shape = {kConvCases[2].oc};
  wz.shape_known = true;
  wz.constant = std::make_shared<const Tensor>(random_bytes<int8_t>({kConvCases[2].oc}, 2, -3, 3));
  g.nodes[1].inputs.push_back(g.add_value(wz));
  Session session(prepared(g), options_for("cpu"));
  bool float_conv = false;
  for (const NodePlacement& p : session.plan().nodes) float_conv |= p.op_type == "Conv";
  EXPECT_TRUE(float_conv);
  const Tensor got = session.run({{"x", q.x}})[0];
  const Tensor want = run_reference(g, {{"x", q.x}})[0];
  int64_t off = 0;
  for (int64_t i = 0; i < want.numel(); ++i) off += std::abs(byte_of(got, i) - byte_of(want, i));
  EXPECT_LE(off, want.numel() / 100 + 2);
}

// A Conv whose bias is a float constant (not int32 at x_scale * w_scale) stays in float, and
// still runs.
TEST(Int8Units, UnfitUnitStaysFloat) {
  const ConvCase c = kConvCases[2];
  QdqConv q = qdq_conv(c, 5);
  Graph g = q.graph;
  Node& conv = g.nodes[3];
  ASSERT_EQ(conv.op_type, "Conv");
  Value bias;
  bias.name = "float_bias";
  bias.dtype = DType::kFloat32;
  bias.shape = {c.oc};
  bias.shape_known = true;
  bias.constant = std::make_shared<const Tensor>(test::random_tensor({c.oc}, 3));
  conv.inputs[2] = g.add_value(bias);
  Session session(prepared(g), options_for("cpu"));
  bool float_conv = false;
  for (const NodePlacement& p : session.plan().nodes) float_conv |= p.op_type == "Conv";
  EXPECT_TRUE(float_conv);
  const Tensor got = session.run({{"x", q.x}})[0];
  const Tensor want = run_reference(g, {{"x", q.x}})[0];
  int64_t off = 0;
  for (int64_t i = 0; i < want.numel(); ++i) off += std::abs(byte_of(got, i) - byte_of(want, i));
  EXPECT_LE(off, want.numel() / 100 + 2);
}

}  // namespace
}  // namespace tessera
