// Images and the lazy image/buffer conversions of Lowering (CompiledRegion::execute is shared).
#include "region.hpp"

#include <climits>

#include "tessera/error.hpp"

namespace tessera::adreno {

namespace {
int32_t i32(int64_t v) {
  if (v < INT_MIN || v > INT_MAX) throw Error("adreno: size " + std::to_string(v) + " too large");
  return static_cast<int32_t>(v);
}
}  // namespace

ImageLimits image_limits(const opencl::DeviceInfo& device) {
  ImageLimits limits;
  if (!device.id || !device.image_support) return limits;
  size_t w = 0, h = 0;
  if (clGetDeviceInfo(device.id, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof(w), &w, nullptr) ==
          CL_SUCCESS &&
      clGetDeviceInfo(device.id, CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof(h), &h, nullptr) ==
          CL_SUCCESS) {
    limits.max_width = static_cast<int64_t>(w);
    limits.max_height = static_cast<int64_t>(h);
  }
  return limits;
}

std::array<int64_t, 4> view4(const tsr_tensor& t) {
  std::array<int64_t, 4> d = {1, 1, 1, 1};
  for (int32_t i = 0; i < t.rank && i < 4; ++i) d[4 - t.rank + i] = t.dims[i];
  return d;
}

std::array<int64_t, 2> texture_extent(const tsr_tensor& t) {
  const auto d = view4(t);
  return {d[3] * ((d[1] + 3) / 4), d[0] * d[2]};
}

std::string check_extent(const std::string& what, int64_t width, int64_t height,
                         const ImageLimits& limits) {
  if (width > limits.max_width) {
    return what + " needs a " + std::to_string(width) + "-wide image, device max " +
           std::to_string(limits.max_width);
  }
  if (height > limits.max_height) {
    return what + " needs a " + std::to_string(height) + "-high image, device max " +
           std::to_string(limits.max_height);
  }
  return "";
}

std::string check_fits_image(const tsr_tensor& t, const ImageLimits& limits, bool rank4_only) {
  if (t.rank > 4 || (rank4_only && t.rank != 4))
    return "tensor has rank " + std::to_string(t.rank) + ", the texture layout is 4-D";
  const auto e = texture_extent(t);
  return check_extent(std::string("tensor '") + (t.name ? t.name : "?") + "'", e[0], e[1], limits);
}

// ---- Image ----

Image::Image(const opencl::Context& context, int64_t width, int64_t height, bool half,
             const float* rgba) {
  cl_image_format format{CL_RGBA, static_cast<cl_channel_type>(half ? CL_HALF_FLOAT : CL_FLOAT)};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = static_cast<size_t>(std::max<int64_t>(1, width));
  desc.image_height = static_cast<size_t>(std::max<int64_t>(1, height));
  cl_int err = CL_SUCCESS;
  const bool copy = rgba && width > 0 && height > 0;
  mem_ = clCreateImage(context.get(), CL_MEM_READ_WRITE | (copy ? CL_MEM_COPY_HOST_PTR : 0),
                       &format, &desc, copy ? const_cast<float*>(rgba) : nullptr, &err);
  opencl::check(err,
                "clCreateImage " + std::to_string(width) + "x" + std::to_string(height) +
                    (half ? " CL_HALF_FLOAT" : " CL_FLOAT"),
                context.device().describe());
}

Image::~Image() {
  if (mem_) clReleaseMemObject(mem_);
}

// ---- Lowering ----

Lowering::Lowering(const tsr_region& region, std::shared_ptr<opencl::Context> context,
                   ProgramPool& pool, bool half_images)
    : region_(region),
      context_(std::move(context)),
      pool_(pool),
      half_(half_images),
      compiled_(std::make_unique<CompiledRegion>()) {
  compiled_->context = context_;
  compiled_->num_nodes = region.num_nodes;
}

cl_mem Lowering::output_image(int32_t id, int32_t node) {
  producers_[id] = node;
  const tsr_tensor& t = region_.values[id];
  if (t.rank > 4) throw Error("adreno: value has rank > 4 and cannot live in an image");
  const auto e = texture_extent(t);
  auto img = std::make_shared<Image>(*context_, e[0], e[1], half_);
  images_[id] = img;
  return img->get();
}

Config Lowering::config_for(const std::string& schedule_id, int64_t work_dim0,
                            const std::vector<std::pair<const char*, int32_t>>& overrides) const {
  return apply_forced_knobs(default_config(schedule_id, device(), work_dim0, overrides),
                            forced_knobs);
}

std::vector<Config> Lowering::forced(std::vector<Config> configs) const {
  for (Config& c : configs) c = apply_forced_knobs(std::move(c), forced_knobs);
  return configs;
}

cl_mem Lowering::input_image(int32_t id, int32_t node) {
  auto found = images_.find(id);
  if (found != images_.end()) return found->second->get();
  const tsr_tensor& t = region_.values[id];
  cl_mem src = input_buffer(id, node);
  cl_mem dst = output_image(id, node);
  const Config config = config_for("layout.to_image", texture_extent(t)[0]);
  opencl::Kernel k = kernel(config);
  const auto d = view4(t);
  k.args().buffer(src).buffer(dst).i32x4(i32(d[0]), i32(d[1]), i32(d[2]), i32(d[3]));
  const auto e = texture_extent(t);
  add_step(node, std::move(k), {static_cast<size_t>(e[0]), static_cast<size_t>(e[1])}, config);
  return dst;
}

cl_mem Lowering::output_buffer(int32_t id, int32_t node) {
  producers_[id] = node;
  const tsr_tensor& t = region_.values[id];
  if (t.dtype != TSR_DTYPE_FLOAT32) {
    throw Error(std::string("adreno: value '") + (t.name ? t.name : "?") + "' is not float32");
  }
  const size_t bytes = static_cast<size_t>(plugin::tensor_numel(t)) * sizeof(float);
  auto buf = std::make_shared<opencl::Buffer>(*context_, std::max<size_t>(bytes, 4));
  if (t.data && bytes) context_->write(*buf, t.data, bytes);
  buffers_[id] = buf;
  return buf->get();
}

cl_mem Lowering::input_buffer(int32_t id, int32_t node) {
  auto found = buffers_.find(id);
  if (found != buffers_.end()) return found->second->get();
  auto img = images_.find(id);
  cl_mem dst = output_buffer(id, node);  // uploads constants; region inputs are written at run
  if (img == images_.end()) return dst;
  const tsr_tensor& t = region_.values[id];
  const Config config = config_for("layout.to_buffer", texture_extent(t)[0]);
  opencl::Kernel k = kernel(config);
  const auto d = view4(t);
  k.args().buffer(img->second->get()).buffer(dst).i32x4(i32(d[0]), i32(d[1]), i32(d[2]), i32(d[3]));
  const auto e = texture_extent(t);
  add_step(node, std::move(k), {static_cast<size_t>(e[0]), static_cast<size_t>(e[1])}, config);
  return dst;
}

void Lowering::alias_buffer(int32_t out, int32_t in, int32_t node) {
  input_buffer(in, node);
  buffers_[out] = buffers_.at(in);
}

cl_mem Lowering::constant_image(int64_t width, int64_t height, const std::vector<float>& rgba) {
  auto img = std::make_shared<Image>(*context_, width, height, /*half=*/false, rgba.data());
  compiled_->images.push_back(img);
  return img->get();
}

cl_mem Lowering::constant_buffer(const std::vector<float>& values) {
  auto buf = std::make_shared<opencl::Buffer>(*context_, std::max<size_t>(values.size() * 4, 4));
  // `values` is temporary: the write completes (or fails) before it goes.
  context_->write_and_wait(*buf, values.data(), values.size() * sizeof(float));
  compiled_->buffers.push_back(buf);
  return buf->get();
}

opencl::Kernel Lowering::kernel(const Config& config) {
  return opencl::support::pooled_kernel(pool_, *context_, config,
                                        "-cl-mad-enable" + config.defines(),
                                        record_sources ? &sources : nullptr, current_node);
}

void Lowering::add_step(int32_t node, opencl::Kernel kernel, std::vector<size_t> global,
                        const Config& config) {
  std::vector<size_t> local;
  const int32_t wg_x = config.get("wg_x");
  if (wg_x > 0) {
    local.assign(global.size(), 1);
    local[0] = static_cast<size_t>(wg_x);
    if (global.size() > 1) local[1] = static_cast<size_t>(config.get("wg_y"));
  }
  add_step(node, std::move(kernel), std::move(global), std::move(local), config);
}

void Lowering::add_step(int32_t node, opencl::Kernel kernel, std::vector<size_t> global,
                        std::vector<size_t> local, const Config& config) {
  compiled_->add_step(node, std::move(kernel), std::move(global), std::move(local), config.str());
}

std::unique_ptr<CompiledRegion> Lowering::finish() {
  for (int32_t i = 0; i < region_.num_inputs; ++i) {
    const int32_t id = region_.inputs[i];
    input_buffer(id, 0);
    compiled_->inputs.push_back(buffers_.at(id));
    compiled_->input_bytes.push_back(static_cast<size_t>(plugin::tensor_numel(region_.values[id])) *
                                     4);
  }
  for (int32_t i = 0; i < region_.num_outputs; ++i) {
    const int32_t id = region_.outputs[i];
    // The export conversion is charged to the node that produced the value.
    auto producer = producers_.find(id);
    input_buffer(id, producer != producers_.end() ? producer->second : 0);
    compiled_->outputs.push_back(buffers_.at(id));
    compiled_->output_bytes.push_back(
        static_cast<size_t>(plugin::tensor_numel(region_.values[id])) * 4);
  }
  for (auto& [id, buf] : buffers_) compiled_->buffers.push_back(buf);
  for (auto& [id, img] : images_) compiled_->images.push_back(img);
  context_->finish();
  return std::move(compiled_);
}

}  // namespace tessera::adreno
