// Compiled cpu regions seen directly: the tuning hooks (describe() through the real plugin host:
// schedules, knob spaces, heuristic defaults, workload keys; node configs given at compile time
// changing the schedule a region runs, read from its notes, while the results still equal the
// reference runner's; bad configs falling back to the heuristic with a note) and intermediates
// sharing memory by liveness.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "graph_builder.hpp"
#include "kernels/kernels.hpp"
#include "knob_grid.hpp"
#include "microarchitecture.hpp"
#include "plugins/region_desc.hpp"
#include "region.hpp"
#include "schedules.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"

namespace tessera {
namespace {

using test::GraphBuilder;
using test::random_tensor;

// conv (3x3, GEMM path) -> relu (fused) -> depthwise conv -> flatten -> gemm.
Graph tuning_graph() {
  Attributes conv;
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Attributes dw = conv;
  dw.set("group", int64_t{16});
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  return GraphBuilder()
      .input("x", {1, 8, 13, 11})
      .constant("w", random_tensor({16, 8, 3, 3}, 1))
      .constant("b", random_tensor({16}, 2))
      .constant("dw", random_tensor({16, 1, 3, 3}, 3))
      .constant("fw", random_tensor({10, 16 * 13 * 11}, 4))
      .constant("fb", random_tensor({10}, 5))
      .node("Conv", {"x", "w", "b"}, {"c"}, conv, "conv")
      .node("Relu", {"c"}, {"r"}, {}, "relu")
      .node("Conv", {"r", "dw"}, {"d"}, dw, "depthwise")
      .node("Flatten", {"d"}, {"f"}, {}, "flatten")
      .node("Gemm", {"f", "fw", "fb"}, {"y"}, gemm, "gemm")
      .output("y")
      .build();
}

// Compiles the whole graph as one cpu region with `configs`, runs it, compares with the reference
// runner and returns the region's notes. `g` has one input and one output.
std::vector<std::string> compile_and_check(const std::vector<plugin::NodeConfig>& configs,
                                           int32_t threads = 1, const Graph& g = tuning_graph()) {
  std::vector<int> nodes(g.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<int>(i);
  const detail::RegionDesc desc(g, nodes, detail::value_consumers(g));
  cpu::CpuRegion region(plugin::RegionView(desc.get()), threads, configs);
  const std::map<std::string, Tensor> inputs = test::random_inputs(g, 7);
  const Tensor& x = inputs.at("x");
  Tensor y(DType::kFloat32, g.value(g.outputs.at(0)).shape);
  const void* in[] = {x.data<float>()};
  void* out[] = {y.data<float>()};
  region.execute(in, out);
  const Tensor want = run_reference(g, inputs).at(0);
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float w = want.data<float>()[i];
    EXPECT_NEAR(y.data<float>()[i], w, 1e-4f * std::max(1.0f, std::fabs(w))) << "element " << i;
  }
  return region.notes();
}

bool has_note(const std::vector<std::string>& notes, const std::string& text) {
  return std::any_of(notes.begin(), notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

std::string all_notes(const std::vector<std::string>& notes) {
  std::string out;
  for (const std::string& n : notes) out += n + "\n";
  return out;
}

plugin::NodeConfig conv_config(std::vector<plugin::KnobValue> knobs,
                               std::string schedule = "conv2d.nchw.im2col_gemm") {
  plugin::NodeConfig c;
  c.node = 0;
  c.schedule = std::move(schedule);
  c.knobs = std::move(knobs);
  return c;
}

// Concat inputs computed in the region are written straight into their slice of the output, also
// through nested Concats whose output is the region's (a core buffer known only at run time) and
// when another node reads the input afterwards; a region input is still copied.
// The micro-architecture joins the device name, which packs are matched by. Oracle: the vendors'
// family/model tables (AMD's family 17h/19h/1Ah model ranges, Intel's family 6 model numbers).
TEST(CpuDeviceName, MicroarchitectureFromFamilyAndModel) {
  struct Row {
    const char* vendor;
    long family, model;
    const char* want;
  };
  for (const Row& r :
       {Row{"AuthenticAMD", 23, 0x01, "Zen"}, Row{"AuthenticAMD", 23, 0x31, "Zen 2"},
        Row{"AuthenticAMD", 25, 0x01, "Zen 3"}, Row{"AuthenticAMD", 25, 0x21, "Zen 3"},
        Row{"AuthenticAMD", 25, 0x11, "Zen 4"}, Row{"AuthenticAMD", 25, 0x61, "Zen 4"},
        Row{"AuthenticAMD", 26, 0x02, "Zen 5"}, Row{"AuthenticAMD", 21, 0x02, "family 21 model 2"},
        Row{"GenuineIntel", 6, 85, "Skylake-SP"}, Row{"GenuineIntel", 6, 143, "Sapphire Rapids"},
        Row{"GenuineIntel", 6, 207, "Emerald Rapids"},
        Row{"GenuineIntel", 6, 999, "family 6 model 999"},
        Row{"GenuineIntel", 15, 6, "family 15 model 6"},
        Row{"HygonGenuine", 24, 1, "family 24 model 1"}}) {
    EXPECT_EQ(cpu::x86_microarchitecture(r.vendor, r.family, r.model), r.want)
        << r.vendor << " family " << r.family << " model " << r.model;
  }
}

TEST(CpuRegion, ConcatInputsWrittenInPlace) {
  Attributes axis1, pad1;
  axis1.set("axis", int64_t{1});
  pad1.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const Graph g = GraphBuilder()
                      .input("x", {1, 4, 6, 7})
                      .constant("w1", random_tensor({3, 4, 1, 1}, 1))
                      .constant("w2", random_tensor({5, 4, 3, 3}, 2))
                      .constant("w3", random_tensor({2, 4, 1, 1}, 3))
                      .node("Conv", {"x", "w1"}, {"a"}, {}, "conv_a")
                      .node("Relu", {"a"}, {"ar"}, {}, "relu_a")
                      .node("Conv", {"x", "w2"}, {"b"}, pad1, "conv_b")
                      .node("Concat", {"ar", "b"}, {"cat1"}, axis1, "cat1")
                      .node("Conv", {"x", "w3"}, {"c"}, {}, "conv_c")
                      .node("Concat", {"cat1", "x", "c"}, {"cat2"}, axis1, "cat2")
                      .node("Add", {"b", "b"}, {"m"}, {}, "double_b")
                      .node("Concat", {"cat2", "m"}, {"y"}, axis1, "cat_out")
                      .output("y")
                      .build();
  const std::vector<std::string> notes = compile_and_check({}, 2, g);
  EXPECT_TRUE(has_note(notes, "cat1: 2 of 2 inputs written in place")) << all_notes(notes);
  EXPECT_TRUE(has_note(notes, "cat2: 2 of 3 inputs written in place")) << all_notes(notes);
  EXPECT_TRUE(has_note(notes, "cat_out: 2 of 2 inputs written in place")) << all_notes(notes);
}

// A residual Add runs in the epilogue of the conv it follows (then a Relu after it fuses too), on
// every conv path: im2col (other input a region input), Winograd (conv output as the Add's second
// input), depthwise (added in a second pass), phase planes (by node config). An Add whose other
// input is computed after the conv stays out of that conv: the later conv takes it instead.
TEST(CpuRegion, ResidualAddsRunInTheConvEpilogue) {
  Attributes pad1, dw;
  pad1.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  dw = pad1;
  dw.set("group", int64_t{16});
  // Small weights keep six stacked convs near unit scale (1e-4 relative stays meaningful).
  auto random_tensor = [](Shape shape, uint32_t seed) {
    Tensor t = test::random_tensor(std::move(shape), seed);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] *= 0.25f;
    return t;
  };
  const Graph g = GraphBuilder()
                      .input("x", {1, 16, 13, 13})
                      .constant("wa", random_tensor({16, 16, 1, 1}, 1))
                      .constant("wb", random_tensor({16, 16, 3, 3}, 2))
                      .constant("bb", random_tensor({16}, 3))
                      .constant("wc", random_tensor({16, 1, 3, 3}, 4))
                      .constant("wd", random_tensor({16, 16, 3, 3}, 5))
                      .constant("we", random_tensor({16, 16, 1, 1}, 6))
                      .constant("wf", random_tensor({16, 16, 1, 1}, 7))
                      .node("Conv", {"x", "wa"}, {"a"}, {}, "conv_a")
                      .node("Add", {"a", "x"}, {"s1"}, {}, "add_a")
                      .node("Relu", {"s1"}, {"r1"}, {}, "relu_a")
                      .node("Conv", {"r1", "wb", "bb"}, {"b"}, pad1, "conv_b")
                      .node("Add", {"r1", "b"}, {"s2"}, {}, "add_b")
                      .node("Relu", {"s2"}, {"r2"}, {}, "relu_b")
                      .node("Conv", {"r2", "wc"}, {"c"}, dw, "conv_c")
                      .node("Add", {"c", "r2"}, {"s3"}, {}, "add_c")
                      .node("Conv", {"s3", "wd"}, {"d"}, pad1, "conv_d")
                      .node("Add", {"d", "s3"}, {"s4"}, {}, "add_d")
                      .node("Conv", {"s4", "we"}, {"e"}, {}, "conv_e")
                      .node("Conv", {"s4", "wf"}, {"f"}, {}, "conv_f")
                      .node("Add", {"e", "f"}, {"y"}, {}, "add_y")
                      .output("y")
                      .build();
  plugin::NodeConfig phase = conv_config({}, "conv2d.nchw.phase_gemm");
  phase.node = 8;  // conv_d
  const std::vector<std::string> notes = compile_and_check({phase}, 2, g);
  auto fused = [&](const std::string& conv, const std::string& node) {
    return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) {
      return n.rfind(conv + ": fused", 0) == 0 && n.find(node) != std::string::npos;
    });
  };
  EXPECT_TRUE(fused("conv_a", "add_a")) << all_notes(notes);
  EXPECT_TRUE(fused("conv_a", "relu_a")) << all_notes(notes);
  EXPECT_TRUE(fused("conv_b", "add_b")) << all_notes(notes);
  EXPECT_TRUE(fused("conv_b", "relu_b")) << all_notes(notes);
  EXPECT_TRUE(has_note(notes, "conv_b: conv2d.nchw.winograd")) << all_notes(notes);
  EXPECT_TRUE(fused("conv_c", "add_c")) << all_notes(notes);
  EXPECT_TRUE(fused("conv_d", "add_d")) << all_notes(notes);
  EXPECT_TRUE(has_note(notes, "conv_d: conv2d.nchw.phase_gemm")) << all_notes(notes);
  EXPECT_FALSE(fused("conv_e", "add_y")) << all_notes(notes);
  EXPECT_TRUE(fused("conv_f", "add_y")) << all_notes(notes);
}

// A transformer MLP as PyTorch exports it on [batch, tokens, dim] activations: fc1's bias Add
// and the GELU after it run in fc1's GEMM, fc2's bias Add and the block's residual Add in fc2's;
// an Add of a per-row constant is not a bias and stays a step of its own.
TEST(CpuRegionFusion, LinearLayersTakeTheirBiasResidualAndGelu) {
  auto scalar = [](float v) {
    Tensor t(DType::kFloat32, Shape{});
    t.data<float>()[0] = v;
    return t;
  };
  const Graph g = GraphBuilder()
                      .input("x", {2, 37, 24})
                      .constant("w1", random_tensor({24, 40}, 1))
                      .constant("b1", random_tensor({40}, 2))
                      .constant("w2", random_tensor({40, 24}, 3))
                      .constant("b2", random_tensor({24}, 4))
                      .constant("w3", random_tensor({24, 24}, 5))
                      .constant("rows", random_tensor({37, 1}, 6))
                      .constant("sqrt2", scalar(1.4142135623730951f))
                      .constant("one", scalar(1.0f))
                      .constant("half", scalar(0.5f))
                      .node("MatMul", {"x", "w1"}, {"m1"}, {}, "fc1")
                      .node("Add", {"m1", "b1"}, {"h"}, {}, "fc1_bias")
                      .node("Div", {"h", "sqrt2"}, {"d"}, {}, "gelu_div")
                      .node("Erf", {"d"}, {"e"}, {}, "gelu_erf")
                      .node("Add", {"e", "one"}, {"a"}, {}, "gelu_add")
                      .node("Mul", {"h", "a"}, {"p"}, {}, "gelu_mul")
                      .node("Mul", {"p", "half"}, {"g"}, {}, "gelu_half")
                      .node("MatMul", {"g", "w2"}, {"m2"}, {}, "fc2")
                      .node("Add", {"b2", "m2"}, {"o"}, {}, "fc2_bias")
                      .node("Add", {"x", "o"}, {"r"}, {}, "residual")
                      .node("MatMul", {"r", "w3"}, {"m3"}, {}, "fc3")
                      .node("Add", {"m3", "rows"}, {"y"}, {}, "row_add")
                      .output("y")
                      .build();
  const std::vector<std::string> notes = compile_and_check({}, 2, g);
  auto fused = [&](const std::string& matmul, const std::string& node) {
    return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) {
      return n.rfind(matmul + ": fused", 0) == 0 && n.find(node) != std::string::npos;
    });
  };
  EXPECT_TRUE(fused("fc1", "fc1_bias")) << all_notes(notes);
  for (const char* gelu : {"gelu_div", "gelu_erf", "gelu_add", "gelu_mul", "gelu_half"}) {
    EXPECT_TRUE(fused("fc1", gelu)) << gelu << "\n" << all_notes(notes);
  }
  EXPECT_TRUE(fused("fc2", "fc2_bias")) << all_notes(notes);
  EXPECT_TRUE(fused("fc2", "residual")) << all_notes(notes);
  EXPECT_FALSE(fused("fc3", "row_add")) << all_notes(notes);
}

// A QDQ model's activation quantization, QuantizeLinear read only by the matching
// DequantizeLinear, runs in its producer's step as a float rounding and clamp, or as one step of
// its own where it reads the region's input; a pair whose scales differ stays two steps.
TEST(CpuRegionFusion, QuantizeDequantizePairFusesIntoItsProducer) {
  auto scalar = [](float v) { return Tensor::from_vector<float>({}, {v}); };
  const Graph g = GraphBuilder()
                      .input("x", {2, 3, 17})
                      .constant("zero", scalar(0.0f))
                      .constant("s", scalar(0.03f))
                      .constant("s2", scalar(0.05f))
                      .constant("z", Tensor::from_vector<int8_t>({}, {-5}))
                      .node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, {}, "q0")
                      .node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}, {}, "dq0")
                      .node("Add", {"xd", "zero"}, {"a"}, {}, "add")
                      .node("QuantizeLinear", {"a", "s", "z"}, {"aq"}, {}, "q1")
                      .node("DequantizeLinear", {"aq", "s", "z"}, {"ad"}, {}, "dq1")
                      .node("Add", {"ad", "zero"}, {"b"}, {}, "add2")
                      .node("QuantizeLinear", {"b", "s", "z"}, {"bq"}, {}, "q2")
                      .node("DequantizeLinear", {"bq", "s2", "z"}, {"y"}, {}, "dq2")
                      .output("y")
                      .build();
  const std::vector<std::string> notes = compile_and_check({}, 2, g);
  EXPECT_TRUE(has_note(notes, "add: fused ")) << all_notes(notes);
  auto fused = [&](const std::string& producer, const std::string& node) {
    return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) {
      return n.rfind(producer + ": fused", 0) == 0 && n.find(node) != std::string::npos;
    });
  };
  EXPECT_TRUE(has_note(notes, "q0: fake quantization with ")) << all_notes(notes);
  EXPECT_TRUE(fused("add", "q1")) << all_notes(notes);
  EXPECT_TRUE(fused("add", "dq1")) << all_notes(notes);
  EXPECT_FALSE(fused("add2", "q2")) << all_notes(notes);
}

TEST(CpuNodeConfig, ConfigChangesTheScheduleAndKeepsResults) {
  const std::vector<std::string> heuristic = compile_and_check({});
  EXPECT_TRUE(has_note(heuristic, "conv: conv2d.nchw.im2col_gemm{")) << all_notes(heuristic);
  EXPECT_FALSE(has_note(heuristic, "(node config)")) << all_notes(heuristic);

  plugin::NodeConfig gemm;
  gemm.node = 4;
  gemm.schedule = "gemm.packed";
  gemm.knobs = {{"mc", 6}, {"nc", 16}, {"tile_rows", 6}, {"tile_cols", 16}};
  const std::vector<std::string> tuned = compile_and_check({conv_config({{"mc", 6},
                                                                         {"nc", 32},
                                                                         {"kc", 128},
                                                                         {"b_whole", 1},
                                                                         {"b_direct", 0},
                                                                         {"tile_rows", 6},
                                                                         {"tile_cols", 16}}),
                                                            gemm});
  EXPECT_TRUE(has_note(tuned,
                       "conv: conv2d.nchw.im2col_gemm{mc=6,nc=32,kc=128,b_whole=1,b_direct=0,"
                       "tile_rows=6,tile_cols=16} (node config)"))
      << all_notes(tuned);
  EXPECT_TRUE(
      has_note(tuned, "gemm: gemm.packed{mc=6,nc=16,tile_rows=6,tile_cols=16} (node config)"))
      << all_notes(tuned);
  EXPECT_FALSE(has_note(tuned, "not applied")) << all_notes(tuned);

  // Every tile the target offers compiles and keeps the results (compile_and_check compares with
  // the reference plugin).
  const std::vector<cpu::GemmTile> offered = cpu::gemm_tiles();
  for (const auto& p : tessera_test::knob_grid_indices("offered tile", {offered.size()})) {
    const cpu::GemmTile& t = offered[p[0]];
    SCOPED_TRACE(std::to_string(t.mr) + "x" + std::to_string(t.nr));
    plugin::NodeConfig g2 = gemm;
    g2.knobs = {{"tile_rows", t.mr}, {"tile_cols", t.nr}};
    const std::vector<std::string> notes = compile_and_check(
        {conv_config({{"tile_rows", t.mr}, {"tile_cols", t.nr}, {"kc", 128}}), g2});
    const std::string tile =
        "tile_rows=" + std::to_string(t.mr) + ",tile_cols=" + std::to_string(t.nr) + "}";
    EXPECT_TRUE(has_note(notes, ",kc=128,b_whole=0,b_direct=1," + tile)) << all_notes(notes);
    EXPECT_TRUE(has_note(notes, "gemm.packed{mc=")) << all_notes(notes);
    EXPECT_TRUE(has_note(notes, tile + " (node config)")) << all_notes(notes);
    EXPECT_FALSE(has_note(notes, "not applied")) << all_notes(notes);
  }
  EXPECT_FALSE(has_note(tuned, "not applied")) << all_notes(tuned);

  // Knobs a config leaves out keep the heuristic's value.
  const std::vector<std::string> partial = compile_and_check({conv_config({{"kc", 256}})});
  EXPECT_TRUE(has_note(partial, ",kc=256,")) << all_notes(partial);
}

// regnet's grouped 3x3 conv (group width 8) runs the direct grouped kernel by the heuristic; a
// node config naming the grouped phase planes or the im2col GEMM still applies, with the same
// results (compile_and_check compares with the reference runner).
TEST(CpuNodeConfig, GroupedConvOfWidth8RunsTheDirectKernel) {
  Attributes grouped;
  grouped.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  grouped.set("group", int64_t{13});
  const Graph g = GraphBuilder()
                      .input("x", {1, 104, 14, 14})
                      .constant("w", random_tensor({104, 8, 3, 3}, 11))
                      .constant("b", random_tensor({104}, 12))
                      .node("Conv", {"x", "w", "b"}, {"c"}, grouped, "conv")
                      .node("Relu", {"c"}, {"y"}, {}, "relu")
                      .output("y")
                      .build();
  const std::vector<std::string> heuristic = compile_and_check({}, 2, g);
  EXPECT_TRUE(has_note(heuristic, "conv: conv2d.nchw.gconv3x3_direct{}")) << all_notes(heuristic);
  for (const char* schedule : {"conv2d.nchw.phase_gemm", "conv2d.nchw.im2col_gemm"}) {
    const std::vector<std::string> notes = compile_and_check({conv_config({}, schedule)}, 2, g);
    EXPECT_TRUE(has_note(notes, std::string("conv: ") + schedule + "{")) << all_notes(notes);
    EXPECT_FALSE(has_note(notes, "not applied")) << all_notes(notes);
  }
}

TEST(CpuNodeConfig, BadConfigsFallBackWithANote) {
  struct Case {
    plugin::NodeConfig config;
    std::string why;
  };
  plugin::NodeConfig depthwise = conv_config({{"mc", 12}}, "conv2d.nchw.im2col_gemm");
  depthwise.node = 2;  // the depthwise conv runs conv2d.nchw.depthwise_direct
  const std::vector<Case> cases = {
      {conv_config({{"mc", 12}}, "conv2d.winograd.f63"), "schedule 'conv2d.winograd.f63'"},
      {conv_config({{"mc", 12}, {"unroll", 4}}), "has no knob 'unroll'"},
      {conv_config({{"nc", 17}}), "knob nc=17 is not one of its candidates"},
      {conv_config({{"tile_rows", 7}}), "knob tile_rows=7 is not one of its candidates"},
      {depthwise, "does not apply to this node"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    const std::vector<std::string> notes = compile_and_check({c.config});
    EXPECT_TRUE(has_note(notes, "node config not applied, heuristic used: ")) << all_notes(notes);
    EXPECT_TRUE(has_note(notes, c.why)) << all_notes(notes);
    EXPECT_FALSE(has_note(notes, "(node config)")) << all_notes(notes);
  }
}

// A node config naming conv2d.nchw.winograd switches a 3x3 stride-1 conv (with its fused Relu) to
// Winograd, every offered tile and several task sizes, results still the reference runner's; on
// the depthwise conv it does not apply and falls back with a note.
TEST(CpuNodeConfig, WinogradScheduleByNodeConfig) {
  const std::vector<cpu::GemmTile> offered = cpu::gemm_tiles();
  const std::vector<int64_t> task_tiles = {32, 64};
  for (const auto& p : tessera_test::knob_grid_indices("offered tile x tiles",
                                                       {offered.size(), task_tiles.size()})) {
    const cpu::GemmTile& t = offered[p[0]];
    const int64_t tiles = task_tiles[p[1]];
    SCOPED_TRACE(std::to_string(t.mr) + "x" + std::to_string(t.nr) + " tiles " +
                 std::to_string(tiles));
    const std::vector<std::string> notes =
        compile_and_check({conv_config({{"tiles", tiles}, {"tile_rows", t.mr}, {"tile_cols", t.nr}},
                                       "conv2d.nchw.winograd")},
                          2);
    EXPECT_TRUE(has_note(notes, "conv: conv2d.nchw.winograd{tiles=" + std::to_string(tiles) +
                                    ",tile_rows=" + std::to_string(t.mr) +
                                    ",tile_cols=" + std::to_string(t.nr) + "} (node config)"))
        << all_notes(notes);
    EXPECT_FALSE(has_note(notes, "not applied")) << all_notes(notes);
  }
  plugin::NodeConfig depthwise = conv_config({{"tiles", 32}}, "conv2d.nchw.winograd");
  depthwise.node = 2;
  const std::vector<std::string> notes = compile_and_check({depthwise});
  EXPECT_TRUE(has_note(notes, "schedule 'conv2d.nchw.winograd' does not apply to this node"))
      << all_notes(notes);
}

// A node config naming conv2d.nchw.flat_gemm runs the 3x3 stride-1 conv (with its fused Relu) on
// flattened planes, every offered tile and task blocking, results still the reference runner's.
TEST(CpuNodeConfig, FlatGemmScheduleByNodeConfig) {
  const std::vector<cpu::GemmTile> offered = cpu::gemm_tiles();
  const std::vector<std::pair<int64_t, int64_t>> blockings = {{8, 32}, {16, 128}};
  for (const auto& p : tessera_test::knob_grid_indices("offered tile x blocking",
                                                       {offered.size(), blockings.size()})) {
    const cpu::GemmTile& t = offered[p[0]];
    const auto [mc, nc] = blockings[p[1]];
    SCOPED_TRACE(std::to_string(t.mr) + "x" + std::to_string(t.nr) + " mc " + std::to_string(mc));
    const std::vector<std::string> notes = compile_and_check(
        {conv_config({{"mc", mc}, {"nc", nc}, {"tile_rows", t.mr}, {"tile_cols", t.nr}},
                     "conv2d.nchw.flat_gemm")},
        2);
    EXPECT_TRUE(has_note(notes, "conv: conv2d.nchw.flat_gemm{mc=" + std::to_string(mc) +
                                    ",nc=" + std::to_string(nc) +
                                    ",tile_rows=" + std::to_string(t.mr) +
                                    ",tile_cols=" + std::to_string(t.nr) + "} (node config)"))
        << all_notes(notes);
    EXPECT_FALSE(has_note(notes, "not applied")) << all_notes(notes);
  }
}

// A dilated 3x3 conv keeps im2col by default and runs on flattened planes when a node config asks
// (the taps' offsets and the planes' pitch take the dilation), results the reference runner's.
TEST(CpuNodeConfig, DilatedConvOnFlatPlanesByNodeConfig) {
  Attributes dilated;
  dilated.set("pads", std::vector<int64_t>{2, 3, 1, 3});
  dilated.set("dilations", std::vector<int64_t>{2, 3});
  const Graph g = GraphBuilder()
                      .input("x", {1, 18, 13, 17})
                      .constant("w", random_tensor({20, 18, 3, 3}, 4))
                      .constant("b", random_tensor({20}, 5))
                      .node("Conv", {"x", "w", "b"}, {"c"}, dilated, "conv")
                      .node("Relu", {"c"}, {"y"}, {}, "relu")
                      .output("y")
                      .build();
  const std::vector<std::string> heuristic = compile_and_check({}, 2, g);
  EXPECT_TRUE(has_note(heuristic, "conv: conv2d.nchw.im2col_gemm{")) << all_notes(heuristic);
  for (const auto& [mc, nc] : std::vector<std::pair<int64_t, int64_t>>{{8, 32}, {24, 256}}) {
    const std::vector<std::string> notes =
        compile_and_check({conv_config({{"mc", mc}, {"nc", nc}}, "conv2d.nchw.flat_gemm")}, 2, g);
    EXPECT_TRUE(has_note(notes, "conv: conv2d.nchw.flat_gemm{mc=" + std::to_string(mc)))
        << all_notes(notes);
    EXPECT_FALSE(has_note(notes, "not applied")) << all_notes(notes);
  }
}

// With 16+ input channels and 13x13+ outputs the heuristic picks Winograd (stride 2 and 1x1 stay
// on im2col); a node config can still ask for im2col. Results equal the reference runner's.
TEST(CpuNodeConfig, HeuristicPicksWinogradAndPhasePlanes) {
  Attributes pad1;
  pad1.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Attributes s2 = pad1;
  s2.set("strides", std::vector<int64_t>{2, 2});
  const Graph g = GraphBuilder()
                      .input("x", {1, 16, 15, 50})
                      .constant("w", random_tensor({20, 16, 3, 3}, 1))
                      .constant("b", random_tensor({20}, 2))
                      .constant("w2", random_tensor({12, 20, 3, 3}, 3))
                      .node("Conv", {"x", "w", "b"}, {"c"}, pad1, "conv")
                      .node("Relu", {"c"}, {"r"}, {}, "relu")
                      .node("Conv", {"r", "w2"}, {"y"}, s2, "conv_s2")
                      .output("y")
                      .build();
  const std::vector<std::string> notes = compile_and_check({}, 2, g);
  EXPECT_TRUE(has_note(notes, "conv: conv2d.nchw.winograd{")) << all_notes(notes);
  // Stride 2 with K = 20 * 9 and 25-wide output rows runs on phase planes.
  EXPECT_TRUE(has_note(notes, "conv_s2: conv2d.nchw.phase_gemm{")) << all_notes(notes);
  const std::vector<std::string> forced =
      compile_and_check({conv_config({{"mc", 12}}, "conv2d.nchw.im2col_gemm")}, 2, g);
  EXPECT_TRUE(has_note(forced, "conv: conv2d.nchw.im2col_gemm{mc=12,")) << all_notes(forced);
  EXPECT_TRUE(has_note(forced, "(node config)")) << all_notes(forced);
}

// The heuristic tile: the target's preferred one unless another pads C by more than 1/16 less.
TEST(CpuSchedules, DefaultTilePadsCLeast) {
  auto is = [](const cpu::GemmTile& t, int64_t mr, int64_t nr) { return t.mr == mr && t.nr == nr; };
  const cpu::GemmTile preferred = cpu::default_gemm_tile();
  if (cpu::gemm_tiles().size() == 1) {
    // AVX2, SSE4, NEON: one tile, kMR x kNR.
    EXPECT_TRUE(is(preferred, cpu::kMR, cpu::kNR));
    EXPECT_TRUE(is(cpu::default_tile(576, 196), cpu::kMR, cpu::kNR));
    EXPECT_TRUE(is(cpu::default_tile(1, 1000), 1, cpu::kNR));
    return;
  }
  EXPECT_TRUE(is(preferred, 8, 32));
  EXPECT_TRUE(is(cpu::default_tile(64, 3136), 8, 32));  // no padding
  EXPECT_TRUE(is(cpu::default_tile(128, 784), 8, 32));  // 24 tiles of 32 and one of 16
  // A partial 32-wide panel splits into a 16-wide tile and a column tail: 32-wide panels cost no
  // more columns than 16-wide ones (16-wide tiles had been picked for these: 224 vs 208 and 192
  // vs 176 columns counting whole panels).
  EXPECT_TRUE(is(cpu::default_tile(512, 49), 8, 32));    // 32 + 16 + a 1-column tail
  EXPECT_TRUE(is(cpu::default_tile(576, 196), 8, 32));   // 6 x 32 + a 4-column tail
  EXPECT_TRUE(is(cpu::default_tile(1000, 169), 8, 32));  // 5 x 32 + 16 (9 columns)
  EXPECT_TRUE(is(cpu::default_tile(64, 111), 8, 32));    // 3 x 32 + 16 (15 columns)
  EXPECT_TRUE(is(cpu::default_tile(36, 3136), 12, 32));  // 40 vs 36 rows
  EXPECT_TRUE(is(cpu::default_tile(1, 1000), 1, 32));    // Gemm with one row: matrix-vector
}

TEST(CpuNodeConfig, DescribeExposesKnobSpacesWithHeuristicDefaults) {
  PluginHostOptions o;
  o.dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  o.use_environment = false;
  o.use_default_dirs = false;
  const PluginHost host(o);
  const auto loaded = host.find("cpu");
  ASSERT_TRUE(loaded);
  const auto plugin = loaded->create_instance();
  ASSERT_TRUE(plugin->has_describe_node());
  const Graph g = tuning_graph();
  const detail::RegionDesc desc(g, {0, 1, 2, 3, 4}, detail::value_consumers(g));

  const PluginNodeTuning conv = plugin->describe_node("host", desc.get(), 0);
  // Core wrote the window out (normalise_window_attributes), so the key names every attribute
  // whether the model gave it or not, as the keys of exported models do.
  EXPECT_EQ(conv.workload_key,
            "conv|in=1x8x13x11,16x8x3x3c,16c|out=1x16x13x11|dilations=1,1|kernel_shape=3,3|"
            "pads=1,1,1,1|strides=1,1|f32|nchw");
  EXPECT_DOUBLE_EQ(conv.flops, 2.0 * 16 * 13 * 11 * 8 * 9);
  // A 3x3 stride-1 conv also offers phase planes, Winograd and flattened planes; with 8 input
  // channels the heuristic keeps im2col.
  ASSERT_EQ(conv.schedules.size(), 4u);
  EXPECT_EQ(conv.default_schedule, 0);
  EXPECT_EQ(conv.schedules[0].name, "conv2d.nchw.im2col_gemm");
  EXPECT_EQ(conv.schedules[1].name, "conv2d.nchw.phase_gemm");
  EXPECT_EQ(conv.schedules[2].name, "conv2d.nchw.winograd");
  EXPECT_EQ(conv.schedules[3].name, "conv2d.nchw.flat_gemm");
  std::vector<std::string> flat_knobs;
  for (const PluginKnobSpace& k : conv.schedules[3].knobs) {
    flat_knobs.push_back(k.name);
    EXPECT_NE(std::find(k.values.begin(), k.values.end(), k.default_value), k.values.end())
        << k.name;
  }
  EXPECT_EQ(flat_knobs, (std::vector<std::string>{"mc", "nc", "tile_rows", "tile_cols"}));
  std::vector<std::string> phase_knobs;
  for (const PluginKnobSpace& k : conv.schedules[1].knobs) phase_knobs.push_back(k.name);
  EXPECT_EQ(phase_knobs, (std::vector<std::string>{"tile_rows", "tile_cols"}));
  std::vector<std::string> winograd_knobs;
  for (const PluginKnobSpace& k : conv.schedules[2].knobs) {
    winograd_knobs.push_back(k.name);
    EXPECT_NE(std::find(k.values.begin(), k.values.end(), k.default_value), k.values.end())
        << k.name;
  }
  EXPECT_EQ(winograd_knobs, (std::vector<std::string>{"tiles", "tile_rows", "tile_cols"}));
  std::vector<std::string> knob_names;
  for (const PluginKnobSpace& k : conv.schedules[0].knobs) {
    knob_names.push_back(k.name);
    // The heuristic's value is always one of the candidates the tuner measures.
    EXPECT_NE(std::find(k.values.begin(), k.values.end(), k.default_value), k.values.end())
        << k.name;
  }
  EXPECT_EQ(knob_names, (std::vector<std::string>{"mc", "nc", "kc", "b_whole", "b_direct",
                                                  "tile_rows", "tile_cols"}));

  // The defaults describe() reports are the config compile uses without a node config (both
  // assume the host's physical cores).
  const std::vector<std::string> notes = compile_and_check({}, cpu::physical_cores());
  std::string want = "conv: conv2d.nchw.im2col_gemm{";
  for (size_t i = 0; i < conv.schedules[0].knobs.size(); ++i) {
    const PluginKnobSpace& k = conv.schedules[0].knobs[i];
    want += (i ? "," : "") + k.name + "=" + std::to_string(k.default_value);
  }
  EXPECT_TRUE(has_note(notes, want + "}")) << all_notes(notes);

  const PluginNodeTuning gemm = plugin->describe_node("host", desc.get(), 4);
  ASSERT_EQ(gemm.schedules.size(), 1u);
  EXPECT_EQ(gemm.schedules[0].name, "gemm.packed");
  EXPECT_DOUBLE_EQ(gemm.flops, 2.0 * 10 * 16 * 13 * 11);
  // Depthwise convs and element-wise ops have nothing to tune.
  EXPECT_TRUE(plugin->describe_node("host", desc.get(), 2).schedules.empty());
  EXPECT_TRUE(plugin->describe_node("host", desc.get(), 1).schedules.empty());
}

TEST(CpuRegionMemory, IntermediatesWithDisjointLifetimesShareMemory) {
  // x -> softmax -> a -> softmax -> b -> softmax -> c -> softmax -> y (softmaxes never fuse):
  // a (steps 0-1) and c (steps 2-3) may share a buffer, b (steps 1-2) overlaps both. 4 KiB
  // each: 8 KiB instead of 12.
  const Graph g = GraphBuilder()
                      .input("x", {1, 4, 16, 16})
                      .node("Softmax", {"x"}, {"a"}, {}, "r0")
                      .node("Softmax", {"a"}, {"b"}, {}, "r1")
                      .node("Softmax", {"b"}, {"c"}, {}, "r2")
                      .node("Softmax", {"c"}, {"y"}, {}, "r3")
                      .output("y")
                      .build();
  const std::vector<std::string> notes = compile_and_check({}, 1, g);
  EXPECT_TRUE(has_note(notes, "intermediates: 3 values in a 8 KiB arena")) << all_notes(notes);
}

}  // namespace
}  // namespace tessera
