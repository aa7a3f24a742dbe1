// Lowering (buffers, programs, steps); CompiledRegion::execute is the shared CompiledSteps one.
#include "region.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "tessera/error.hpp"

namespace tessera::mali {

std::optional<Layout> parse_layout(const std::string& value) {
  if (value == "nchw4c") return Layout::kNchw4c;
  if (value == "nchw") return Layout::kNchw;
  return std::nullopt;
}

std::string layout_choices(const std::string& value) {
  return "option 'layout' = '" + value + "' is not a layout; use 'nchw4c' (default) or 'nchw'";
}

bool same_bytes_in_nchw4c(const tsr_tensor& t) {
  return t.rank == 4 && t.dims[2] * t.dims[3] == 1 && t.dims[1] % 4 == 0;
}

int64_t stored_numel(const tsr_tensor& t, Layout layout) {
  if (layout == Layout::kNchw || t.rank != 4) return plugin::tensor_numel(t);
  return t.dims[0] * ((t.dims[1] + 3) / 4 * 4) * t.dims[2] * t.dims[3];
}

// ---- Lowering ----

Lowering::Lowering(const tsr_region& region, std::shared_ptr<opencl::Context> context,
                   ProgramPool& pool, std::string extra_build_options, Layout region_layout)
    : region_(region),
      context_(std::move(context)),
      pool_(pool),
      extra_build_options_(std::move(extra_build_options)),
      region_layout_(region_layout),
      compiled_(std::make_unique<CompiledRegion>()) {
  compiled_->context = context_;
  compiled_->num_nodes = region.num_nodes;
}

Layout Lowering::layout(int32_t id) const {
  auto it = layouts_.find(id);
  return it == layouts_.end() ? Layout::kNchw : it->second;
}

void Lowering::begin_node(const NodeView& node, int32_t index, const LayoutPlan& plan) {
  current_index_ = index;
  reads_.clear();
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    const int32_t id = node.input_index(i);
    const bool c4 = plan.output == Layout::kNchw4c &&
                    std::find(plan.nchw4c_inputs.begin(), plan.nchw4c_inputs.end(), i) !=
                        plan.nchw4c_inputs.end();
    const Layout want = c4 ? Layout::kNchw4c : Layout::kNchw;
    if (c4 && node.input(i).rank != 4) {
      throw Error(node.describe() + ": input " + std::to_string(i) +
                  " is not rank 4 and cannot be read as NCHW4c (a mali layout rule is wrong)");
    }
    reads_[id] = want;
    // Converted now so the conversion step runs before the node's own steps.
    if (want != layout(id)) buffer_in(id, want, index);
  }
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    const int32_t id = node.output_index(i);
    if (id < 0) continue;
    producer_[id] = index;
    if (plan.output == Layout::kNchw4c && node.output(i).rank == 4) {
      layouts_[id] = Layout::kNchw4c;
    }
  }
}

const std::vector<int32_t>& Lowering::consumers(int32_t id) {
  if (!consumers_built_) {
    for (int32_t n = 0; n < region_.num_nodes; ++n) {
      const tsr_node& node = region_.nodes[n];
      for (int32_t i = 0; i < node.num_inputs; ++i) {
        if (node.inputs[i] >= 0) consumers_[node.inputs[i]].push_back(n);
      }
    }
    consumers_built_ = true;
  }
  return consumers_[id];
}

bool Lowering::is_region_output(int32_t id) const {
  return std::find(region_.outputs, region_.outputs + region_.num_outputs, id) !=
         region_.outputs + region_.num_outputs;
}

void Lowering::fuse(int32_t index, Layout layout) {
  fused_.insert(index);
  const tsr_node& node = region_.nodes[index];
  for (int32_t i = 0; i < node.num_outputs; ++i) {
    const int32_t id = node.outputs[i];
    if (id < 0) continue;
    producer_[id] = index;
    if (layout == Layout::kNchw4c && region_.values[id].rank == 4) layouts_[id] = layout;
  }
}

std::shared_ptr<opencl::Buffer> Lowering::buffer_in(int32_t id, Layout want, int32_t node) {
  const tsr_tensor& t = region_.values[id];
  if (want == layout(id) || same_bytes_in_nchw4c(t)) return buffer_ptr(id);
  auto found = converted_.find(id);
  if (found != converted_.end()) return found->second;
  if (stored_numel(t, Layout::kNchw4c) > INT_MAX) {
    throw Error(std::string("mali: value '") + (t.name ? t.name : "?") +
                "' is too large for 32-bit kernel indexing");
  }
  const std::shared_ptr<opencl::Buffer> source = buffer_ptr(id);
  const int64_t out_numel = stored_numel(t, want);
  auto out = std::make_shared<opencl::Buffer>(*context_, static_cast<size_t>(out_numel) * 4);
  const int64_t hw = t.dims[2] * t.dims[3];
  Config config;
  config.schedule = &schedule(want == Layout::kNchw4c ? "layout.to_nchw4c" : "layout.to_nchw");
  config.values = {default_wg_x(*config.schedule, device(), out_numel)};
  opencl::Kernel k = kernel(config);
  k.args().buffer(*source).buffer(*out).i32x4(
      static_cast<int32_t>(t.dims[0]), static_cast<int32_t>(t.dims[1]), static_cast<int32_t>(hw),
      static_cast<int32_t>((t.dims[1] + 3) / 4));
  add_step(node, std::move(k), {static_cast<size_t>(out_numel)},
           {static_cast<size_t>(config.values[0])}, config);
  converted_[id] = out;
  return out;
}

std::shared_ptr<opencl::Buffer> Lowering::buffer_ptr(int32_t id) {
  auto found = buffers_.find(id);
  if (found != buffers_.end()) return found->second;
  const tsr_tensor& t = region_.values[id];
  if (t.dtype != TSR_DTYPE_FLOAT32) {
    throw Error(std::string("mali: value '") + (t.name ? t.name : "?") +
                "' is not float32; only float32 values live in device buffers");
  }
  const size_t bytes = static_cast<size_t>(stored_numel(t, layout(id))) * sizeof(float);
  auto buf = std::make_shared<opencl::Buffer>(*context_, bytes);
  // Only constants and region inputs (never NCHW4c) carry host data.
  if (t.data) context_->write(*buf, t.data, bytes);
  buffers_[id] = buf;
  return buf;
}

const opencl::Buffer& Lowering::buffer(int32_t id) {
  auto it = reads_.find(id);
  return it == reads_.end() ? *buffer_ptr(id) : *buffer_in(id, it->second, current_index_);
}

const opencl::Buffer& Lowering::upload(const std::vector<float>& values) {
  auto buf = std::make_shared<opencl::Buffer>(*context_, values.size() * sizeof(float));
  // `values` is temporary: the write completes (or fails) before it goes.
  context_->write_and_wait(*buf, values.data(), values.size() * sizeof(float));
  compiled_->keep_alive.push_back(buf);
  return *buf;
}

void Lowering::alias(int32_t out, int32_t in) {
  auto it = reads_.find(in);
  buffers_[out] = it == reads_.end() ? buffer_ptr(in) : buffer_in(in, it->second, current_index_);
}

opencl::Kernel Lowering::kernel(const Config& config, const std::string& extra_defines) {
  std::string options = "-cl-mad-enable" + config.defines();
  if (!extra_defines.empty()) options += " " + extra_defines;
  if (!extra_build_options_.empty()) options += " " + extra_build_options_;
  return opencl::support::pooled_kernel(pool_, *context_, config, options,
                                        record_sources ? &sources : nullptr, current_node);
}

void Lowering::add_step(int32_t node, opencl::Kernel kernel, std::vector<size_t> global,
                        std::vector<size_t> local, const Config& config) {
  compiled_->add_step(node, std::move(kernel), std::move(global), std::move(local), config.str());
}

std::unique_ptr<CompiledRegion> Lowering::finish() {
  for (int32_t i = 0; i < region_.num_inputs; ++i) {
    const int32_t id = region_.inputs[i];
    compiled_->inputs.push_back(buffer_ptr(id));
    compiled_->input_bytes.push_back(static_cast<size_t>(plugin::tensor_numel(region_.values[id])) *
                                     4);
  }
  reads_.clear();
  for (int32_t i = 0; i < region_.num_outputs; ++i) {
    const int32_t id = region_.outputs[i];
    // Core reads NCHW: NCHW4c outputs get a conversion after their producer's steps.
    const auto producer = producer_.find(id);
    compiled_->outputs.push_back(
        buffer_in(id, Layout::kNchw, producer == producer_.end() ? 0 : producer->second));
    compiled_->output_bytes.push_back(
        static_cast<size_t>(plugin::tensor_numel(region_.values[id])) * 4);
  }
  for (auto& [id, buf] : buffers_) compiled_->keep_alive.push_back(buf);
  for (auto& [id, buf] : converted_) compiled_->keep_alive.push_back(buf);
  context_->finish();  // constant uploads done before the host data may go away
  return std::move(compiled_);
}

}  // namespace tessera::mali
