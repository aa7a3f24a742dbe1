// A thin C++ layer over the C API (tessera/tessera_c.h): owners that release what they hold,
// failures as exceptions carrying tessera_last_error(), spans instead of pointer + count. Header
// only and on the C ABI alone, so an application built with another compiler or standard library
// than libtessera-runtime links it safely (tessera/session.hpp is the in-process C++ API, which
// needs the same toolchain). Threads: as tessera_c.h says per function; a Session may be run from
// several threads at once, an Outputs object belongs to one.
//
//   tessera::api::Session s("mobilenet_v2.tsp");
//   std::vector<float> image(s.input(0).element_count());
//   tessera::api::Outputs out = s.run({{s.input(0).name, tessera::api::view(image, s.input(0))}});
//   const float* logits = out.data<float>(0);
#ifndef TESSERA_TESSERA_HPP_
#define TESSERA_TESSERA_HPP_

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tessera/tessera_c.h"

namespace tessera::api {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check(tessera_status status) {
  if (status != TESSERA_OK) throw Error(tessera_last_error());
}

// Throws when the library's C API is older than this header or of another major version.
inline void require_compatible_library() {
  const uint32_t have = tessera_c_api_version();
  const uint32_t major = have >> 16, minor = have & 0xffffu;
  if (major != TESSERA_C_API_VERSION_MAJOR || minor < TESSERA_C_API_VERSION_MINOR) {
    throw Error("libtessera-runtime speaks C API " + std::to_string(major) + "." +
                std::to_string(minor) + ", this program was built for " +
                std::to_string(TESSERA_C_API_VERSION_MAJOR) + "." +
                std::to_string(TESSERA_C_API_VERSION_MINOR));
  }
}

// An input or output of the model. A dimension the model leaves open is -1.
struct Port {
  std::string name;
  tessera_dtype dtype = TESSERA_DTYPE_FLOAT32;
  std::vector<int64_t> shape;

  // Elements of a tensor of this shape (open dimensions count as 1).
  size_t element_count() const {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d < 0 ? 1 : d);
    return n;
  }
};

// A view of caller memory as an input of port's dtype and shape (the memory outlives the run).
template <class T>
tessera_tensor_view view(const std::vector<T>& data, const Port& port) {
  return tessera_tensor_view{port.dtype, static_cast<int32_t>(port.shape.size()), port.shape.data(),
                             data.data()};
}

struct SessionOptions {
  std::string targets;    // "" = every usable plugin (or a package's own)
  int32_t threads = 0;    // 0 = each plugin's default
  std::string precision;  // "" = fp32
  bool allow_fallback = false;
  std::string plugin_dir;
  bool no_packs = false;
  bool replan_package = false;
};

// Outputs of one run, owned by the runtime until this object goes.
class Outputs {
 public:
  Outputs() = default;
  explicit Outputs(tessera_outputs* handle) : handle_(handle) {}
  Outputs(Outputs&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Outputs& operator=(Outputs&& other) noexcept {
    if (this != &other) {
      tessera_outputs_release(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Outputs(const Outputs&) = delete;
  Outputs& operator=(const Outputs&) = delete;
  ~Outputs() { tessera_outputs_release(handle_); }

  int32_t size() const { return tessera_outputs_count(handle_); }
  std::string name(int32_t index) const { return get(index).first; }
  std::vector<int64_t> shape(int32_t index) const {
    const tessera_tensor_view v = get(index).second;
    return std::vector<int64_t>(v.shape, v.shape + v.rank);
  }
  tessera_dtype dtype(int32_t index) const { return get(index).second.dtype; }
  // The elements, valid while this object lives; T must match dtype(index).
  template <class T>
  const T* data(int32_t index) const {
    return static_cast<const T*>(get(index).second.data);
  }

 private:
  std::pair<std::string, tessera_tensor_view> get(int32_t index) const {
    const char* name = nullptr;
    tessera_tensor_view v{};
    check(tessera_outputs_get(handle_, index, &name, &v));
    return {name, v};
  }
  tessera_outputs* handle_ = nullptr;
};

class Session {
 public:
  // A package (.tsp) or an ONNX model (the latter needs libtessera beside the runtime).
  explicit Session(const std::string& model, const SessionOptions& options = {}) {
    tessera_session_options o;
    tessera_session_options_init(&o);
    o.targets = options.targets.empty() ? nullptr : options.targets.c_str();
    o.threads = options.threads;
    o.precision = options.precision.empty() ? nullptr : options.precision.c_str();
    o.allow_fallback = options.allow_fallback ? 1 : 0;
    o.plugin_dir = options.plugin_dir.empty() ? nullptr : options.plugin_dir.c_str();
    o.no_packs = options.no_packs ? 1 : 0;
    o.replan_package = options.replan_package ? 1 : 0;
    check(tessera_session_create(model.c_str(), &o, &handle_));
    for (int32_t i = 0; i < tessera_session_input_count(handle_); ++i) {
      inputs_.push_back(port(tessera_session_input, i));
    }
    for (int32_t i = 0; i < tessera_session_output_count(handle_); ++i) {
      outputs_.push_back(port(tessera_session_output, i));
    }
  }
  Session(Session&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)),
        inputs_(std::move(other.inputs_)),
        outputs_(std::move(other.outputs_)) {}
  Session& operator=(Session&& other) noexcept {
    if (this != &other) {
      tessera_session_release(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
      inputs_ = std::move(other.inputs_);
      outputs_ = std::move(other.outputs_);
    }
    return *this;
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { tessera_session_release(handle_); }

  const std::vector<Port>& inputs() const { return inputs_; }
  const std::vector<Port>& outputs() const { return outputs_; }
  const Port& input(size_t index) const { return inputs_.at(index); }
  const Port& output(size_t index) const { return outputs_.at(index); }

  // Runtime-owned outputs.
  Outputs run(const std::vector<std::pair<std::string, tessera_tensor_view>>& feeds) {
    std::vector<const char*> names;
    std::vector<tessera_tensor_view> views;
    split(feeds, names, views);
    tessera_outputs* out = nullptr;
    check(tessera_session_run(handle_, static_cast<int32_t>(views.size()), names.data(),
                              views.data(), &out));
    return Outputs(out);
  }

  // Outputs written into the caller's buffers, one per output in the model's order; returns
  // the shapes the run produced.
  std::vector<std::vector<int64_t>> run_into(
      const std::vector<std::pair<std::string, tessera_tensor_view>>& feeds,
      const std::vector<tessera_output_buffer>& buffers) {
    std::vector<const char*> names;
    std::vector<tessera_tensor_view> views;
    split(feeds, names, views);
    std::vector<std::vector<int64_t>> shapes;
    std::vector<int64_t*> shape_ptrs;
    for (const Port& p : outputs_) shapes.emplace_back(p.shape.size());
    for (auto& s : shapes) shape_ptrs.push_back(s.data());
    check(tessera_session_run_into(handle_, static_cast<int32_t>(views.size()), names.data(),
                                   views.data(), static_cast<int32_t>(buffers.size()),
                                   buffers.data(), shape_ptrs.data()));
    return shapes;
  }

 private:
  template <class Get>
  Port port(Get get, int32_t index) const {
    const char* name = nullptr;
    tessera_dtype dtype{};
    int32_t rank = 0;
    const int64_t* shape = nullptr;
    check(get(handle_, index, &name, &dtype, &rank, &shape));
    return Port{name, dtype, std::vector<int64_t>(shape, shape + rank)};
  }
  static void split(const std::vector<std::pair<std::string, tessera_tensor_view>>& feeds,
                    std::vector<const char*>& names, std::vector<tessera_tensor_view>& views) {
    for (const auto& [name, v] : feeds) {
      names.push_back(name.c_str());
      views.push_back(v);
    }
  }

  tessera_session* handle_ = nullptr;
  std::vector<Port> inputs_, outputs_;
};

}  // namespace tessera::api

#endif  // TESSERA_TESSERA_HPP_
