// Sizes from untrusted input: element counts that fit in int64 while their byte sizes do not,
// and tensors larger than the memory limit. Each must end in a tessera::Error naming the value
// (or file) and its size, before anything is allocated; nothing may crash or write past a buffer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "model_builder.hpp"
#include "tessera/npy.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/plugin.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using test::ModelBuilder;
using test::scratch_dir;
using ::testing::HasSubstr;

constexpr int64_t k2to62 = int64_t{1} << 62;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no tessera::Error was thrown";
  return "";
}

// Restores the default memory limit however the test ends.
struct MemoryLimitGuard {
  explicit MemoryLimitGuard(int64_t bytes) { set_memory_limit(bytes); }
  ~MemoryLimitGuard() { set_memory_limit(0); }
};

TEST(CheckedMath, MulAndAddReportOverflow) {
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31, "x"), int64_t{1} << 62);
  EXPECT_THAT(error_of([] { checked_mul(k2to62, 4, "byte size of 'X'"); }),
              HasSubstr("byte size of 'X': 4611686018427387904 * 4 overflows int64"));
  EXPECT_THAT(error_of([] { checked_add(std::numeric_limits<int64_t>::max(), 1, "offset"); }),
              HasSubstr("offset"));
  int64_t out = 0;
  EXPECT_FALSE(try_mul(-k2to62, 4, out));
  EXPECT_TRUE(try_add(-1, 1, out));
  EXPECT_EQ(out, 0);
}

TEST(CheckedMath, ShapeByteSizeOverflowIsAnError) {
  // 2^62 float32 elements: the count fits in int64, the byte size (2^64) does not.
  EXPECT_EQ(shape_numel({k2to62}), k2to62);
  EXPECT_THAT(error_of([] { shape_nbytes({k2to62}, DType::kFloat32); }),
              HasSubstr("[4611686018427387904] of float32 overflows int64 byte size"));
  EXPECT_EQ(shape_nbytes({k2to62}, DType::kUInt8), k2to62);
  EXPECT_EQ(shape_nbytes({2, 3}, DType::kInt64), 48);
  // A zero dim makes the count 0 but the inner strides still overflow.
  EXPECT_THAT(error_of([] {
                shape_strides({0, int64_t{1} << 40, int64_t{1} << 40});
              }),
              HasSubstr("overflows int64 strides"));
  EXPECT_EQ(shape_strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}

TEST(CheckedMath, TensorRefusesWhatItCannotHold) {
  // Formerly a 1-byte buffer (the byte size wrapped to 0) that kernels wrote 2^64 bytes into.
  EXPECT_THAT(error_of([] { Tensor(DType::kFloat32, {k2to62}); }), HasSubstr("overflows int64"));
  const MemoryLimitGuard limit(1 << 20);
  EXPECT_THAT(error_of([] { Tensor(DType::kFloat32, {1 << 20}); }),
              HasSubstr("tensor float32 [1048576] needs 4194304 bytes (4.0 MiB), more than the "
                        "memory limit of 1048576 bytes (1.0 MiB)"));
  const Tensor fits(DType::kFloat32, {1000});
  EXPECT_EQ(fits.nbytes(), 4000u);
}

TEST(CheckedMath, PluginHelpersRefuseOverflow) {
  tsr_tensor t{};
  t.struct_size = sizeof t;
  t.dtype = TSR_DTYPE_FLOAT32;
  t.rank = 1;
  t.dims[0] = k2to62;
  EXPECT_EQ(plugin::tensor_numel(t), k2to62);
  EXPECT_THROW(plugin::tensor_nbytes(t), plugin::Failure);
  t.rank = 2;
  t.dims[1] = 8;
  EXPECT_THROW(plugin::tensor_numel(t), plugin::Failure);
  t.dims[0] = 3;
  t.dims[1] = -1;
  EXPECT_THROW(plugin::tensor_numel(t), plugin::Failure);
  t.dims[1] = 5;
  EXPECT_EQ(plugin::tensor_nbytes(t), 60u);
}

void add_int64_scalar(ModelBuilder& m, const std::string& name, int64_t v) {
  m.raw_int64(name, {}, {v});
}

// Imports (with shape inference) and returns the error message.
std::string import_error(const ModelBuilder& m, const std::string& file) {
  const std::string path = m.save(scratch_dir() / file);
  const std::string msg = error_of([&] { import_onnx_file(path); });
  EXPECT_THAT(msg, HasSubstr(path));
  return msg;
}

TEST(HugeShapes, GraphInputOf2To62Floats) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {k2to62});
  m.node("Relu", {"X"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::FLOAT, {k2to62});
  EXPECT_THAT(import_error(m, "input.onnx"),
              AllOf(HasSubstr("input value 'X'"), HasSubstr("overflows int64 byte size")));
}

TEST(HugeShapes, ConstantOfShapeResult) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {1});
  m.raw_int64("shape", {1}, {k2to62});
  m.node("ConstantOfShape", {"shape"}, {"C"}, "cos");
  m.node("Add", {"X", "C"}, {"Y"}, "add");
  m.output("Y", onnx::TensorProto::FLOAT);
  EXPECT_THAT(import_error(m, "cos.onnx"),
              AllOf(HasSubstr("node 'cos' (ConstantOfShape)"), HasSubstr("value 'C'"),
                    HasSubstr("overflows int64 byte size")));
}

TEST(HugeShapes, ExpandResult) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {1});
  m.raw_int64("shape", {1}, {k2to62});
  m.node("Expand", {"X", "shape"}, {"Y"}, "expand");
  m.output("Y", onnx::TensorProto::FLOAT);
  EXPECT_THAT(import_error(m, "expand.onnx"),
              AllOf(HasSubstr("node 'expand' (Expand)"), HasSubstr("value 'Y'"),
                    HasSubstr("overflows int64 byte size")));
}

TEST(HugeShapes, RangeResult) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::INT64, {1});
  add_int64_scalar(m, "start", 0);
  add_int64_scalar(m, "limit", int64_t{1} << 61);
  add_int64_scalar(m, "delta", 1);
  m.node("Range", {"start", "limit", "delta"}, {"R"}, "range");
  m.node("Add", {"X", "R"}, {"Y"}, "add");
  m.output("Y", onnx::TensorProto::INT64);
  // Range itself refuses a count whose bytes overflow, naming its inputs.
  EXPECT_THAT(import_error(m, "range.onnx"),
              AllOf(HasSubstr("node 'range' (Range)"),
                    HasSubstr("= 2305843009213693952 of inputs 'start' 0, 'limit' "
                              "2305843009213693952, 'delta' 1"),
                    HasSubstr("gives a byte size that overflows int64")));
}

TEST(HugeShapes, PadResult) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {1});
  m.raw_int64("pads", {2}, {0, k2to62 - 1});
  m.node("Pad", {"X", "pads"}, {"Y"}, "pad");
  m.output("Y", onnx::TensorProto::FLOAT);
  EXPECT_THAT(import_error(m, "pad.onnx"),
              AllOf(HasSubstr("node 'pad' (Pad)"), HasSubstr("value 'Y'"),
                    HasSubstr("overflows int64 byte size")));
}

TEST(HugeShapes, PoolingWindowGeometryOverflow) {
  // Untrusted attributes: (kernel - 1) * dilation and in + pads used to wrap (signed overflow).
  ModelBuilder dilated(13);
  dilated.input("X", onnx::TensorProto::FLOAT, {1, 1, 8});
  auto* pool = dilated.node("MaxPool", {"X"}, {"Y"}, "pool");
  ModelBuilder::add_ints_attr(pool, "kernel_shape", {k2to62});
  ModelBuilder::add_ints_attr(pool, "dilations", {4});
  dilated.output("Y", onnx::TensorProto::FLOAT);
  EXPECT_THAT(import_error(dilated, "dilated.onnx"),
              AllOf(HasSubstr("node 'pool' (MaxPool)"), HasSubstr("window geometry"),
                    HasSubstr("overflows int64")));

  ModelBuilder padded(13);
  padded.input("X", onnx::TensorProto::FLOAT, {1, 1, 8});
  pool = padded.node("MaxPool", {"X"}, {"Y"}, "pool");
  ModelBuilder::add_ints_attr(pool, "kernel_shape", {2});
  ModelBuilder::add_ints_attr(pool, "pads", {k2to62, k2to62});
  padded.output("Y", onnx::TensorProto::FLOAT);
  EXPECT_THAT(import_error(padded, "padded.onnx"),
              AllOf(HasSubstr("node 'pool' (MaxPool)"), HasSubstr("overflows int64")));
}

TEST(MemoryLimit, ValueOverTheLimitIsRefusedAtLoad) {
  const MemoryLimitGuard limit(64 << 20);
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {1});
  m.raw_int64("shape", {1}, {int64_t{1} << 28});
  m.node("ConstantOfShape", {"shape"}, {"C"}, "cos");
  m.node("Add", {"X", "C"}, {"Y"}, "add");
  m.output("Y", onnx::TensorProto::FLOAT);
  EXPECT_THAT(import_error(m, "limit.onnx"),
              AllOf(HasSubstr("value 'C' (float32 [268435456]) needs 1073741824 bytes (1.0 GiB)"),
                    HasSubstr("memory limit of 67108864 bytes (64.0 MiB)")));
}

TEST(MemoryLimit, InitializerOverTheLimitIsRefusedBeforeAllocation) {
  const MemoryLimitGuard limit(1 << 20);
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {1 << 20});
  m.raw_float("W", {1 << 20}, std::vector<float>(1 << 20, 1.0f));
  m.node("Add", {"X", "W"}, {"Y"}, "add");
  m.output("Y", onnx::TensorProto::FLOAT, {1 << 20});
  EXPECT_THAT(import_error(m, "init.onnx"),
              AllOf(HasSubstr("initializer 'W'"), HasSubstr("needs 4194304 bytes")));
}

SessionOptions reference_only() {
  SessionOptions o;
  o.targets = {"reference"};
  o.plugin_dirs = {TESSERA_PLUGIN_BUILD_DIR};
  o.use_plugin_environment = false;
  o.use_default_plugin_dirs = false;
  o.pack_mode = PackMode::kNone;
  return o;
}

TEST(MemoryLimit, SessionPlanOverTheLimitIsRefused) {
  // Each value (4 MiB) is under the 6 MiB limit; the plan (Y's buffer plus the output) is not.
  constexpr int64_t n = 1 << 20;
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {n});
  m.node("Relu", {"X"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::FLOAT, {n});
  const std::string path = m.save(scratch_dir() / "plan.onnx");
  {
    const MemoryLimitGuard limit(6 << 20);
    Graph g = import_onnx_file(path);
    EXPECT_THAT(error_of([&] { Session s(std::move(g), reference_only()); }),
                AllOf(HasSubstr(path), HasSubstr("largest value 'Y': float32 [1048576]"),
                      HasSubstr("memory limit of 6291456 bytes")));
  }
  // Under the default limit the same model runs and matches max(x, 0).
  Session s(import_onnx_file(path), reference_only());
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i % 7) - 3.0f;
  const std::vector<Tensor> out = s.run({{"X", Tensor::from_vector<float>({n}, x)}});
  ASSERT_EQ(out.size(), 1u);
  const float* y = out[0].data<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], std::max(x[static_cast<size_t>(i)], 0.0f)) << i;
}

// Range and Slice whose counts come from graph inputs' values: the session prepares the graph
// again with those values at run time, through the same shape inference as at load, so an
// absurd count is refused there naming the node and the inputs, and extreme steps give ONNX
// Runtime 1.32's results. The session keeps working after the refusal.
TEST(RunTimeValues, RangeCountAndSliceStepFromInputs) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const auto scalar = [](int64_t v) { return Tensor::from_vector<int64_t>({}, {v}); };
  ModelBuilder r(11);
  for (const char* name : {"s", "l", "d"}) r.input(name, onnx::TensorProto::INT64, {});
  r.node("Range", {"s", "l", "d"}, {"Y"}, "rng");
  r.output("Y", onnx::TensorProto::INT64);
  Session range(import_onnx_file(r.save(scratch_dir() / "range.onnx")), reference_only());
  EXPECT_THAT(error_of([&] {
                range.run({{"s", scalar(kMin)}, {"l", scalar(kMax)}, {"d", scalar(3)}});
              }),
              AllOf(HasSubstr("node 'rng' (Range)"),
                    HasSubstr("inputs 'start' -9223372036854775808, 'limit' "
                              "9223372036854775807, 'delta' 3"),
                    HasSubstr("overflows int64")));
  EXPECT_THAT(error_of([&] {
                range.run({{"s", scalar(kMin)}, {"l", scalar(kMax)}, {"d", scalar(1)}});
              }),
              AllOf(HasSubstr("node 'rng' (Range)"), HasSubstr("does not fit in int64")));
  std::vector<Tensor> out =
      range.run({{"s", scalar(kMax)}, {"l", scalar(kMin)}, {"d", scalar(kMin)}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_int64_vector(), (std::vector<int64_t>{kMax, -1}));
  out = range.run({{"s", scalar(0)}, {"l", scalar(10)}, {"d", scalar(3)}});
  EXPECT_EQ(out[0].to_int64_vector(), (std::vector<int64_t>{0, 3, 6, 9}));

  ModelBuilder sl(13);
  sl.input("X", onnx::TensorProto::FLOAT, {10});
  sl.input("step", onnx::TensorProto::INT64, {1});
  sl.raw_int64("starts", {1}, {9});
  sl.raw_int64("ends", {1}, {kMin});
  sl.raw_int64("axes", {1}, {0});
  sl.node("Slice", {"X", "starts", "ends", "axes", "step"}, {"Y"}, "sl");
  sl.output("Y", onnx::TensorProto::FLOAT);
  Session slice(import_onnx_file(sl.save(scratch_dir() / "slice.onnx")), reference_only());
  std::vector<float> x(10);
  for (int i = 0; i < 10; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  const Tensor xt = Tensor::from_vector<float>({10}, x);
  for (const auto& [step, expected] :
       std::vector<std::pair<int64_t, std::vector<float>>>{{kMin, {9}}, {-4, {9, 5, 1}}}) {
    out = slice.run({{"X", xt}, {"step", Tensor::from_vector<int64_t>({1}, {step})}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].to_float_vector(), expected) << "step " << step;
  }
}

// A version 1.0 .npy file: preamble, the header dict padded to 64 bytes, then `data`.
std::string npy_bytes(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict + data;
}

TEST(NpyHeader, ShapeWhoseByteSizeOverflows) {
  const std::string path = (scratch_dir() / "huge.npy").string();
  test::write_file(path, npy_bytes("<f4", "(4611686018427387904,)", ""));
  EXPECT_THAT(error_of([&] { read_npy(path); }),
              AllOf(HasSubstr(path), HasSubstr("overflows int64 byte size")));
}

TEST(NpyHeader, HugeShapeOverNoDataIsRefusedBeforeAllocating) {
  // 4 TiB declared, none present: refused from the file size, never allocated.
  const std::string path = (scratch_dir() / "nodata.npy").string();
  test::write_file(path, npy_bytes("<f4", "(1099511627776,)", ""));
  EXPECT_THAT(error_of([&] { read_npy(path); }),
              AllOf(HasSubstr(path), HasSubstr("needs 4398046511104 bytes, found 0")));
  // A well-formed file still reads back exactly.
  const float values[3] = {1.5f, -2.0f, 3.25f};
  const std::string good = (scratch_dir() / "good.npy").string();
  test::write_file(
      good, npy_bytes("<f4", "(3,)", std::string(reinterpret_cast<const char*>(values), 12)));
  const Tensor t = read_npy(good);
  ASSERT_EQ(t.shape(), (Shape{3}));
  EXPECT_EQ(t.to_float_vector(), (std::vector<float>{1.5f, -2.0f, 3.25f}));
}

}  // namespace
}  // namespace tessera
