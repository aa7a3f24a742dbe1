// Lowering (buffers, programs, steps); CompiledRegion::execute is the shared CompiledSteps one.
#include "region.hpp"

#include <cstring>

#include "tessera/error.hpp"

namespace tessera::mali {

// ---- Lowering ----

Lowering::Lowering(const tsr_region& region, std::shared_ptr<opencl::Context> context,
                   ProgramPool& pool, std::string extra_build_options)
    : region_(region),
      context_(std::move(context)),
      pool_(pool),
      extra_build_options_(std::move(extra_build_options)),
      compiled_(std::make_unique<CompiledRegion>()) {
  compiled_->context = context_;
  compiled_->num_nodes = region.num_nodes;
}

std::shared_ptr<opencl::Buffer> Lowering::buffer_ptr(int32_t id) {
  for (auto it = aliases_.find(id); it != aliases_.end(); it = aliases_.find(id)) id = it->second;
  auto found = buffers_.find(id);
  if (found != buffers_.end()) return found->second;
  const tsr_tensor& t = region_.values[id];
  if (t.dtype != TSR_DTYPE_FLOAT32) {
    throw Error(std::string("mali: value '") + (t.name ? t.name : "?") +
                "' is not float32; only float32 values live in device buffers");
  }
  const size_t bytes = static_cast<size_t>(numel_of(t)) * sizeof(float);
  auto buf = std::make_shared<opencl::Buffer>(*context_, bytes);
  if (t.data) context_->write(*buf, t.data, bytes);
  buffers_[id] = buf;
  return buf;
}

const opencl::Buffer& Lowering::buffer(int32_t id) {
  return *buffer_ptr(id);
}

const opencl::Buffer& Lowering::upload(const std::vector<float>& values) {
  auto buf = std::make_shared<opencl::Buffer>(*context_, values.size() * sizeof(float));
  context_->write(*buf, values.data(), values.size() * sizeof(float));
  context_->finish();  // `values` is temporary: the write must complete before it goes
  compiled_->keep_alive.push_back(buf);
  return *buf;
}

void Lowering::alias(int32_t out, int32_t in) {
  aliases_[out] = in;
}

opencl::Kernel Lowering::kernel(const Config& config, const std::string& extra_defines) {
  std::string options = "-cl-mad-enable";
  for (size_t i = 0; i < config.schedule->knobs.size(); ++i) {
    const Knob& k = config.schedule->knobs[i];
    if (!k.build_time) continue;
    std::string macro;
    for (const char* p = k.name; *p; ++p) macro += static_cast<char>(std::toupper(*p));
    // outputs_per_item is spelled OPW in the kernels.
    if (macro == "OUTPUTS_PER_ITEM") macro = "OPW";
    options += " -D" + macro + "=" + std::to_string(config.values[i]);
  }
  if (!extra_defines.empty()) options += " " + extra_defines;
  if (!extra_build_options_.empty()) options += " " + extra_build_options_;
  opencl::Kernel k = pool_.get(*context_, config.schedule->kernel_file, options)
                         .kernel(config.schedule->kernel_name);
  if (record_sources) {
    // The pool built (or already held) exactly common.cl + the schedule's file.
    sources.add(config.schedule->kernel_name, config.schedule->kernel_file,
                std::string(kernel_source("common.cl")) +
                    kernel_source(config.schedule->kernel_file),
                options, current_node);
  }
  return k;
}

void Lowering::add_step(int32_t node, opencl::Kernel kernel, std::vector<size_t> global,
                        std::vector<size_t> local, const Config& config) {
  bool any_local = false;
  for (size_t l : local) any_local |= l > 0;
  if (!any_local) {
    local.clear();
  } else {
    size_t product = 1;
    for (size_t& l : local) {
      if (l == 0) l = 1;
      product *= l;
    }
    const size_t limit = kernel.max_work_group_size();
    // Shrink dim 0 until the group fits the kernel's own limit (registers, private arrays).
    while (product > limit && local[0] > 1) {
      product /= local[0];
      local[0] /= 2;
      product *= local[0];
    }
    for (size_t i = 0; i < global.size(); ++i) global[i] = round_up(global[i], local[i]);
  }
  for (size_t& g : global) {
    if (g == 0) g = 1;  // empty tensors: one idle work-item instead of an invalid range
  }
  compiled_->steps.push_back(
      Step{node, std::move(kernel), std::move(global), std::move(local), config.str()});
}

std::unique_ptr<CompiledRegion> Lowering::finish() {
  for (int32_t i = 0; i < region_.num_inputs; ++i) {
    const int32_t id = region_.inputs[i];
    compiled_->inputs.push_back(buffer_ptr(id));
    compiled_->input_bytes.push_back(static_cast<size_t>(numel_of(region_.values[id])) * 4);
  }
  for (int32_t i = 0; i < region_.num_outputs; ++i) {
    const int32_t id = region_.outputs[i];
    compiled_->outputs.push_back(buffer_ptr(id));
    compiled_->output_bytes.push_back(static_cast<size_t>(numel_of(region_.values[id])) * 4);
  }
  for (auto& [id, buf] : buffers_) compiled_->keep_alive.push_back(buf);
  context_->finish();  // constant uploads done before the host data may go away
  return std::move(compiled_);
}

}  // namespace tessera::mali
