// The cpu plugin through the real plugin host and Session: each op (and each fusion) placed on
// cpu and compared with tessera::run_reference, plus a Conv-BN-Relu-Pool-Gemm graph.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "graph_builder.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using test::GraphBuilder;
using test::random_tensor;

SessionOptions cpu_options(int32_t threads = 0) {
  SessionOptions options;
  options.targets = {"cpu", "reference"};
  options.plugin_dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  options.threads = threads;
  return options;
}

// Every node of the session's plan is on cpu.
void expect_all_on_cpu(const Session& session) {
  for (const NodePlacement& p : session.plan().nodes) {
    EXPECT_EQ(p.plugin, "cpu") << p.node << ": " << p.reason;
  }
}

// cpu's outputs equal the reference runner's bit for bit: shapes, sizes and bytes.
void expect_same_bytes(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].shape(), want[o].shape()) << "output " << o;
    ASSERT_EQ(got[o].nbytes(), want[o].nbytes()) << "output " << o;
    EXPECT_EQ(std::memcmp(got[o].raw(), want[o].raw(), want[o].nbytes()), 0) << "output " << o;
  }
}

// session.run(inputs) fails with a message naming `node` and saying `what`.
void expect_run_error(Session& session, const std::map<std::string, Tensor>& inputs,
                      const std::string& node, const std::string& what) {
  try {
    session.run(inputs);
    ADD_FAILURE() << "ran; expected: " << what;
  } catch (const std::exception& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(node), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

// Runs `g` on cpu(+reference) and on the reference runner; every node must be on cpu.
std::vector<RegionProfile> expect_matches_reference(Graph g, uint32_t seed = 5,
                                                    int32_t threads = 0) {
  const Graph reference_graph = g;
  const std::map<std::string, Tensor> inputs = test::random_inputs(g, seed);
  Session session(std::move(g), cpu_options(threads));
  expect_all_on_cpu(session);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(reference_graph, inputs);
  EXPECT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size() && o < got.size(); ++o) {
    EXPECT_EQ(got[o].shape(), want[o].shape());
    if (got[o].shape() != want[o].shape()) continue;
    int64_t bad = 0;
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const float w = want[o].data<float>()[i];
      if (!(std::fabs(got[o].data<float>()[i] - w) <= 1e-4f * std::max(1.0f, std::fabs(w)))) {
        if (bad++ < 5)
          ADD_FAILURE() << "output " << o << " element " << i << ": got " << got[o].data<float>()[i]
                        << ", want " << w;
      }
    }
    EXPECT_EQ(bad, 0) << "mismatches in output " << o;
  }
  return session.profile();
}

Attributes ints(const std::string& name, std::vector<int64_t> v, Attributes a = {}) {
  a.set(name, std::move(v));
  return a;
}

TEST(CpuSession, ConvBnReluPoolGemm) {
  Attributes conv = ints("pads", {1, 1, 1, 1}, ints("strides", {2, 2}));
  Attributes pool =
      ints("kernel_shape", {3, 3}, ints("strides", {2, 2}, ints("pads", {1, 1, 1, 1})));
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  Graph g = GraphBuilder()
                .input("x", {2, 3, 23, 19})
                .constant("w", random_tensor({10, 3, 3, 3}, 1))
                .constant("b", random_tensor({10}, 2))
                .constant("gamma", random_tensor({10}, 3))
                .constant("beta", random_tensor({10}, 4))
                .constant("mean", random_tensor({10}, 5))
                .constant("var", Tensor::from_vector<float>(
                                     {10}, {0.5f, 1, 2, 0.3f, 1.5f, 0.9f, 1.1f, 0.7f, 2.5f, 1}))
                .constant("fw", random_tensor({7, 10 * 6 * 5}, 6))
                .constant("fb", random_tensor({7}, 7))
                .node("Conv", {"x", "w", "b"}, {"c"}, conv, "conv")
                .node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, {}, "bn")
                .node("Relu", {"bn"}, {"r"}, {}, "relu")
                .node("MaxPool", {"r"}, {"p"}, pool, "pool")
                .node("Flatten", {"p"}, {"f"}, {}, "flatten")
                .node("Gemm", {"f", "fw", "fb"}, {"y"}, gemm, "gemm")
                .node("Softmax", {"y"}, {"s"}, {}, "softmax")
                .output("s")
                .output("y")
                .build();
  const std::vector<RegionProfile> profile = expect_matches_reference(std::move(g));
  // One cpu region of 7 nodes; BN, Relu and the 3x3 stride-2 MaxPool were absorbed by the conv
  // (phase_gemm_conv_pool), so they have no own time.
  ASSERT_EQ(profile.size(), 1u);
  ASSERT_EQ(profile[0].node_times_us.size(), 7u);
  EXPECT_GT(profile[0].node_times_us[0], 0.0);
  EXPECT_EQ(profile[0].node_times_us[1], 0.0);
  EXPECT_EQ(profile[0].node_times_us[2], 0.0);
  EXPECT_EQ(profile[0].node_times_us[3], 0.0);
}

// Capability over the whole graph (query_subgraph): the cpu plugin prices the nodes its kernels
// compute in a Conv's or Gemm's epilogue (BN folded into the conv, Relu clamped in it) at 0 us and
// says which node computes them; the plan's estimates agree with the profile above, where those
// nodes have no time of their own. A BatchNormalization whose input is not a conv's output (the
// graph input here), and a Relu whose producer's output is read twice, keep their own cost.
TEST(CpuSession, SubgraphAnswersPriceFusedEpilogues) {
  Attributes pad = ints("pads", {1, 1, 1, 1});
  Graph g = GraphBuilder()
                .input("x", {1, 4, 9, 9})
                .constant("s0", random_tensor({4}, 1))
                .constant("b0", random_tensor({4}, 2))
                .constant("m0", random_tensor({4}, 3))
                .constant("v0", Tensor::from_vector<float>({4}, {0.5f, 1, 2, 0.3f}))
                .constant("w", random_tensor({6, 4, 3, 3}, 4))
                .constant("s", random_tensor({6}, 5))
                .constant("b", random_tensor({6}, 6))
                .constant("m", random_tensor({6}, 7))
                .constant("v", Tensor::from_vector<float>({6}, {0.5f, 1, 2, 0.3f, 1.5f, 0.9f}))
                .constant("w2", random_tensor({6, 6, 3, 3}, 8))
                .node("BatchNormalization", {"x", "s0", "b0", "m0", "v0"}, {"xn"}, {}, "bn_in")
                .node("Conv", {"xn", "w"}, {"c"}, pad, "conv")
                .node("BatchNormalization", {"c", "s", "b", "m", "v"}, {"bn"}, {}, "bn")
                .node("Relu", {"bn"}, {"r"}, {}, "relu")
                .node("Conv", {"r", "w2"}, {"c2"}, pad, "conv2")
                .node("Relu", {"c2"}, {"r2"}, {}, "relu2")
                .node("Add", {"c2", "r2"}, {"y"}, {}, "add")
                .output("y")
                .build();
  const Graph reference_graph = g;
  Session session(std::move(g), cpu_options(0));
  expect_all_on_cpu(session);
  std::map<std::string, const NodePlacement*> by_name;
  for (const NodePlacement& p : session.plan().nodes) by_name[p.node] = &p;
  for (const auto& [node, into] :
       std::map<std::string, std::string>{{"bn", "conv"}, {"relu", "bn"}}) {
    SCOPED_TRACE(node);
    EXPECT_EQ(by_name.at(node)->estimate_us, 0.0);
    EXPECT_NE(by_name.at(node)->estimate.find("fuses it into node '" + into + "'"),
              std::string::npos)
        << by_name.at(node)->estimate;
  }
  for (const std::string node : {"bn_in", "conv", "conv2", "relu2", "add"}) {
    EXPECT_GT(by_name.at(node)->estimate_us, 0.0) << node;
  }
  const std::map<std::string, Tensor> inputs = test::random_inputs(reference_graph, 9);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(reference_graph, inputs);
  ASSERT_EQ(got.size(), 1u);
  for (int64_t i = 0; i < want[0].numel(); ++i) {
    const float w = want[0].data<float>()[i];
    ASSERT_NEAR(got[0].data<float>()[i], w, 1e-4f * std::max(1.0f, std::fabs(w))) << i;
  }
}

// Squeeze-excitation blocks as exporters write them run as one step (the pool's), every other
// node of the block absorbed: mobilenet_v3's (GlobalAveragePool, Relu, HardSigmoid, Mul(x, g)),
// efficientnet's (ReduceMean over H and W, SiLU as Sigmoid-Mul, a conv without bias, Sigmoid,
// Mul(g, x)) on a batch of 2, and one between two convs (the block's input an intermediate,
// its output read by the next conv).
TEST(CpuSession, SqueezeExcitationAsOneStep) {
  const Attributes spatial = test::attrs({{"axes", std::vector<int64_t>{2, 3}}});
  struct Case {
    const char* name;
    Graph graph;
    std::vector<size_t> timed;  // nodes that keep a time of their own
  };
  std::vector<Case> cases;
  cases.push_back({"mobilenet_v3",
                   GraphBuilder()
                       .input("x", {1, 24, 7, 9})
                       .constant("w1", random_tensor({8, 24, 1, 1}, 61))
                       .constant("b1", random_tensor({8}, 62))
                       .constant("w2", random_tensor({24, 8, 1, 1}, 63))
                       .constant("b2", random_tensor({24}, 64))
                       .node("GlobalAveragePool", {"x"}, {"s0"})
                       .node("Conv", {"s0", "w1", "b1"}, {"f1"})
                       .node("Relu", {"f1"}, {"a1"})
                       .node("Conv", {"a1", "w2", "b2"}, {"f2"})
                       .node("HardSigmoid", {"f2"}, {"g"},
                             test::attrs({{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}}))
                       .node("Mul", {"x", "g"}, {"y"})
                       .output("y")
                       .build(),
                   {0}});
  cases.push_back({"efficientnet",
                   GraphBuilder()
                       .input("x", {2, 40, 5, 5})
                       .constant("w1", random_tensor({10, 40, 1, 1}, 65))
                       .constant("b1", random_tensor({10}, 66))
                       .constant("w2", random_tensor({40, 10, 1, 1}, 67))
                       .node("ReduceMean", {"x"}, {"s0"}, spatial)
                       .node("Conv", {"s0", "w1", "b1"}, {"f1"})
                       .node("Sigmoid", {"f1"}, {"sg"})
                       .node("Mul", {"f1", "sg"}, {"a1"})
                       .node("Conv", {"a1", "w2"}, {"f2"})
                       .node("Sigmoid", {"f2"}, {"g"})
                       .node("Mul", {"g", "x"}, {"y"})
                       .output("y")
                       .build(),
                   {0}});
  cases.push_back({"between convs",
                   GraphBuilder()
                       .input("x", {1, 6, 9, 8})
                       .constant("w0", random_tensor({16, 6, 3, 3}, 68))
                       .constant("w1", random_tensor({4, 16, 1, 1}, 69))
                       .constant("b1", random_tensor({4}, 70))
                       .constant("w2", random_tensor({16, 4, 1, 1}, 71))
                       .constant("b2", random_tensor({16}, 72))
                       .constant("w3", random_tensor({5, 16, 1, 1}, 73))
                       .node("Conv", {"x", "w0"}, {"c"},
                             test::attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}))
                       .node("GlobalAveragePool", {"c"}, {"s0"})
                       .node("Conv", {"s0", "w1", "b1"}, {"f1"})
                       .node("Relu", {"f1"}, {"a1"})
                       .node("Conv", {"a1", "w2", "b2"}, {"f2"})
                       .node("Sigmoid", {"f2"}, {"g"})
                       .node("Mul", {"c", "g"}, {"se"})
                       .node("Conv", {"se", "w3"}, {"y"})
                       .output("y")
                       .build(),
                   {0, 1, 7}});
  // A pad on the first conv makes its 1x1 output read padding at stride 2 (the bias alone):
  // not a squeeze-excitation block, so every node keeps its own step.
  cases.push_back({"padded conv",
                   GraphBuilder()
                       .input("x", {1, 12, 4, 4})
                       .constant("w1", random_tensor({3, 12, 1, 1}, 74))
                       .constant("b1", random_tensor({3}, 75))
                       .constant("w2", random_tensor({12, 3, 1, 1}, 76))
                       .node("GlobalAveragePool", {"x"}, {"s0"})
                       .node("Conv", {"s0", "w1", "b1"}, {"f1"},
                             test::attrs({{"pads", std::vector<int64_t>{1, 1, 0, 0}},
                                          {"strides", std::vector<int64_t>{2, 2}}}))
                       .node("Relu", {"f1"}, {"a1"})
                       .node("Conv", {"a1", "w2"}, {"f2"})
                       .node("Sigmoid", {"f2"}, {"g"})
                       .node("Mul", {"x", "g"}, {"y"})
                       .output("y")
                       .build(),
                   {0, 1, 3, 5}});  // Relu and Sigmoid fuse into their convs
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    const size_t nodes = c.graph.nodes.size();
    const std::vector<RegionProfile> profile = expect_matches_reference(std::move(c.graph));
    ASSERT_EQ(profile.size(), 1u);
    ASSERT_EQ(profile[0].node_times_us.size(), nodes);
    for (size_t n = 0; n < nodes; ++n) {
      const bool timed = std::find(c.timed.begin(), c.timed.end(), n) != c.timed.end();
      EXPECT_EQ(profile[0].node_times_us[n] > 0.0, timed) << "node " << n;
    }
  }
}

// The conv+pool fusion over many blocks of pooled rows, on 1 and 2 threads (a row two threads'
// ranges share is computed by both): squeezenet's stem shape scaled down (no pads, ceil_mode),
// and resnet's (pads on both), each with a Relu between.
TEST(CpuSession, ConvReluMaxPoolFusedAcrossRowBlocks) {
  struct Case {
    std::vector<int64_t> in;
    int64_t k, conv_pad, pool_pad, ceil;
  };
  for (const Case& c : {Case{{1, 3, 57, 61}, 3, 0, 0, 1}, Case{{2, 3, 46, 38}, 7, 3, 1, 0}}) {
    for (const int threads : {1, 2}) {
      SCOPED_TRACE("k " + std::to_string(c.k) + " threads " + std::to_string(threads));
      Attributes conv = ints("pads", std::vector<int64_t>(4, c.conv_pad), ints("strides", {2, 2}));
      Attributes pool =
          ints("kernel_shape", {3, 3},
               ints("strides", {2, 2}, ints("pads", std::vector<int64_t>(4, c.pool_pad))));
      pool.set("ceil_mode", c.ceil);
      Graph g = GraphBuilder()
                    .input("x", c.in)
                    .constant("w", random_tensor({16, 3, c.k, c.k}, 8))
                    .constant("b", random_tensor({16}, 9))
                    .node("Conv", {"x", "w", "b"}, {"c"}, conv, "conv")
                    .node("Relu", {"c"}, {"r"}, {}, "relu")
                    .node("MaxPool", {"r"}, {"y"}, pool, "pool")
                    .output("y")
                    .build();
      const std::vector<RegionProfile> profile =
          expect_matches_reference(std::move(g), 11, threads);
      ASSERT_EQ(profile.size(), 1u);
      ASSERT_EQ(profile[0].node_times_us.size(), 3u);
      EXPECT_EQ(profile[0].node_times_us[2], 0.0);  // the pool ran inside the conv's step
    }
  }
}

// A 3x3 stride-1 conv that Winograd takes (googlenet's conv3: 16+ channels on a map of 13x13 or
// more) stays apart from the 3x3 stride-2 MaxPool after it: the fused step would run it on phase
// planes. Odd sizes, bias, Relu, ceil_mode, batch 2.
TEST(CpuSession, WinogradConvReluMaxPoolStaysApart) {
  Attributes conv = ints("pads", {1, 1, 1, 1});
  Attributes pool = ints("kernel_shape", {3, 3}, ints("strides", {2, 2}));
  pool.set("ceil_mode", int64_t{1});
  Graph g = GraphBuilder()
                .input("x", {2, 17, 15, 19})
                .constant("w", random_tensor({20, 17, 3, 3}, 21))
                .constant("b", random_tensor({20}, 22))
                .node("Conv", {"x", "w", "b"}, {"c"}, conv, "conv")
                .node("Relu", {"c"}, {"r"}, {}, "relu")
                .node("MaxPool", {"r"}, {"y"}, pool, "pool")
                .output("y")
                .build();
  const std::vector<RegionProfile> profile = expect_matches_reference(std::move(g), 23, 2);
  ASSERT_EQ(profile.size(), 1u);
  ASSERT_EQ(profile[0].node_times_us.size(), 3u);
  EXPECT_GT(profile[0].node_times_us[2], 0.0);  // the pool ran as its own step
}

// A 1x1 conv + BN + Relu6 (a mobilenet_v2 expansion) whose output only a 3x3 depthwise conv + BN
// + Relu6 reads runs as one fused step over blocks of rows: depthwise stride 1 and 2, heights
// that leave a partial last block, widths that take full vectors with an overlapping last block
// (30, 34) or 8 lanes, batch 2, on 1 and 2 threads (a row two threads' ranges share is computed
// by both). A 3x3 stride-2 stem conv before the depthwise conv stays apart (fused, it measured no
// faster).
TEST(CpuSession, PointwiseDepthwiseFusedAcrossRowBlocks) {
  struct Case {
    std::vector<int64_t> in;
    int64_t stride,
        k;  // the depthwise conv's stride; the first conv's window (1, or 3 at stride 2)
  };
  for (const Case& c : {Case{{1, 5, 19, 30}, 1, 1}, Case{{2, 4, 17, 34}, 2, 1},
                        Case{{1, 3, 12, 28}, 2, 1}, Case{{1, 3, 60, 58}, 1, 3}}) {
    for (const int threads : {1, 2}) {
      SCOPED_TRACE("stride " + std::to_string(c.stride) + " k " + std::to_string(c.k) +
                   " threads " + std::to_string(threads));
      const int64_t e = 12;  // expanded channels
      Attributes dw = ints("pads", {1, 1, 1, 1}, ints("strides", {c.stride, c.stride}));
      dw.set("group", e);
      const Attributes stem = ints("pads", {1, 1, 1, 1}, ints("strides", {2, 2}));
      Attributes clip;
      clip.set("min", 0.0f);
      clip.set("max", 6.0f);
      Graph g = GraphBuilder()
                    .input("x", c.in)
                    .constant("w1", random_tensor({e, c.in[1], c.k, c.k}, 12))
                    .constant("g1", random_tensor({e}, 13))
                    .constant("b1", random_tensor({e}, 14))
                    .constant("m1", random_tensor({e}, 15))
                    .constant("v1", Tensor::from_vector<float>({e}, std::vector<float>(e, 0.8f)))
                    .constant("w2", random_tensor({e, 1, 3, 3}, 16))
                    .constant("g2", random_tensor({e}, 17))
                    .constant("b2", random_tensor({e}, 18))
                    .constant("m2", random_tensor({e}, 19))
                    .constant("v2", Tensor::from_vector<float>({e}, std::vector<float>(e, 1.3f)))
                    .node("Conv", {"x", "w1"}, {"c1"}, c.k == 1 ? Attributes{} : stem, "expand")
                    .node("BatchNormalization", {"c1", "g1", "b1", "m1", "v1"}, {"n1"}, {}, "bn1")
                    .node("Clip", {"n1"}, {"r1"}, clip, "relu6_1")
                    .node("Conv", {"r1", "w2"}, {"c2"}, dw, "depthwise")
                    .node("BatchNormalization", {"c2", "g2", "b2", "m2", "v2"}, {"n2"}, {}, "bn2")
                    .node("Clip", {"n2"}, {"y"}, clip, "relu6_2")
                    .output("y")
                    .build();
      const std::vector<RegionProfile> profile =
          expect_matches_reference(std::move(g), 13, threads);
      ASSERT_EQ(profile.size(), 1u);
      ASSERT_EQ(profile[0].node_times_us.size(), 6u);
      EXPECT_GT(profile[0].node_times_us[0], 0.0);
      if (c.k == 1) {
        for (size_t i = 1; i < 6; ++i) EXPECT_EQ(profile[0].node_times_us[i], 0.0) << "node " << i;
      } else {
        EXPECT_GT(profile[0].node_times_us[3], 0.0);  // a stem conv does not take the depthwise
      }
    }
  }
}

TEST(CpuSession, SingleThreadGivesSameAnswer) {
  Graph g = GraphBuilder()
                .input("x", {1, 8, 9, 9})
                .constant("w", random_tensor({16, 8, 1, 1}, 1))
                .node("Conv", {"x", "w"}, {"y"}, {}, "pointwise")
                .output("y")
                .build();
  expect_matches_reference(std::move(g), 5, 1);
}

TEST(CpuSession, DepthwiseRelu6AndResidualAdd) {
  Attributes dw = ints("pads", {1, 1, 1, 1});
  dw.set("group", int64_t{6});
  Graph g = GraphBuilder()
                .input("x", {1, 6, 11, 13})
                .constant("w", random_tensor({6, 1, 3, 3}, 1))
                .constant("b", random_tensor({6}, 2))
                .constant("lo", Tensor::from_vector<float>({}, {0.0f}))
                .constant("hi", Tensor::from_vector<float>({}, {6.0f}))
                .constant("pw", random_tensor({6, 6, 1, 1}, 3))
                .node("Conv", {"x", "w", "b"}, {"d"}, dw, "dw")
                .node("Clip", {"d", "lo", "hi"}, {"d6"}, {}, "relu6")
                .node("Conv", {"d6", "pw"}, {"p"}, {}, "project")
                .node("Add", {"p", "x"}, {"sum"}, {}, "residual")
                .node("Relu", {"sum"}, {"y"}, {}, "relu")
                .output("y")
                .build();
  expect_matches_reference(std::move(g));
}

TEST(CpuSession, ConvOutputReadTwiceIsNotFused) {
  // "c" feeds both Relu and the graph output, so Relu must not be fused into the conv.
  Graph g2 = GraphBuilder()
                 .input("x", {1, 4, 7, 5})
                 .constant("w", random_tensor({5, 4, 3, 3}, 1))
                 .constant("gamma", random_tensor({5}, 3))
                 .constant("beta", random_tensor({5}, 4))
                 .constant("mean", random_tensor({5}, 5))
                 .constant("var", Tensor::from_vector<float>({5}, {0.5f, 1, 2, 0.3f, 1.5f}))
                 .node("Conv", {"x", "w"}, {"c"}, {}, "conv")
                 .node("Relu", {"c"}, {"r"}, {}, "relu")
                 .node("BatchNormalization", {"r", "gamma", "beta", "mean", "var"}, {"y"}, {}, "bn")
                 .output("c")
                 .output("y")
                 .build();
  expect_matches_reference(std::move(g2));
}

TEST(CpuSession, PoolsSoftmaxConcatReshapeMatMul) {
  Attributes avg =
      ints("kernel_shape", {3, 3}, ints("pads", {1, 1, 1, 1}, ints("strides", {2, 2})));
  Attributes avg_pad = avg;
  avg_pad.set("count_include_pad", int64_t{1});
  Attributes axis1;
  axis1.set("axis", int64_t{1});
  Graph g = GraphBuilder()
                .input("x", {1, 5, 9, 10})
                .constant("shape", Tensor::from_vector<int64_t>({2}, {5, 25}))
                .constant("m", random_tensor({25, 3}, 9))
                .node("AveragePool", {"x"}, {"a"}, avg, "avg")
                .node("AveragePool", {"x"}, {"ap"}, avg_pad, "avg_pad")
                .node("Concat", {"a", "ap"}, {"cat"}, axis1, "concat")
                .node("GlobalAveragePool", {"cat"}, {"gap"}, {}, "gap")
                .node("Reshape", {"a", "shape"}, {"r"}, {}, "reshape")
                .node("MatMul", {"r", "m"}, {"mm"}, {}, "matmul")
                .node("Softmax", {"mm"}, {"s"}, {}, "softmax")
                .node("Identity", {"s"}, {"y"}, {}, "identity")
                .output("gap")
                .output("y")
                .build();
  expect_matches_reference(std::move(g));
}

// A node cpu refuses (MaxPool with storage_order 1, which only orders the Indices output that
// cpu does not implement), for the fallback tests.
Attributes refused_pool() {
  Attributes a = ints("kernel_shape", {2, 2}, ints("strides", {2, 2}));
  a.set("ceil_mode", int64_t{1});
  a.set("storage_order", int64_t{1});
  return a;
}

TEST(CpuSession, UnsupportedNodeFallsBackToReference) {
  Graph g = GraphBuilder()
                .input("x", {1, 16, 32, 32})
                .constant("w", random_tensor({32, 16, 3, 3}, 1))
                .node("MaxPool", {"x"}, {"t"}, refused_pool(), "pool")
                .node("Conv", {"t", "w"}, {"c"}, ints("pads", {1, 1, 1, 1}), "conv")
                .node("Relu", {"c"}, {"y"}, {}, "relu")
                .output("y")
                .build();
  const Graph reference_graph = g;
  const auto inputs = test::random_inputs(g, 3);
  Session session(std::move(g), cpu_options());
  for (const NodePlacement& p : session.plan().nodes) {
    EXPECT_EQ(p.plugin, p.node == "pool" ? "reference" : "cpu") << p.reason;
  }
  const Tensor got = session.run(inputs)[0];
  const Tensor want = run_reference(reference_graph, inputs)[0];
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float w = want.data<float>()[i];
    ASSERT_NEAR(got.data<float>()[i], w, 1e-4f * std::max(1.0f, std::fabs(w))) << i;
  }
}

// A one-node cpu island between reference nodes: the reference estimate of a tiny Sigmoid is
// below cpu's, but with no transfers to save the naive loops never take work cpu runs.
TEST(CpuSession, CpuIslandBetweenReferenceNodesStaysOnCpu) {
  Graph g = GraphBuilder()
                .input("x", {1, 4, 5, 5})
                .node("MaxPool", {"x"}, {"a"}, refused_pool(), "pool1")
                .node("Sigmoid", {"a"}, {"b"}, {}, "sigmoid")
                .node("MaxPool", {"b"}, {"y"}, refused_pool(), "pool2")
                .output("y")
                .build();
  const Graph reference_graph = g;
  const auto inputs = test::random_inputs(g, 4);
  Session session(std::move(g), cpu_options());
  for (const NodePlacement& p : session.plan().nodes) {
    EXPECT_EQ(p.plugin, p.node == "sigmoid" ? "cpu" : "reference") << p.node << ": " << p.reason;
  }
  const Tensor got = session.run(inputs)[0];
  const Tensor want = run_reference(reference_graph, inputs)[0];
  for (int64_t i = 0; i < want.numel(); ++i) {
    EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-6f) << i;
  }
}

// An integer division by zero is an error naming the node (as core's kernel says), never a crash
// or a silent value; the same graph without a zero divisor matches the reference kernels.
TEST(CpuSession, Int8DivisionByZeroNamesTheNode) {
  const Graph g = GraphBuilder()
                      .input("a", {2, 5}, DType::kUInt8)
                      .input("b", {5}, DType::kUInt8)
                      .node("Div", {"a", "b"}, {"y"}, {}, "int_div")
                      .output("y")
                      .build();
  Session session(g, cpu_options());
  ASSERT_EQ(session.plan().nodes.at(0).plugin, "cpu") << session.plan().nodes.at(0).reason;
  const Tensor a = Tensor::from_vector<uint8_t>({2, 5}, {200, 7, 9, 255, 0, 1, 2, 3, 4, 5});
  std::map<std::string, Tensor> inputs = {
      {"a", a}, {"b", Tensor::from_vector<uint8_t>({5}, {3, 2, 0, 7, 1})}};
  try {
    session.run(inputs);
    FAIL() << "a division by zero ran";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("int_div"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos)
        << e.what();
  }
  inputs["b"] = Tensor::from_vector<uint8_t>({5}, {3, 2, 9, 7, 1});
  const Tensor got = session.run(inputs)[0];
  const Tensor want = run_reference(g, inputs)[0];
  ASSERT_EQ(got.nbytes(), want.nbytes());
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.nbytes()), 0);
}

// Token ids fed at run time into an embedding table (text models): int64 with negative ids, then
// int32, against the reference runner; an id past the table is an error naming the node, and
// the session runs again afterwards.
TEST(CpuSession, GatherRuntimeIndicesIntoEmbedding) {
  for (const DType dtype : {DType::kInt64, DType::kInt32}) {
    const Graph g = GraphBuilder()
                        .input("ids", {2, 5}, dtype)
                        .constant("table", random_tensor({11, 6}, 31))
                        .node("Gather", {"table", "ids"}, {"e"}, {}, "embed")
                        .node("Relu", {"e"}, {"y"})
                        .output("y")
                        .build();
    Session session(g, cpu_options());
    expect_all_on_cpu(session);
    const std::vector<int64_t> ids = {0, 10, -1, 3, 3, -11, 7, 2, 9, 5};
    auto feed = [&](std::vector<int64_t> v) {
      if (dtype == DType::kInt64) return Tensor::from_vector<int64_t>({2, 5}, std::move(v));
      return Tensor::from_vector<int32_t>({2, 5}, std::vector<int32_t>(v.begin(), v.end()));
    };
    std::map<std::string, Tensor> inputs = {{"ids", feed(ids)}};
    const Tensor got = session.run(inputs)[0];
    const Tensor want = run_reference(g, inputs)[0];
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < want.numel(); ++i) {
      EXPECT_EQ(got.data<float>()[i], want.data<float>()[i]) << "element " << i;
    }
    for (const int64_t bad : {11, -12}) {
      std::vector<int64_t> wrong = ids;
      wrong[7] = bad;
      try {
        session.run({{"ids", feed(wrong)}});
        FAIL() << "id " << bad << " ran";
      } catch (const std::exception& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("embed"), std::string::npos) << what;
        EXPECT_NE(what.find("index " + std::to_string(bad) + " out of range [-11, 11)"),
                  std::string::npos)
            << what;
      }
    }
    EXPECT_EQ(session.run(inputs)[0].nbytes(), want.nbytes());
  }
}

// CumSum as text models export it (position ids from an int64 attention mask fed at run time)
// and on float32 and int32 with each of exclusive / reverse, along the last and a middle axis;
// every node on cpu, bit-exact against the reference runner.
TEST(CpuSession, CumSumPositionIdsAndRunningTotals) {
  for (const int64_t exclusive : {0, 1}) {
    for (const int64_t reverse : {0, 1}) {
      SCOPED_TRACE("exclusive " + std::to_string(exclusive) + " reverse " +
                   std::to_string(reverse));
      const Attributes flags = test::attrs({{"exclusive", exclusive}, {"reverse", reverse}});
      const Graph g = GraphBuilder()
                          .input("mask", {2, 7}, DType::kInt64)
                          .input("x", {3, 5, 4})
                          .input("n", {4, 9}, DType::kInt32)
                          .constant("last", Tensor::from_vector<int64_t>({}, {-1}))
                          .constant("mid", Tensor::from_vector<int32_t>({1}, {1}))
                          .node("CumSum", {"mask", "last"}, {"pos"}, flags)
                          .node("CumSum", {"x", "mid"}, {"run"}, flags)
                          .node("CumSum", {"n", "last"}, {"count"}, flags)
                          .output("pos")
                          .output("run")
                          .output("count")
                          .build();
      Session session(g, cpu_options());
      expect_all_on_cpu(session);
      std::vector<int32_t> n(36);
      for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<int32_t>(i * 7919 % 23) - 11;
      n[3] = 2147483000;  // integer sums wrap as the reference's do
      n[4] = 2147483000;
      const std::map<std::string, Tensor> inputs = {
          {"mask",
           Tensor::from_vector<int64_t>({2, 7}, {0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0})},
          {"x", random_tensor({3, 5, 4}, 41)},
          {"n", Tensor::from_vector<int32_t>({4, 9}, n)}};
      ASSERT_NO_FATAL_FAILURE(expect_same_bytes(session.run(inputs), run_reference(g, inputs)));
    }
  }
}

// GatherElements with indices fed at run time (int64 with negative ones, then int32) along the
// last axis and with constant indices along the first, indices smaller than the data in the
// other dimensions; float32 and int64 data; an index past the axis is an error naming the node,
// and the session runs again afterwards.
TEST(CpuSession, GatherElementsRuntimeAndConstantIndices) {
  for (const DType dtype : {DType::kInt64, DType::kInt32}) {
    const Graph g =
        GraphBuilder()
            .input("x", {3, 4, 6})
            .input("ids", {2, 3, 5}, dtype)
            .input("tokens", {2, 3, 6}, DType::kInt64)
            .constant("rows", Tensor::from_vector<int64_t>({2, 1, 2}, {2, -1, 0, 1}))
            .node("GatherElements", {"x", "ids"}, {"picked"}, test::attrs({{"axis", int64_t{2}}}),
                  "pick")
            .node("GatherElements", {"x", "rows"}, {"first"}, test::attrs({{"axis", int64_t{0}}}))
            .node("GatherElements", {"tokens", "ids"}, {"tok"},
                  test::attrs({{"axis", int64_t{-1}}}))
            .output("picked")
            .output("first")
            .output("tok")
            .build();
    Session session(g, cpu_options());
    expect_all_on_cpu(session);
    std::vector<int64_t> ids(30), tokens(36);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i * 5 % 12) - 6;
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int64_t>(i) * 1000003 - 7;
    auto feed = [&](std::vector<int64_t> v) {
      if (dtype == DType::kInt64) return Tensor::from_vector<int64_t>({2, 3, 5}, std::move(v));
      return Tensor::from_vector<int32_t>({2, 3, 5}, std::vector<int32_t>(v.begin(), v.end()));
    };
    std::map<std::string, Tensor> inputs = {
        {"x", random_tensor({3, 4, 6}, 43)},
        {"ids", feed(ids)},
        {"tokens", Tensor::from_vector<int64_t>({2, 3, 6}, tokens)}};
    const std::vector<Tensor> want = run_reference(g, inputs);
    ASSERT_NO_FATAL_FAILURE(expect_same_bytes(session.run(inputs), want));
    for (const int64_t bad : {6, -7}) {
      std::vector<int64_t> wrong = ids;
      wrong[11] = bad;
      inputs["ids"] = feed(wrong);
      expect_run_error(session, inputs, "pick",
                       "index " + std::to_string(bad) + " out of range [-6, 6)");
    }
    inputs["ids"] = feed(ids);
    ASSERT_NO_FATAL_FAILURE(expect_same_bytes(session.run(inputs), want));
  }
}

// GatherND with indices fed at run time: tuples of two into float32 data (slices of a row),
// with batch_dims 1 into int64 data, negative indices; an index past its dim is an error naming
// the node, and the session runs again afterwards.
TEST(CpuSession, GatherNdRuntimeIndices) {
  const Graph g =
      GraphBuilder()
          .input("x", {4, 5, 6})
          .input("pairs", {2, 3, 2}, DType::kInt64)
          .input("ids", {2, 5, 3}, DType::kInt64)
          .input("rows", {2, 4, 1}, DType::kInt64)
          .node("GatherND", {"x", "pairs"}, {"slices"}, {}, "pick")
          .node("GatherND", {"ids", "rows"}, {"picked"}, test::attrs({{"batch_dims", int64_t{1}}}))
          .output("slices")
          .output("picked")
          .build();
  Session session(g, cpu_options());
  expect_all_on_cpu(session);
  std::vector<int64_t> ids(30);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i) * 7777777 - 3;
  const std::vector<int64_t> pairs = {0, 4, 3, -1, -4, 2, 1, 0, 2, 3, 3, -5};
  std::map<std::string, Tensor> inputs = {
      {"x", random_tensor({4, 5, 6}, 47)},
      {"pairs", Tensor::from_vector<int64_t>({2, 3, 2}, pairs)},
      {"ids", Tensor::from_vector<int64_t>({2, 5, 3}, ids)},
      {"rows", Tensor::from_vector<int64_t>({2, 4, 1}, {4, 0, -1, 2, 1, 1, -5, 3})}};
  const std::vector<Tensor> want = run_reference(g, inputs);
  ASSERT_NO_FATAL_FAILURE(expect_same_bytes(session.run(inputs), want));
  for (const int64_t bad : {5, -6}) {
    std::vector<int64_t> wrong = pairs;
    wrong[5] = bad;  // the second entry of a tuple addresses dim 1 (extent 5)
    inputs["pairs"] = Tensor::from_vector<int64_t>({2, 3, 2}, wrong);
    expect_run_error(session, inputs, "pick",
                     "index " + std::to_string(bad) + " out of range [-5, 5)");
  }
  inputs["pairs"] = Tensor::from_vector<int64_t>({2, 3, 2}, pairs);
  ASSERT_NO_FATAL_FAILURE(expect_same_bytes(session.run(inputs), want));
}

// Trilu on float32 scores and int64 data, upper and lower, k from far below to far above the
// diagonal and none; every node on cpu, bit-exact against the reference runner.
TEST(CpuSession, TriluBothTrianglesEveryOffset) {
  for (const int64_t upper : {0, 1}) {
    GraphBuilder b;
    b.input("x", {2, 5, 7}).input("ids", {6, 4}, DType::kInt64);
    int index = 0;
    for (const int64_t k :
         {int64_t{-9}, int64_t{-2}, int64_t{0}, int64_t{3}, std::numeric_limits<int64_t>::max()}) {
      const std::string i = std::to_string(index++);
      b.constant("k" + i, Tensor::from_vector<int64_t>({}, {k}))
          .node("Trilu", {"x", "k" + i}, {"y" + i}, test::attrs({{"upper", upper}}))
          .output("y" + i);
    }
    b.node("Trilu", {"ids"}, {"t"}, test::attrs({{"upper", upper}})).output("t");
    const Graph g = b.build();
    Session session(g, cpu_options());
    expect_all_on_cpu(session);
    std::vector<int64_t> ids(24);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i) * 1000003 + 1;
    const std::map<std::string, Tensor> inputs = {
        {"x", random_tensor({2, 5, 7}, 53)}, {"ids", Tensor::from_vector<int64_t>({6, 4}, ids)}};
    ASSERT_NO_FATAL_FAILURE(expect_same_bytes(session.run(inputs), run_reference(g, inputs)));
  }
}

// IsNaN / IsInf (both directions, each alone) and torch.nan_to_num's Where over them, on an
// input holding NaN and both infinities; every node on cpu, bit-exact against the reference.
TEST(CpuSession, IsNanIsInfAndNanToNum) {
  const Graph g = GraphBuilder()
                      .input("x", {2, 6})
                      .constant("zero", Tensor::from_vector<float>({}, {0.0f}))
                      .constant("big", Tensor::from_vector<float>({}, {3.4e38f}))
                      .node("IsNaN", {"x"}, {"nan"})
                      .node("IsInf", {"x"}, {"inf"})
                      .node("IsInf", {"x"}, {"pos"}, test::attrs({{"detect_negative", int64_t{0}}}))
                      .node("IsInf", {"x"}, {"neg"}, test::attrs({{"detect_positive", int64_t{0}}}))
                      .node("Where", {"nan", "zero", "x"}, {"no_nan"})
                      .node("Where", {"pos", "big", "no_nan"}, {"clean"})
                      .output("inf")
                      .output("neg")
                      .output("clean")
                      .build();
  Session session(g, cpu_options());
  expect_all_on_cpu(session);
  const float inf = std::numeric_limits<float>::infinity();
  const std::map<std::string, Tensor> inputs = {
      {"x", Tensor::from_vector<float>(
                {2, 6}, {1.0f, NAN, inf, -inf, -0.0f, 3e38f, -2.5f, inf, NAN, 0.0f, -inf, 7.0f})}};
  ASSERT_NO_FATAL_FAILURE(expect_same_bytes(session.run(inputs), run_reference(g, inputs)));
}

// A padding mask from token ids as text models export it: Equal(ids, pad) on int64, Not, Cast to
// float32 and to int32, a Where choosing scores or a large negative fill, and a float32 -> int64
// Cast (truncation toward zero); every node on cpu, bit-exact against the reference runner.
TEST(CpuSession, PaddingMaskFromTokenIds) {
  const Graph g = GraphBuilder()
                      .input("ids", {2, 6}, DType::kInt64)
                      .input("scores", {2, 3, 6})
                      .constant("pad", Tensor::from_vector<int64_t>({}, {0}))
                      .constant("fill", Tensor::from_vector<float>({}, {-1e9f}))
                      .node("Equal", {"ids", "pad"}, {"is_pad"})
                      .node("Not", {"is_pad"}, {"keep"})
                      .node("Cast", {"keep"}, {"keep_f"}, test::attrs({{"to", int64_t{1}}}))
                      .node("Cast", {"keep"}, {"keep_i"}, test::attrs({{"to", int64_t{6}}}))
                      .constant("axis1", Tensor::from_vector<int64_t>({1}, {1}))
                      .node("Unsqueeze", {"is_pad", "axis1"}, {"is_pad3"})
                      .node("Where", {"is_pad3", "fill", "scores"}, {"masked"})
                      .node("Cast", {"scores"}, {"trunc"}, test::attrs({{"to", int64_t{7}}}))
                      .output("keep_f")
                      .output("keep_i")
                      .output("masked")
                      .output("trunc")
                      .build();
  Session session(g, cpu_options());
  expect_all_on_cpu(session);
  std::vector<float> scores(36);
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = 7.0f * std::sin(static_cast<float>(i));
  const std::map<std::string, Tensor> inputs = {
      {"ids", Tensor::from_vector<int64_t>({2, 6}, {5, 9, 0, 3, 0, 0, 0, 2, 2, 8, 1, 0})},
      {"scores", Tensor::from_vector<float>({2, 3, 6}, scores)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(g, inputs);
  ASSERT_NO_FATAL_FAILURE(expect_same_bytes(got, want));
  EXPECT_EQ(got[3].data<int64_t>()[1], 5);   // 7 sin(1) = 5.89 -> 5
  EXPECT_EQ(got[3].data<int64_t>()[4], -5);  // 7 sin(4) = -5.30 -> -5
}

// The ops that only move data take every element width, bit-exact against the reference runner:
// int64 ids through Transpose (a strided inner run), Slice with a step, Split, Tile and Gather;
// a bool mask through Expand (nn.MultiheadAttention's key padding mask), Transpose and Concat;
// int64 Concat along an inner axis; int8
// through Tile and Gather; int32 through the tiled transpose (4-byte elements share float's).
TEST(CpuSession, DataMovementOfEveryElementWidth) {
  auto i64 = [](std::vector<int64_t> v) {
    return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, std::move(v));
  };
  const Graph g =
      GraphBuilder()
          .input("ids", {3, 5, 7}, DType::kInt64)
          .input("mask", {2, 1, 9}, DType::kBool)
          .input("q", {4, 6}, DType::kInt8)
          .input("n", {2, 9, 11}, DType::kInt32)
          .node("Transpose", {"ids"}, {"ids_t"},
                test::attrs({{"perm", std::vector<int64_t>{2, 0, 1}}}))
          .constant("starts", i64({1, 0}))
          .constant("ends", i64({5, 7}))
          .constant("axes", i64({1, 2}))
          .constant("steps", i64({2, 3}))
          .node("Slice", {"ids", "starts", "ends", "axes", "steps"}, {"ids_s"})
          .constant("parts", i64({3, 4}))
          .node("Split", {"ids", "parts"}, {"ids_a", "ids_b"}, test::attrs({{"axis", int64_t{2}}}))
          .constant("reps", i64({2, 1, 3}))
          .node("Tile", {"ids", "reps"}, {"ids_r"})
          .constant("rows", i64({2, 0, 2}))
          .node("Gather", {"ids", "rows"}, {"ids_g"})
          .constant("shape", i64({2, 4, 9}))
          .node("Expand", {"mask", "shape"}, {"mask_e"})
          .node("Transpose", {"mask_e"}, {"mask_t"},
                test::attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}))
          .constant("qreps", i64({3, 2}))
          .node("Tile", {"q", "qreps"}, {"q_r"})
          .constant("qrows", i64({3, 1}))
          .node("Gather", {"q", "qrows"}, {"q_g"}, test::attrs({{"axis", int64_t{1}}}))
          .node("Transpose", {"n"}, {"n_t"}, test::attrs({{"perm", std::vector<int64_t>{0, 2, 1}}}))
          .output("ids_t")
          .output("ids_s")
          .output("ids_a")
          .output("ids_b")
          .output("ids_r")
          .output("ids_g")
          .output("mask_t")
          .output("q_r")
          .output("q_g")
          .output("n_t")
          .build();
  Session session(g, cpu_options());
  expect_all_on_cpu(session);
  std::vector<int64_t> ids(105);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<int64_t>(i * 7919) - (int64_t{1} << 40);
  const std::vector<uint8_t> bits = {1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1};
  Tensor mask(DType::kBool, {2, 1, 9});
  std::memcpy(mask.raw(), bits.data(), bits.size());
  std::vector<int8_t> q(24);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>(i * 11 - 128);
  std::vector<int32_t> n(198);
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<int32_t>(i * 104729) ^ 0x7f800001;
  const std::map<std::string, Tensor> inputs = {
      {"ids", Tensor::from_vector<int64_t>({3, 5, 7}, ids)},
      {"mask", mask},
      {"q", Tensor::from_vector<int8_t>({4, 6}, q)},
      {"n", Tensor::from_vector<int32_t>({2, 9, 11}, n)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(g, inputs);
  ASSERT_NO_FATAL_FAILURE(expect_same_bytes(got, want));
}

// QuantizeLinear rounds half to even and saturates, alone (int8 out) and as the fake quantization
// a QuantizeLinear -> DequantizeLinear pair becomes after an Add (fused into the Add's step), on
// values whose quotients are exact halves; checked against hand-computed values and the
// reference runner.
TEST(CpuSession, QuantizeRoundsHalfToEvenAndSaturates) {
  const Graph g = GraphBuilder()
                      .input("x", {1, 9})
                      .constant("s", Tensor::from_vector<float>({}, {0.5f}))
                      .constant("z8", Tensor::from_vector<int8_t>({}, {1}))
                      .constant("zu", Tensor::from_vector<uint8_t>({}, {3}))
                      .constant("zero", Tensor::from_vector<float>({}, {0.0f}))
                      .node("QuantizeLinear", {"x", "s", "z8"}, {"q"}, {}, "quantize")
                      .node("Add", {"x", "zero"}, {"a"}, {}, "add")
                      .node("QuantizeLinear", {"a", "s", "zu"}, {"aq"}, {}, "pair_q")
                      .node("DequantizeLinear", {"aq", "s", "zu"}, {"fq"}, {}, "pair_dq")
                      .output("q")
                      .output("fq")
                      .build();
  Session session(g, cpu_options());
  expect_all_on_cpu(session);
  const std::vector<float> x = {-1.25f, -0.75f, 0.25f, 0.75f, 1.25f, 150.0f, -100.0f, -1.5f, 2.0f};
  const std::map<std::string, Tensor> inputs = {{"x", Tensor::from_vector<float>({1, 9}, x)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(g, inputs);
  // x / 0.5 = -2.5 -1.5 0.5 1.5 2.5 300 -200 -3 4: half to even -2 -2 0 2 2, then + zero point,
  // saturated to int8 / uint8.
  const std::vector<int8_t> q = {-1, -1, 1, 3, 3, 127, -128, -2, 5};
  const std::vector<float> fq = {-1.0f, -1.0f, 0.0f, 1.0f, 1.0f, 126.0f, -1.5f, -1.5f, 2.0f};
  ASSERT_EQ(got.size(), 2u);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(got[0].data<int8_t>()[i], q[i]) << "element " << i;
    EXPECT_EQ(want[0].data<int8_t>()[i], q[i]) << "reference, element " << i;
    EXPECT_EQ(got[1].data<float>()[i], fq[i]) << "element " << i;
    EXPECT_EQ(want[1].data<float>()[i], fq[i]) << "reference, element " << i;
  }
}

// Grid coordinates that are NaN, infinite or far outside [-1, 1] sample defined values (a NaN as
// a point left of the image; the rest padded or folded) on cpu and in the reference kernel alike,
// for every padding mode; and EyeLike's diagonal index may be anywhere in int64.
TEST(CpuSession, GridSampleOfNonFiniteAndFarCoordinates) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> grid = {std::nanf(""), 0.2f, inf,   -inf, 1e30f, -1e30f, 0.5f, 3e9f,
                                   -0.3f,         0.9f, -2e7f, 7.5f, 1.0f,  -1.0f,  0.0f, 0.0f};
  std::vector<float> x(2 * 5 * 6);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(static_cast<float>(i));
  for (const char* padding : {"zeros", "border", "reflection"}) {
    for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
      SCOPED_TRACE(std::string(mode) + " " + padding);
      const Graph g = GraphBuilder(16)
                          .input("x", {1, 2, 5, 6})
                          .input("grid", {1, 2, 4, 2})
                          .node("GridSample", {"x", "grid"}, {"y"},
                                test::attrs({{"mode", std::string(mode)},
                                             {"padding_mode", std::string(padding)}}))
                          .output("y")
                          .build();
      Session session(g, cpu_options());
      ASSERT_EQ(session.plan().nodes.at(0).plugin, "cpu");
      const std::map<std::string, Tensor> inputs = {
          {"x", Tensor::from_vector<float>({1, 2, 5, 6}, x)},
          {"grid", Tensor::from_vector<float>({1, 2, 4, 2}, grid)}};
      const Tensor got = session.run(inputs).at(0);
      const Tensor want = run_reference(g, inputs).at(0);
      for (int64_t i = 0; i < want.numel(); ++i) {
        ASSERT_TRUE(std::isfinite(want.data<float>()[i])) << "element " << i;
        EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5f) << "element " << i;
      }
    }
  }
  for (const int64_t k : {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                          int64_t{2}, int64_t{-1}}) {
    const Graph g = GraphBuilder()
                        .input("x", {3, 4})
                        .node("EyeLike", {"x"}, {"y"}, test::attrs({{"k", k}}))
                        .output("y")
                        .build();
    const Tensor y =
        run_reference(g, {{"x", Tensor::from_vector<float>({3, 4}, std::vector<float>(12))}}).at(0);
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        const bool diagonal = k > -4 && k < 5 && j - i == k;
        EXPECT_EQ(y.data<float>()[i * 4 + j], diagonal ? 1.0f : 0.0f) << "k " << k;
      }
    }
  }
}

// Edge cases of core's newer kernels, against hand-computed values: GatherND over an empty batch
// (a detector that found nothing), GridSample refusing an empty image to sample, OneHot's negative
// indices (out of range before opset 11, from the end after), Hardmax and Celu on NaN.
TEST(ReferenceKernels, EdgeCasesOfGatherNdGridSampleOneHotHardmaxCelu) {
  const Graph nd =
      GraphBuilder()
          .input("x", {0, 3})
          .constant("i", Tensor::from_vector<int64_t>({0, 1}, {}))
          .node("GatherND", {"x", "i"}, {"y"}, test::attrs({{"batch_dims", int64_t{1}}}))
          .output("y")
          .build();
  const Tensor empty = run_reference(nd, {{"x", Tensor::from_vector<float>({0, 3}, {})}}).at(0);
  EXPECT_EQ(empty.shape(), (Shape{0}));
  EXPECT_THROW(GraphBuilder(16)
                   .input("x", {1, 1, 0, 5})
                   .input("grid", {1, 2, 3, 2})
                   .node("GridSample", {"x", "grid"}, {"y"},
                         test::attrs({{"padding_mode", std::string("border")}}))
                   .output("y")
                   .build(),
               Error);
  for (const int64_t opset : {int64_t{10}, int64_t{11}}) {
    const Graph g = GraphBuilder(opset)
                        .input("i", {2}, DType::kInt64)
                        .constant("depth", Tensor::from_vector<int64_t>({}, {3}))
                        .constant("values", Tensor::from_vector<float>({2}, {0.0f, 1.0f}))
                        .node("OneHot", {"i", "depth", "values"}, {"y"})
                        .output("y")
                        .build();
    const Tensor y = run_reference(g, {{"i", Tensor::from_vector<int64_t>({2}, {-1, 1})}}).at(0);
    const std::vector<float> want =
        opset >= 11 ? std::vector<float>{0, 0, 1, 0, 1, 0} : std::vector<float>{0, 0, 0, 0, 1, 0};
    EXPECT_EQ(y.to_float_vector(), want) << "opset " << opset;
  }
  const float nan = std::nanf("");
  const Graph hm = GraphBuilder()
                       .input("x", {1, 4})
                       .node("Hardmax", {"x"}, {"h"})
                       .node("Celu", {"x"}, {"c"})
                       .output("h")
                       .output("c")
                       .build();
  const auto out = run_reference(hm, {{"x", Tensor::from_vector<float>({1, 4}, {1, nan, 3, nan})}});
  EXPECT_EQ(out.at(0).to_float_vector(), (std::vector<float>{0, 1, 0, 0}));
  EXPECT_TRUE(std::isnan(out.at(1).to_float_vector()[1]));
  EXPECT_EQ(out.at(1).to_float_vector()[2], 3.0f);
}

// An entry of length 0 in a padded batch (its Y rows stay zero, its final state is h0) and one
// longer than the sequence (clamped), given at run time, against the reference runner.
TEST(CpuSession, LstmSequenceLensAtRunTimeWithEmptyEntry) {
  const int64_t h = 5;
  const Graph g =
      GraphBuilder(14)
          .input("x", {4, 3, 3})
          .input("lens", {3}, DType::kInt32)
          .input("h0", {1, 3, h})
          .constant("w", random_tensor({1, 4 * h, 3}, 21))
          .constant("r", random_tensor({1, 4 * h, h}, 22))
          .node("LSTM", {"x", "w", "r", "", "lens", "h0"}, {"y", "yh"},
                test::attrs({{"hidden_size", h}, {"direction", std::string("reverse")}}))
          .output("y")
          .output("yh")
          .build();
  Session session(g, cpu_options());
  expect_all_on_cpu(session);
  const std::map<std::string, Tensor> inputs = {
      {"x", random_tensor({4, 3, 3}, 23)},
      {"lens", Tensor::from_vector<int32_t>({3}, {2, 0, 9})},
      {"h0", random_tensor({1, 3, h}, 24)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(g, inputs);
  ASSERT_EQ(got.size(), 2u);
  for (size_t o = 0; o < 2; ++o) {
    ASSERT_EQ(got[o].shape(), want[o].shape());
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      EXPECT_NEAR(got[o].data<float>()[i], want[o].data<float>()[i], 1e-5) << o << " " << i;
    }
  }
  // Entry 1 never stepped: its final state is its initial one.
  for (int64_t j = 0; j < h; ++j) {
    EXPECT_EQ(got[1].data<float>()[h + j], inputs.at("h0").data<float>()[h + j]);
  }
}

}  // namespace
}  // namespace tessera
