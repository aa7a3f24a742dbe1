// Roofline estimates for the partitioner (see cost_model.hpp).
#include "partition/cost_model.hpp"

#include <algorithm>
#include <cstdio>

#include "tessera/flops.hpp"

namespace tessera::partition {
namespace {

constexpr double kGemmEfficiency = 0.6;       // blocked GEMM kernels on CPUs and GPUs
constexpr double kDepthwiseEfficiency = 0.2;  // one multiply-add per loaded weight and input

double value_elements(const Value& v) {
  if (!v.shape_known) return 0;
  double n = 1;
  for (int64_t d : v.shape) n *= static_cast<double>(std::max<int64_t>(d, 0));
  return n;
}

std::string quantity(double value, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T"};
  int p = 0;
  while (value >= 1000 && p < 4) {
    value /= 1000;
    ++p;
  }
  char text[48];
  std::snprintf(text, sizeof(text), value < 10 ? "%.2g %s%s" : "%.0f %s%s", value, prefixes[p],
                unit);
  return text;
}

std::string micros(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), us < 10 ? "%.2g us" : "%.0f us", us);
  return text;
}

}  // namespace

NodeWork node_work(const Graph& graph, const Node& node) {
  NodeWork work;
  double in_elements = 0, out_elements = 0;
  for (ValueId in : node.inputs) {
    if (in == kNoValue) continue;
    const Value& v = graph.value(in);
    work.bytes += value_elements(v) * static_cast<double>(dtype_size(v.dtype));
    in_elements = std::max(in_elements, value_elements(v));
  }
  for (ValueId out : node.outputs) {
    if (out == kNoValue) continue;
    const Value& v = graph.value(out);
    work.bytes += value_elements(v) * static_cast<double>(dtype_size(v.dtype));
    out_elements += value_elements(v);
  }
  work.flops = node_flops(graph, node);
  if (work.flops > 0) {
    work.compute_efficiency = kGemmEfficiency;
    if (node.op_type == "Conv" && node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
      // Depthwise: one input channel per group.
      const Value& w = graph.value(node.inputs[1]);
      if (w.shape_known && w.shape.size() >= 2 && w.shape[1] == 1 &&
          node.attrs.get_int("group", 1) > 1) {
        work.compute_efficiency = kDepthwiseEfficiency;
      }
    }
  } else {
    // Elementwise ops, reductions, pooling, copies: about one operation per element touched.
    work.flops = std::max(in_elements, out_elements);
  }
  return work;
}

Throughput device_throughput(const DeviceFamily& family, int64_t units) {
  Throughput t;
  const HardwareParams& hw = family.params;
  if (hw.gflops_per_unit <= 0 || hw.memory_gbps <= 0) return t;
  t.family = family.id;
  t.gflops = hw.gflops_per_unit * static_cast<double>(std::max<int64_t>(units, 1));
  t.memory_gbps = hw.memory_gbps;
  t.launch_us = hw.launch_us;
  t.transfer_gbps = hw.transfer_gbps;
  return t;
}

Estimate estimate(const NodeWork& work, const Throughput& device) {
  Estimate e;
  // GFLOP/s = 1e3 FLOP/us; GB/s = 1e3 B/us.
  const double rate = device.gflops * 1e3 * std::max(work.compute_efficiency, 1e-3);
  e.compute_us = work.flops / rate;
  e.memory_us = work.bytes / (device.memory_gbps * 1e3);
  e.launch_us = device.launch_us;
  e.us = std::max(e.compute_us, e.memory_us) + e.launch_us;
  e.text = micros(e.us) + ": compute " + micros(e.compute_us) + " (" +
           quantity(work.flops, "FLOP") + " at " + quantity(rate * 1e6, "FLOP/s") +
           "), memory " + micros(e.memory_us) + " (" + quantity(work.bytes, "B") + " at " +
           quantity(device.memory_gbps * 1e9, "B/s") + "), launch " + micros(e.launch_us) + " [" +
           device.family + "]";
  return e;
}

}  // namespace tessera::partition
