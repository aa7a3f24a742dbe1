// Packages against their oracle, the session they were made from: same outputs bit for bit,
// same placement, precision and configs; the loader against hostile bytes; content hashes and
// signatures (a changed member refused naming it, a package no trusted key signed refused).
#include "tessera/package.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/integrity.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/opset.hpp"
#include "tessera/session.hpp"
#include "tessera/tessera_c.h"
#include "zoo.hpp"

namespace tessera {
namespace {

Graph zoo_graph(const std::string& name) {
  zoo::ZooOptions options;
  options.seed = 3;
  return import_onnx_bytes(zoo::build_zoo_model(name, options), name + ".onnx", "");
}

std::map<std::string, Tensor> inputs_for(const Graph& g) {
  std::map<std::string, Tensor> in;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    Tensor t(v.dtype, v.shape);
    float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
    in[v.name] = t;
  }
  return in;
}

void expect_identical(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape());
    ASSERT_EQ(got[i].dtype(), want[i].dtype());
    EXPECT_EQ(std::memcmp(got[i].raw(), want[i].raw(), got[i].nbytes()), 0) << "output " << i;
  }
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tessera_pkg_" + std::to_string(getpid()) + "_" + name))
      .string();
}

bool has_opencl_device() {
  PluginHost host;
  const auto adreno = host.find("adreno");
  if (!adreno) return false;
  for (const PluginDeviceInfo& d : adreno->devices()) {
    if (!d.id.empty()) return true;
  }
  return false;
}

// The oracle: zoo mobilenet_v2 planned and run on `targets` by a session made from the graph.
struct Made {
  Graph graph;
  std::map<std::string, Tensor> in;
  std::unique_ptr<Session> session;
  std::vector<Tensor> want;
};

Made made_on(std::vector<std::string> targets, const std::string& precision = "fp32",
             bool mixed = false) {
  Made m;
  m.graph = zoo_graph("mobilenet_v2");
  SessionOptions o;
  o.targets = std::move(targets);
  o.precision = precision;
  o.mixed_precision.enabled = mixed;
  m.session = std::make_unique<Session>(m.graph, o);
  m.in = inputs_for(m.graph);
  m.want = m.session->run(m.in);
  return m;
}

// The error message of `f`, "" if it did not throw tessera::Error.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(PackageTest, CpuRoundTripRunsBitForBitWithTheSessionsPlacementAndConfigs) {
  const Made m = made_on({"cpu"});
  const Session& made = *m.session;
  Package p = package_from_session(made);
  const std::string file = temp_path("mv2.tsp");
  write_package(p, file, /*overwrite=*/true);
  EXPECT_NE(error_of([&] { write_package(p, file, false); }).find(file), std::string::npos)
      << "an existing package must not be replaced without overwrite";
  const Package back = read_package(file);
  ASSERT_EQ(back.nodes.size(), made.plan().nodes.size());
  ASSERT_EQ(back.targets.size(), 1u);
  EXPECT_EQ(back.targets[0].spec, "cpu");
  for (size_t n = 0; n < back.nodes.size(); ++n) {
    const NodePlacement& placed = made.plan().nodes[n];
    EXPECT_EQ(back.graph.nodes[n].name, placed.node);
    EXPECT_EQ(back.nodes[n].config.schedule, placed.config_choice.schedule);
    EXPECT_EQ(back.nodes[n].config.knobs.size(), placed.config_choice.knobs.size());
    EXPECT_EQ(back.nodes[n].precision, "fp32");
  }
  Session loaded(back, SessionOptions{});
  EXPECT_EQ(loaded.plan().nodes.size(), made.plan().nodes.size());
  expect_identical(loaded.run(m.in), m.want);
  // Only the plugin the package names is loaded.
  ASSERT_EQ(loaded.plugin_host().plugins().size(), 1u);
  EXPECT_EQ(loaded.plugin_host().plugins()[0]->name(), "cpu");
  std::filesystem::remove(file);
}

TEST(PackageTest, MixedPrecisionOnAdrenoKeepsEachNodesPrecisionAndConfig) {
  if (!has_opencl_device()) GTEST_SKIP() << "no OpenCL device";
  const Made m = made_on({"adreno:any"}, "fp16", /*mixed=*/true);
  const Session& made = *m.session;
  const Package p = package_from_session(made);
  const std::string bytes = serialize_package(p);
  const Package back =
      parse_package(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "mixed.tsp");
  int fp32 = 0, fp16 = 0;
  for (size_t n = 0; n < back.nodes.size(); ++n) {
    EXPECT_EQ(back.nodes[n].precision, made.plan().nodes[n].precision);
    (back.nodes[n].precision == "fp32" ? fp32 : fp16) += 1;
  }
  EXPECT_GT(fp32, 0);
  EXPECT_GT(fp16, 0);
  EXPECT_EQ(back.precision, "fp16");
  Session loaded(back, SessionOptions{});
  EXPECT_EQ(loaded.plan().regions.size(), made.plan().regions.size());
  expect_identical(loaded.run(m.in), m.want);
}

TEST(PackageTest, AnotherDeviceOrEngineIsRefusedWithTheReasonOrPlannedAgain) {
  const Made m = made_on({"cpu"});
  const Session& made = *m.session;
  Package p = package_from_session(made);
  p.file = "moved.tsp";
  p.targets[0].device = "Some Other CPU";
  const std::string refused = error_of([&] { Session s(p, SessionOptions{}); });
  EXPECT_NE(refused.find("moved.tsp"), std::string::npos) << refused;
  EXPECT_NE(refused.find("Some Other CPU"), std::string::npos) << refused;
  EXPECT_NE(refused.find("(`replan_package` plans"), std::string::npos) << refused;

  SessionOptions replan;
  replan.replan_package = true;
  Session again(p, replan);
  bool warned = false;
  for (const std::string& w : again.plan().warnings)
    warned |= w.find("planned again") != std::string::npos;
  EXPECT_TRUE(warned);
  const std::vector<Tensor> got = again.run(m.in);
  ASSERT_EQ(got.size(), m.want.size());
  const float* a = got[0].data<float>();
  const float* b = m.want[0].data<float>();
  for (int64_t i = 0; i < got[0].numel(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4f);

  Package old = package_from_session(made);
  old.file = "old.tsp";
  old.engine_version = "0.0.1";
  const std::string engine = error_of([&] { Session s(old, SessionOptions{}); });
  EXPECT_NE(engine.find("made by tessera 0.0.1"), std::string::npos) << engine;

  SessionOptions other_targets;
  other_targets.targets = {"reference"};
  const std::string targets = error_of([&] { Session s(old, other_targets); });
  EXPECT_NE(targets.find("compiled for the targets cpu"), std::string::npos) << targets;
}

// Packages whose bytes lie: each is refused by the loader naming the file and the field.
TEST(PackageTest, HostilePackagesAreRefusedNamingTheField) {
  const Made m = made_on({"reference"});
  const Package good = package_from_session(*m.session);
  const auto refusal = [](const Package& p) {
    const std::string bytes = serialize_package(p);
    return error_of([&] {
      parse_package(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "bad.tsp");
    });
  };
  ASSERT_EQ(refusal(good), "");

  Package p = good;
  p.graph.nodes[3].inputs[0] = 99999;
  EXPECT_NE(refusal(p).find("bad.tsp: graph.nodes[3]"), std::string::npos) << refusal(p);
  EXPECT_NE(refusal(p).find("out of range"), std::string::npos);

  p = good;
  std::swap(p.graph.nodes[0], p.graph.nodes[1]);
  EXPECT_NE(refusal(p).find("before any node produces it"), std::string::npos) << refusal(p);

  p = good;
  const ValueId produced = p.graph.nodes[0].outputs[0];
  p.graph.values[static_cast<size_t>(produced)].shape = {1, 2, 3, 4};
  EXPECT_NE(refusal(p).find("but its producer computes"), std::string::npos) << refusal(p);

  p = good;
  p.nodes[2].precision = "fp8";
  EXPECT_NE(refusal(p).find("graph.nodes[2]"), std::string::npos) << refusal(p);

  p = good;
  p.nodes[1].target = 7;
  EXPECT_NE(refusal(p).find(".target: 7 is out of range"), std::string::npos) << refusal(p);

  p = good;
  p.graph.outputs.push_back(p.graph.outputs[0]);
  EXPECT_NE(refusal(p).find("graph.outputs"), std::string::npos) << refusal(p);

  // A constant whose stated shape disagrees with its bytes.
  p = good;
  for (Value& v : p.graph.values) {
    if (!v.constant || v.shape.empty()) continue;
    v.shape[0] += 1;
    break;
  }
  EXPECT_NE(refusal(p).find(".constant"), std::string::npos) << refusal(p);
}

// Truncations and single-byte corruptions anywhere in the header end in a clean error or a
// package that verifies; never in a crash (the sanitizer builds run this too).
TEST(PackageTest, CorruptedBytesEndInACleanErrorOrAValidPackage) {
  const Made m = made_on({"reference"});
  const std::string bytes = serialize_package(package_from_session(*m.session));
  uint32_t prefix = 0;
  std::memcpy(&prefix, bytes.data(), 4);
  const size_t header = 4 + static_cast<size_t>(prefix);
  int refused = 0, loaded = 0;
  for (size_t cut : {size_t{0}, size_t{3}, size_t{11}, header / 2, header, bytes.size() - 1}) {
    const std::string message = error_of(
        [&] { parse_package(reinterpret_cast<const uint8_t*>(bytes.data()), cut, "cut.tsp"); });
    EXPECT_EQ(message.rfind("cut.tsp: ", 0), 0u) << "cut at " << cut << ": " << message;
  }
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::string broken = bytes;
    const size_t at = rng() % header;
    broken[at] = static_cast<char>(broken[at] ^ static_cast<char>(1 + rng() % 255));
    try {
      parse_package(reinterpret_cast<const uint8_t*>(broken.data()), broken.size(), "flip.tsp");
      ++loaded;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("flip.tsp: ", 0), 0u) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(refused + loaded, 200);
}

// A package's thread count goes to its plugin's thread pool, where oneTBB crashed (SIGSEGV) on
// 2147483647 and 1000000. The reader refuses counts outside the bound the CLI, the C API and
// deployment YAML check, naming the file and the field, before any plugin sees them; the
// largest count allowed still runs as the session it was made from.
TEST(PackageTest, ThreadCountsBeyondTheBoundAreRefusedNamingThePackageAndField) {
  const Made m = made_on({"cpu"});
  Package p = package_from_session(*m.session);
  ASSERT_EQ(p.targets.size(), 1u);
  const std::string file = temp_path("threads.tsp");
  for (const int32_t threads : {2147483647, 1000000, kMaxThreads + 1, -1}) {
    p.targets[0].threads = threads;
    write_package(p, file, /*overwrite=*/true);
    EXPECT_EQ(error_of([&] { read_package(file); }),
              file + ": targets[0].threads: " + std::to_string(threads) +
                  " is outside 0..1024 (0 = the plugin's default)");
  }
  p.targets[0].threads = kMaxThreads;
  write_package(p, file, /*overwrite=*/true);
  const Package back = read_package(file);
  std::filesystem::remove(file);
  EXPECT_EQ(back.targets[0].threads, kMaxThreads);
  Session loaded(back, SessionOptions{});
  const std::vector<Tensor> got = loaded.run(m.in);
  ASSERT_EQ(got.size(), m.want.size());
  ASSERT_EQ(got[0].shape(), m.want[0].shape());
  const float* a = got[0].data<float>();
  const float* b = m.want[0].data<float>();
  for (int64_t i = 0; i < got[0].numel(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4f) << i;
}

// A package's graph claims the opset its nodes' semantics follow; one the importer would refuse
// (kMinOpset..kMaxOpset) is refused by the reader too, naming the file and the field, and the
// package as made (its model's opset) still runs as the session it was made from.
TEST(PackageTest, OpsetsOutsideTheImportersRangeAreRefusedNamingThePackageAndField) {
  const Made m = made_on({"cpu"});
  Package p = package_from_session(*m.session);
  const int64_t made_opset = p.graph.opset;
  ASSERT_GE(made_opset, kMinOpset);
  ASSERT_LE(made_opset, kMaxOpset);
  const std::string file = temp_path("opset.tsp");
  for (const int64_t opset : {int64_t{99}, int64_t{-1}, kMinOpset - 1, kMaxOpset + 1, INT64_MIN}) {
    p.graph.opset = opset;
    write_package(p, file, /*overwrite=*/true);
    EXPECT_EQ(error_of([&] { read_package(file); }),
              file + ": graph.opset: is " + std::to_string(opset) +
                  "; Tessera supports opsets 7 to 21 of the default ONNX domain");
  }
  p.graph.opset = made_opset;
  write_package(p, file, /*overwrite=*/true);
  const Package back = read_package(file);
  std::filesystem::remove(file);
  EXPECT_EQ(back.graph.opset, made_opset);
  Session loaded(back, SessionOptions{});
  expect_identical(loaded.run(m.in), m.want);
}

// A FIFO or a directory where a package is expected is refused at once, naming it, instead of
// blocking for a writer or mapping nothing.
TEST(PackageTest, FifoOrDirectoryAsThePackageIsRefusedNamingIt) {
  const std::string fifo = temp_path("fifo.tsp");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(is_package_file(fifo));
  const std::string fifo_error = error_of([&] { read_package(fifo); });
  std::filesystem::remove(fifo);
  EXPECT_EQ(fifo_error, "package '" + fifo + "' is a FIFO (named pipe); expected a regular file");

  const std::string dir = temp_path("dir.tsp");
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(is_package_file(dir));
  const std::string dir_error = error_of([&] { read_package(dir); });
  std::filesystem::remove(dir);
  EXPECT_EQ(dir_error, "package '" + dir + "' is a directory; expected a regular file");
}

TEST(PackageTest, TheCApiRunsAPackage) {
  const Made m = made_on({"cpu"});
  const std::string file = temp_path("capi.tsp");
  write_package(package_from_session(*m.session), file, true);

  tessera_session* s = nullptr;
  ASSERT_EQ(tessera_session_create(file.c_str(), nullptr, &s), TESSERA_OK) << tessera_last_error();
  ASSERT_EQ(tessera_session_input_count(s), 1);
  const char* name = nullptr;
  tessera_dtype dtype{};
  int32_t rank = 0;
  const int64_t* shape = nullptr;
  ASSERT_EQ(tessera_session_input(s, 0, &name, &dtype, &rank, &shape), TESSERA_OK);
  const Tensor& x = m.in.begin()->second;
  EXPECT_EQ(std::string(name), m.in.begin()->first);
  tessera_tensor_view view{TESSERA_DTYPE_FLOAT32, static_cast<int32_t>(x.rank()), x.shape().data(),
                           x.raw()};
  tessera_outputs* out = nullptr;
  ASSERT_EQ(tessera_session_run(s, 1, &name, &view, &out), TESSERA_OK) << tessera_last_error();
  tessera_tensor_view got{};
  const char* out_name = nullptr;
  ASSERT_EQ(tessera_outputs_get(out, 0, &out_name, &got), TESSERA_OK);
  ASSERT_EQ(static_cast<size_t>(m.want[0].numel()) * sizeof(float), m.want[0].nbytes());
  EXPECT_EQ(std::memcmp(got.data, m.want[0].raw(), m.want[0].nbytes()), 0);
  tessera_outputs_release(out);
  tessera_session_release(s);

  std::filesystem::resize_file(file, 100);
  ASSERT_EQ(tessera_session_create(file.c_str(), nullptr, &s), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find(file), std::string::npos)
      << tessera_last_error();
  std::filesystem::remove(file);
}

// FIPS 180-4's SHA-256 test vectors, hashed in one piece and fed in pieces of odd sizes that
// straddle the 64-byte blocks, by the CPU's SHA instructions where it has them and by the
// portable code.
TEST(IntegrityTest, Sha256GivesTheStandardsDigests) {
  const std::string million(1000000, 'a');
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {million, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"}};
  for (const auto& [text, want] : vectors) {
    EXPECT_EQ(to_hex(sha256(text)), want) << text.size() << " bytes";
    for (const bool extensions : {true, false}) {
      Sha256 pieces(extensions);
      for (size_t at = 0, step = 1; at < text.size(); at += step, step = step * 3 % 397 + 1)
        pieces.update(text.data() + at, std::min(step, text.size() - at));
      EXPECT_EQ(to_hex(pieces.finish()), want)
          << text.size() << " bytes in pieces, cpu extensions " << extensions;
    }
  }
}

// The index in "...: graph.nodes[7] ('name'): ..." after `member`, or -1.
long member_index(const std::string& message, const std::string& member) {
  const size_t at = message.find(": " + member + "[");
  return at == std::string::npos ? -1 : std::stol(message.substr(at + member.size() + 3));
}

// A package changed after it was written: an op swapped in the file ("Clip"/"Relu" -> "Tanh",
// the same length, so the FlatBuffer still verifies and the graph still type-checks) and a
// flipped weight byte. Each is refused naming the file and the member that differs; the
// package as written loads and runs as the session it was made from.
TEST(PackageTest, AnOpOrWeightChangedInTheFileIsRefusedNamingTheMember) {
  const Made m = made_on({"cpu"});
  const Package good = package_from_session(*m.session);
  const std::string bytes = serialize_package(good);
  const auto refusal = [](const std::string& b) {
    return error_of(
        [&] { parse_package(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "x.tsp"); });
  };
  ASSERT_EQ(refusal(bytes), "");
  const Package back =
      parse_package(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "x.tsp");
  EXPECT_EQ(back.content_sha256, package_content_digest(good));
  expect_identical(Session(back, SessionOptions{}).run(m.in), m.want);

  std::string swapped = bytes;
  std::string op;
  for (const char* candidate : {"Relu", "Clip"}) {
    const std::string stored = std::string("\x04\0\0\0", 4) + candidate + std::string(1, '\0');
    const size_t at = swapped.find(stored);
    if (at == std::string::npos) continue;
    swapped.replace(at + 4, 4, "Tanh");
    op = candidate;
    break;
  }
  ASSERT_FALSE(op.empty()) << "mobilenet_v2 has no Relu or Clip node";
  const std::string op_refusal = refusal(swapped);
  const long node = member_index(op_refusal, "graph.nodes");
  ASSERT_GE(node, 0) << op_refusal;
  EXPECT_EQ(good.graph.nodes[static_cast<size_t>(node)].op_type, op) << op_refusal;
  EXPECT_EQ(op_refusal.rfind("x.tsp: graph.nodes[" + std::to_string(node) + "] ('" +
                                 good.graph.nodes[static_cast<size_t>(node)].name +
                                 "'): its content does not match the SHA-256 written with the "
                                 "package",
                             0),
            0u)
      << op_refusal;

  // The last byte of the file is the last byte of the last constant written.
  std::string flipped = bytes;
  flipped.back() = static_cast<char>(flipped.back() ^ 0x40);
  const std::string weight_refusal = refusal(flipped);
  const long value = member_index(weight_refusal, "graph.values");
  ASSERT_GE(value, 0) << weight_refusal;
  EXPECT_NE(good.graph.values[static_cast<size_t>(value)].constant, nullptr) << weight_refusal;
  EXPECT_NE(weight_refusal.find("changed or damaged after it was written"), std::string::npos);
}

// Signatures: with trusted keys, an unsigned package, one signed by another key, and one changed
// after it was signed are refused with the reason; the one signed by the trusted key runs as the
// session it was made from; without trusted keys none is required.
TEST(PackageTest, OnlyAPackageSignedByATrustedKeyRunsWhenKeysAreGiven) {
  if (!signatures_supported()) GTEST_SKIP() << "built without libsodium";
  const Made m = made_on({"cpu"});
  const SecretKey a = generate_secret_key();
  const SecretKey b = generate_secret_key();
  const std::string file = temp_path("signed.tsp");
  write_package(package_from_session(*m.session), file, /*overwrite=*/true);
  SessionOptions trust_a;
  trust_a.trusted_keys = {a.public_key().text()};
  EXPECT_EQ(error_of([&] { Session s(read_package(file), trust_a); }),
            file +
                ": refused: it is not signed, and trusted keys are given (sign it with "
                "tessera sign)");

  Package signed_package = read_package(file);
  sign_package(signed_package, a);
  sign_package(signed_package, a);  // the same key again replaces its signature
  write_package(signed_package, file, /*overwrite=*/true);
  const Package back = read_package(file);
  ASSERT_EQ(back.signatures.size(), 1u);
  EXPECT_EQ(back.signatures[0].key, a.public_key());
  expect_identical(Session(back, trust_a).run(m.in), m.want);

  SessionOptions trust_b;
  trust_b.trusted_keys = {b.public_key().text()};
  EXPECT_EQ(error_of([&] { Session s(back, trust_b); }),
            file + ": refused: no signature by a trusted key verifies; signed by " +
                a.public_key().text() + " (not a trusted key)");

  Package changed = back;
  changed.created_by = "an edit after signing";
  write_package(changed, file, /*overwrite=*/true);
  EXPECT_EQ(error_of([&] { Session s(read_package(file), trust_a); }),
            file + ": refused: no signature by a trusted key verifies; signed by " +
                a.public_key().text() +
                " (its signature does not match the content: changed after signing)");
  expect_identical(Session(read_package(file), SessionOptions{}).run(m.in), m.want);

  SessionOptions bad_key;
  bad_key.trusted_keys = {"ed25519:1234"};
  EXPECT_EQ(error_of([&] { Session s(back, bad_key); }),
            "trusted_keys: the key after 'ed25519:' must be 64 hex digits");

  // The C API takes the keys as one comma-separated list.
  write_package(back, file, /*overwrite=*/true);
  tessera_session_options c_options;
  tessera_session_options_init(&c_options);
  const std::string both = b.public_key().text() + "," + a.public_key().text();
  c_options.trusted_keys = both.c_str();
  tessera_session* c_session = nullptr;
  ASSERT_EQ(tessera_session_create(file.c_str(), &c_options, &c_session), TESSERA_OK)
      << tessera_last_error();
  tessera_session_release(c_session);
  const std::string only_b = b.public_key().text();
  c_options.trusted_keys = only_b.c_str();
  ASSERT_EQ(tessera_session_create(file.c_str(), &c_options, &c_session), TESSERA_FAILED);
  EXPECT_NE(std::string(tessera_last_error()).find(file + ": refused: "), std::string::npos)
      << tessera_last_error();
  EXPECT_NE(std::string(tessera_last_error()).find("(not a trusted key)"), std::string::npos);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace tessera
