// tessera-gemm-bench: the cpu plugin's SGEMM micro-kernel alone, to see how a host's core runs it.
// For one GEMM shape (C = A[M x K] * B[K x N], A packed as conv weights are) it times the ways the
// plugin feeds B: packed panels (im2col-like convs), B read in place at a cache-line-aligned base,
// and in place at a base 4 floats off a line (what a 1x1 conv over a 7x7 or 13x13 plane reads),
// for each register tile the running target offers. It prints GFLOPS per variant and each
// variant's time relative to the packed one, on the calling thread (one task). Each variant's C is
// checked against a naive dot product at 64 sampled elements; a mismatch is reported and the exit
// status is 1.
//
//   tessera-gemm-bench [M N K [ldb]] [--repeat R] [--mc N] [--nc N] [--kc N] [--whole] [--cold]
//
// --mc/--nc/--kc set the task blocking (default one task, all of K); --whole packs all of B
// before the row panels run (the b_whole knob: late resnet layers; B is then never read in place,
// so only the packed variant runs); --cold evicts the caches
// before each run (weights streaming from memory, as in a network larger than the caches).
//
// A diagnostic for kernel work; whole-network speed against ONNX Runtime is
// tools/bench/cpu_compare.py.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include "kernels/kernels.hpp"

namespace {
using tessera::cpu::Epilogue;
using tessera::cpu::GemmBlocking;
using tessera::cpu::GemmTile;
using tessera::cpu::PackedMatrix;

// With cold set, 64 MiB are written before each timed run, so A (the weights) and B come from
// memory as a late layer's weights do inside a network.
bool cold = false;

void evict_caches() {
  static std::vector<char> junk(size_t{64} << 20);
  for (size_t i = 0; i < junk.size(); i += 64) junk[i] = static_cast<char>(junk[i] + 1);
}

template <class F>
double best_seconds(int repeat, const F& f) {
  f();  // warm-up: caches, scratch buffers
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    if (cold) evict_caches();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

int64_t parse(const char* s, const char* what) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "tessera-gemm-bench: %s must be a positive integer, got '%s'\n", what, s);
    std::exit(2);
  }
  return v;
}
}  // namespace

int main(int argc, char** argv) {
  int64_t m = 512, n = 196, k = 512, ldb = 0;
  int repeat = 20;
  GemmBlocking blk;
  blk.mc = 0;
  blk.nc = 0;
  std::vector<int64_t> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = static_cast<int>(parse(argv[++i], "--repeat"));
    } else if (a == "--mc" && i + 1 < argc) {
      blk.mc = parse(argv[++i], "--mc");
    } else if (a == "--nc" && i + 1 < argc) {
      blk.nc = parse(argv[++i], "--nc");
    } else if (a == "--kc" && i + 1 < argc) {
      blk.kc = parse(argv[++i], "--kc");
    } else if (a == "--cold") {
      cold = true;
    } else if (a == "--whole") {
      blk.b_whole = true;
    } else if (a == "-h" || a == "--help") {
      std::printf(
          "usage: tessera-gemm-bench [M N K [LDB]] [--repeat R] [--mc N] [--nc N] [--kc N] "
          "[--whole] [--cold]\n");
      return 0;
    } else {
      pos.push_back(parse(argv[i], "M, N, K and LDB"));
    }
  }
  if (pos.size() >= 3) {
    m = pos[0];
    n = pos[1];
    k = pos[2];
  }
  if (pos.size() >= 4) ldb = pos[3];
  if (ldb < n) ldb = n;
  if (blk.mc == 0) blk.mc = m;
  if (blk.nc == 0) blk.nc = n;
  tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(m * k));
  for (float& x : w) x = u(rng);
  // B with room for a 4-float shift; aligned to a cache line by hand.
  std::vector<float> bstore(static_cast<size_t>(k * ldb + 64));
  for (float& x : bstore) x = u(rng);
  float* b_aligned = bstore.data();
  b_aligned += (16 - (reinterpret_cast<uintptr_t>(b_aligned) / 4) % 16) % 16;
  float* b_off = b_aligned + 4;
  std::vector<float> c(static_cast<size_t>(m * n + 64));
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * k;

  std::printf(
      "M %lld N %lld K %lld ldb %lld, mc %lld nc %lld kc %lld%s, 1 thread, best of %d%s; target "
      "%s\n",
      static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
      static_cast<long long>(ldb), static_cast<long long>(blk.mc), static_cast<long long>(blk.nc),
      static_cast<long long>(blk.kc), blk.b_whole ? ", B packed whole" : "", repeat,
      cold ? " (cold caches)" : "", tessera::cpu::simd_best_target().c_str());
  std::printf("%-6s %-22s %10s %8s %8s\n", "tile", "B", "us", "GFLOPS", "/packed");
  // C(i, j) against a naive dot product over K, at 64 sampled elements.
  std::uniform_int_distribution<int64_t> pick_i(0, m - 1), pick_j(0, n - 1);
  int failures = 0;
  auto check = [&](const float* b, const char* what) {
    for (int s = 0; s < 64; ++s) {
      const int64_t i = pick_i(rng), j = pick_j(rng);
      double want = 0, scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double t = static_cast<double>(w[i * k + p]) * b[p * ldb + j];
        want += t;
        scale += std::abs(t);
      }
      const double got = c[i * n + j];
      if (std::abs(got - want) > 1e-4 * scale + 1e-6) {
        std::fprintf(stderr, "tessera-gemm-bench: %s: C(%lld, %lld) = %g, expected %g\n", what,
                     static_cast<long long>(i), static_cast<long long>(j), got, want);
        ++failures;
        return;
      }
    }
  };
  for (const GemmTile& t : tessera::cpu::gemm_tiles()) {
    PackedMatrix a;
    tessera::cpu::pack_a(w.data(), m, k, k, 1, &a, t.mr);
    GemmBlocking tb = blk;
    tb.nr = t.nr;
    const Epilogue e;
    auto packer = [&](const float* b) {
      return [&, b](int64_t j0, float* panel) {
        tessera::cpu::copy_panel(b, k, n, ldb, j0, panel, t.nr);
      };
    };
    double packed = 0;
    struct Variant {
      const char* name;
      const float* b;
      bool direct;
    };
    for (const Variant& v : {Variant{"packed panels", b_aligned, false},
                             Variant{"in place, line-aligned", b_aligned, true},
                             Variant{"in place, 16 B off", b_off, true}}) {
      if (v.direct && blk.b_whole) continue;  // sgemm_panels packs all of B then
      GemmBlocking vb = tb;
      vb.b_direct = v.direct;
      const auto pack = packer(v.b);
      const double s = best_seconds(repeat, [&] {
        tessera::cpu::sgemm_panels(a, n, pack, c.data(), n, e, vb, v.direct ? v.b : nullptr, ldb);
      });
      check(v.b, v.name);
      if (!v.direct) packed = s;
      std::printf("%lldx%-4lld %-22s %10.1f %8.1f %8.2f\n", static_cast<long long>(t.mr),
                  static_cast<long long>(t.nr), v.name, s * 1e6, flops / s * 1e-9, s / packed);
    }
  }
  return failures == 0 ? 0 : 1;
}
