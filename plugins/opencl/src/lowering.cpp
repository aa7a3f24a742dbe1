// The shared Lowering: memory per value and storage, the conversions between storages, programs
// and steps; the shared op table; forced knobs.
#include "tessera_opencl/lowering.hpp"

#include <algorithm>
#include <climits>

#include "tessera/checked_math.hpp"
#include "tessera/error.hpp"

namespace tessera::opencl {

namespace {

bool is_buffer(Storage s) {
  return s != Storage::kImage;
}

int32_t i32(int64_t v, const char* plugin) {
  if (v < INT_MIN || v > INT_MAX) {
    throw Error(std::string(plugin) + ": size " + std::to_string(v) + " too large");
  }
  return static_cast<int32_t>(v);
}

std::map<std::string, OpLowering>& shared_lowerings() {
  static std::map<std::string, OpLowering> table;
  return table;
}

std::map<std::string, TuningOptionsFn>& shared_tunings() {
  static std::map<std::string, TuningOptionsFn> table;
  return table;
}

}  // namespace

// ---- the shared op table ----

const OpLowering* SharedOps::find_lowering(const std::string& op_type) {
  const auto it = shared_lowerings().find(op_type);
  return it == shared_lowerings().end() ? nullptr : &it->second;
}

TuningOptionsFn SharedOps::find_tuning(const std::string& op_type) {
  const auto it = shared_tunings().find(op_type);
  return it == shared_tunings().end() ? nullptr : it->second;
}

std::vector<std::string> SharedOps::op_types() {
  std::vector<std::string> out;
  for (const auto& [name, op] : shared_lowerings()) out.push_back(name);
  return out;
}

SharedOps::LoweringRegistrar::LoweringRegistrar(const OpLowering& op) {
  shared_lowerings()[op.op_type] = op;
}

SharedOps::TuningRegistrar::TuningRegistrar(const char* op_type, TuningOptionsFn fn) {
  shared_tunings()[op_type] = fn;
}

std::map<std::string, const Schedule*>& shared_schedules() {
  static std::map<std::string, const Schedule*> table;
  return table;
}

const Schedule* SharedSchedules::find(const std::string& id) {
  const auto it = shared_schedules().find(id);
  return it == shared_schedules().end() ? nullptr : it->second;
}

std::vector<Schedule> SharedSchedules::all() {
  std::vector<Schedule> out;
  for (const auto& [id, schedule] : shared_schedules()) out.push_back(*schedule);
  return out;
}

SharedSchedules::Registrar::Registrar(const Schedule& schedule) {
  shared_schedules()[schedule.id] = &schedule;
}

Knob wg_x_knob() {
  return {"wg_x", {0, 4, 8, 16, 32, 64, 128}, false};
}

// ---- forced knobs ----

std::string check_knob_option(const std::vector<Schedule>& schedules, const char* plugin,
                              const std::string& name, const std::string& value) {
  const std::string knob = name.substr(std::string(kKnobOptionPrefix).size());
  int32_t v = 0;
  try {
    v = support::option_int(name, value);
  } catch (const Error& e) {
    return e.what();
  }
  bool found = false;
  std::string candidates;
  for (const Schedule& s : schedules) {
    for (const Knob& k : s.knobs) {
      if (knob != k.name) continue;
      found = true;
      for (int32_t c : k.candidates) {
        if (c == v) return "";
        const std::string text = std::to_string(c);
        if ((" " + candidates + ",").find(" " + text + ",") == std::string::npos) {
          candidates += (candidates.empty() ? "" : ", ") + text;
        }
      }
    }
  }
  if (!found) {
    return "option '" + name + "': no " + plugin + " schedule has a knob '" + knob + "'";
  }
  return "option '" + name + "' = " + value + " is not a candidate of any schedule with that " +
         "knob (candidates: " + candidates + ")";
}

Config apply_forced_knobs(Config config, const ForcedKnobs& forced) {
  for (size_t i = 0; i < config.schedule->knobs.size(); ++i) {
    const Knob& k = config.schedule->knobs[i];
    for (const auto& [name, value] : forced) {
      if (name != k.name) continue;
      if (std::find(k.candidates.begin(), k.candidates.end(), value) == k.candidates.end()) {
        throw Error("option '" + std::string(kKnobOptionPrefix) + name +
                    "' = " + std::to_string(value) + " is not a candidate of schedule '" +
                    config.schedule->id + "'");
      }
      config.values[i] = value;
    }
  }
  return config;
}

// ---- storage sizes ----

bool same_bytes_in_nchw4c(const tsr_tensor& t) {
  return t.rank == 4 && t.dims[2] * t.dims[3] == 1 && t.dims[1] % 4 == 0;
}

size_t element_bytes(const tsr_tensor& t) {
  const size_t size = plugin::dtype_size(t.dtype);
  // float16 values stay on the host: no kernel here reads or writes half buffers.
  if (size == 0 || t.dtype == TSR_DTYPE_FLOAT16) {
    throw Error("value '" + std::string(t.name ? t.name : "?") + "' has dtype " +
                std::to_string(t.dtype) + ", which OpenCL device memory does not hold");
  }
  return size;
}

int64_t stored_numel(const tsr_tensor& t, Storage storage) {
  if (storage == Storage::kImage) return 0;
  if (storage == Storage::kNchw || t.rank != 4) return plugin::tensor_numel(t);
  return t.dims[0] * ((t.dims[1] + 3) / 4 * 4) * t.dims[2] * t.dims[3];
}

// ---- Lowering ----

Lowering::Lowering(const tsr_region& region, std::shared_ptr<Context> context,
                   support::ProgramPool& pool, const Flavor& flavor, LoweringOptions options)
    : region_(region),
      context_(std::move(context)),
      pool_(pool),
      flavor_(flavor),
      options_(std::move(options)),
      op_device_{context_->device(), flavor_,
                 options_.activation == Storage::kImage ? image_limits(context_->device())
                                                        : ImageLimits{}},
      compiled_(std::make_unique<CompiledRegion>()) {
  compiled_->context = context_;
  compiled_->num_nodes = region.num_nodes;
}

std::string Lowering::value_name(int32_t id) const {
  const char* name = region_.values[id].name;
  return name ? name : "?";
}

Storage Lowering::storage(int32_t id) const {
  const auto it = storage_.find(id);
  return it == storage_.end() ? Storage::kNchw : it->second;
}

void Lowering::begin_node(const NodeView& node, int32_t index, StorageRule rule) {
  current_index_ = index;
  reads_.clear();
  const StoragePlan plan =
      rule && options_.activation == Storage::kNchw4c ? rule(node, *this) : StoragePlan{};
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    const bool planned = plan.output != Storage::kNchw &&
                         std::find(plan.inputs.begin(), plan.inputs.end(), i) != plan.inputs.end();
    if (planned && node.input(i).rank != 4) {
      throw Error(node.describe() + ": input " + std::to_string(i) +
                  " is not rank 4 and cannot "
                  "be read as NCHW4c (a " +
                  flavor_.name + " storage rule is wrong)");
    }
    reads_[node.input_index(i)] = planned ? plan.output : Storage::kNchw;
  }
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    const int32_t id = node.output_index(i);
    if (id < 0) continue;
    producer_[id] = index;
    if (plan.output != Storage::kNchw && node.output(i).rank == 4 &&
        node.output(i).dtype == TSR_DTYPE_FLOAT32) {
      storage_[id] = plan.output;
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

void Lowering::fuse(int32_t index, Storage storage) {
  fused_.insert(index);
  const tsr_node& node = region_.nodes[index];
  for (int32_t i = 0; i < node.num_outputs; ++i) {
    const int32_t id = node.outputs[i];
    if (id < 0) continue;
    producer_[id] = index;
    if (storage != Storage::kNchw && region_.values[id].rank == 4 &&
        region_.values[id].dtype == TSR_DTYPE_FLOAT32) {
      storage_[id] = storage;
    }
  }
}

const Lowering::Held& Lowering::own(int32_t id) {
  const Storage s = storage(id);
  auto& held = held_[id];
  const auto found = held.find(s);
  if (found != held.end()) return found->second;
  const tsr_tensor& t = region_.values[id];
  // Masks, indices and shape arithmetic (bool, int32, int64, ...) live in plain row-major
  // buffers; only float32 activations take the plugin's image or NCHW4c storage.
  const size_t elem = element_bytes(t);
  if (t.dtype != TSR_DTYPE_FLOAT32 && s != Storage::kNchw) {
    throw Error(std::string(flavor_.name) + ": value '" + value_name(id) +
                "' is not float32; it lives in a row-major buffer, not an image or NCHW4c");
  }
  Held h;
  if (s == Storage::kImage) {
    if (t.rank > 4) {
      throw Error(std::string(flavor_.name) + ": value '" + value_name(id) +
                  "' has rank > 4 and cannot live in an image");
    }
    const auto e = texture_extent(t);
    h.image = std::make_shared<Image>(*context_, e[0], e[1], options_.half_images);
  } else {
    if (stored_numel(t, s) > INT_MAX && s == Storage::kNchw4c) {
      throw Error(std::string(flavor_.name) + ": value '" + value_name(id) +
                  "' is too large for 32-bit kernel indexing");
    }
    const size_t bytes = static_cast<size_t>(
        checked_mul(stored_numel(t, s), static_cast<int64_t>(elem), "device buffer bytes"));
    h.buffer = std::make_shared<Buffer>(*context_, std::max<size_t>(bytes, 4));
    // Only constants and region inputs (always NCHW) carry host data.
    if (t.data && bytes) context_->write(*h.buffer, t.data, bytes);
  }
  return held.emplace(s, std::move(h)).first->second;
}

Lowering::Held Lowering::convert(int32_t id, const Held& from, Storage from_storage, Storage to,
                                 int32_t node) {
  const tsr_tensor& t = region_.values[id];
  Held out;
  if (from_storage == Storage::kImage || to == Storage::kImage) {
    // Between an image and an NCHW buffer (kernels layout.to_image / layout.to_buffer).
    const bool to_image = to == Storage::kImage;
    const auto e = texture_extent(t);
    if (to_image) {
      if (t.rank > 4) {
        throw Error(std::string(flavor_.name) + ": value '" + value_name(id) +
                    "' has rank > 4 and cannot live in an image");
      }
      out.image = std::make_shared<Image>(*context_, e[0], e[1], options_.half_images);
    } else {
      const size_t bytes = static_cast<size_t>(plugin::tensor_numel(t)) * sizeof(float);
      out.buffer = std::make_shared<Buffer>(*context_, std::max<size_t>(bytes, 4));
    }
    const Config config = config_for(to_image ? "layout.to_image" : "layout.to_buffer", e[0]);
    Kernel k = kernel(config);
    const auto d = view4(t);
    const char* p = flavor_.name;
    k.args()
        .buffer(from.mem())
        .buffer(out.mem())
        .i32x4(i32(d[0], p), i32(d[1], p), i32(d[2], p), i32(d[3], p));
    add_step(node, std::move(k), {static_cast<size_t>(e[0]), static_cast<size_t>(e[1])}, config);
    return out;
  }
  // Between NCHW and NCHW4c buffers (kernels layout.to_nchw4c / layout.to_nchw).
  if (stored_numel(t, Storage::kNchw4c) > INT_MAX) {
    throw Error(std::string(flavor_.name) + ": value '" + value_name(id) +
                "' is too large for 32-bit kernel indexing");
  }
  const int64_t out_numel = stored_numel(t, to);
  out.buffer = std::make_shared<Buffer>(*context_, static_cast<size_t>(out_numel) * 4);
  const int64_t hw = t.dims[2] * t.dims[3];
  Config config;
  config.schedule =
      &flavor_.schedule(to == Storage::kNchw4c ? "layout.to_nchw4c" : "layout.to_nchw");
  config.values = {support::default_wg_x(*config.schedule, device(), out_numel)};
  Kernel k = kernel(config);
  k.args()
      .buffer(from.mem())
      .buffer(out.mem())
      .i32x4(static_cast<int32_t>(t.dims[0]), static_cast<int32_t>(t.dims[1]),
             static_cast<int32_t>(hw), static_cast<int32_t>((t.dims[1] + 3) / 4));
  add_step(node, std::move(k), {static_cast<size_t>(out_numel)},
           {static_cast<size_t>(config.values[0])}, config);
  return out;
}

cl_mem Lowering::read_as(int32_t id, Storage want, int32_t node) {
  const Storage have = storage(id);
  if (want == have) return own(id).mem();
  auto& held = held_[id];
  const auto found = held.find(want);
  if (found != held.end()) return found->second.mem();
  if (is_buffer(want) && is_buffer(have) && same_bytes_in_nchw4c(region_.values[id])) {
    const Held same = own(id);
    return held.emplace(want, same).first->second.mem();
  }
  // NCHW4c and images convert through NCHW.
  if (want != Storage::kNchw && have != Storage::kNchw) read_as(id, Storage::kNchw, node);
  const Storage from = want != Storage::kNchw && have != Storage::kNchw ? Storage::kNchw : have;
  const Held source = from == have ? own(id) : held.at(from);
  return held.emplace(want, convert(id, source, from, want, node)).first->second.mem();
}

cl_mem Lowering::buffer(int32_t id) {
  const auto it = reads_.find(id);
  if (it != reads_.end()) return read_as(id, it->second, current_index_);
  if (!is_buffer(storage(id))) {
    throw Error(std::string(flavor_.name) + ": value '" + value_name(id) +
                "' is stored as an image; a node that does not read it cannot ask for a buffer");
  }
  return own(id).mem();
}

cl_mem Lowering::image(int32_t id) {
  if (reads_.count(id)) return read_as(id, Storage::kImage, current_index_);
  if (held_.count(id) && storage(id) != Storage::kImage) {
    throw Error(std::string(flavor_.name) + ": value '" + value_name(id) +
                "' already lives in a buffer; it cannot be written as an image");
  }
  storage_[id] = Storage::kImage;
  producer_[id] = current_index_;
  return own(id).mem();
}

void Lowering::alias(int32_t out, int32_t in) {
  const auto it = reads_.find(in);
  const Storage s = it == reads_.end() ? storage(in) : it->second;
  read_as(in, s, current_index_);
  storage_[out] = s;
  held_[out][s] = held_.at(in).at(s);
}

cl_mem Lowering::constant_buffer(const std::vector<float>& values) {
  auto buf = std::make_shared<Buffer>(*context_, std::max<size_t>(values.size() * 4, 4));
  // `values` is temporary: the write completes (or fails) before it goes.
  if (!values.empty()) {
    context_->write_and_wait(*buf, values.data(), values.size() * sizeof(float));
  }
  compiled_->buffers.push_back(buf);
  return buf->get();
}

cl_mem Lowering::scratch_buffer(int64_t floats) {
  const int64_t bytes = checked_mul(std::max<int64_t>(floats, 1), 4, "scratch buffer bytes");
  auto buf = std::make_shared<Buffer>(*context_, static_cast<size_t>(bytes));
  compiled_->buffers.push_back(buf);
  return buf->get();
}

cl_mem Lowering::check_flag(int32_t node, const std::string& what) {
  auto flag = std::make_shared<Buffer>(*context_, sizeof(int32_t));
  compiled_->checks.push_back({node, flag, what});
  return flag->get();
}

cl_mem Lowering::constant_image(int64_t width, int64_t height, const std::vector<float>& rgba) {
  auto img = std::make_shared<Image>(*context_, width, height, /*half=*/false, rgba.data());
  compiled_->images.push_back(img);
  return img->get();
}

Config Lowering::config_for(const std::string& schedule_id, int64_t work_dim0,
                            const ConfigOverrides& overrides) const {
  return apply_forced_knobs(flavor_.default_config(schedule_id, device(), work_dim0, overrides),
                            options_.forced_knobs);
}

std::vector<Config> Lowering::forced(std::vector<Config> configs) const {
  for (Config& c : configs) c = apply_forced_knobs(std::move(c), options_.forced_knobs);
  return configs;
}

Kernel Lowering::kernel(const Config& config, const std::string& extra_defines) {
  std::string build = "-cl-mad-enable" + config.defines();
  if (!extra_defines.empty()) build += " " + extra_defines;
  if (!options_.extra_build_options.empty()) build += " " + options_.extra_build_options;
  return support::pooled_kernel(pool_, *context_, config, build,
                                record_sources ? &sources : nullptr, current_node);
}

void Lowering::add_step(int32_t node, Kernel kernel, std::vector<size_t> global,
                        std::vector<size_t> local, const Config& config) {
  compiled_->add_step(node, std::move(kernel), std::move(global), std::move(local), config.str());
}

void Lowering::add_step(int32_t node, Kernel kernel, std::vector<size_t> global,
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

void Lowering::add_1d_step(int32_t node, Kernel kernel, int64_t n, const Config& config) {
  int64_t items = n;
  for (size_t i = 0; i < config.schedule->knobs.size(); ++i) {
    if (std::string(config.schedule->knobs[i].name) == "vec") {
      items = (n + config.values[i] - 1) / config.values[i];
    }
  }
  add_step(node, std::move(kernel), {static_cast<size_t>(items)},
           {static_cast<size_t>(config.get("wg_x"))}, config);
}

std::unique_ptr<CompiledRegion> Lowering::finish() {
  reads_.clear();
  for (int32_t i = 0; i < region_.num_inputs; ++i) {
    const int32_t id = region_.inputs[i];
    compiled_->inputs.push_back(own(id).buffer);
    compiled_->input_bytes.push_back(plugin::tensor_nbytes(region_.values[id]));
  }
  for (int32_t i = 0; i < region_.num_outputs; ++i) {
    const int32_t id = region_.outputs[i];
    // Core reads NCHW: other storages get a conversion charged to the value's producer.
    const auto producer = producer_.find(id);
    read_as(id, Storage::kNchw, producer == producer_.end() ? 0 : producer->second);
    compiled_->outputs.push_back(held_.at(id).at(Storage::kNchw).buffer);
    compiled_->output_bytes.push_back(plugin::tensor_nbytes(region_.values[id]));
  }
  for (auto& [id, held] : held_) {
    for (auto& [storage, h] : held) {
      if (h.buffer) compiled_->buffers.push_back(h.buffer);
      if (h.image) compiled_->images.push_back(h.image);
    }
  }
  context_->finish();  // constant uploads done before the host data may go away
  return std::move(compiled_);
}

}  // namespace tessera::opencl
