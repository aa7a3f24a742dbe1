// RegionDesc: a tsr_region (the C view a plugin sees) built from a subset of a graph's nodes,
// owning every array and string it points to, its arrays laid out at the element sizes of the
// plugin it is for (plugin_abi.h, "Arrays of structs").
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "plugins/abi_arrays.hpp"
#include "tessera/graph.hpp"
#include "tessera/plugin_abi.h"

namespace tessera::detail {

// Per value, the indices of the nodes consuming it (built once per graph).
std::vector<std::vector<int>> value_consumers(const Graph& graph);

class RegionDesc {
 public:
  // `nodes` are graph node indices in execution order. Region inputs are the non-constant values
  // the nodes read but do not produce; outputs are values they produce that a node outside the
  // set reads, or that are graph outputs. Constants carry their data (kept alive by this object).
  // `sizes`: the element sizes of the plugin the region is for (element_sizes_for_minor).
  RegionDesc(const Graph& graph, const std::vector<int>& nodes,
             const std::vector<std::vector<int>>& consumers,
             const ElementSizes& sizes = core_element_sizes());
  RegionDesc(const RegionDesc&) = delete;
  RegionDesc& operator=(const RegionDesc&) = delete;

  const tsr_region* get() const { return &region_; }
  // Graph value ids of the region inputs/outputs, in tsr_region order.
  const std::vector<ValueId>& input_values() const { return input_values_; }
  const std::vector<ValueId>& output_values() const { return output_values_; }

 private:
  const char* keep(const std::string& s);
  tsr_tensor describe(const std::string& name, DType dtype, const Shape& shape, const void* data,
                      uint32_t struct_size);
  void convert_attributes(const Node& node, std::vector<tsr_attribute>& out);
  // Points the region at its arrays, laid out at sizes_ where that is not core's own layout.
  void lay_out();

  ElementSizes sizes_;
  tsr_region region_{};
  std::vector<ValueId> input_values_, output_values_;
  std::deque<std::string> strings_;
  std::vector<tsr_tensor> values_;
  std::vector<tsr_node> nodes_;
  std::deque<std::vector<int32_t>> index_arrays_;
  std::deque<std::vector<tsr_attribute>> attribute_arrays_;
  std::deque<std::vector<const char*>> string_arrays_;
  std::deque<std::vector<int64_t>> int_arrays_;
  std::deque<std::vector<float>> float_arrays_;
  std::deque<tsr_tensor> attribute_tensors_;
  std::vector<std::shared_ptr<const Tensor>> constants_;
  std::deque<Tensor> tensor_attrs_;
  // The arrays above at sizes_, where they differ from core's sizeof.
  StridedArray packed_values_, packed_nodes_;
  std::vector<StridedArray> packed_attributes_;
};

}  // namespace tessera::detail
