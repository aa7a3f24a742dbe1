// The clml plugin's regions (region.hpp).
#include "region.hpp"

#include "tessera/json.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "tessera_opencl/regular_file.hpp"

namespace tessera::clml {
namespace {

// A CLML tuning cache holds a few records per tuned op; a file larger than this is not one.
constexpr uint64_t kMaxTuningCacheBytes = uint64_t{1} << 30;

const char* kConvertSource = R"CLC(
__kernel void to_half(__global const float* src, __global half* dst, int n) {
  int i = get_global_id(0);
  if (i < n) vstore_half(src[i], i, dst);
}
__kernel void to_float(__global const half* src, __global float* dst, int n) {
  int i = get_global_id(0);
  if (i < n) dst[i] = vload_half(i, src);
}
)CLC";

// IEEE half of `f`, rounded to nearest even (constants of fp16 regions).
uint16_t to_half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

using tessera::json_string;  // tessera/json.hpp

std::string json_dims(const std::array<cl_uint, 4>& d) {
  return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) +
         ", " + std::to_string(d[3]) + "]";
}

// Writes `path` through a temporary file and a rename: a reader never sees half a cache.
void store_atomically(const std::string& path, const unsigned char* data, size_t size) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) throw Error("cannot write the CLML tuning cache '" + tmp + "'");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error("cannot store the CLML tuning cache '" + path + "'");
  }
}

}  // namespace

std::array<cl_uint, 4> dims4(const tsr_tensor& t) {
  std::array<cl_uint, 4> d = {1, 1, 1, 1};
  for (int32_t i = 0; i < t.rank && i < 4; ++i) d[i] = static_cast<cl_uint>(t.dims[i]);
  return d;
}

void check_call(cl_int err, const std::string& call, const std::string& device) {
  if (err != CL_SUCCESS) {
    throw opencl::ClError(err, call + " on " + device + ": " + clml_error_name(err));
  }
}

// ---- the dump ----

std::vector<std::string> SubgraphDump::write(const char* dir, const char* plugin) const {
  std::string body = "{\n  \"plugin\": " + json_string(plugin) + ",\n" + header_ + "  \"ops\": [";
  for (size_t i = 0; i < ops_.size(); ++i) body += (i ? ",\n    " : "\n    ") + ops_[i];
  body += "\n  ]\n}\n";
  for (int k = 1; k < 100000; ++k) {
    const std::string path = std::string(dir) + "/clml-subgraph-" + std::to_string(k) + ".json";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      throw Error("cannot create CLML dump '" + path + "': " + std::strerror(errno));
    }
    const ssize_t n = ::write(fd, body.data(), body.size());
    const bool ok = n == static_cast<ssize_t>(body.size());
    ::close(fd);
    if (!ok) throw Error("cannot write CLML dump '" + path + "'");
    return {path};
  }
  throw Error(std::string("CLML dump directory '") + dir + "' is full");
}

// ---- the compiled region ----

CompiledRegion::~CompiledRegion() {
  if (context_) context_->drain();
  if (!api_) return;
  for (const OpStep& s : ops_) api_->release_op(s.op);
  for (cl_ml_tensor_qcom t : tensors_) api_->release_tensor(t);
  if (set_) api_->release_desc_set(set_);
  if (tuning_cache_ && api_->release_tuning_cache) api_->release_tuning_cache(tuning_cache_);
}

void CompiledRegion::execute(const void* const* in, void* const* out) {
  std::vector<tsr_io> ins(inputs_.size()), outs(outputs_.size());
  for (size_t i = 0; i < ins.size(); ++i) ins[i].host = const_cast<void*>(in[i]);
  for (size_t i = 0; i < outs.size(); ++i) outs[i].host = out[i];
  execute(ins.data(), outs.data());
}

void CompiledRegion::convert(const Boundary& b, bool to_half) {
  const opencl::Kernel& k = to_half ? to_half_ : to_float_;
  const cl_mem src = to_half ? b.staging->get() : b.half->get();
  const cl_mem dst = to_half ? b.half->get() : b.staging->get();
  k.args().buffer(src).buffer(dst).i32(static_cast<int32_t>(b.elements));
  context_->launch(k, {b.elements}, {});
}

void CompiledRegion::enqueue_in(const Boundary& b, const tsr_io& io) {
  if (b.tensor == nullptr) return;  // an input no CLML op reads
  const std::string& dev = context_->device().describe();
  const cl_command_queue q = context_->queue();
  if (!half_) {
    if (io.buffer) {
      check_call(api_->copy_tensor(q, b.nchw, reinterpret_cast<cl_mem>(io.buffer), b.tensor,
                                   b.memory, 0, nullptr, nullptr),
                 "clEnqueueCopyMLTensorDataQCOM", dev);
    } else {
      check_call(api_->write_tensor(q, io.host, CL_TENSOR_LAYOUT_NCHW_QCOM, b.tensor, b.memory, 0,
                                    nullptr, nullptr),
                 "clEnqueueWriteMLTensorDataQCOM", dev);
    }
    return;
  }
  if (io.buffer) {
    context_->copy(reinterpret_cast<cl_mem>(io.buffer), b.staging->get(), b.bytes);
  } else {
    context_->write(*b.staging, io.host, b.bytes);
  }
  convert(b, true);
  check_call(api_->copy_tensor(q, b.nchw, b.half->get(), b.tensor, b.memory, 0, nullptr, nullptr),
             "clEnqueueCopyMLTensorDataQCOM", dev);
}

void CompiledRegion::enqueue_out(const Boundary& b, const tsr_io& io) {
  const std::string& dev = context_->device().describe();
  const cl_command_queue q = context_->queue();
  if (!half_) {
    if (io.buffer) {
      check_call(api_->copy_tensor(q, b.tensor, b.memory, b.nchw,
                                   reinterpret_cast<cl_mem>(io.buffer), 0, nullptr, nullptr),
                 "clEnqueueCopyMLTensorDataQCOM", dev);
    } else {
      check_call(api_->read_tensor(q, b.tensor, b.memory, io.host, CL_TENSOR_LAYOUT_NCHW_QCOM, 0,
                                   nullptr, nullptr),
                 "clEnqueueReadMLTensorDataQCOM", dev);
    }
    return;
  }
  check_call(api_->copy_tensor(q, b.tensor, b.memory, b.nchw, b.half->get(), 0, nullptr, nullptr),
             "clEnqueueCopyMLTensorDataQCOM", dev);
  convert(b, false);
  if (io.buffer) {
    context_->copy(b.staging->get(), reinterpret_cast<cl_mem>(io.buffer), b.bytes);
  } else {
    context_->read(*b.staging, io.host, b.bytes);
  }
}

void CompiledRegion::execute(const tsr_io* in, const tsr_io* out) {
  // The failure's place in words is built only in the handler (this is the per-run path):
  // phase 0 inputs, 1 ops, 2 outputs, 3 finish; `at` indexes the phase.
  int phase = 0;
  size_t at = 0;
  const auto where = [&]() -> std::string {
    switch (phase) {
      case 0:
        return "writing input " + std::to_string(at) + " of " + region_label_;
      case 1:
        return at < ops_.size() ? ops_[at].what : region_label_;
      case 2:
        return "reading output " + std::to_string(at) + " of " + region_label_;
      default:
        return "finishing " + region_label_;
    }
  };
  std::vector<opencl::Event> events;
  try {
    for (; at < inputs_.size(); ++at) enqueue_in(inputs_[at], in[at]);
    phase = 1;
    if (profile) events.reserve(ops_.size());
    for (at = 0; at < ops_.size(); ++at) {
      cl_event ev = nullptr;
      check_call(api_->enqueue_op(context_->queue(), ops_[at].op, set_, 0, nullptr,
                                  profile ? &ev : nullptr),
                 "clEnqueueMLOpQCOM", context_->device().describe());
      if (profile) events.emplace_back(ev);
    }
    phase = 2;
    for (at = 0; at < outputs_.size(); ++at) enqueue_out(outputs_[at], out[at]);
    phase = 3;
    context_->finish();
    if (profile) {
      last_times_us.assign(static_cast<size_t>(num_nodes_), 0.0);
      for (size_t i = 0; i < ops_.size(); ++i) {
        if (events[i].valid())
          last_times_us[static_cast<size_t>(ops_[i].node)] += events[i].duration_us();
      }
    }
  } catch (const opencl::ClError& e) {
    context_->drain();
    throw opencl::ClError(e.code(), where() + ": " + e.what());
  } catch (...) {
    context_->drain();
    throw;
  }
}

// ---- lowering ----

Lowering::Lowering(const tsr_region& region, std::shared_ptr<opencl::Context> context,
                   std::shared_ptr<const Api> api, Precision precision)
    : region_(region),
      context_(std::move(context)),
      api_(std::move(api)),
      device_(context_->device().describe()),
      half_(precision != Precision::kFp32),
      precision_(precision),
      compiled_(std::make_unique<CompiledRegion>()) {
  compiled_->api_ = api_;
  compiled_->context_ = context_;
  compiled_->half_ = half_;
  compiled_->num_nodes_ = region.num_nodes;
  for (int32_t n = 0; n < region.num_nodes; ++n) {
    const tsr_node& node = region.nodes[n];
    for (int32_t i = 0; i < node.num_inputs; ++i) {
      if (node.inputs[i] >= 0) consumers_[node.inputs[i]].push_back(n);
    }
  }
}

Lowering::~Lowering() = default;

cl_arithmetic_mode_qcom Lowering::mode() const {
  switch (precision_) {
    case Precision::kFp16:
      return CL_ARITHMETIC_MODE_FP16_QCOM;
    case Precision::kFp16Acc32:
      return CL_ARITHMETIC_MODE_FP16_ACC32_QCOM;
    default:
      return CL_ARITHMETIC_MODE_FP32_QCOM;
  }
}

const std::vector<int32_t>& Lowering::consumers(int32_t value) const {
  static const std::vector<int32_t> kNone;
  auto it = consumers_.find(value);
  return it == consumers_.end() ? kNone : it->second;
}

bool Lowering::is_region_output(int32_t value) const {
  for (int32_t i = 0; i < region_.num_outputs; ++i) {
    if (region_.outputs[i] == value) return true;
  }
  return false;
}

cl_ml_tensor_qcom Lowering::make_tensor(const std::array<cl_uint, 4>& dims,
                                        cl_ml_tensor_layout_qcom layout, cl_channel_type type) {
  cl_ml_tensor_desc_qcom desc{};
  desc.data_type = type;
  desc.layout = layout;
  desc.n = dims[0];
  desc.c = dims[1];
  desc.h = dims[2];
  desc.w = dims[3];
  desc.num_dimensions = CL_TENSOR_DIMENSIONS_4D_QCOM;
  cl_ml_tensor_qcom t = nullptr;
  check_call(api_->create_tensor(context_->get(), nullptr, &desc, &t),
             current_node + ": clCreateMLTensorQCOM " + json_dims(dims), device_);
  compiled_->tensors_.push_back(t);
  return t;
}

cl_ml_tuningcache_qcom Lowering::tuning_cache() {
  if (tuning_ready_) return compiled_->tuning_cache_;
  tuning_ready_ = true;
  const Api& a = *api_;
  if (tuning == "off" || !a.create_tuning_cache || !a.tune_op || !a.save_tuning_cache ||
      !a.load_tuning_cache || !a.release_tuning_cache) {
    return nullptr;
  }
  check_call(api_->create_tuning_cache(&compiled_->tuning_cache_), "clCreateMLTuningCacheQCOM",
             device_);
  if (tuning_cache_path.empty()) return compiled_->tuning_cache_;
  opencl::RegularFile file = opencl::read_regular_file(tuning_cache_path, kMaxTuningCacheBytes);
  if (file.state == opencl::RegularFile::State::kMissing) return compiled_->tuning_cache_;
  if (file.state != opencl::RegularFile::State::kRead) {
    // Only the tuning is lost: what sits in the cache's place is left alone, and never opened
    // (a FIFO would block the compile).
    const std::string problem =
        file.state == opencl::RegularFile::State::kTooLarge
            ? "is larger than " + std::to_string(kMaxTuningCacheBytes) + " bytes"
            : file.problem;
    std::fprintf(stderr, "clml: ignoring the CLML tuning cache '%s' (it %s); ops run untuned\n",
                 tuning_cache_path.c_str(), problem.c_str());
    return compiled_->tuning_cache_;
  }
  std::string& bytes = file.bytes;  // clLoadMLTuningCacheQCOM takes a non-const pointer
  if (!bytes.empty()) {
    const cl_int err = api_->load_tuning_cache(compiled_->tuning_cache_, bytes.size(),
                                               reinterpret_cast<unsigned char*>(bytes.data()));
    if (err != CL_SUCCESS) {
      // A stale or corrupt cache only costs the tuning: start from an empty one (rebuilt by the
      // next `tessera tune`), and say so.
      std::fprintf(stderr,
                   "clml: ignoring the CLML tuning cache '%s' (clLoadMLTuningCacheQCOM: %s); ops "
                   "run untuned\n",
                   tuning_cache_path.c_str(), clml_error_name(err).c_str());
      api_->release_tuning_cache(compiled_->tuning_cache_);
      compiled_->tuning_cache_ = nullptr;
      check_call(api_->create_tuning_cache(&compiled_->tuning_cache_), "clCreateMLTuningCacheQCOM",
                 device_);
    }
  }
  return compiled_->tuning_cache_;
}

cl_ml_tensor_qcom Lowering::input(int32_t id) {
  op_inputs_.push_back(id);
  auto it = values_.find(id);
  if (it != values_.end()) return it->second;
  const tsr_tensor& t = region_.values[id];
  cl_ml_tensor_qcom tensor;
  if (t.data) {
    const float* data = static_cast<const float*>(t.data);
    tensor = constant(dims4(t), std::vector<float>(data, data + plugin::tensor_numel(t)));
    op_constants_.pop_back();  // described as the value
  } else {
    tensor = make_tensor(dims4(t), CL_TENSOR_LAYOUT_OPTIMAL_QCOM, data_type());
  }
  values_[id] = tensor;
  return tensor;
}

cl_ml_tensor_qcom Lowering::output(int32_t id) {
  op_outputs_.push_back(id);
  if (values_.count(id)) throw Error(current_node + ": value written twice in one CLML region");
  cl_ml_tensor_qcom t =
      make_tensor(dims4(region_.values[id]), CL_TENSOR_LAYOUT_OPTIMAL_QCOM, data_type());
  values_[id] = t;
  return t;
}

cl_ml_tensor_qcom Lowering::constant(const std::array<cl_uint, 4>& dims,
                                     std::vector<float> values) {
  cl_ml_tensor_qcom t = make_tensor(dims, CL_TENSOR_LAYOUT_OPTIMAL_QCOM, data_type());
  constants_.emplace_back(t, std::move(values));
  op_constants_.push_back("{\"shape\": " + json_dims(dims) + ", \"layout\": \"optimal\"}");
  return t;
}

cl_ml_tensor_qcom Lowering::unused() {
  cl_ml_tensor_desc_qcom desc{};
  desc.num_dimensions = CL_TENSOR_UNUSED_QCOM;
  cl_ml_tensor_qcom t = nullptr;
  check_call(api_->create_tensor(context_->get(), nullptr, &desc, &t),
             current_node + ": clCreateMLTensorQCOM (unused operand)", device_);
  compiled_->tensors_.push_back(t);
  unused_.push_back(t);
  return t;
}

std::string Lowering::json_value(int32_t id) const {
  const tsr_tensor& t = region_.values[id];
  std::string shape = "[";
  for (int32_t d = 0; d < t.rank; ++d) shape += (d ? ", " : "") + std::to_string(t.dims[d]);
  shape += "]";
  return "{\"name\": " + json_string(t.name ? t.name : "") + ", \"shape\": " + shape +
         ", \"clml_dims\": " + json_dims(dims4(t)) + ", \"layout\": \"optimal\", \"dtype\": \"" +
         (half_ ? "float16" : "float32") + "\"" + (t.data ? ", \"constant\": true" : "") + "}";
}

void Lowering::add_op(int32_t node, cl_int err, cl_ml_op_qcom op, const char* call,
                      const std::string& json_attributes) {
  const NodeView view(region_, node);
  if (err != CL_SUCCESS || op == nullptr) {
    if (op) api_->release_op(op);
    check_call(err != CL_SUCCESS ? err : CL_INVALID_OPERATION, view.describe() + ": " + call,
               device_);
  }
  compiled_->ops_.push_back({node, op, std::string(call) + " op of " + view.describe()});
  if (record_sources) {
    std::string json = "{\"node\": " + json_string(view.name()) +
                       ", \"op_type\": " + json_string(view.op_type()) +
                       ", \"clml_call\": " + json_string(call) + ", \"attributes\": {" +
                       json_attributes + "}, \"inputs\": [";
    for (size_t i = 0; i < op_inputs_.size(); ++i)
      json += (i ? ", " : "") + json_value(op_inputs_[i]);
    json += "], \"weights\": [";
    for (size_t i = 0; i < op_constants_.size(); ++i) json += (i ? ", " : "") + op_constants_[i];
    json += "], \"outputs\": [";
    for (size_t i = 0; i < op_outputs_.size(); ++i)
      json += (i ? ", " : "") + json_value(op_outputs_[i]);
    sources.add(json + "]}");
  }
  op_inputs_.clear();
  op_outputs_.clear();
  op_constants_.clear();
}

std::unique_ptr<CompiledRegion> Lowering::finish() {
  CompiledRegion& c = *compiled_;
  const cl_command_queue q = context_->queue();
  const std::set<cl_ml_tensor_qcom> unused(unused_.begin(), unused_.end());
  // Region inputs no op read (a computed Reshape shape, Resize sizes: parameters, not data) get
  // no tensor and are skipped at run time.
  for (int32_t i = 0; i < region_.num_outputs; ++i) {
    if (!values_.count(region_.outputs[i])) {
      const char* name = region_.values[region_.outputs[i]].name;
      throw Error("region output '" + std::string(name ? name : "?") +
                  "' is computed by no CLML op");
    }
  }
  // Sizes are known once every op that uses a tensor exists (the driver picks OPTIMAL layouts).
  std::map<cl_ml_tensor_qcom, cl_mem> memory;
  std::vector<cl_ml_tensor_memory_desc_qcom> pairs;
  for (cl_ml_tensor_qcom t : std::vector<cl_ml_tensor_qcom>(c.tensors_)) {
    if (unused.count(t)) continue;
    cl_uint size = 0;
    check_call(api_->tensor_memory_size(context_->get(), t, &size), "clGetMLTensorMemorySizeQCOM",
               device_);
    c.memory_.push_back(std::make_shared<opencl::Buffer>(*context_, std::max<size_t>(size, 1)));
    memory[t] = c.memory_.back()->get();
    pairs.push_back({t, memory[t]});
  }
  // Constants, in NCHW host order in the tensors' data type.
  for (auto& [tensor, values] : constants_) {
    void* data = values.data();
    if (half_) {
      halves_.emplace_back(values.size());
      for (size_t i = 0; i < values.size(); ++i) halves_.back()[i] = to_half_bits(values[i]);
      data = halves_.back().data();
    }
    check_call(api_->write_tensor(q, data, CL_TENSOR_LAYOUT_NCHW_QCOM, tensor, memory[tensor], 0,
                                  nullptr, nullptr),
               "clEnqueueWriteMLTensorDataQCOM (weights)", device_);
  }
  context_->finish();
  check_call(api_->create_desc_set(&c.set_), "clCreateMLTensorMemoryDescriptorSetQCOM", device_);
  check_call(api_->update_desc_set(c.set_, static_cast<uint32_t>(pairs.size()), pairs.data()),
             "clUpdateMLTensorMemoryDescriptorSetQCOM", device_);
  // Boundaries.
  if (half_) {
    opencl::Program program = context_->build("clml fp16 boundary conversion", kConvertSource, "");
    c.to_half_ = program.kernel("to_half");
    c.to_float_ = program.kernel("to_float");
  }
  auto boundary = [&](int32_t id) {
    const tsr_tensor& t = region_.values[id];
    CompiledRegion::Boundary b;
    if (!values_.count(id)) return b;  // read by no op: nothing to copy
    b.tensor = values_.at(id);
    b.memory = memory.at(b.tensor);
    b.elements = static_cast<size_t>(plugin::tensor_numel(t));
    b.bytes = b.elements * sizeof(float);
    b.nchw = make_tensor(dims4(t), CL_TENSOR_LAYOUT_NCHW_QCOM, data_type());
    if (half_) {
      b.staging = std::make_shared<opencl::Buffer>(*context_, std::max<size_t>(b.bytes, 1));
      b.half = std::make_shared<opencl::Buffer>(*context_, std::max<size_t>(b.elements * 2, 2));
    }
    return b;
  };
  for (int32_t i = 0; i < region_.num_inputs; ++i) c.inputs_.push_back(boundary(region_.inputs[i]));
  for (int32_t i = 0; i < region_.num_outputs; ++i) {
    c.outputs_.push_back(boundary(region_.outputs[i]));
  }
  // Tuning: every op once, then the cache goes next to the kernel cache (see plugin.cpp).
  if (tuning == "build" && c.tuning_cache_) {
    for (const CompiledRegion::OpStep& s : c.ops_) {
      check_call(api_->tune_op(q, s.op, c.set_, c.tuning_cache_, nullptr),
                 "clTuneMLOpQCOM for " + s.what, device_);
    }
    context_->finish();
    size_t size = 0;
    check_call(api_->save_tuning_cache(c.tuning_cache_, 0, nullptr, &size),
               "clSaveMLTuningCacheQCOM", device_);
    std::vector<unsigned char> bytes(size);
    check_call(api_->save_tuning_cache(c.tuning_cache_, size, bytes.data(), &size),
               "clSaveMLTuningCacheQCOM", device_);
    if (!tuning_cache_path.empty()) {
      store_atomically(tuning_cache_path, bytes.data(), size);
    }
  }
  c.region_label_ = region_.num_nodes > 0
                        ? "the CLML region of " + NodeView(region_, 0).describe() + " .. " +
                              NodeView(region_, region_.num_nodes - 1).describe()
                        : "the CLML region";
  if (record_sources) {
    std::string ins, outs;
    for (int32_t i = 0; i < region_.num_inputs; ++i)
      ins += (i ? ", " : "") + json_value(region_.inputs[i]);
    for (int32_t i = 0; i < region_.num_outputs; ++i)
      outs += (i ? ", " : "") + json_value(region_.outputs[i]);
    sources.set_header("  \"device\": " + json_string(device_) + ",\n  \"interface\": \"" +
                       std::to_string(api_->major) + "." + std::to_string(api_->minor) +
                       "\",\n  \"arithmetic_mode\": " + std::to_string(static_cast<int>(mode())) +
                       ",\n  \"region_inputs\": [" + ins + "],\n  \"region_outputs\": [" + outs +
                       "],\n");
  }
  return std::move(compiled_);
}

}  // namespace tessera::clml
