// The Python module `tessera` (its compiled part, tessera._tessera), over the C++ Session, shaped
// like ONNX Runtime's InferenceSession:
//   s = tessera.Session("m.tsp" or "m.onnx" or a pathlib.Path, targets="cpu")
//   y, = s.run(None, {"data": x})       # ORT's form: a list of numpy arrays, in output order
//   out = s.run({"data": x})             # {output name: numpy array}
//   s.get_inputs()[0].name / .shape / .type, s.get_outputs(), s.plan(), s.bench({...})
//   tessera.compile("m.onnx", "m.tsp", targets=["cpu"])
// Inputs are read in place (a C-contiguous numpy array of a dtype Tessera holds is not copied
// before the session copies it into its own buffers); outputs are numpy arrays over the tensors
// the session returned, without a copy. The GIL is released while a model runs, so Python threads
// may run one session at once (Session is thread-safe). tessera::Error becomes tessera.Error (a
// RuntimeError) with Tessera's message, which names the file, node or input, with the options in
// it written as this module's keywords.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/deploy_config.hpp"
#include "tessera/deployment.hpp"
#include "tessera/error.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/package.hpp"
#include "tessera/passes.hpp"
#include "tessera/session.hpp"

namespace nb = nanobind;
using tessera::DType;

namespace {

using Array = nb::ndarray<nb::numpy, nb::device::cpu>;
using InputShapes = std::optional<std::map<std::string, std::vector<int64_t>>>;

// The bound the C API and `tessera bench --threads` put on a thread count.
constexpr int64_t kMaxThreads = 1024;

// A core message with the options it names as this module's keywords (tessera/error.hpp).
std::string python_words(const std::string& message) {
  return tessera::spell_options(message, tessera::Frontend::kPython);
}

// ---- Arguments ----

// os.fspath(path) as the bytes the file functions take (a str is encoded as the file system
// does). A NUL would end the name early in the C file calls, opening another file.
std::string path_of(nb::handle path, const char* keyword) {
  nb::object fs = nb::steal(PyOS_FSPath(path.ptr()));
  if (!fs.is_valid()) throw nb::python_error();
  if (PyUnicode_Check(fs.ptr())) fs = nb::steal(PyUnicode_EncodeFSDefault(fs.ptr()));
  if (!fs.is_valid()) throw nb::python_error();
  const std::string text(PyBytes_AS_STRING(fs.ptr()),
                         static_cast<size_t>(PyBytes_GET_SIZE(fs.ptr())));
  if (text.find('\0') != std::string::npos) {
    throw tessera::Error(std::string(keyword) + "'" + tessera::escaped(text) +
                         "': a path cannot hold a NUL character (\\x00)");
  }
  return text;
}

// "mali:any[layout=nchw]" as written, for messages about the entry.
std::string entry_text(const tessera::TargetListEntry& e) {
  std::string text = e.spec;
  for (size_t i = 0; i < e.options.size(); ++i) {
    text += (i ? "," : "[") + e.options[i].first + "=" + e.options[i].second;
  }
  return text + (e.options.empty() ? "" : "]");
}

// targets= as a string ("mali:any[layout=nchw],cpu") or a list of such strings, read as the
// command line's --targets (tools/tessera/run_common.cpp).
void apply_targets(nb::handle targets, tessera::SessionOptions& o) {
  if (targets.is_none()) return;
  std::vector<std::string> lists;
  if (nb::isinstance<nb::str>(targets)) {
    lists.push_back(nb::cast<std::string>(targets));
  } else if (!nb::hasattr(targets, "__iter__")) {
    throw tessera::Error("targets=" + nb::cast<std::string>(nb::repr(targets)) +
                         " is neither a string ('cpu', 'mali:any,cpu') nor a list of them");
  } else {
    for (nb::handle item : targets) {
      if (!nb::isinstance<nb::str>(item)) {
        throw tessera::Error("targets= holds " + nb::cast<std::string>(nb::repr(item)) +
                             "; each target is a string such as 'cpu' or 'mali:any'");
      }
      lists.push_back(nb::cast<std::string>(item));
    }
  }
  for (const std::string& list : lists) {
    for (const tessera::TargetListEntry& e : tessera::parse_target_entries(list)) {
      o.targets.push_back(e.spec);
      if (e.options.empty()) continue;
      tessera::TargetSettings& settings = o.target_settings[e.spec];
      settings.options = e.options;
      settings.origin = "targets= entry '" + entry_text(e) + "'";
    }
  }
}

tessera::SessionOptions options_of(nb::handle targets, const std::optional<std::string>& precision,
                                   int64_t threads, bool allow_fallback, bool replan) {
  tessera::SessionOptions o;
  apply_targets(targets, o);
  if (precision) {
    if (!tessera::parse_precision(*precision)) {
      throw tessera::Error("precision='" + tessera::escaped(*precision) +
                           "' is not one of fp32, fp16, fp16-acc32");
    }
    o.precision = *precision;
  }
  if (threads < 0 || threads > kMaxThreads) {
    throw tessera::Error("threads=" + std::to_string(threads) + " is outside 0.." +
                         std::to_string(kMaxThreads) + " (0 = each plugin's default)");
  }
  o.threads = static_cast<int32_t>(threads);
  o.allow_fallback = allow_fallback;
  o.replan_package = replan;
  return o;
}

tessera::ImportOptions import_options_of(const InputShapes& shapes) {
  tessera::ImportOptions o;
  if (shapes) {
    for (const auto& [name, shape] : *shapes) o.input_shapes[name] = shape;
  }
  return o;
}

void refuse_shapes_for_package(const InputShapes& shapes, const std::string& model) {
  if (shapes && !shapes->empty()) {
    throw tessera::Error("input_shapes= is for ONNX models; package " + model +
                         " keeps the shapes it was compiled with");
  }
}

// ---- numpy <-> tensors ----

DType dtype_of(const nb::dlpack::dtype& d, const std::string& name) {
  const struct {
    nb::dlpack::dtype type;
    DType tessera;
  } kinds[] = {{nb::dtype<float>(), DType::kFloat32}, {nb::dtype<uint8_t>(), DType::kUInt8},
               {nb::dtype<int8_t>(), DType::kInt8},   {nb::dtype<int32_t>(), DType::kInt32},
               {nb::dtype<int64_t>(), DType::kInt64}, {nb::dtype<bool>(), DType::kBool}};
  for (const auto& k : kinds) {
    if (k.type == d) return k.tessera;
  }
  // numpy.float16 arrives with the float code and 16 bits; uint16 is an integer type, and taking
  // its values as half-precision bits would feed numbers nobody wrote.
  if (d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) && d.bits == 16) {
    return DType::kFloat16;
  }
  const std::string hint = d == nb::dtype<uint16_t>()
                               ? " (uint16 is not float16: pass a numpy.float16 array, "
                                 "x.view(numpy.float16) where x holds half-precision bits)"
                               : "";
  throw tessera::Error("input '" + name +
                       "': its dtype is not one Tessera holds (float32, float16, uint8, int8, "
                       "int32, int64, bool)" +
                       hint);
}

nb::dlpack::dtype dlpack_of(DType t) {
  switch (t) {
    case DType::kFloat32:
      return nb::dtype<float>();
    case DType::kUInt8:
      return nb::dtype<uint8_t>();
    case DType::kInt8:
      return nb::dtype<int8_t>();
    case DType::kInt32:
      return nb::dtype<int32_t>();
    case DType::kInt64:
      return nb::dtype<int64_t>();
    case DType::kBool:
      return nb::dtype<bool>();
    case DType::kFloat16: {
      nb::dlpack::dtype d = nb::dtype<uint16_t>();
      d.code = static_cast<uint8_t>(nb::dlpack::dtype_code::Float);
      return d;
    }
    default:
      throw tessera::Error("an output of undefined dtype");
  }
}

// A tensor's numpy array without a copy: the array owns the tensor through a capsule.
nb::object to_numpy(tessera::Tensor t) {
  auto* owned = new tessera::Tensor(std::move(t));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<tessera::Tensor*>(p); });
  std::vector<size_t> shape(owned->shape().begin(), owned->shape().end());
  return nb::cast(
      Array(owned->raw(), shape.size(), shape.data(), owner, nullptr, dlpack_of(owned->dtype())));
}

// The array's bytes as a tensor, read in place: the caller keeps the array alive for the run.
tessera::Tensor tensor_over(const Array& a, const std::string& name) {
  const DType type = dtype_of(a.dtype(), name);
  tessera::Shape shape(a.ndim());
  for (size_t d = 0; d < a.ndim(); ++d) shape[d] = static_cast<int64_t>(a.shape(d));
  int64_t expected = 1;
  for (size_t d = a.ndim(); d-- > 0;) {
    if (shape[d] != 1 && a.stride(d) != expected) {
      throw tessera::Error("input '" + name +
                           "': the array is not C-contiguous (numpy.ascontiguousarray)");
    }
    expected *= shape[d];
  }
  std::shared_ptr<std::byte[]> data(static_cast<std::byte*>(a.data()), [](std::byte*) {});
  return tessera::Tensor::over(type, std::move(shape), std::move(data));
}

// ---- Inputs and outputs as ONNX Runtime's NodeArg ----

struct NodeArg {
  std::string name;
  std::string type;                           // "tensor(float)", as ORT writes it
  std::vector<std::optional<int64_t>> shape;  // None where the size is open
};

std::string ort_type(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "tensor(float)";
    case DType::kFloat16:
      return "tensor(float16)";
    case DType::kUInt8:
      return "tensor(uint8)";
    case DType::kInt8:
      return "tensor(int8)";
    case DType::kInt32:
      return "tensor(int32)";
    case DType::kInt64:
      return "tensor(int64)";
    case DType::kBool:
      return "tensor(bool)";
    default:
      return "tensor(undefined)";
  }
}

using Dims = std::vector<std::optional<int64_t>>;

// An input's shape, None where the model leaves a dimension open.
Dims input_dims(const tessera::Value& v) {
  Dims dims;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    const bool open = d < v.open_dims.size() && v.open_dims[d];
    dims.push_back(open ? std::nullopt : std::optional<int64_t>(v.shape[d]));
  }
  return dims;
}

// The output shapes of `g` prepared with every open input dimension at size(planned size), or
// nullopt where the graph cannot take such sizes.
template <typename SizeOf>
std::optional<std::vector<tessera::Shape>> output_shapes_at(const tessera::Graph& g, SizeOf size) {
  std::map<std::string, tessera::Tensor> probe;
  for (tessera::ValueId id : g.inputs) {
    const tessera::Value& v = g.value(id);
    tessera::Shape shape = v.shape;
    for (size_t d = 0; d < shape.size() && d < v.open_dims.size(); ++d) {
      if (v.open_dims[d]) shape[d] = size(shape[d]);
    }
    probe[v.name] = tessera::Tensor(v.dtype, shape);
  }
  try {
    const tessera::Graph prepared = tessera::prepare_for_inputs(g, probe);
    std::vector<tessera::Shape> shapes;
    for (tessera::ValueId id : prepared.outputs) shapes.push_back(prepared.value(id).shape);
    return shapes;
  } catch (const tessera::Error&) {
    return std::nullopt;
  }
}

// What the graph knows of its output shapes: a dimension is None where it follows the inputs'
// open ones, found by preparing the graph at two sizes of those (the planned size and twice it;
// 32 and 64 for a graph planned at its first run, which has no sizes yet) and comparing. A graph
// that takes no other size than the planned one keeps the planned shapes; an output whose shape
// cannot be found reports [], as ORT does for an unknown shape. Shapes that follow the values of
// inputs (Graph::value_inputs) are unknown until a run brings those values.
std::vector<Dims> output_dims(const tessera::Graph& g) {
  if (!g.value_inputs.empty()) return std::vector<Dims>(g.outputs.size());
  bool any_open = false;
  for (tessera::ValueId id : g.inputs) {
    for (bool open : g.value(id).open_dims) any_open = any_open || open;
  }
  std::optional<std::vector<tessera::Shape>> first, second;
  if (g.prepared) {
    first.emplace();
    for (tessera::ValueId id : g.outputs) first->push_back(g.value(id).shape);
    if (any_open) {
      second =
          output_shapes_at(g, [](int64_t planned) { return std::max<int64_t>(2, 2 * planned); });
    }
    if (!second) second = first;
  } else {
    first = output_shapes_at(g, [](int64_t) { return int64_t{32}; });
    second = output_shapes_at(g, [](int64_t) { return int64_t{64}; });
  }
  std::vector<Dims> out(g.outputs.size());
  for (size_t i = 0; i < out.size() && first && i < first->size(); ++i) {
    if (g.prepared && !g.value(g.outputs[i]).shape_known) continue;
    const tessera::Shape& a = (*first)[i];
    const tessera::Shape* b = second && i < second->size() ? &(*second)[i] : nullptr;
    for (size_t d = 0; d < a.size(); ++d) {
      const bool fixed = b != nullptr && b->size() == a.size() && (*b)[d] == a[d];
      out[i].push_back(fixed ? std::optional<int64_t>(a[d]) : std::nullopt);
    }
  }
  return out;
}

// The `inputs` / `outputs` properties' tuples: (name, numpy dtype name, shape with -1 where open).
nb::list ports_list(const tessera::Graph& g, const std::vector<tessera::ValueId>& ids) {
  nb::list out;
  for (tessera::ValueId id : ids) {
    const tessera::Value& v = g.value(id);
    std::vector<int64_t> shape = v.shape;
    for (size_t d = 0; d < shape.size() && d < v.open_dims.size(); ++d) {
      if (v.open_dims[d]) shape[d] = -1;
    }
    out.append(nb::make_tuple(v.name, tessera::dtype_name(v.dtype), shape));
  }
  return out;
}

// ---- Fallbacks ----

// The plan's lines (core/src/exec/session.cpp) for work that left the target it was planned on.
bool is_compile_fallback(const std::string& warning) {
  return warning.rfind("region of ", 0) == 0 &&
         warning.find(" failed to compile on ") != std::string::npos;
}
bool is_skipped_target(const std::string& warning) {
  return warning.rfind("target '", 0) == 0 && warning.find("' skipped: ") != std::string::npos;
}

std::string without_suffix(const std::string& text, const std::string& suffix) {
  if (text.size() >= suffix.size() &&
      text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return text.substr(0, text.size() - suffix.size());
  }
  return text;
}

// "cpu -> AMD EPYC (cpu, id host, score 10), ..." as "cpu, ...": the specs a caller would name.
std::string target_specs(const tessera::ExecutionPlan& plan) {
  std::string list;
  for (const std::string& t : plan.targets) {
    list += (list.empty() ? "" : ", ") + t.substr(0, t.find(" -> "));
  }
  return list.empty() ? "no target" : list;
}

// Core refuses a region that fails to compile on a named target unless allow_fallback, but with
// no targets named it only notes the fallback in the plan: an asked-for precision that no chosen
// target honours (fp16 with the cpu plugin) then runs fp32 on the reference kernels. Python gives
// no targets= the named targets' rule: this throws for such a region unless allow_fallback, and
// returns the plan's fallbacks (regions moved, targets skipped) to raise as Python warnings.
std::vector<std::string> fallbacks_of(const tessera::ExecutionPlan& plan, bool allow_fallback,
                                      bool targets_named) {
  std::string refused;
  std::vector<std::string> lines;
  for (const std::string& w : plan.warnings) {
    if (is_compile_fallback(w)) {
      refused +=
          (refused.empty() ? "" : "; ") + without_suffix(w, "; falling back to the next target");
    }
    if (is_compile_fallback(w) || is_skipped_target(w)) lines.push_back("tessera: " + w);
  }
  if (!allow_fallback && !targets_named && !refused.empty()) {
    throw tessera::Error(refused + " (with no targets= named Tessera chose " + target_specs(plan) +
                         "; allow_fallback is False, so no other target is tried; "
                         "allow_fallback=True moves it to the next target with a warning)");
  }
  return lines;
}

void warn(const std::string& message) {
  if (PyErr_WarnEx(PyExc_UserWarning, python_words(message).c_str(), 1) != 0) {
    throw nb::python_error();
  }
}

class PySession {
 public:
  PySession(nb::handle model, nb::handle targets, const std::optional<std::string>& precision,
            int64_t threads, bool allow_fallback, bool replan, const InputShapes& input_shapes,
            const std::optional<std::vector<std::string>>& trusted_keys)
      : allow_fallback_(allow_fallback) {
    const std::string path = path_of(model, "model=");
    tessera::SessionOptions o = options_of(targets, precision, threads, allow_fallback, replan);
    // Keys as SessionOptions::trusted_keys takes them; a bad entry is named by the keyword.
    for (const std::string& key : trusted_keys.value_or(std::vector<std::string>{}))
      o.trusted_keys.push_back(tessera::read_trusted_key(key, "trusted_keys=").text());
    targets_named_ = !o.targets.empty();
    const tessera::ImportOptions import = import_options_of(input_shapes);
    {
      nb::gil_scoped_release unlocked;
      if (tessera::is_package_file(path)) {
        refuse_shapes_for_package(input_shapes, path);
        const tessera::Package package = tessera::read_package(path);
        ports_ = package.graph;
        session_ = std::make_unique<tessera::Session>(package, o);
      } else {
        tessera::Graph graph = tessera::import_onnx_file(path, import);
        ports_ = graph;
        session_ = std::make_unique<tessera::Session>(std::move(graph), o);
      }
    }
    check_new_plan();
  }

  // A deployment YAML: its model, targets and options through core's one mapping
  // (tessera/deployment.hpp), as `tessera run DEPLOY.yaml` applies it.
  static PySession from_deployment(nb::handle deployment) {
    const std::string path = path_of(deployment, "deployment=");
    tessera::Graph graph;
    tessera::SessionOptions o;
    {
      nb::gil_scoped_release unlocked;
      const tessera::DeployConfig config = tessera::load_deploy_config(path);
      graph = tessera::import_deployment_model(config);
      o = tessera::from_deployment(config);
    }
    return PySession(std::move(graph), o);
  }

  PySession(tessera::Graph graph, const tessera::SessionOptions& o)
      : allow_fallback_(o.allow_fallback), targets_named_(!o.targets.empty()) {
    ports_ = graph;
    {
      nb::gil_scoped_release unlocked;
      session_ = std::make_unique<tessera::Session>(std::move(graph), o);
    }
    check_new_plan();
  }

  nb::list inputs() const { return ports_list(ports_, ports_.inputs); }
  nb::list outputs() const { return ports_list(ports_, ports_.outputs); }

  std::vector<NodeArg> get_inputs() const {
    std::vector<NodeArg> out;
    for (tessera::ValueId id : ports_.inputs) {
      const tessera::Value& v = ports_.value(id);
      out.push_back({v.name, ort_type(v.dtype), input_dims(v)});
    }
    return out;
  }

  std::vector<NodeArg> get_outputs() {
    if (!output_dims_) output_dims_ = output_dims(ports_);
    std::vector<NodeArg> out;
    for (size_t i = 0; i < ports_.outputs.size(); ++i) {
      const tessera::Value& v = ports_.value(ports_.outputs[i]);
      out.push_back({v.name, ort_type(v.dtype), (*output_dims_)[i]});
    }
    return out;
  }

  nb::dict run_dict(const std::map<std::string, Array>& feeds) {
    std::vector<tessera::Tensor> out = run_tensors(feeds);
    nb::dict result;
    for (size_t i = 0; i < out.size(); ++i) {
      result[nb::str(ports_.value(ports_.outputs[i]).name.c_str())] = to_numpy(std::move(out[i]));
    }
    return result;
  }

  // ONNX Runtime's run(output_names, input_feed): None = every output.
  nb::list run_named(const std::optional<std::vector<std::string>>& names,
                     const std::map<std::string, Array>& feeds) {
    std::vector<size_t> picked;
    if (!names) {
      for (size_t i = 0; i < ports_.outputs.size(); ++i) picked.push_back(i);
    } else {
      for (const std::string& name : *names) picked.push_back(output_index(name));
    }
    std::vector<tessera::Tensor> out = run_tensors(feeds);
    nb::list result;
    for (size_t i : picked) result.append(to_numpy(out[i]));
    return result;
  }

  nb::dict bench(const std::map<std::string, Array>& feeds, int repeat, int warmup) {
    if (repeat < 1)
      throw tessera::Error("bench: repeat=" + std::to_string(repeat) +
                           " runs nothing; it must be at least 1");
    std::vector<double> ms;
    for (int i = 0; i < warmup; ++i) run_tensors(feeds);
    for (int i = 0; i < repeat; ++i) {
      const auto start = std::chrono::steady_clock::now();
      run_tensors(feeds);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::sort(ms.begin(), ms.end());
    double sum = 0;
    for (double m : ms) sum += m;
    nb::dict d;
    d["median_ms"] = ms[ms.size() / 2];
    d["p90_ms"] = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
    d["min_ms"] = ms.front();
    d["mean_ms"] = sum / static_cast<double>(ms.size());
    d["runs"] = repeat;
    return d;
  }

  nb::dict plan() const {
    const tessera::ExecutionPlan& p = session_->plan();
    nb::list nodes;
    for (const tessera::NodePlacement& n : p.nodes) {
      nb::dict d;
      d["name"] = n.node;
      d["op_type"] = n.op_type;
      d["plugin"] = n.plugin;
      d["device"] = n.device;
      d["region"] = n.region;
      d["precision"] = n.precision;
      d["config"] = n.config;
      d["reason"] = n.reason;
      nodes.append(d);
    }
    nb::list regions;
    for (const tessera::RegionPlacement& r : p.regions) {
      nb::dict d;
      d["id"] = r.id;
      d["plugin"] = r.plugin;
      d["device"] = r.device;
      d["precision"] = r.precision;
      d["nodes"] = r.nodes;
      regions.append(d);
    }
    nb::dict d;
    d["targets"] = p.targets;
    d["nodes"] = nodes;
    d["regions"] = regions;
    d["warnings"] = p.warnings;
    // Which input shapes the plan is for; the session keeps one plan per input signature.
    d["input_signature"] = p.input_signature;
    d["plan_number"] = p.plan_number;
    d["plans_held"] = session_->plans_held();
    return d;
  }

 private:
  size_t output_index(const std::string& name) const {
    std::string names;
    for (size_t i = 0; i < ports_.outputs.size(); ++i) {
      const std::string& have = ports_.value(ports_.outputs[i]).name;
      if (have == name) return i;
      names += (i ? ", '" : "'") + have + "'";
    }
    throw tessera::Error("run: the model has no output named '" + tessera::escaped(name) +
                         "' (outputs: " + names + ")");
  }

  std::vector<tessera::Tensor> run_tensors(const std::map<std::string, Array>& feeds) {
    std::map<std::string, tessera::Tensor> inputs;
    for (const auto& [name, a] : feeds) inputs[name] = tensor_over(a, name);
    std::vector<tessera::Tensor> out;
    {
      nb::gil_scoped_release unlocked;
      out = session_->run(inputs);
    }
    check_new_plan();
    return out;
  }

  // Runs with the GIL held, once per plan (a session plans again for inputs of other sizes).
  void check_new_plan() {
    const tessera::ExecutionPlan& plan = session_->plan();
    if (plan.plan_number == 0 || checked_plans_.count(plan.plan_number)) return;
    const std::vector<std::string> lines = fallbacks_of(plan, allow_fallback_, targets_named_);
    checked_plans_.insert(plan.plan_number);
    for (const std::string& line : lines) warn(line);
  }

  bool allow_fallback_;
  bool targets_named_ = false;
  std::set<int> checked_plans_;  // plan numbers whose fallbacks were reported (GIL-guarded)
  std::optional<std::vector<Dims>> output_dims_;  // found at the first get_outputs (GIL-guarded)
  tessera::Graph ports_;
  std::unique_ptr<tessera::Session> session_;
};

// tessera.compile(model, output, ...): a package, as `tessera compile` writes it.
nb::dict compile(nb::handle model_arg, nb::handle output_arg, nb::handle targets,
                 const std::optional<std::string>& precision, bool overwrite,
                 const InputShapes& input_shapes, bool allow_fallback) {
  const std::string model = path_of(model_arg, "model=");
  const std::string output = path_of(output_arg, "output=");
  const tessera::SessionOptions options = options_of(targets, precision, 0, allow_fallback, false);
  const tessera::ImportOptions import = import_options_of(input_shapes);
  tessera::Package package;
  std::vector<std::string> fallbacks;
  {
    nb::gil_scoped_release unlocked;
    if (tessera::is_package_file(model)) {
      throw tessera::Error(model + " is already a package; compile the ONNX model");
    }
    tessera::Session session(tessera::import_onnx_file(model, import), options);
    fallbacks = fallbacks_of(session.plan(), allow_fallback, !options.targets.empty());
    package = tessera::package_from_session(session);
    package.source_model = model;
    package.created_by = "tessera.compile (Python)";
    tessera::write_package(package, output, overwrite);
  }
  for (const std::string& line : fallbacks) warn(line);
  nb::dict d;
  d["package"] = output;
  d["nodes"] = package.nodes.size();
  d["precision"] = package.precision;
  std::vector<std::string> specs;
  for (const tessera::PackageTarget& t : package.targets) specs.push_back(t.spec);
  d["targets"] = specs;
  return d;
}

std::string shape_repr(const std::vector<std::optional<int64_t>>& shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    text += (d ? ", " : "") + (shape[d] ? std::to_string(*shape[d]) : std::string("None"));
  }
  return text + "]";
}

}  // namespace

NB_MODULE(_tessera, m) {
  m.doc() = "Tessera: run neural networks on heterogeneous targets (compiled part)";
  // The module holds the type, so the translator's pointer to it stays valid.
  nb::exception<tessera::Error> error(m, "Error", PyExc_RuntimeError);
  // Registered after the exception's own translator, so tried before it.
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* type) {
        try {
          std::rethrow_exception(p);
        } catch (const tessera::Error& e) {
          PyErr_SetString(static_cast<PyObject*>(type), python_words(e.what()).c_str());
        }
      },
      error.ptr());
  m.def("version", [] { return std::string(TESSERA_VERSION); });
  m.def("_python_words", &python_words, "A core message with its options as keywords (for tests).");
  m.def("compile", &compile, nb::arg("model"), nb::arg("output"), nb::arg("targets") = nb::none(),
        nb::arg("precision") = nb::none(), nb::arg("overwrite") = false,
        nb::arg("input_shapes") = nb::none(), nb::arg("allow_fallback") = false,
        "Compiles an ONNX model for its targets into a package (.tsp).");
  nb::class_<NodeArg>(m, "NodeArg", "An input or output: name, shape (None where open), type.")
      .def_ro("name", &NodeArg::name)
      .def_ro("type", &NodeArg::type)
      .def_ro("shape", &NodeArg::shape)
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + a.type +
               "', shape=" + shape_repr(a.shape) + ")";
      });
  nb::class_<PySession>(m, "Session",
                        "A model (package or ONNX) placed on the targets and compiled.")
      .def(nb::init<nb::handle, nb::handle, const std::optional<std::string>&, int64_t, bool, bool,
                    const InputShapes&, const std::optional<std::vector<std::string>>&>(),
           nb::arg("model"), nb::arg("targets") = nb::none(), nb::arg("precision") = nb::none(),
           nb::arg("threads") = 0, nb::arg("allow_fallback") = false, nb::arg("replan") = false,
           nb::arg("input_shapes") = nb::none(), nb::arg("trusted_keys") = nb::none())
      .def_static("from_deployment", &PySession::from_deployment, nb::arg("path"),
                  "A session as a deployment YAML describes it (model, targets, options).")
      .def_prop_ro("inputs", &PySession::inputs, "[(name, dtype, shape)], -1 for open dims")
      .def_prop_ro("outputs", &PySession::outputs, "[(name, dtype, shape)]")
      .def("get_inputs", &PySession::get_inputs, "[NodeArg] of the model's inputs, as ORT's.")
      .def("get_outputs", &PySession::get_outputs, "[NodeArg] of the model's outputs, as ORT's.")
      .def("run", &PySession::run_dict, nb::arg("feeds"),
           "Runs on {input name: numpy array}; returns {output name: numpy array}.")
      .def("run", &PySession::run_named, nb::arg("output_names").none(), nb::arg("input_feed"),
           "ONNX Runtime's form: returns the named outputs (None = all) as a list, in order.")
      .def("bench", &PySession::bench, nb::arg("feeds"), nb::arg("repeat") = 30,
           nb::arg("warmup") = 3, "Latency statistics over `repeat` runs after `warmup`.")
      .def("plan", &PySession::plan, "Where each node runs and why, the regions, warnings.");
}
