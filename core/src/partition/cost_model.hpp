// The partitioner's time estimates: a node's work (FLOPs and bytes moved, computed by core from
// the graph so every plugin is priced on the same count) against a device's throughput (its
// family descriptor's gflops_per_unit, memory_gbps and launch_us, targets/devices/*.yaml). A
// roofline: the slower of compute and memory, plus a fixed launch cost.
#pragma once

#include <string>

#include "tessera/device_family.hpp"
#include "tessera/graph.hpp"

namespace tessera::partition {

struct NodeWork {
  double flops = 0;  // multiply-adds count 2
  double bytes = 0;  // every input read once (weights too) and every output written once
  // Share of the compute peak the op's kernels reach: GEMM-shaped work (Conv, Gemm, MatMul)
  // runs near peak, a depthwise conv far below it.
  double compute_efficiency = 1.0;
};

NodeWork node_work(const Graph& graph, const Node& node);

// What one target device can do, from its family and probe.
struct Throughput {
  std::string family;  // "" = no family with throughput figures matched
  double gflops = 0;   // whole device: per unit x units used
  double memory_gbps = 0;
  double launch_us = 0;
  double transfer_gbps = 0;  // 0 = host memory
  bool known() const { return gflops > 0 && memory_gbps > 0; }
};

// `units`: compute units the plugin will use (cores, capped by a thread setting); <= 0 means 1.
Throughput device_throughput(const DeviceFamily& family, int64_t units);

struct Estimate {
  double us = 0;
  double compute_us = 0, memory_us = 0, launch_us = 0;
  // "61 us: compute 5.2 us (2.1 GFLOP at 192 GFLOP/s), memory 60 us (1.2 MB at 20 GB/s),
  //  launch 2 us [x86-64-cpu]"
  std::string text;
};

Estimate estimate(const NodeWork& work, const Throughput& device);

}  // namespace tessera::partition
