// The C API (tessera/tessera_c.h) over Session: every entry point catches what the C++ side
// throws and turns it into TESSERA_FAILED plus a per-thread message.
#include "tessera/tessera_c.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "exec/importer_library.hpp"
#include "tessera/checked_math.hpp"
#include "tessera/deploy_config.hpp"
#include "tessera/error.hpp"
#include "tessera/package.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/session.hpp"
#include "tessera/tensor.hpp"

struct tessera_session {
  std::unique_ptr<tessera::Session> session;
  // The model's inputs and outputs as the API reports them (names and shapes live here).
  struct Port {
    std::string name;
    tessera::DType dtype;
    std::vector<int64_t> shape;  // -1 where the model leaves a dimension open
  };
  std::vector<Port> inputs, outputs;
};

struct tessera_outputs {
  std::vector<std::string> names;
  std::vector<tessera::Tensor> tensors;
  std::vector<std::vector<int64_t>> shapes;
};

namespace {

// libtessera's ONNX importer, opened on first use (nullptr when libtessera is not installed).
auto onnx_importer() {
  tessera::detail::ImporterHooks& hooks = tessera::detail::importer_hooks();
  if (hooks.import_model == nullptr) tessera::detail::load_importer_library();
  return hooks.import_model;
}

thread_local std::string g_last_error;

// The options a message names are written as tessera_session_options fields (spell_options).
tessera_status fail(const std::string& message) {
  g_last_error = tessera::spell_options(message, tessera::Frontend::kC);
  return TESSERA_FAILED;
}

// Runs fn, turning any exception into TESSERA_FAILED with its message.
template <class Fn>
tessera_status guarded(const char* where, Fn fn) {
  try {
    g_last_error.clear();
    fn();
    return TESSERA_OK;
  } catch (const std::bad_alloc&) {
    return fail(std::string(where) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(std::string(where) + ": " + e.what());
  }
}

// options.plugin_dir as given, or an error naming it: the plugin host would only record a
// relative or missing directory as not searched, and the caller would never learn why its
// plugins are absent. A deployment YAML's missing plugin_dirs entry is an error too; a relative
// one is resolved there against the YAML's folder, which a C caller has no counterpart of.
std::string checked_plugin_dir(const std::string& dir) {
  if (!std::filesystem::path(dir).is_absolute()) {
    throw tessera::Error("options.plugin_dir '" + tessera::escaped(dir) +
                         "' is a relative path; plugin directories must be absolute (the working "
                         "directory is never searched)");
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw tessera::Error(
        "options.plugin_dir: plugin directory '" + tessera::escaped(dir) + "' " +
        (std::filesystem::exists(dir, ec) ? "is not a directory" : "does not exist"));
  }
  return dir;
}

// The shape a port reports: -1 where the model leaves a dimension open (Value::open_dims).
std::vector<int64_t> port_shape(const tessera::Value& v) {
  std::vector<int64_t> shape = v.shape;
  for (size_t d = 0; d < shape.size() && d < v.open_dims.size(); ++d) {
    if (v.open_dims[d]) shape[d] = -1;
  }
  return shape;
}

tessera::SessionOptions session_options(const tessera_session_options* o) {
  tessera_session_options given;
  tessera_session_options_init(&given);
  if (o != nullptr) {
    if (o->struct_size < offsetof(tessera_session_options, targets) + sizeof(o->targets) ||
        o->struct_size > sizeof(tessera_session_options)) {
      throw tessera::Error("options.struct_size " + std::to_string(o->struct_size) +
                           " is not a size of tessera_session_options (this library's is " +
                           std::to_string(sizeof(tessera_session_options)) + ")");
    }
    std::memcpy(&given, o, o->struct_size);
  }
  tessera::SessionOptions options;
  if (given.targets != nullptr && *given.targets != 0) {
    // Entries with options go through the same parser as `--targets`.
    for (const tessera::TargetListEntry& e : tessera::parse_target_entries(given.targets)) {
      options.targets.push_back(e.spec);
      if (!e.options.empty()) options.target_settings[e.spec].options = e.options;
    }
  }
  if (given.threads < 0 || given.threads > tessera::kMaxThreads) {
    throw tessera::Error("options.threads " + std::to_string(given.threads) + " is outside 0.." +
                         std::to_string(tessera::kMaxThreads));
  }
  options.threads = given.threads;
  if (given.precision != nullptr && *given.precision != 0) {
    const std::string p = given.precision;
    if (!tessera::parse_precision(p)) {
      throw tessera::Error("options.precision must be fp32, fp16 or fp16-acc32, got '" +
                           tessera::escaped(p) + "'");
    }
    options.precision = p;
  }
  options.allow_fallback = given.allow_fallback != 0;
  if (given.plugin_dir != nullptr && *given.plugin_dir != 0) {
    options.plugin_dirs.push_back(checked_plugin_dir(given.plugin_dir));
  }
  if (given.no_packs != 0) options.pack_mode = tessera::PackMode::kNone;
  options.replan_package = given.replan_package != 0;
  if (given.trusted_keys != nullptr) {
    const std::string keys = given.trusted_keys;
    for (size_t start = 0; start <= keys.size();) {
      const size_t comma = std::min(keys.find(',', start), keys.size());
      const std::string entry = keys.substr(start, comma - start);
      if (!entry.empty())
        options.trusted_keys.push_back(
            tessera::read_trusted_key(entry, "options.trusted_keys").text());
      start = comma + 1;
    }
  }
  return options;
}

tessera_status port(const tessera_session* s, bool input, int32_t index, const char** name,
                    tessera_dtype* dtype, int32_t* rank, const int64_t** shape) {
  if (s == nullptr) return fail("tessera_session_input/output: session is NULL");
  const auto& ports = input ? s->inputs : s->outputs;
  if (index < 0 || static_cast<size_t>(index) >= ports.size()) {
    return fail(std::string("tessera_session_") + (input ? "input" : "output") + ": index " +
                std::to_string(index) + " outside [0, " + std::to_string(ports.size()) + ")");
  }
  const auto& p = ports[static_cast<size_t>(index)];
  if (name) *name = p.name.c_str();
  if (dtype) *dtype = static_cast<tessera_dtype>(p.dtype);
  if (rank) *rank = static_cast<int32_t>(p.shape.size());
  if (shape) *shape = p.shape.data();
  return TESSERA_OK;
}

// The C inputs as tensors over the caller's memory: read in place during the run, never copied.
std::map<std::string, tessera::Tensor> feeds_of(int32_t input_count, const char* const* input_names,
                                                const tessera_tensor_view* inputs) {
  if (input_count < 0 || (input_count > 0 && (input_names == nullptr || inputs == nullptr))) {
    throw tessera::Error("input_count " + std::to_string(input_count) +
                         " with NULL names or tensors");
  }
  std::map<std::string, tessera::Tensor> feeds;
  for (int32_t i = 0; i < input_count; ++i) {
    const char* name = input_names[i];
    const tessera_tensor_view& t = inputs[i];
    const std::string what =
        "input " + std::to_string(i) + " ('" + tessera::escaped(name ? name : "(null)") + "')";
    if (name == nullptr) throw tessera::Error(what + ": name is NULL");
    if (feeds.count(name)) throw tessera::Error(what + ": given twice");
    if (!tessera::dtype_is_known(t.dtype)) {
      throw tessera::Error(what + ": unknown dtype " + std::to_string(t.dtype));
    }
    if (t.rank < 0 || t.rank > 8 || (t.rank > 0 && t.shape == nullptr)) {
      throw tessera::Error(what + ": rank " + std::to_string(t.rank) +
                           " outside 0..8 or shape NULL");
    }
    tessera::Shape shape(t.shape, t.shape + t.rank);
    for (int64_t d : shape) {
      if (d < 0) throw tessera::Error(what + ": negative dimension " + std::to_string(d));
    }
    const auto dtype = static_cast<tessera::DType>(t.dtype);
    int64_t bytes = 0;
    try {
      bytes = tessera::shape_nbytes(shape, dtype);  // checked for overflow
    } catch (const tessera::Error& e) {
      throw tessera::Error(what + ": " + e.what());
    }
    if (bytes > 0 && t.data == nullptr) throw tessera::Error(what + ": data is NULL");
    // Not owned: the caller's data outlives the run (tessera_tensor_view's contract), and the
    // session never writes to its inputs.
    std::shared_ptr<std::byte[]> data(static_cast<std::byte*>(const_cast<void*>(t.data)),
                                      [](std::byte*) {});
    feeds.emplace(name, bytes > 0 ? tessera::Tensor::over(dtype, std::move(shape), std::move(data))
                                  : tessera::Tensor(dtype, std::move(shape)));
  }
  return feeds;
}

}  // namespace

extern "C" {

const char* tessera_version(void) {
  return TESSERA_VERSION;
}

uint32_t tessera_c_api_version(void) {
  return (uint32_t{TESSERA_C_API_VERSION_MAJOR} << 16) | uint32_t{TESSERA_C_API_VERSION_MINOR};
}

const char* tessera_last_error(void) {
  return g_last_error.c_str();
}

void tessera_session_options_init(tessera_session_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
}

tessera_status tessera_session_create(const char* model_path,
                                      const tessera_session_options* options,
                                      tessera_session** session) {
  if (session == nullptr) return fail("tessera_session_create: session is NULL");
  *session = nullptr;
  if (model_path == nullptr) return fail("tessera_session_create: model_path is NULL");
  return guarded("tessera_session_create", [&] {
    tessera::SessionOptions o = session_options(options);
    auto s = std::make_unique<tessera_session>();
    // A package (tessera compile) runs as compiled; anything else is imported as ONNX.
    std::unique_ptr<tessera::Package> package;
    tessera::Graph graph;
    if (tessera::is_package_file(model_path)) {
      package = std::make_unique<tessera::Package>(tessera::read_package(model_path));
    } else if (const auto import = onnx_importer()) {
      graph = import(model_path);
    } else {
      throw tessera::Error(std::string(model_path) +
                           " is not a package, and libtessera-runtime imports no ONNX: " +
                           tessera::detail::load_importer_library() +
                           " (install libtessera beside it, or compile the model with `tessera "
                           "compile`)");
    }
    const tessera::Graph& ports = package ? package->graph : graph;
    for (tessera::ValueId id : ports.inputs) {
      const tessera::Value& v = ports.value(id);
      s->inputs.push_back({v.name, v.dtype, port_shape(v)});
    }
    for (tessera::ValueId id : ports.outputs) {
      const tessera::Value& v = ports.value(id);
      s->outputs.push_back({v.name, v.dtype, port_shape(v)});
    }
    s->session = package ? std::make_unique<tessera::Session>(*package, o)
                         : std::make_unique<tessera::Session>(std::move(graph), o);
    *session = s.release();
  });
}

void tessera_session_release(tessera_session* session) {
  delete session;
}

int32_t tessera_session_input_count(const tessera_session* session) {
  return session ? static_cast<int32_t>(session->inputs.size()) : 0;
}

int32_t tessera_session_output_count(const tessera_session* session) {
  return session ? static_cast<int32_t>(session->outputs.size()) : 0;
}

tessera_status tessera_session_input(const tessera_session* session, int32_t index,
                                     const char** name, tessera_dtype* dtype, int32_t* rank,
                                     const int64_t** shape) {
  return port(session, true, index, name, dtype, rank, shape);
}

tessera_status tessera_session_output(const tessera_session* session, int32_t index,
                                      const char** name, tessera_dtype* dtype, int32_t* rank,
                                      const int64_t** shape) {
  return port(session, false, index, name, dtype, rank, shape);
}

tessera_status tessera_session_run(tessera_session* session, int32_t input_count,
                                   const char* const* input_names,
                                   const tessera_tensor_view* inputs, tessera_outputs** outputs) {
  if (outputs == nullptr) return fail("tessera_session_run: outputs is NULL");
  *outputs = nullptr;
  if (session == nullptr) return fail("tessera_session_run: session is NULL");
  return guarded("tessera_session_run", [&] {
    const auto feeds = feeds_of(input_count, input_names, inputs);
    auto out = std::make_unique<tessera_outputs>();
    out->tensors = session->session->run(feeds);
    for (size_t i = 0; i < out->tensors.size(); ++i) {
      out->names.push_back(i < session->outputs.size() ? session->outputs[i].name : "");
      out->shapes.push_back(out->tensors[i].shape());
    }
    *outputs = out.release();
  });
}

tessera_status tessera_session_run_into(tessera_session* session, int32_t input_count,
                                        const char* const* input_names,
                                        const tessera_tensor_view* inputs, int32_t output_count,
                                        const tessera_output_buffer* outputs,
                                        int64_t* const* shapes) {
  if (session == nullptr) return fail("tessera_session_run_into: session is NULL");
  const size_t want = session->outputs.size();
  if (output_count < 0 || static_cast<size_t>(output_count) != want || outputs == nullptr) {
    return fail("tessera_session_run_into: output_count " + std::to_string(output_count) +
                (outputs == nullptr ? " with NULL buffers" : "") + "; the model has " +
                std::to_string(want) + " output(s)");
  }
  return guarded("tessera_session_run_into", [&] {
    const auto feeds = feeds_of(input_count, input_names, inputs);
    const std::vector<tessera::Tensor> got = session->session->run(feeds);
    // Every buffer is checked before any is written, so a failed run leaves them all untouched.
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string what =
          "output " + std::to_string(i) + " ('" + tessera::escaped(session->outputs[i].name) + "')";
      const size_t bytes = static_cast<size_t>(got[i].nbytes());
      if (outputs[i].capacity < bytes) {
        throw tessera::Error(what + ": the buffer holds " + std::to_string(outputs[i].capacity) +
                             " bytes, the output " + std::to_string(bytes) + " (shape " +
                             tessera::shape_str(got[i].shape()) + ")");
      }
      if (bytes > 0 && outputs[i].data == nullptr) throw tessera::Error(what + ": data is NULL");
      if (got[i].shape().size() != session->outputs[i].shape.size()) {
        throw tessera::Error(what + ": the run produced rank " +
                             std::to_string(got[i].shape().size()) + ", the model states " +
                             std::to_string(session->outputs[i].shape.size()));
      }
    }
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i].nbytes() > 0) {
        std::memcpy(outputs[i].data, got[i].raw(), static_cast<size_t>(got[i].nbytes()));
      }
      if (shapes != nullptr && shapes[i] != nullptr) {
        std::copy(got[i].shape().begin(), got[i].shape().end(), shapes[i]);
      }
    }
  });
}

int32_t tessera_outputs_count(const tessera_outputs* outputs) {
  return outputs ? static_cast<int32_t>(outputs->tensors.size()) : 0;
}

tessera_status tessera_outputs_get(const tessera_outputs* outputs, int32_t index, const char** name,
                                   tessera_tensor_view* view) {
  if (outputs == nullptr) return fail("tessera_outputs_get: outputs is NULL");
  if (index < 0 || static_cast<size_t>(index) >= outputs->tensors.size()) {
    return fail("tessera_outputs_get: index " + std::to_string(index) + " outside [0, " +
                std::to_string(outputs->tensors.size()) + ")");
  }
  const size_t i = static_cast<size_t>(index);
  if (name) *name = outputs->names[i].c_str();
  if (view) {
    view->dtype = static_cast<tessera_dtype>(outputs->tensors[i].dtype());
    view->rank = static_cast<int32_t>(outputs->shapes[i].size());
    view->shape = outputs->shapes[i].data();
    view->data = outputs->tensors[i].raw();
  }
  return TESSERA_OK;
}

void tessera_outputs_release(tessera_outputs* outputs) {
  delete outputs;
}

}  // extern "C"
