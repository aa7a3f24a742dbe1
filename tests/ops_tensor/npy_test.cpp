// .npy reading and writing: round trips per dtype, files written by python numpy (and ours read
// back by numpy), malformed files, and the no-silent-replace rule.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "op_test_util.hpp"
#include "tessera/npy.hpp"
#include "test_requirements.hpp"

namespace fs = std::filesystem;

namespace tessera::test {
namespace {

class Npy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_npy_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  void write_raw(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }

  // A v1.0 file with the given header dict (padded as numpy would) followed by `data`.
  void write_v1(const std::string& name, std::string dict, const std::string& data) const {
    while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
    dict += '\n';
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(dict.size() & 0xff);
    bytes += static_cast<char>(dict.size() >> 8);
    write_raw(name, bytes + dict + data);
  }

  static bool have_numpy() { return std::system("python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

  fs::path dir_;
};

void expect_error_with(const std::function<void()>& fn, const std::string& a,
                       const std::string& b) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing '" << a << "' and '" << b << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(a), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(b), std::string::npos) << e.what();
  }
}

TEST_F(Npy, RoundTripEveryDtype) {
  const std::vector<Tensor> tensors = {
      f32({2, 3}, {1.5f, -2, 3, 4, 5, 6e-8f}),
      i64({3}, {-1, 1LL << 40, 7}),
      i32({}, {42}),
      Tensor::from_vector<int8_t>({2}, {-128, 127}),
      Tensor::from_vector<uint8_t>({1, 2}, {0, 255}),
      Tensor::from_vector<bool>({3}, {true, false, true}),
      Tensor::from_vector<uint16_t>({2}, {float_to_half(0.5f), float_to_half(-3)}),
      f32({0, 4}, {}),
  };
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    const std::string p = path("t" + std::to_string(i) + ".npy");
    write_npy(p, t, false);
    const Tensor r = read_npy(p);
    EXPECT_EQ(r.dtype(), t.dtype()) << i;
    EXPECT_EQ(r.shape(), t.shape()) << i;
    ASSERT_EQ(r.nbytes(), t.nbytes()) << i;
    EXPECT_EQ(std::memcmp(r.raw(), t.raw(), t.nbytes()), 0) << i;
    // Data starts 64-byte aligned, as numpy writes it.
    EXPECT_EQ((fs::file_size(p) - t.nbytes()) % 64, 0u) << i;
  }
}

TEST_F(Npy, RefusesToReplaceUnlessOverwrite) {
  const std::string p = path("x.npy");
  write_npy(p, f32({1}, {1}), false);
  expect_error_with([&] { write_npy(p, f32({1}, {2}), false); }, p, "already exists");
  expect_floats_near(read_npy(p), {1});
  write_npy(p, f32({2}, {3, 4}), true);
  expect_floats_near(read_npy(p), {3, 4});
  // No temporary files are left behind.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) files += entry.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);
}

TEST_F(Npy, HandWrittenVersion1And2Headers) {
  const float v[2] = {1.25f, -8};
  const std::string data(reinterpret_cast<const char*>(v), sizeof(v));
  write_v1("v1.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data);
  expect_floats_near(read_npy(path("v1.npy")), {1.25f, -8});

  std::string dict = "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1, 2)}\n";
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) bytes += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  write_raw("v2.npy", bytes + dict + data);
  const Tensor t = read_npy(path("v2.npy"));
  EXPECT_EQ(t.shape(), (Shape{1, 2}));
  expect_floats_near(t, {1.25f, -8});
}

TEST_F(Npy, MalformedFilesNameThePath) {
  write_raw("magic.npy", "PK\x03\x04 not numpy");
  expect_error_with([&] { read_npy(path("magic.npy")); }, path("magic.npy"), "magic");

  write_v1("header.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,3 }", "");
  expect_error_with([&] { read_npy(path("header.npy")); }, path("header.npy"),
                    "malformed .npy header");

  write_v1("nokey.npy", "{'descr': '<f4', 'shape': (1,), }", std::string(4, '\0'));
  expect_error_with([&] { read_npy(path("nokey.npy")); }, path("nokey.npy"), "fortran_order");

  write_v1("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
           std::string(4, '\0'));
  expect_error_with([&] { read_npy(path("fortran.npy")); }, path("fortran.npy"), "Fortran");

  write_v1("big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
           std::string(4, '\0'));
  expect_error_with([&] { read_npy(path("big.npy")); }, path("big.npy"), "'>f4'");

  write_v1("short.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
           std::string(12, '\0'));
  expect_error_with([&] { read_npy(path("short.npy")); }, path("short.npy"), "truncated");

  write_v1("long.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
           std::string(8, '\0'));
  expect_error_with([&] { read_npy(path("long.npy")); }, path("long.npy"), "bytes after");

  expect_error_with([&] { read_npy(path("missing.npy")); }, path("missing.npy"), "cannot open");
}

TEST_F(Npy, ReadsFilesWrittenByNumpy) {
  if (!have_numpy()) TESSERA_SKIP_WITHOUT("Python with numpy") << "python3 -c 'import numpy' failed";
  const std::string script =
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "np.save(d + '/f.npy', np.arange(6, dtype=np.float32).reshape(2, 3) / 4)\n"
      "np.save(d + '/h.npy', np.array([0.5, -2], dtype=np.float16))\n"
      "np.save(d + '/i.npy', np.array([[-3], [1 << 40]], dtype=np.int64))\n"
      "np.save(d + '/b.npy', np.array([True, False]))\n"
      "np.save(d + '/u.npy', np.array(200, dtype=np.uint8))\n"
      "np.save(d + '/t.npy', np.arange(6, dtype=np.int32).reshape(2, 3).T)\n"
      "with open(d + '/v2.npy', 'wb') as f:\n"
      "    np.lib.format.write_array(f, np.array([7, 8], dtype=np.int8), version=(2, 0))\n"
      "with open(d + '/v3.npy', 'wb') as f:\n"
      "    np.lib.format.write_array(f, np.array([9], dtype=np.int32), version=(3, 0))\n";
  write_raw("gen.py", script);
  ASSERT_EQ(std::system(("python3 " + path("gen.py") + " " + dir_.string()).c_str()), 0);

  const Tensor f = read_npy(path("f.npy"));
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  expect_floats_near(f, {0, 0.25f, 0.5f, 0.75f, 1, 1.25f});
  const Tensor h = read_npy(path("h.npy"));
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(half_to_float(h.data<uint16_t>()[0]), 0.5f);
  EXPECT_EQ(half_to_float(h.data<uint16_t>()[1]), -2.0f);
  EXPECT_EQ(values<int64_t>(read_npy(path("i.npy"))), (std::vector<int64_t>{-3, 1LL << 40}));
  EXPECT_EQ(values<bool>(read_npy(path("b.npy"))), (std::vector<bool>{true, false}));
  const Tensor u = read_npy(path("u.npy"));
  EXPECT_EQ(u.shape(), Shape{});
  EXPECT_EQ(values<uint8_t>(u), (std::vector<uint8_t>{200}));
  EXPECT_EQ(values<int8_t>(read_npy(path("v2.npy"))), (std::vector<int8_t>{7, 8}));
  EXPECT_EQ(values<int32_t>(read_npy(path("v3.npy"))), (std::vector<int32_t>{9}));
  // A transposed array is saved in Fortran order, which we refuse with a hint.
  expect_error_with([&] { read_npy(path("t.npy")); }, path("t.npy"), "ascontiguousarray");
}

TEST_F(Npy, NumpyReadsOurFiles) {
  if (!have_numpy()) TESSERA_SKIP_WITHOUT("Python with numpy") << "python3 -c 'import numpy' failed";
  write_npy(path("ours.npy"), f32({2, 2}, {1, 2, 3, 4.5f}), false);
  write_npy(path("scalar.npy"), i64({}, {-9}), false);
  const std::string check =
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "a = np.load(d + '/ours.npy')\n"
      "assert a.dtype == np.float32 and a.shape == (2, 2), a\n"
      "assert (a == np.array([[1, 2], [3, 4.5]], dtype=np.float32)).all(), a\n"
      "s = np.load(d + '/scalar.npy')\n"
      "assert s.dtype == np.int64 and s.shape == () and s == -9, s\n";
  write_raw("check.py", check);
  EXPECT_EQ(std::system(("python3 " + path("check.py") + " " + dir_.string()).c_str()), 0);
}

}  // namespace
}  // namespace tessera::test
