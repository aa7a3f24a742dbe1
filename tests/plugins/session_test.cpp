// Session and partitioner: mixed placement matches the reference, plan reasons, island
// merge-back, compile fallback, target errors, buffer reuse.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "graph_builder.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using test::GraphBuilder;

std::shared_ptr<const PluginHost> test_host() {
  PluginHostOptions o;
  o.dirs = {TESSERA_TEST_PLUGIN_GOOD_DIR, TESSERA_TEST_PLUGIN_BROKEN_DIR, TESSERA_PLUGIN_BUILD_DIR};
  o.use_environment = false;
  o.use_default_dirs = false;
  return std::make_shared<const PluginHost>(o);
}

SessionOptions targets(std::vector<std::string> list) {
  SessionOptions o;
  o.targets = std::move(list);
  return o;
}

void expect_bitwise_equal(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].dtype(), want[i].dtype());
    ASSERT_EQ(got[i].shape(), want[i].shape());
    EXPECT_EQ(std::memcmp(got[i].raw(), want[i].raw(), got[i].nbytes()), 0) << "output " << i;
  }
}

const NodePlacement& placement(const Session& s, const std::string& node) {
  for (const NodePlacement& p : s.plan().nodes) {
    if (p.node == node) return p;
  }
  throw Error("no placement for " + node);
}

// x -> Relu -> Sigmoid -> Add(., relu) -> Relu -> Tanh -> out; halfref runs Relu and Add.
Graph mixed_graph() {
  return GraphBuilder()
      .input("x", {2, 3, 4, 5})
      .node("Relu", {"x"}, {"r1"}, {}, "relu1")
      .node("Sigmoid", {"r1"}, {"s"}, {}, "sigmoid")
      .node("Add", {"s", "r1"}, {"a"}, {}, "add")
      .node("Relu", {"a"}, {"r2"}, {}, "relu2")
      .node("Tanh", {"r2"}, {"t"}, {}, "tanh")
      .output("t")
      .output("a")
      .build();
}

TEST(Session, PartialPluginMatchesReferenceExactly) {
  const Graph g = mixed_graph();
  Session session(g, targets({"halfref", "reference"}), test_host());
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
  // Run twice: the reused host buffers must not leak state between runs.
  auto inputs2 = test::random_inputs(g, 77);
  expect_bitwise_equal(session.run(inputs2), run_reference(g, inputs2));

  EXPECT_EQ(placement(session, "relu1").plugin, "halfref");
  EXPECT_EQ(placement(session, "add").plugin, "halfref");
  EXPECT_EQ(placement(session, "relu2").plugin, "halfref");
  EXPECT_EQ(placement(session, "sigmoid").plugin, "reference");
  EXPECT_EQ(placement(session, "tanh").plugin, "reference");
  // relu1 | sigmoid | add+relu2 | tanh
  ASSERT_EQ(session.plan().regions.size(), 4u);
  EXPECT_EQ(placement(session, "add").region, placement(session, "relu2").region);
  EXPECT_NE(placement(session, "relu1").region, placement(session, "add").region);
  EXPECT_EQ(session.plan().regions[2].nodes, (std::vector<std::string>{"add", "relu2"}));
  for (const std::string& w : session.plan().warnings) ADD_FAILURE() << w;
}

TEST(Session, PlanReasonsNameEachTargetsAnswer) {
  Session session(mixed_graph(), targets({"halfref", "reference"}), test_host());
  const NodePlacement& sig = placement(session, "sigmoid");
  EXPECT_EQ(sig.op_type, "Sigmoid");
  EXPECT_EQ(sig.device, "host CPU (reference)");
  EXPECT_EQ(sig.reason.rfind("halfref: unsupported: op Sigmoid not implemented -> reference: "
                             "supported, est ",
                             0),
            0u)
      << sig.reason;
  const NodePlacement& relu = placement(session, "relu1");
  // 120 elements * 0.0001 us
  EXPECT_EQ(relu.reason, "halfref: supported, est 0.01 us");
  EXPECT_EQ(session.plan().targets.size(), 2u);
}

TEST(Session, BroadcastAddIsRefusedByHalfrefWithItsReason) {
  const Graph g = GraphBuilder()
                      .input("x", {2, 3})
                      .input("b", {3})
                      .node("Add", {"x", "b"}, {"y"}, {}, "bias")
                      .output("y")
                      .build();
  Session session(g, targets({"halfref", "reference"}), test_host());
  EXPECT_EQ(placement(session, "bias").plugin, "reference");
  EXPECT_NE(
      placement(session, "bias")
          .reason.find("halfref: unsupported: Add with broadcasting not implemented -> reference"),
      std::string::npos);
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
}

// Sigmoid -> Relu x k -> Sigmoid on a 1x64x56x56 tensor (or Add -> Relu x k -> Add), with
// islandgpu (a "gpu" running Relu only: pays host transfers of 802816 bytes each way at 5 GB/s +
// 10 us launch) for the Relus.
Graph island_graph(int relus, const std::string& edge_op = "Sigmoid") {
  GraphBuilder b;
  auto edge = [&](const std::string& in, const std::string& out, const std::string& name) {
    if (edge_op == "Add") {
      b.node("Add", {in, in}, {out}, {}, name);
    } else {
      b.node(edge_op, {in}, {out}, {}, name);
    }
  };
  b.input("x", {1, 64, 56, 56});
  edge("x", "v0", "head");
  for (int i = 0; i < relus; ++i) {
    b.node("Relu", {"v" + std::to_string(i)}, {"v" + std::to_string(i + 1)}, {},
           "relu" + std::to_string(i));
  }
  edge("v" + std::to_string(relus), "y", "tail");
  return b.output("y").build();
}

TEST(Partitioner, TinyGpuIslandMergesBackWhenTransfersLose) {
  // One Relu between halfref's Adds: 20 us + 10 us launch + 2 * 160.6 us transfers on islandgpu
  // vs 20 us on halfref (host memory, no transfers).
  const Graph g = island_graph(1, "Add");
  Session session(g, targets({"islandgpu", "halfref", "reference"}), test_host());
  const NodePlacement& relu = placement(session, "relu0");
  EXPECT_EQ(relu.plugin, "halfref");
  EXPECT_NE(relu.reason.find("islandgpu: supported, est 20 us, but this island of 1 node(s) "
                             "costs est 351 us with boundary transfers vs 20 us on halfref "
                             "-> merged back: halfref: supported"),
            std::string::npos)
      << relu.reason;
  EXPECT_EQ(session.plan().regions.size(), 1u);
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
}

TEST(Partitioner, IslandNeverMovesOntoReferenceByEstimate) {
  // The same one-Relu island between reference's Sigmoids. Without device families, reference
  // is priced by its plugin's guess (~201 us), below the island's 351 us: still the naive
  // kernels only take nodes no target before them can run.
  const Graph g = island_graph(1);
  SessionOptions options = targets({"islandgpu", "reference"});
  options.use_default_data_dirs = false;
  Session session(g, options, test_host());
  EXPECT_TRUE(session.plan().packs.at(1).family.empty());
  const NodePlacement& relu = placement(session, "relu0");
  EXPECT_EQ(relu.plugin, "islandgpu");
  EXPECT_EQ(relu.reason, "islandgpu: supported, est 20 us");
  EXPECT_EQ(session.plan().regions.size(), 3u);
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
}

TEST(Partitioner, GpuIslandThatWinsStays) {
  // Four Relus between reference's Sigmoids: 80 + 10 + 321 us on islandgpu, far below the naive
  // loops' estimate for them: the island stays.
  const Graph g = island_graph(4);
  Session session(g, targets({"islandgpu", "reference"}), test_host());
  for (int i = 0; i < 4; ++i) {
    const NodePlacement& p = placement(session, "relu" + std::to_string(i));
    EXPECT_EQ(p.plugin, "islandgpu");
    EXPECT_EQ(p.reason, "islandgpu: supported, est 20 us");
  }
  EXPECT_EQ(session.plan().regions.size(), 3u);
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
}

TEST(Partitioner, IslandBelowMinimumMergesBackEvenWhenItWins) {
  // The four-Relu island of GpuIslandThatWinsStays, with partition.min_island_nodes = 5.
  const Graph g = island_graph(4);
  SessionOptions options = targets({"islandgpu", "reference"});
  options.min_island_nodes = 5;
  Session session(g, options, test_host());
  for (int i = 0; i < 4; ++i) {
    const NodePlacement& p = placement(session, "relu" + std::to_string(i));
    EXPECT_EQ(p.plugin, "reference");
    EXPECT_NE(p.reason.find("islandgpu: supported, est 20 us, but this island of 4 node(s) is "
                            "below partition.min_island_nodes = 5 -> merged back: reference"),
              std::string::npos)
        << p.reason;
  }
  EXPECT_EQ(session.plan().regions.size(), 1u);
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
}

TEST(Partitioner, HostMemoryPluginIsNotChargedForTransfers) {
  // halfref is a "cpu" device: a one-node island stays on it.
  const Graph g = island_graph(1);
  Session session(g, targets({"halfref", "reference"}), test_host());
  EXPECT_EQ(placement(session, "relu0").plugin, "halfref");
  EXPECT_EQ(session.plan().regions.size(), 3u);
}

TEST(Partitioner, ParallelBranchesFormAcyclicRegions) {
  // x -> relu_a -> sig -> add(relu_b(x), sig): the two halfref nodes on either side of the
  // reference node must not be merged into one region (it would depend on itself).
  const Graph g = GraphBuilder()
                      .input("x", {4, 4})
                      .node("Relu", {"x"}, {"a"}, {}, "relu_a")
                      .node("Sigmoid", {"a"}, {"s"}, {}, "sig")
                      .node("Relu", {"x"}, {"b"}, {}, "relu_b")
                      .node("Add", {"s", "b"}, {"y"}, {}, "add")
                      .output("y")
                      .build();
  Session session(g, targets({"halfref", "reference"}), test_host());
  const auto& plan = session.plan();
  // Every region's inputs are produced by earlier regions.
  std::set<std::string> available = {"x"};
  for (const RegionPlacement& r : plan.regions) {
    for (const std::string& in : r.inputs) EXPECT_TRUE(available.count(in)) << in;
    for (const std::string& out : r.outputs) available.insert(out);
  }
  EXPECT_NE(placement(session, "relu_a").region, placement(session, "add").region);
  EXPECT_NE(placement(session, "relu_b").region, placement(session, "add").region);
  EXPECT_EQ(placement(session, "add").plugin, "halfref");
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
}

TEST(Session, CompileFailureFallsBackToNextTargetAndSaysSo) {
  const Graph g = mixed_graph();
  SessionOptions options = targets({"compilefail", "halfref", "reference"});
  options.allow_fallback = true;
  Session session(g, options, test_host());
  const auto& warnings = session.plan().warnings;
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("failed to compile on compilefail: kernel build failed: out of "
                             "registers (test) (status 4); falling back to the next target"),
            std::string::npos)
      << warnings[0];
  const NodePlacement& relu = placement(session, "relu1");
  EXPECT_EQ(relu.plugin, "halfref");
  EXPECT_EQ(relu.reason.rfind("compilefail: compile failed: kernel build failed", 0), 0u)
      << relu.reason;
  EXPECT_NE(relu.reason.find("-> halfref: supported"), std::string::npos);
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
}

// When falling back leaves most of the estimated time on the reference kernels although another
// target was usable, the plan says so in one warning with the share and the first node's reason.
TEST(Session, MostTimeOnReferenceAfterAFallbackIsOneWarning) {
  const Graph g = GraphBuilder()
                      .input("x", {1, 64, 256, 256})
                      .node("Relu", {"x"}, {"y"}, {}, "relu")
                      .output("y")
                      .build();
  SessionOptions options = targets({"compilefail", "reference"});
  options.allow_fallback = true;
  Session session(g, options, test_host());
  ASSERT_EQ(placement(session, "relu").plugin, "reference");
  ASSERT_GE(placement(session, "relu").estimate_us, kReferenceWarningMinUs);
  int share_warnings = 0;
  for (const std::string& w : session.plan().warnings) {
    if (w.find("100% of the estimated time") == std::string::npos) continue;
    ++share_warnings;
    EXPECT_NE(w.find("1 of 1 nodes) runs on the naive reference kernels; the first, 'relu' "
                     "(Relu): compilefail: compile failed: kernel build failed"),
              std::string::npos)
        << w;
  }
  EXPECT_EQ(share_warnings, 1);
}

TEST(Session, CompileFailureIsAnErrorWithoutFallback) {
  SessionOptions options = targets({"compilefail", "halfref", "reference"});
  options.allow_fallback = false;
  try {
    Session session(mixed_graph(), options, test_host());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("failed to compile on compilefail: kernel build failed"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("no other target is tried without `allow_fallback`"),
              std::string::npos)
        << e.what();
  }
}

TEST(Session, UnknownTargetNamesTheRefusal) {
  try {
    Session session(mixed_graph(), targets({"probeerror", "reference"}), test_host());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no plugin named 'probeerror' is loaded. It was refused: "
                                         "probe failed (status 1): no driver found (test)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Session, NodeNoTargetCanRunIsAnErrorNamingIt) {
  try {
    Session session(mixed_graph(), targets({"halfref"}), test_host());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'sigmoid' (Sigmoid)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("halfref: unsupported: op Sigmoid not implemented"),
              std::string::npos);
  }
}

TEST(Session, DefaultTargetsPutReferenceLast) {
  Session session(mixed_graph(), SessionOptions{}, test_host());
  ASSERT_FALSE(session.plan().targets.empty());
  EXPECT_EQ(session.plan().targets.back().rfind("reference -> host CPU (reference)", 0), 0u);
  EXPECT_EQ(session.plan().targets.front().rfind("compilefail", 0), 0u);  // score 90 is best
}

TEST(Session, BoundaryBuffersAreReusedByLiveness) {
  // A chain alternating halfref/reference: 6 regions, 5 intermediate boundary values, each dead
  // once the next region ran, plus the output: two buffers suffice.
  const Graph g = GraphBuilder()
                      .input("x", {8})
                      .node("Relu", {"x"}, {"a"})
                      .node("Sigmoid", {"a"}, {"b"})
                      .node("Relu", {"b"}, {"c"})
                      .node("Sigmoid", {"c"}, {"d"})
                      .node("Relu", {"d"}, {"e"})
                      .node("Sigmoid", {"e"}, {"y"})
                      .output("y")
                      .build();
  Session session(g, targets({"halfref", "reference"}), test_host());
  EXPECT_EQ(session.plan().regions.size(), 6u);
  EXPECT_EQ(session.plan().boundary_values, 6);
  EXPECT_EQ(session.plan().buffers, 2);
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
  const auto profile = session.profile();
  ASSERT_EQ(profile.size(), 6u);
  EXPECT_EQ(profile[0].plugin, "halfref");
  EXPECT_EQ(profile[1].plugin, "reference");
}

TEST(Session, RunRejectsWrongInputs) {
  Session session(mixed_graph(), targets({"reference"}), test_host());
  EXPECT_THROW(session.run({}), Error);
  EXPECT_THROW(session.run({{"x", Tensor(DType::kFloat32, {1})}}), Error);
  auto inputs = test::random_inputs(session.graph());
  inputs["bogus"] = Tensor(DType::kFloat32, {1});
  try {
    session.run(inputs);
    ADD_FAILURE() << "an input the model lacks was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'bogus' is not an input of the model (its inputs: 'x')"),
              std::string::npos)
        << e.what();
  }
}

// A deployment's per-target threads and options reach that target's plugin (and only it); the
// results still match the reference kernels.
TEST(Session, TargetSettingsReachTheirPlugin) {
  const Graph g = mixed_graph();
  const std::string record = ::testing::TempDir() + "/halfref_record.txt";
  std::remove(record.c_str());
  SessionOptions o = targets({"halfref", "reference"});
  o.threads = 1;
  o.target_settings["halfref"] = {3, {{"record", record}}, "app.yaml:4: targets[0]"};
  Session session(g, o, test_host());
  const auto inputs = test::random_inputs(g);
  expect_bitwise_equal(session.run(inputs), run_reference(g, inputs));
  std::ifstream in(record);
  std::stringstream text;
  text << in.rdbuf();
  // Two halfref regions (relu1, add+relu2), each compiled once with the target's own threads.
  EXPECT_EQ(text.str(), "threads=3 record=" + record + "\nthreads=3 record=" + record + "\n");
}

TEST(Session, RefusedTargetOptionsNameTheOriginAndOption) {
  const Graph g = mixed_graph();
  SessionOptions o = targets({"halfref", "reference"});
  o.target_settings["halfref"] = {0, {{"colour", "blue"}}, "app.yaml:4: targets[0]"};
  try {
    Session session(g, o, test_host());
    FAIL() << "an unknown option was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("app.yaml:4: targets[0]: target 'halfref'"), std::string::npos) << what;
    EXPECT_NE(what.find("unknown option 'colour' (known: record, rendezvous)"), std::string::npos) << what;
  }
  // A plugin without options (reference has no check_options) refuses any.
  SessionOptions r = targets({"reference"});
  r.target_settings["reference"] = {0, {{"record", "/tmp/x"}}, "app.yaml:5: targets[1]"};
  try {
    Session session(g, r, test_host());
    FAIL() << "the reference plugin accepted an option";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("takes no options"), std::string::npos) << e.what();
  }
}

// --targets carries a target's options in brackets: commas inside them separate options, not
// targets; a malformed entry is an error naming it.
TEST(TargetList, EntriesCarryTheirOptions) {
  using Options = std::vector<std::pair<std::string, std::string>>;
  const std::vector<TargetListEntry> e =
      parse_target_entries(" mali:any[layout=nchw, build_options=-DA=1 -DB],cpu , reference");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].spec, "mali:any");
  EXPECT_EQ(e[0].options, (Options{{"layout", "nchw"}, {"build_options", "-DA=1 -DB"}}));
  EXPECT_EQ(e[1].spec, "cpu");
  EXPECT_TRUE(e[1].options.empty());
  EXPECT_EQ(e[2].spec, "reference");
  EXPECT_EQ(parse_target_list("mali:any,reference"),
            (std::vector<std::string>{"mali:any", "reference"}));
  const auto error_of = [](const std::string& list) {
    try {
      parse_target_entries(list);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error_of("mali[layout=nchw"),
            "`targets` entry 'mali[layout=nchw': '[' has no "
            "closing ']'");
  EXPECT_EQ(error_of("mali[layout]"),
            "`targets` entry 'mali[layout]': option 'layout' is not "
            "name=value (e.g. mali:any[layout=nchw])");
  EXPECT_EQ(error_of("mali[a=1,a=2]"),
            "`targets` entry 'mali[a=1,a=2]': option 'a' is given twice");
  EXPECT_EQ(error_of("mali[a=1]x"), "`targets` entry 'mali[a=1]x': text after the options' ']'");
  EXPECT_EQ(error_of("[a=1]"), "`targets` entry '[a=1]' names no plugin");
  EXPECT_THROW(parse_target_list("mali[layout=nchw]"), Error);
}

}  // namespace
}  // namespace tessera
