// Values between regions of two OpenCL plugins stay on the device (ABI 2.1 buffer kinds): adreno
// and mali instances on one OpenCL device share its context (one memory domain), so a value one
// plugin's region writes is the next region's input without the host. Checked through a real
// Session on PoCL: the plan's device-resident values, the run's host<->device byte counter (only
// the graph's input and output cross the host), and the outputs against tessera::run_reference.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "../plugins/graph_builder.hpp"
#include "image_device.hpp"
#include "opencl_plugin_test_util.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "tessera_opencl/runtime.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

using opencl_test::any_image_device;
using opencl_test::random_tensor;

std::map<std::string, std::string> placements(const Session& session, std::string* reasons) {
  std::map<std::string, std::string> placed;
  for (const NodePlacement& p : session.plan().nodes) {
    *reasons += p.node + ": " + p.plugin + " " + p.reason + "\n";
    placed[p.node] = p.plugin;
  }
  return placed;
}

int64_t bytes_of(const Tensor& t) {
  return static_cast<int64_t>(t.nbytes());
}

// adreno -> mali -> adreno: a Sigmoid on a rank-5 view has a mali kernel (NCHW buffers of any
// rank) and no adreno one (the texture layout is 4-D, and no shared op covers Sigmoid), so the
// graph splits into three regions; the two values between them never leave the device.
TEST(DeviceResident, SplitAcrossTwoOpenClPluginsCopiesOnlyInputsAndOutputs) {
  if (!any_image_device()) {
    TESSERA_SKIP_WITHOUT("an OpenCL device with image support") << "probe found none";
  }
  const Attributes pad = opencl_test::attrs({{"pads", opencl_test::Ints{1, 1, 1, 1}}});
  Graph g = test::GraphBuilder()
                .input("x", {1, 8, 12, 12})
                .constant("w1", random_tensor({8, 8, 3, 3}, 1, -0.3f, 0.3f))
                .constant("w2", random_tensor({8, 8, 3, 3}, 2, -0.3f, 0.3f))
                .constant("five_d", Tensor::from_vector<int64_t>({5}, {1, 2, 4, 12, 12}))
                .constant("four_d", Tensor::from_vector<int64_t>({4}, {1, 8, 12, 12}))
                .node("Conv", {"x", "w1"}, {"c1"}, pad, "conv1")
                .node("Reshape", {"c1", "five_d"}, {"c5"}, {}, "to5d")
                .node("Sigmoid", {"c5"}, {"s5"}, {}, "sigmoid")
                .node("Reshape", {"s5", "four_d"}, {"s"}, {}, "to4d")
                .node("Conv", {"s", "w2"}, {"y"}, pad, "conv2")
                .output("y")
                .build();
  const Graph reference_graph = g;
  Session session(std::move(g), opencl_test::session_options({"adreno:any", "mali:any"}, "adreno"));
  std::string reasons;
  std::map<std::string, std::string> placed = placements(session, &reasons);
  ASSERT_EQ(placed["conv1"], "adreno") << reasons;
  ASSERT_EQ(placed["sigmoid"], "mali") << reasons;
  ASSERT_EQ(placed["conv2"], "adreno") << reasons;
  const ExecutionPlan& plan = session.plan();
  EXPECT_EQ(plan.regions.size(), 3u);
  EXPECT_EQ(plan.device_values, 2) << "c1 and s stay in the device's buffers";
  EXPECT_EQ(plan.device_buffers, 2);

  const std::map<std::string, Tensor> inputs = {{"x", random_tensor({1, 8, 12, 12}, 3)}};
  const std::vector<Tensor> want = run_reference(reference_graph, inputs);
  for (int run = 0; run < 2; ++run) {  // the second run reuses the plan's buffer set
    const std::vector<Tensor> got = session.run(inputs);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape(), want[0].shape());
    opencl_test::expect_all_near(got[0], want[0], 1e-4f);
    EXPECT_EQ(session.last_run_stats().host_device_bytes,
              bytes_of(inputs.at("x")) + bytes_of(want[0]))
        << "an activation crossed the host";
  }
}

// A value read by a device region and by a host region (the reference plugin) lives in host
// memory: both readers get it, and only the values whose every reader shares the producer's
// domain stay on the device.
TEST(DeviceResident, ValueWithAHostReaderStaysInHostMemory) {
  if (!any_image_device()) {
    TESSERA_SKIP_WITHOUT("an OpenCL device with image support") << "probe found none";
  }
  const Attributes pad = opencl_test::attrs({{"pads", opencl_test::Ints{1, 1, 1, 1}}});
  Graph g = test::GraphBuilder()
                .input("x", {1, 4, 10, 10})
                .constant("w", random_tensor({4, 4, 3, 3}, 4, -0.3f, 0.3f))
                .node("Conv", {"x", "w"}, {"c"}, pad, "conv")
                .node("Sigmoid", {"c"}, {"s"}, {}, "sigmoid")
                .node("Hardmax", {"c"}, {"t"}, {}, "hardmax")
                .node("Add", {"s", "t"}, {"y"}, {}, "add")
                .output("y")
                .build();
  const Graph reference_graph = g;
  Session session(std::move(g),
                  opencl_test::session_options({"adreno:any", "mali:any", "reference"}, "adreno"));
  std::string reasons;
  std::map<std::string, std::string> placed = placements(session, &reasons);
  ASSERT_EQ(placed["hardmax"], "reference") << reasons;
  const std::map<std::string, Tensor> inputs = {{"x", random_tensor({1, 4, 10, 10}, 5)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(reference_graph, inputs);
  ASSERT_EQ(got.size(), 1u);
  opencl_test::expect_all_near(got[0], want[0], 1e-4f);
  // c has a host reader (hardmax) and t is the reference's output: both in host memory. s stays on
  // the device only when add runs on an OpenCL plugin.
  const int expected_device = placed["add"] == "reference" ? 0 : 1;
  EXPECT_EQ(session.plan().device_values, expected_device) << reasons;
}

}  // namespace
}  // namespace tessera
