// Builds the C view of a graph subset handed to plugins.
#include "plugins/region_desc.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <type_traits>

#include "tessera/error.hpp"

namespace tessera::detail {

std::vector<std::vector<int>> value_consumers(const Graph& graph) {
  std::vector<std::vector<int>> consumers(graph.values.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId in : graph.nodes[n].inputs) {
      if (in == kNoValue) continue;
      auto& list = consumers[static_cast<size_t>(in)];
      if (list.empty() || list.back() != static_cast<int>(n)) list.push_back(static_cast<int>(n));
    }
  }
  return consumers;
}

const char* RegionDesc::keep(const std::string& s) {
  strings_.push_back(s);
  return strings_.back().c_str();
}

tsr_tensor RegionDesc::describe(const std::string& name, DType dtype, const Shape& shape,
                                const void* data, uint32_t struct_size) {
  if (shape.size() > TESSERA_MAX_RANK) {
    throw UnsupportedError("value '" + name + "' has rank " + std::to_string(shape.size()) +
                           "; plugins accept at most rank " + std::to_string(TESSERA_MAX_RANK));
  }
  tsr_tensor t{};
  t.struct_size = struct_size;
  t.name = keep(name);
  t.dtype = static_cast<int32_t>(dtype);
  t.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t.dims[i] = shape[i];
  t.data = data;
  return t;
}

void RegionDesc::convert_attributes(const Node& node, std::vector<tsr_attribute>& out) {
  for (const auto& attr : node.attrs.all()) {
    // Named copies, not a structured binding: C++17 lambdas (clang's fuzz build) cannot
    // capture binding names.
    const std::string& name = attr.first;
    const auto& value = attr.second;
    tsr_attribute a{};
    a.struct_size = std::min<uint32_t>(sizes_.attribute, sizeof(tsr_attribute));
    a.name = keep(name);
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, int64_t>) {
            a.kind = TSR_ATTR_INT;
            a.i = v;
          } else if constexpr (std::is_same_v<V, float>) {
            a.kind = TSR_ATTR_FLOAT;
            a.f = v;
          } else if constexpr (std::is_same_v<V, std::string>) {
            a.kind = TSR_ATTR_STRING;
            a.s = keep(v);
            a.count = static_cast<int64_t>(v.size());
          } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
            a.kind = TSR_ATTR_INTS;
            a.count = static_cast<int64_t>(v.size());
            int_arrays_.push_back(v);
            a.ints = int_arrays_.back().data();
          } else if constexpr (std::is_same_v<V, std::vector<float>>) {
            a.kind = TSR_ATTR_FLOATS;
            a.count = static_cast<int64_t>(v.size());
            float_arrays_.push_back(v);
            a.floats = float_arrays_.back().data();
          } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
            a.kind = TSR_ATTR_STRINGS;
            a.count = static_cast<int64_t>(v.size());
            std::vector<const char*> ptrs;
            for (const std::string& s : v) ptrs.push_back(keep(s));
            string_arrays_.push_back(std::move(ptrs));
            a.strings = string_arrays_.back().data();
          } else {
            a.kind = TSR_ATTR_TENSOR;
            tensor_attrs_.push_back(v);  // shares storage: keeps the data alive
            // A single struct, not an array element: core's whole struct.
            attribute_tensors_.push_back(
                describe(name, v.dtype(), v.shape(), v.raw(), sizeof(tsr_tensor)));
            a.tensor = &attribute_tensors_.back();
          }
        },
        value);
    out.push_back(a);
  }
}

RegionDesc::RegionDesc(const Graph& graph, const std::vector<int>& nodes,
                       const std::vector<std::vector<int>>& consumers, const ElementSizes& sizes)
    : sizes_(sizes) {
  const std::set<int> members(nodes.begin(), nodes.end());
  std::map<ValueId, int32_t> local;  // graph value -> index in values_
  std::set<ValueId> produced;
  for (int n : nodes) {
    for (ValueId out : graph.nodes[static_cast<size_t>(n)].outputs) {
      if (out != kNoValue) produced.insert(out);
    }
  }
  auto local_index = [&](ValueId id) -> int32_t {
    if (id == kNoValue) return -1;
    auto it = local.find(id);
    if (it != local.end()) return it->second;
    const Value& v = graph.value(id);
    const void* data = nullptr;
    if (v.constant) {
      constants_.push_back(v.constant);
      data = v.constant->raw();
    }
    const int32_t index = static_cast<int32_t>(values_.size());
    values_.push_back(describe(v.name, v.dtype, v.shape, data,
                               std::min<uint32_t>(sizes_.tensor, sizeof(tsr_tensor))));
    local[id] = index;
    if (!v.constant && produced.count(id) == 0) input_values_.push_back(id);
    return index;
  };
  // Attribute arrays must be complete before taking their data() pointers, so build them first.
  for (int n : nodes) {
    const Node& node = graph.nodes[static_cast<size_t>(n)];
    std::vector<int32_t> ins, outs;
    for (ValueId in : node.inputs) ins.push_back(local_index(in));
    for (ValueId out : node.outputs) outs.push_back(local_index(out));
    index_arrays_.push_back(std::move(ins));
    const std::vector<int32_t>& in_ref = index_arrays_.back();
    index_arrays_.push_back(std::move(outs));
    const std::vector<int32_t>& out_ref = index_arrays_.back();
    attribute_arrays_.emplace_back();
    convert_attributes(node, attribute_arrays_.back());
    const std::vector<tsr_attribute>& attrs = attribute_arrays_.back();
    tsr_node tn{};
    tn.struct_size = std::min<uint32_t>(sizes_.node, sizeof(tsr_node));
    tn.name = keep(node.name);
    tn.op_type = keep(node.op_type);
    tn.num_inputs = static_cast<int32_t>(in_ref.size());
    tn.inputs = in_ref.data();
    tn.num_outputs = static_cast<int32_t>(out_ref.size());
    tn.outputs = out_ref.data();
    tn.num_attributes = static_cast<int32_t>(attrs.size());
    tn.attributes = attrs.data();
    nodes_.push_back(tn);
  }
  for (int n : nodes) {
    for (ValueId out : graph.nodes[static_cast<size_t>(n)].outputs) {
      if (out == kNoValue) continue;
      bool needed =
          std::find(graph.outputs.begin(), graph.outputs.end(), out) != graph.outputs.end();
      for (int c : consumers[static_cast<size_t>(out)]) needed = needed || members.count(c) == 0;
      if (needed) output_values_.push_back(out);
    }
  }
  std::vector<int32_t> in_idx, out_idx;
  for (ValueId id : input_values_) in_idx.push_back(local.at(id));
  for (ValueId id : output_values_) out_idx.push_back(local.at(id));
  index_arrays_.push_back(std::move(in_idx));
  const std::vector<int32_t>& region_inputs = index_arrays_.back();
  index_arrays_.push_back(std::move(out_idx));
  const std::vector<int32_t>& region_outputs = index_arrays_.back();

  region_.struct_size = sizeof(tsr_region);
  region_.opset = graph.opset;
  region_.num_values = static_cast<int32_t>(values_.size());
  region_.values = values_.data();
  region_.num_nodes = static_cast<int32_t>(nodes_.size());
  region_.nodes = nodes_.data();
  region_.num_inputs = static_cast<int32_t>(region_inputs.size());
  region_.inputs = region_inputs.data();
  region_.num_outputs = static_cast<int32_t>(region_outputs.size());
  region_.outputs = region_outputs.data();
  lay_out();
}

void RegionDesc::lay_out() {
  region_.value_size = sizes_.tensor;
  region_.node_size = sizes_.node;
  region_.attribute_size = sizes_.attribute;
  region_.io_size = sizes_.io;
  if (sizes_.attribute != sizeof(tsr_attribute)) {
    // attribute_arrays_ holds one array per node, in node order.
    for (size_t n = 0; n < nodes_.size(); ++n) {
      packed_attributes_.push_back(StridedArray::of(attribute_arrays_[n], sizes_.attribute));
      nodes_[n].attributes = packed_attributes_.back().data<tsr_attribute>();
    }
  }
  if (sizes_.node != sizeof(tsr_node)) {
    packed_nodes_ = StridedArray::of(nodes_, sizes_.node);
    region_.nodes = packed_nodes_.data<tsr_node>();
  }
  if (sizes_.tensor != sizeof(tsr_tensor)) {
    packed_values_ = StridedArray::of(values_, sizes_.tensor);
    region_.values = packed_values_.data<tsr_tensor>();
  }
}

}  // namespace tessera::detail
