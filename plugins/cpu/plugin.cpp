// The `cpu` plugin: float32 NCHW kernels for the host CPU from one portable SIMD source (Highway,
// dispatched at run time) with oneTBB threads. Unsupported nodes are refused with a reason so
// core places them on the next plugin (reference).
#include <dlfcn.h>
#include <unistd.h>

#include <oneapi/tbb/global_control.h>

#include <fstream>
#include <new>

#include "region.hpp"

namespace {

using tessera::plugin::CompiledRegion;
using tessera::plugin::CompileOptions;
using tessera::plugin::DeviceInfo;
using tessera::plugin::Failure;
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
  if (op == "Conv" && w != nullptr && w->rank == 4) {
    return out * static_cast<double>(w->dims[1] * w->dims[2] * w->dims[3]);
  }
  if ((op == "Gemm" || op == "MatMul") && node.input(0) != nullptr && node.input(0)->rank == 2) {
    const tsr_tensor* a = node.input(0);
    const bool trans_a = op == "Gemm" && node.attr_int("transA", 0) != 0;
    return out * static_cast<double>(trans_a ? a->dims[0] : a->dims[1]);
  }
  return 0;
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
    d.kind = "cpu";
    d.vendor = cpuinfo_field("vendor_id");
    d.name = cpuinfo_field("model name");
    if (d.vendor.empty()) d.vendor = arm_vendor(cpuinfo_field("CPU implementer"));
    if (d.name.empty()) d.name = cpuinfo_field("Hardware");
    if (d.name.empty()) d.name = "host CPU (part " + cpuinfo_field("CPU part") + ")";
    d.driver_version = "highway " + tessera::cpu::simd_best_target() + " + oneTBB";
    cores_ = tessera::cpu::physical_cores();
    d.compute_units = cores_;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    d.memory_bytes = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
    d.features = tessera::cpu::simd_features();
    d.score = 10;  // above reference (1): same host, much faster kernels
    return {d};
  }

  Support query(int32_t device, const RegionView& region, const NodeView& node) override {
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

  std::unique_ptr<CompiledRegion> compile(int32_t device, const RegionView& region,
                                          const CompileOptions& options) override {
    (void)device;
    if (options.precision != "fp32") {
      throw Failure(TSR_UNSUPPORTED,
                    "cpu plugin v1 runs fp32 only, not '" + options.precision + "'");
    }
    return std::make_unique<tessera::cpu::CpuRegion>(region, options.num_threads);
  }

 private:
  tbb::task_scheduler_handle tbb_handle_;
  int32_t cores_ = 1;
};

}  // namespace

TESSERA_DEFINE_PLUGIN(CpuPlugin, "cpu", TESSERA_VERSION,
                      "float32 NCHW kernels for the host CPU (Highway SIMD, oneTBB threads)")
