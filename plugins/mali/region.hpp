// The mali plugin's part of the OpenCL lowering (tessera_opencl/lowering.hpp): its kernels, its
// flavor (schedules and default knob values) and the NCHW4c activation storage.
//
// Activation storage: with the target option `layout` nchw4c (the default), each op's storage
// rule (ops/op.hpp) picks the storage its outputs get from its inputs' (Conv always NCHW4c;
// BatchNorm, element-wise ops, pools and channel Concat follow their inputs; every other op
// NCHW), and the lowering converts an input exactly where its consumer needs the other storage
// (once per value). With `layout` nchw every value stays NCHW.
#pragma once

#include <optional>
#include <string>

#include "schedules.hpp"
#include "tessera_opencl/lowering.hpp"

namespace tessera::mali {

// Embedded kernels/<name> source, or nullptr.
const char* kernel_source(const char* name);

using opencl::Device;
using opencl::Lowering;
using opencl::NodeView;
using opencl::Storage;
using opencl::StoragePlan;
using opencl::StorageRule;

// Programs built once per context and option set from the mali kernels; shared by every region of
// the device.
class ProgramPool : public opencl::support::ProgramPool {
 public:
  ProgramPool() : opencl::support::ProgramPool("mali", kernel_source) {}
};

// The mali flavor: its name, schedules and default knob values (ops/op.cpp).
const opencl::Flavor& flavor();

// The activation storage of a target without a `layout` option; describe_node lists the
// schedules of this storage (it is not given the target's options).
inline constexpr Storage kDefaultLayout = Storage::kNchw4c;
// The storage the option value names ("nchw4c" or "nchw"), or nullopt.
std::optional<Storage> parse_layout(const std::string& value);
// Why `value` is not a layout, naming the option and the choices.
std::string layout_choices(const std::string& value);

}  // namespace tessera::mali
