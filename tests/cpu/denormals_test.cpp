// The cpu plugin flushes subnormal floats to zero in every thread it computes in (x86 MXCSR
// FTZ/DAZ, AArch64 FPCR.FZ), and leaves the caller's control bits as they were. The oracle is
// the reference kernels, which keep subnormals: the outputs agree within a tolerance far above
// the subnormal range, and where the reference has subnormal values the cpu plugin has zeros.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>

#include "denormals.hpp"
#include "model_builder.hpp"
#include "session_util.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/reference_runner.hpp"

namespace tessera {
namespace {

using test::ModelBuilder;

// y = Conv(x * 1e-39) and z = x * 1e-39: every value of both is subnormal or zero.
std::string subnormal_model() {
  ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 16, 24, 24});
  m.output("y", onnx::TensorProto::FLOAT);
  m.output("z", onnx::TensorProto::FLOAT);
  m.raw_float("tiny", {}, {1e-39f});
  m.raw_float("w", {16, 16, 3, 3}, test::seeded(16 * 16 * 9, 5));
  m.node("Mul", {"x", "tiny"}, {"z"}, "scale");
  ModelBuilder::add_ints_attr(m.node("Conv", {"z", "w"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  return m.bytes();
}

int64_t count_subnormal(const Tensor& t) {
  int64_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = t.data<float>()[i];
    n += (v != 0.0f && std::fabs(v) < FLT_MIN) ? 1 : 0;
  }
  return n;
}

TEST(CpuSubnormals, FlushedToZeroWithinToleranceOfTheReference) {
  const Graph g = import_onnx_bytes(subnormal_model(), "subnormal.onnx", "");
  const std::map<std::string, Tensor> inputs{
      {"x", Tensor::from_vector<float>({1, 16, 24, 24}, test::seeded(16 * 24 * 24, 9))}};
  const std::vector<Tensor> want = run_reference(g, inputs);
  ASSERT_GT(count_subnormal(want[1]), 1000) << "the input does not produce subnormals";
  for (int32_t threads : {1, 2, 4}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    SessionOptions options = test::cpu_only();
    options.threads = threads;
    Session session(g, options);
    const uint64_t before = cpu::float_control();
    const std::vector<Tensor> got = session.run(inputs);
    EXPECT_EQ(cpu::float_control(), before) << "the caller's control bits changed";
    ASSERT_EQ(got.size(), 2u);
    for (size_t o = 0; o < 2; ++o) {
      EXPECT_EQ(count_subnormal(got[o]), 0) << "output " << o;
      for (int64_t i = 0; i < want[o].numel(); ++i) {
        ASSERT_NEAR(got[o].data<float>()[i], want[o].data<float>()[i], 1e-36f) << o << ", " << i;
      }
    }
  }
}

TEST(CpuSubnormals, TheGuardRestoresTheThreadsBits) {
  const uint64_t before = cpu::float_control();
  {
    const cpu::FlushSubnormals flush;
    EXPECT_EQ(cpu::float_control(), cpu::with_subnormals_flushed(before));
#if defined(__x86_64__) || defined(__aarch64__)
    EXPECT_NE(cpu::with_subnormals_flushed(before), before) << "flushing starts off by default";
    volatile float tiny = 1e-30f;
    volatile float product = tiny * 1e-10f;  // 1e-40 is subnormal: flushed to 0
    EXPECT_EQ(product, 0.0f);
#endif
  }
  EXPECT_EQ(cpu::float_control(), before);
}

}  // namespace
}  // namespace tessera
