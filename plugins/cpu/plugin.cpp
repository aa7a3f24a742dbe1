// The `cpu` plugin: float32 NCHW kernels for the host CPU from one portable SIMD source (Highway,
// dispatched at run time) with oneTBB threads. Unsupported nodes are refused with a reason so
// core places them on the next plugin (reference).
#include <dlfcn.h>
#include <unistd.h>

#include <oneapi/tbb/global_control.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <new>
#include <optional>
#include <sstream>

#include "fusion.hpp"
#include "microarchitecture.hpp"
#include "region.hpp"

namespace {

using tessera::plugin::CompiledRegion;
using tessera::plugin::CompileOptions;
using tessera::plugin::DeviceInfo;
using tessera::plugin::Failure;
using tessera::plugin::NodeTuning;
using tessera::plugin::NodeView;
using tessera::plugin::RegionView;
using tessera::plugin::Support;

// First value of `key` in /proc/cpuinfo, "" when absent.
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string rest = line.substr(0, colon);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.pop_back();
    if (rest != key) continue;
    return colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  return "";
}

// The x86 micro-architecture from /proc/cpuinfo's family and model (microarchitecture.hpp);
// "" when they are missing or not numbers.
std::string x86_microarchitecture(const std::string& vendor) {
  const std::string family_text = cpuinfo_field("cpu family"), model_text = cpuinfo_field("model");
  char* end = nullptr;
  const long family = std::strtol(family_text.c_str(), &end, 10);
  if (family_text.empty() || *end != '\0') return "";
  const long model = std::strtol(model_text.c_str(), &end, 10);
  if (model_text.empty() || *end != '\0') return "";
  return tessera::cpu::x86_microarchitecture(vendor, family, model);
}

std::string arm_vendor(const std::string& implementer) {
  if (implementer == "0x41") return "ARM";
  if (implementer == "0x51") return "Qualcomm";
  if (implementer == "0x61") return "Apple";
  if (implementer == "0x48") return "HiSilicon";
  return implementer.empty() ? "unknown" : "implementer " + implementer;
}

// Multiply-adds of GEMM-like nodes, for the cost estimate.
double macs(const NodeView& node) {
  const std::string_view op = node.op_type();
  const tsr_tensor* y = node.output(0);
  const tsr_tensor* w = node.input(1);
  if (y == nullptr) return 0;
  const double out = static_cast<double>(tessera::plugin::tensor_numel(*y));
  if (op == "Conv" && w != nullptr && w->rank >= 3 && w->rank <= 5) {
    double window = static_cast<double>(w->dims[1]);
    for (int32_t i = 2; i < w->rank; ++i) window *= static_cast<double>(w->dims[i]);
    return out * window;
  }
  const tsr_tensor* a = node.input(0);
  if (op == "Gemm" && a != nullptr && a->rank == 2) {
    return out * static_cast<double>(node.attr_int("transA", 0) != 0 ? a->dims[0] : a->dims[1]);
  }
  if (op == "MatMul" && a != nullptr && a->rank >= 1) {
    return out * static_cast<double>(a->dims[a->rank - 1]);
  }
  return 0;
}

// Canonical key of a node's workload (what a pack entry is looked up by): op, input shapes
// (constants marked 'c'), output shapes, attributes sorted by name, dtype, layout. Names never
// enter, so equal keys mean interchangeable configs.
std::string workload_key(const NodeView& node) {
  auto shape = [](const tsr_tensor* t) {
    if (t == nullptr) return std::string("-");
    std::string out;
    for (int32_t d = 0; d < t->rank; ++d) out += (d ? "x" : "") + std::to_string(t->dims[d]);
    return (out.empty() ? std::string("scalar") : out) + (t->data != nullptr ? "c" : "");
  };
  std::string op(node.op_type());
  for (char& c : op) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string key = op + "|in=";
  for (int32_t i = 0; i < node.num_inputs(); ++i) key += (i ? "," : "") + shape(node.input(i));
  key += "|out=";
  for (int32_t i = 0; i < node.num_outputs(); ++i) key += (i ? "," : "") + shape(node.output(i));
  std::map<std::string, std::string> attrs;
  for (int32_t i = 0; i < node.raw().num_attributes; ++i) {
    const tsr_attribute& a = node.raw().attributes[i];
    if (a.name == nullptr) continue;
    std::ostringstream v;
    if (a.kind == TSR_ATTR_INT) {
      v << a.i;
    } else if (a.kind == TSR_ATTR_FLOAT) {
      v << a.f;
    } else if (a.kind == TSR_ATTR_STRING) {
      v << (a.s ? a.s : "");
    } else if (a.kind == TSR_ATTR_INTS) {
      for (int64_t j = 0; j < a.count; ++j) v << (j ? "," : "") << a.ints[j];
    } else {
      v << "?";
    }
    attrs[a.name] = v.str();
  }
  for (const auto& [name, value] : attrs) key += "|" + name + "=" + value;
  const tsr_tensor* x = node.input(0);
  key += x != nullptr && x->dtype == TSR_DTYPE_FLOAT32 ? "|f32" : "|dt";
  return key + "|nchw";
}

// oneTBB's worker threads are process-wide and may still be parked inside libtbb after
// finalize() gives up (it returns false while any other arena is alive). Keeping libtbb mapped for
// the life of the process (RTLD_NODELETE) makes unloading this plugin safe in every case; the
// plugin's own code is never on a worker's stack once its regions are released.
void pin_tbb() {
  for (const char* soname : {"libtbb.so.12", "libtbb.so.2", "libtbb.so"}) {
    if (dlopen(soname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr) return;
  }
}

class CpuPlugin : public tessera::plugin::Plugin {
 public:
  CpuPlugin() : tbb_handle_(tbb::attach{}) { pin_tbb(); }
  // Runs in shutdown(), after every region (and so every task_arena) was released. oneTBB's
  // worker threads would otherwise still be parked inside libtbb when core unloads this plugin
  // (and with it libtbb), and crash the process at exit; finalize waits until they have left.
  ~CpuPlugin() override { tbb::finalize(tbb_handle_, std::nothrow); }

  std::vector<DeviceInfo> probe(const std::string& selector) override {
    (void)selector;
    DeviceInfo d;
    d.id = "host";  // the one device: the process's CPU
    d.kind = "cpu";
    d.vendor = cpuinfo_field("vendor_id");
    d.name = cpuinfo_field("model name");
    if (d.vendor.empty()) d.vendor = arm_vendor(cpuinfo_field("CPU implementer"));
    if (d.name.empty()) d.name = cpuinfo_field("Hardware");
    if (d.name.empty()) d.name = "host CPU (part " + cpuinfo_field("CPU part") + ")";
    const std::string uarch = x86_microarchitecture(d.vendor);
    if (!uarch.empty()) d.name += " (" + uarch + ")";
    d.driver_version = "highway " + tessera::cpu::simd_best_target() + " + oneTBB";
    d.compute_units = cores_;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    d.memory_bytes = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
    d.features = tessera::cpu::simd_features();
    d.score = 10;  // above reference (1): same host, much faster kernels
    return {d};
  }

  Support query(const std::string& device, const RegionView& region,
                const NodeView& node) override {
    (void)device;
    const tessera::cpu::OpEntry* entry = tessera::cpu::find_op(node.op_type());
    if (entry == nullptr) {
      return Support::no("op " + std::string(node.op_type()) + " not implemented by cpu");
    }
    const std::string why = entry->query(region, node);
    if (!why.empty()) return Support::no(why);
    // ~8 multiply-adds per ns per core for the GEMM paths, ~2 elements per ns otherwise.
    const double cores = std::max(1, cores_);
    double elements = 0;
    if (const tsr_tensor* y = node.output(0)) {
      elements = static_cast<double>(tessera::plugin::tensor_numel(*y));
    }
    const double cost = macs(node) / (8000.0 * cores) + elements / 2000.0 + 1.0;
    Support s = Support::yes(cost);
    s.preferred_layout = TSR_LAYOUT_NCHW;
    return s;
  }

  // Answers over a subgraph with the nodes compile would absorb into another node's step (the
  // one plan of fusion.cpp: folded BN, epilogue Adds and clamps, pooled stems, pointwise ops,
  // SiLU/GELU, squeeze-excitation, LayerNorm2d, QDQ pairs) priced at 0 us.
  std::vector<Support> query_subgraph(const std::string& device,
                                      const RegionView& region) override {
    std::vector<Support> answers = Plugin::query_subgraph(device, region);
    tessera::cpu::price_fusions(region, answers);
    return answers;
  }

  // GEMM-path Conv, Gemm and 2-D MatMul nodes have one schedule each whose knobs block the
  // parallel tasks; the defaults are the heuristic's for the thread count compile uses by
  // default (physical cores). Depthwise convs and the other ops have nothing to tune.
  NodeTuning describe(const std::string& device, const RegionView& region,
                      const NodeView& node) override {
    (void)device;
    NodeTuning tuning;
    tuning.workload_key = workload_key(node);
    tuning.flops = 2.0 * macs(node);
    const int64_t threads = tessera::cpu::physical_cores();
    if (node.op_type() == "Conv") {
      // The heuristic's schedule first (default_schedule 0), then any alternative.
      for (const tessera::cpu::Config& c : tessera::cpu::tunable_conv(region, node, threads)) {
        tuning.schedules.push_back(tessera::cpu::describe_schedule(c));
      }
    }
    if (node.op_type() == "Gemm" || node.op_type() == "MatMul") {
      if (auto config = tessera::cpu::tunable_gemm(region, node, threads)) {
        tuning.schedules.push_back(tessera::cpu::describe_schedule(*config));
      }
    }
    return tuning;
  }

  std::unique_ptr<CompiledRegion> compile(const std::string& device, const RegionView& region,
                                          const CompileOptions& options) override {
    (void)device;
    if (options.precision != "fp32") {
      throw Failure(TSR_UNSUPPORTED,
                    "cpu plugin v1 runs fp32 only, not '" + options.precision + "'");
    }
    return std::make_unique<tessera::cpu::CpuRegion>(region, options.num_threads,
                                                     options.node_configs);
  }

 private:
  tbb::task_scheduler_handle tbb_handle_;
  // Fixed at load: query() reads it from any thread while another host may be probing.
  const int32_t cores_ = tessera::cpu::physical_cores();
};

}  // namespace

TESSERA_DEFINE_PLUGIN(CpuPlugin, "cpu", TESSERA_VERSION,
                      "float32 NCHW kernels for the host CPU (Highway SIMD, oneTBB threads)")
