// Lowering (buffers, pipelines, dispatches, the recorded command buffer) and execution.
#include "region.hpp"

#include <cstdint>
#include <cstring>

#include "ops/op.hpp"

namespace tessera::vulkan {

using plugin::Failure;

namespace {
std::string value_name(const tsr_tensor& t) {
  return t.name ? t.name : "?";
}

void global_barrier(const DeviceFunctions& vk, VkCommandBuffer cb, VkAccessFlags src_access,
                    VkPipelineStageFlags src_stage, VkAccessFlags dst_access,
                    VkPipelineStageFlags dst_stage) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}
}  // namespace

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "fp16-acc32") return Precision::kHalfStore;
  if (name == "fp16") return Precision::kHalf;
  throw Failure(TSR_UNSUPPORTED,
                "precision '" + name + "' is not implemented (fp32, fp16-acc32, fp16)");
}

std::string precision_problem(const PhysicalDevice& device, Precision precision) {
  if (precision == Precision::kFp32) return "";
  // The half variants load, store and convert float16_t (and compute with it in fp16).
  if (!device.storage_16bit || !device.shader_float16) {
    return "fp16 needs storageBuffer16BitAccess and shaderFloat16, which " + device.name + " lacks";
  }
  return "";
}

uint16_t to_half(float value) {
  uint32_t x = 0;
  std::memcpy(&x, &value, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mantissa = x & 0x7fffffu;
  const int32_t exponent = static_cast<int32_t>((x >> 23) & 0xffu);
  if (exponent == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  const int32_t e = exponent - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // a half subnormal, or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t middle = 1u << (shift - 1);
    if (rest > middle || (rest == middle && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry rounds up to inf
  return static_cast<uint16_t>(sign | half);
}

namespace {
// `bytes` of float32 values in the region's storage type.
std::vector<unsigned char> stored(const void* data, size_t bytes, Precision precision) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (precision == Precision::kFp32) return std::vector<unsigned char>(p, p + bytes);
  std::vector<unsigned char> out(bytes / 2);
  for (size_t i = 0; i < bytes / 4; ++i) {
    float f = 0.0f;
    std::memcpy(&f, p + i * 4, 4);
    const uint16_t h = to_half(f);
    std::memcpy(out.data() + i * 2, &h, 2);
  }
  return out;
}
}  // namespace

// ---- PipelineSet ----

PipelineSet::~PipelineSet() {
  const DeviceFunctions& vk = device_.vk();
  for (auto& [key, p] : pipelines_) vk.vkDestroyPipeline(device_.handle(), p.pipeline, nullptr);
  for (auto& [n, l] : layouts_) {
    vk.vkDestroyPipelineLayout(device_.handle(), l.second, nullptr);
    vk.vkDestroyDescriptorSetLayout(device_.handle(), l.first, nullptr);
  }
}

Pipeline PipelineSet::get(const Kernel& kernel, uint32_t bindings, const std::string& what) {
  std::string key = kernel.shader + ":" + std::to_string(bindings);
  for (int32_t c : kernel.constants) key += "," + std::to_string(c);
  auto found = pipelines_.find(key);
  if (found != pipelines_.end()) return found->second;
  const DeviceFunctions& vk = device_.vk();
  auto layout = layouts_.find(bindings);
  if (layout == layouts_.end()) {
    std::vector<VkDescriptorSetLayoutBinding> b(bindings);
    for (uint32_t i = 0; i < bindings; ++i) {
      b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    }
    VkDescriptorSetLayoutCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    info.bindingCount = bindings;
    info.pBindings = b.data();
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    check(vk.vkCreateDescriptorSetLayout(device_.handle(), &info, nullptr, &set_layout),
          what + ": vkCreateDescriptorSetLayout");
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &set_layout;
    VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
    const VkResult r = vk.vkCreatePipelineLayout(device_.handle(), &pl, nullptr, &pipeline_layout);
    if (r != VK_SUCCESS) vk.vkDestroyDescriptorSetLayout(device_.handle(), set_layout, nullptr);
    check(r, what + ": vkCreatePipelineLayout");
    layout = layouts_.emplace(bindings, std::make_pair(set_layout, pipeline_layout)).first;
  }
  std::vector<VkSpecializationMapEntry> entries(kernel.constants.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i] = {static_cast<uint32_t>(i), static_cast<uint32_t>(i * 4), 4};
  }
  VkSpecializationInfo spec{};
  spec.mapEntryCount = static_cast<uint32_t>(entries.size());
  spec.pMapEntries = entries.data();
  spec.dataSize = kernel.constants.size() * 4;
  spec.pData = kernel.constants.data();
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = device_.shader(kernel.shader);
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = &spec;
  info.layout = layout->second.second;
  Pipeline p;
  p.layout = layout->second.second;
  p.set_layout = layout->second.first;
  const std::string context = what + ": vkCreateComputePipelines (shaders/" + kernel.shader + ")";
  if (device_.instance().options().fault == Fault::kPipeline) {
    check(VK_ERROR_OUT_OF_DEVICE_MEMORY, context + " (injected fault)");
  }
  check(vk.vkCreateComputePipelines(device_.handle(), device_.pipeline_cache(), 1, &info, nullptr,
                                    &p.pipeline),
        context);
  pipelines_[key] = p;
  return p;
}

// ---- Lowering ----

Lowering::Lowering(std::shared_ptr<Device> device, PipelineSet& pipelines, const RegionView& region,
                   const plugin::CompileOptions& options)
    : device_(std::move(device)),
      pipelines_(pipelines),
      region_(region),
      options_(options),
      readers_(region),
      compiled_(std::make_unique<CompiledRegion>(device_)) {
  precision_ = parse_precision(options.precision);
  const std::string problem = precision_problem(device_->physical(), precision_);
  if (!problem.empty()) throw Failure(TSR_UNSUPPORTED, problem);
}

size_t element_bytes(int32_t dtype) {
  switch (dtype) {
    case TSR_DTYPE_FLOAT32:
    case TSR_DTYPE_INT32:
      return 4;
    case TSR_DTYPE_INT64:
      return 8;
    case TSR_DTYPE_INT8:
    case TSR_DTYPE_UINT8:
    case TSR_DTYPE_BOOL:
      return 1;
    default:
      return 0;
  }
}

int32_t Lowering::type_code(const tsr_tensor& t) const {
  switch (t.dtype) {
    case TSR_DTYPE_FLOAT32:
      return static_cast<int32_t>(precision_ == Precision::kFp32 ? TypeCode::kF32 : TypeCode::kF16);
    case TSR_DTYPE_INT64:
      return static_cast<int32_t>(TypeCode::kI64);
    case TSR_DTYPE_INT32:
      return static_cast<int32_t>(TypeCode::kI32);
    case TSR_DTYPE_INT8:
      return static_cast<int32_t>(TypeCode::kI8);
    case TSR_DTYPE_UINT8:
      return static_cast<int32_t>(TypeCode::kU8);
    case TSR_DTYPE_BOOL:
      return static_cast<int32_t>(TypeCode::kBool);
    default:
      throw Failure(TSR_UNSUPPORTED, current_ + ": value '" + value_name(t) +
                                         "' has a dtype the vulkan plugin does not keep");
  }
}

size_t Lowering::stored_bytes(const tsr_tensor& t) const {
  if (t.dtype == TSR_DTYPE_FLOAT32) {
    const size_t bytes = plugin::tensor_nbytes(t);
    return precision_ == Precision::kFp32 ? bytes : bytes / 2;
  }
  // Elements packed, rounded up to whole words (typed.glsl's uint view). numel * 8 + 3 must
  // not wrap: a wrapped size would make a small buffer that shaders index past.
  const size_t per = element_bytes(t.dtype);
  const int64_t numel = plugin::tensor_numel(t);
  if (numel < 0 || static_cast<uint64_t>(numel) > (SIZE_MAX - 3) / per) {
    throw Failure(TSR_UNSUPPORTED, current_ + ": value '" + value_name(t) +
                                       "' is too large for a device buffer");
  }
  return (static_cast<size_t>(numel) * per + 3) / 4 * 4;
}

const Buffer& Lowering::buffer(int32_t id) {
  auto found = values_.find(id);
  if (found != values_.end()) return *found->second;
  const tsr_tensor& t = region_.value(id);
  if (element_bytes(t.dtype) == 0) {
    throw Failure(TSR_UNSUPPORTED,
                  current_ + ": value '" + value_name(t) +
                      "' is not float32, int64, int32, int8, uint8 or bool (kept on the device)");
  }
  const size_t bytes = stored_bytes(t);
  if (bytes > device_->physical().max_storage_buffer_range) {
    throw Failure(TSR_UNSUPPORTED, current_ + ": value '" + value_name(t) + "' (" +
                                       std::to_string(bytes) +
                                       " bytes) exceeds maxStorageBufferRange");
  }
  compiled_->buffers_.push_back(std::make_unique<Buffer>(
      *device_, bytes, false, current_ + " value '" + value_name(t) + "'"));
  Buffer* b = compiled_->buffers_.back().get();
  values_[id] = b;
  if (t.data != nullptr) {
    // Only float values change representation (half regions); the rest upload as they are.
    const Precision as = t.dtype == TSR_DTYPE_FLOAT32 ? precision_ : Precision::kFp32;
    uploads_.emplace_back(b, stored(t.data, plugin::tensor_nbytes(t), as));
  }
  return *b;
}

const Buffer& Lowering::constant(const void* data, size_t bytes) {
  compiled_->buffers_.push_back(
      std::make_unique<Buffer>(*device_, bytes, false, current_ + " constant"));
  Buffer* b = compiled_->buffers_.back().get();
  const auto* p = static_cast<const unsigned char*>(data);
  uploads_.emplace_back(b, std::vector<unsigned char>(p, p + bytes));
  return *b;
}

const Buffer& Lowering::check_flag(const NodeView& node, const std::string& what) {
  compiled_->buffers_.push_back(
      std::make_unique<Buffer>(*device_, 4, true, node.describe() + " check flag"));
  Buffer* b = compiled_->buffers_.back().get();
  compiled_->checks_.push_back({b, node.describe() + ": " + what});
  return *b;
}

const Buffer& Lowering::dummy() {
  if (dummy_ == nullptr) {
    compiled_->buffers_.push_back(std::make_unique<Buffer>(*device_, 4, false, "unused operand"));
    dummy_ = compiled_->buffers_.back().get();
  }
  return *dummy_;
}

int32_t Lowering::producer(int32_t id) const {
  for (int32_t n = 0; n < region_.num_nodes(); ++n) {
    const NodeView node = region_.node(n);
    for (int32_t i = 0; i < node.num_outputs(); ++i) {
      if (node.output_index(i) == id) return n;
    }
  }
  return -1;
}

const Buffer& Lowering::constant_floats(const std::vector<float>& values) {
  const std::vector<unsigned char> data =
      stored(values.data(), values.size() * sizeof(float), precision_);
  return constant(data.data(), data.size());
}

void Lowering::alias(int32_t out, int32_t in) {
  values_[out] = const_cast<Buffer*>(&buffer(in));
}

void Lowering::dispatch(const NodeView& node, const Kernel& kernel,
                        std::vector<const Buffer*> reads, std::vector<const Buffer*> writes) {
  current_ = node.describe();
  const PhysicalDevice& phys = device_->physical();
  for (int i = 0; i < 3; ++i) {
    if (kernel.groups[i] == 0) return;  // an empty tensor: nothing to compute
    if (kernel.groups[i] > phys.max_workgroup_count[i]) {
      throw Failure(TSR_UNSUPPORTED, current_ + ": " + std::to_string(kernel.groups[i]) +
                                         " work-groups along " + std::to_string(i) +
                                         " exceed the device's maxComputeWorkGroupCount");
    }
  }
  dispatches_.push_back(make_dispatch(node.index(), kernel, std::move(reads), std::move(writes)));
}

Dispatch Lowering::make_dispatch(int32_t node, const Kernel& kernel,
                                 std::vector<const Buffer*> reads,
                                 std::vector<const Buffer*> writes) {
  Kernel variant = kernel;
  if (precision_ == Precision::kHalfStore) variant.shader += "_f16";
  if (precision_ == Precision::kHalf) variant.shader += "_f16m";
  Dispatch d;
  d.node = node;
  const uint32_t bindings = static_cast<uint32_t>(reads.size() + writes.size());
  d.pipeline = pipelines_.get(variant, bindings, current_);
  for (int i = 0; i < 3; ++i) d.groups[i] = kernel.groups[i];
  d.reads = std::move(reads);
  d.writes = std::move(writes);
  bindings_needed_ += static_cast<int32_t>(bindings);
  ++sets_needed_;
  return d;
}

void Lowering::add_conversions() {
  if (precision_ == Precision::kFp32) return;
  auto convert = [&](const tsr_tensor& t, const Buffer& source32, const Buffer& source,
                     const Buffer& target32, const Buffer& target, bool to_store) {
    const int64_t count = plugin::tensor_numel(t);
    const Kernel k =
        linear_kernel("convert", count, 64, {static_cast<int32_t>(count), to_store ? 1 : 0});
    return make_dispatch(-1, k, {&source32, &source}, {&target32, &target});
  };
  // Non-float values have the same bytes in every precision: record() copies them.
  for (int32_t i = 0; i < region_.num_inputs(); ++i) {
    const int32_t id = region_.input_index(i);
    if (region_.value(id).dtype != TSR_DTYPE_FLOAT32) continue;
    input_conversions_.push_back(convert(region_.value(id),
                                         *compiled_->input_staging_[static_cast<size_t>(i)],
                                         dummy(), dummy(), *values_.at(id), true));
  }
  for (int32_t i = 0; i < region_.num_outputs(); ++i) {
    const int32_t id = region_.output_index(i);
    if (region_.value(id).dtype != TSR_DTYPE_FLOAT32) continue;
    output_conversions_.push_back(convert(region_.value(id), dummy(), *values_.at(id),
                                          *compiled_->output_staging_[static_cast<size_t>(i)],
                                          dummy(), false));
  }
}

void Lowering::upload_constants() {
  if (uploads_.empty()) return;
  uint64_t total = 0;
  for (auto& [b, data] : uploads_) total += data.size();
  Buffer staging(*device_, total, true, "constant staging");
  const DeviceFunctions& vk = device_->vk();
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = device_->command_pool();
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  {
    std::lock_guard<std::mutex> lock(device_->pool_mutex());
    check(vk.vkAllocateCommandBuffers(device_->handle(), &alloc, &cb), "vkAllocateCommandBuffers");
  }
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk.vkBeginCommandBuffer(cb, &begin);
  uint64_t offset = 0;
  for (auto& [b, data] : uploads_) {
    std::memcpy(static_cast<unsigned char*>(staging.mapped) + offset, data.data(), data.size());
    VkBufferCopy region{offset, 0, data.size()};
    if (!data.empty()) vk.vkCmdCopyBuffer(cb, staging.handle, b->handle, 1, &region);
    offset += data.size();
  }
  vk.vkEndCommandBuffer(cb);
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  check(vk.vkCreateFence(device_->handle(), &fence_info, nullptr, &fence), "vkCreateFence");
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cb;
  VkResult r;
  {
    std::lock_guard<std::mutex> lock(device_->queue_mutex());
    r = vk.vkQueueSubmit(device_->queue(), 1, &submit, fence);
  }
  if (r == VK_SUCCESS) r = vk.vkWaitForFences(device_->handle(), 1, &fence, VK_TRUE, UINT64_MAX);
  vk.vkDestroyFence(device_->handle(), fence, nullptr);
  {
    std::lock_guard<std::mutex> lock(device_->pool_mutex());
    vk.vkFreeCommandBuffers(device_->handle(), device_->command_pool(), 1, &cb);
  }
  check(r, "uploading the constants of the region of " + current_);
  uploads_.clear();
}

std::unique_ptr<CompiledRegion> Lowering::finish() {
  for (int32_t i = 0; i < region_.num_inputs(); ++i) {
    const int32_t id = region_.input_index(i);
    const size_t bytes = plugin::tensor_nbytes(region_.value(id));
    buffer(id);
    compiled_->buffers_.push_back(std::make_unique<Buffer>(*device_, bytes, true, "input staging"));
    compiled_->input_staging_.push_back(compiled_->buffers_.back().get());
    compiled_->input_bytes_.push_back(bytes);
  }
  for (int32_t i = 0; i < region_.num_outputs(); ++i) {
    const int32_t id = region_.output_index(i);
    const size_t bytes = plugin::tensor_nbytes(region_.value(id));
    buffer(id);
    compiled_->buffers_.push_back(
        std::make_unique<Buffer>(*device_, bytes, true, "output staging"));
    compiled_->output_staging_.push_back(compiled_->buffers_.back().get());
    compiled_->output_bytes_.push_back(bytes);
  }
  compiled_->first_node_ = region_.num_nodes() > 0 ? region_.node(0).describe() : "empty region";
  add_conversions();
  upload_constants();
  record();
  device_->save_pipeline_cache();
  device_->instance().check_validation("compiling the region of " + compiled_->first_node_);
  return std::move(compiled_);
}

void Lowering::record_dispatch(VkCommandBuffer cb, Dispatch& d) {
  const DeviceFunctions& vk = device_->vk();
  const VkDevice dev = device_->handle();
  VkDescriptorSetAllocateInfo set_alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  set_alloc.descriptorPool = compiled_->descriptor_pool_;
  set_alloc.descriptorSetCount = 1;
  set_alloc.pSetLayouts = &d.pipeline.set_layout;
  check(vk.vkAllocateDescriptorSets(dev, &set_alloc, &d.set), "vkAllocateDescriptorSets");
  std::vector<const Buffer*> all = d.reads;
  all.insert(all.end(), d.writes.begin(), d.writes.end());
  std::vector<VkDescriptorBufferInfo> infos(all.size());
  std::vector<VkWriteDescriptorSet> writes(all.size());
  for (size_t k = 0; k < all.size(); ++k) {
    infos[k] = {all[k]->handle, 0, VK_WHOLE_SIZE};
    writes[k] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[k].dstSet = d.set;
    writes[k].dstBinding = static_cast<uint32_t>(k);
    writes[k].descriptorCount = 1;
    writes[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[k].pBufferInfo = &infos[k];
  }
  vk.vkUpdateDescriptorSets(dev, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline.pipeline);
  vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline.layout, 0, 1, &d.set, 0,
                             nullptr);
  vk.vkCmdDispatch(cb, d.groups[0], d.groups[1], d.groups[2]);
}

void Lowering::record() {
  const DeviceFunctions& vk = device_->vk();
  const VkDevice dev = device_->handle();
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            static_cast<uint32_t>(std::max(bindings_needed_, 1))};
  VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool.maxSets = static_cast<uint32_t>(std::max(sets_needed_, 1));
  pool.poolSizeCount = 1;
  pool.pPoolSizes = &size;
  check(vk.vkCreateDescriptorPool(dev, &pool, nullptr, &compiled_->descriptor_pool_),
        "vkCreateDescriptorPool");
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = device_->command_pool();
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  {
    std::lock_guard<std::mutex> lock(device_->pool_mutex());
    check(vk.vkAllocateCommandBuffers(dev, &alloc, &compiled_->commands_),
          "vkAllocateCommandBuffers");
  }
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vk.vkCreateFence(dev, &fence_info, nullptr, &compiled_->fence_), "vkCreateFence");
  VkCommandBuffer cb = compiled_->commands_;
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(vk.vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
  const uint32_t num_queries = static_cast<uint32_t>(dispatches_.size() + 1);
  const bool timed = options_.profile && device_->physical().timestamp_bits > 0 &&
                     device_->physical().timestamp_period_ns > 0 && !dispatches_.empty();
  if (timed) {
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = num_queries;
    check(vk.vkCreateQueryPool(dev, &info, nullptr, &compiled_->queries_), "vkCreateQueryPool");
    vk.vkCmdResetQueryPool(cb, compiled_->queries_, 0, num_queries);
  }
  compiled_->num_nodes_ = region_.num_nodes();
  const bool half = precision_ != Precision::kFp32;
  constexpr VkAccessFlags kShaderRw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  constexpr VkPipelineStageFlags kTransfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
  // Inputs in: copied (fp32, and non-float values in every precision) or converted to half.
  auto converted = [&](int32_t id) {
    return half && region_.value(id).dtype == TSR_DTYPE_FLOAT32;
  };
  for (int32_t i = 0; i < region_.num_inputs(); ++i) {
    if (converted(region_.input_index(i))) continue;
    const VkBufferCopy copy{0, 0, compiled_->input_bytes_[static_cast<size_t>(i)]};
    if (copy.size == 0) continue;
    vk.vkCmdCopyBuffer(cb, compiled_->input_staging_[static_cast<size_t>(i)]->handle,
                       values_.at(region_.input_index(i))->handle, 1, &copy);
  }
  for (Dispatch& d : input_conversions_) record_dispatch(cb, d);
  // (Half regions may have both copies and conversions: the barriers name both.)
  global_barrier(vk, cb,
                 half ? VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT
                      : VK_ACCESS_TRANSFER_WRITE_BIT,
                 half ? kCompute | kTransfer : kTransfer, kShaderRw, kCompute);
  if (timed) vk.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, compiled_->queries_, 0);
  // A barrier only where a dispatch reads or writes what a dispatch since the last barrier wrote,
  // or writes what one since then read.
  std::set<const Buffer*> written;
  std::set<const Buffer*> read;
  uint32_t query = 1;
  for (Dispatch& d : dispatches_) {
    bool hazard = false;
    for (const Buffer* b : d.reads) hazard |= written.count(b) != 0;
    for (const Buffer* b : d.writes) hazard |= written.count(b) != 0 || read.count(b) != 0;
    if (hazard) {
      global_barrier(vk, cb, kShaderRw, kCompute, kShaderRw, kCompute);
      written.clear();
      read.clear();
    }
    for (const Buffer* b : d.reads) read.insert(b);
    for (const Buffer* b : d.writes) written.insert(b);
    record_dispatch(cb, d);
    if (timed) {
      vk.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, compiled_->queries_,
                             query++);
      compiled_->dispatch_nodes_.push_back(d.node);
    }
  }
  // Outputs out: copied (fp32) or converted from half, then made visible to the host.
  global_barrier(vk, cb, kShaderRw, kCompute,
                 half ? VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT
                      : VK_ACCESS_TRANSFER_READ_BIT,
                 half ? kCompute | kTransfer : kTransfer);
  for (int32_t i = 0; i < region_.num_outputs(); ++i) {
    if (converted(region_.output_index(i))) continue;
    const VkBufferCopy copy{0, 0, compiled_->output_bytes_[static_cast<size_t>(i)]};
    if (copy.size == 0) continue;
    vk.vkCmdCopyBuffer(cb, values_.at(region_.output_index(i))->handle,
                       compiled_->output_staging_[static_cast<size_t>(i)]->handle, 1, &copy);
  }
  for (Dispatch& d : output_conversions_) record_dispatch(cb, d);
  // Shader writes too: the check flags (Lowering::check_flag) are read by the host.
  global_barrier(vk, cb, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                 kCompute | kTransfer, VK_ACCESS_HOST_READ_BIT, VK_PIPELINE_STAGE_HOST_BIT);
  check(vk.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

// ---- CompiledRegion ----

CompiledRegion::~CompiledRegion() {
  const DeviceFunctions& vk = device_->vk();
  const VkDevice dev = device_->handle();
  // execute() waits for every submission it makes, so nothing is in flight here.
  if (fence_ != VK_NULL_HANDLE) vk.vkDestroyFence(dev, fence_, nullptr);
  if (commands_ != VK_NULL_HANDLE) {
    std::lock_guard<std::mutex> lock(device_->pool_mutex());
    vk.vkFreeCommandBuffers(dev, device_->command_pool(), 1, &commands_);
  }
  if (descriptor_pool_ != VK_NULL_HANDLE)
    vk.vkDestroyDescriptorPool(dev, descriptor_pool_, nullptr);
  if (queries_ != VK_NULL_HANDLE) vk.vkDestroyQueryPool(dev, queries_, nullptr);
  buffers_.clear();
}

void CompiledRegion::submit_and_wait(const std::string& what) {
  const DeviceFunctions& vk = device_->vk();
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands_;
  if (device_->instance().options().fault == Fault::kSubmit) {
    check(VK_ERROR_DEVICE_LOST, what + ": vkQueueSubmit (injected fault)");
  }
  {
    std::lock_guard<std::mutex> lock(device_->queue_mutex());
    check(vk.vkQueueSubmit(device_->queue(), 1, &submit, fence_), what + ": vkQueueSubmit");
  }
  check(vk.vkWaitForFences(device_->handle(), 1, &fence_, VK_TRUE, UINT64_MAX),
        what + ": vkWaitForFences");
  check(vk.vkResetFences(device_->handle(), 1, &fence_), what + ": vkResetFences");
}

void CompiledRegion::execute(const void* const* inputs, void* const* outputs) {
  for (size_t i = 0; i < input_staging_.size(); ++i) {
    std::memcpy(input_staging_[i]->mapped, inputs[i], input_bytes_[i]);
  }
  // Host-coherent memory: the clear is visible to the submission that follows.
  for (const Check& c : checks_) std::memset(c.flag->mapped, 0, 4);
  const std::string what = "running the vulkan region of " + first_node_;
  submit_and_wait(what);
  for (const Check& c : checks_) {
    uint32_t set = 0;
    std::memcpy(&set, c.flag->mapped, 4);
    if (set != 0) throw Failure(TSR_INVALID_ARGUMENT, c.what);
  }
  for (size_t i = 0; i < output_staging_.size(); ++i) {
    std::memcpy(outputs[i], output_staging_[i]->mapped, output_bytes_[i]);
  }
  if (queries_ != VK_NULL_HANDLE) read_profile();
  device_->instance().check_validation(what);
}

void CompiledRegion::read_profile() {
  const PhysicalDevice& phys = device_->physical();
  std::vector<uint64_t> ticks(dispatch_nodes_.size() + 1);
  const VkResult r = device_->vk().vkGetQueryPoolResults(
      device_->handle(), queries_, 0, static_cast<uint32_t>(ticks.size()),
      ticks.size() * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  profile_us_.assign(static_cast<size_t>(num_nodes_), 0.0);
  if (r != VK_SUCCESS) return;
  const uint64_t mask = phys.timestamp_bits >= 64 ? ~0ull : (1ull << phys.timestamp_bits) - 1;
  for (size_t i = 0; i < dispatch_nodes_.size(); ++i) {
    if (dispatch_nodes_[i] < 0) continue;
    const uint64_t delta = (ticks[i + 1] - ticks[i]) & mask;
    profile_us_[static_cast<size_t>(dispatch_nodes_[i])] +=
        static_cast<double>(delta) * phys.timestamp_period_ns / 1000.0;
  }
}

}  // namespace tessera::vulkan
