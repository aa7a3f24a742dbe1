// The Python module `tessera` (its compiled part, tessera._tessera), over the C++ Session:
//   s = tessera.Session("m.tsp" or "m.onnx", targets=["cpu"])
//   out = s.run({"input": x})          # numpy in, numpy out
//   s.plan(), s.bench({...}), s.inputs, s.outputs; tessera.compile("m.onnx", "m.tsp", ...)
// Inputs are read in place (a C-contiguous numpy array of a dtype Tessera holds is not copied
// before the session copies it into its own buffers); outputs are numpy arrays over the tensors
// the session returned, without a copy. The GIL is released while a model runs, so Python threads
// may run one session at once (Session is thread-safe). tessera::Error becomes tessera.Error (a
// RuntimeError) with Tessera's message, which names the file, node or input.
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
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/package.hpp"
#include "tessera/session.hpp"

namespace nb = nanobind;
using tessera::DType;

namespace {

using Array = nb::ndarray<nb::numpy, nb::device::cpu>;

DType dtype_of(const nb::dlpack::dtype& d, const std::string& name) {
  const struct {
    nb::dlpack::dtype type;
    DType tessera;
  } kinds[] = {{nb::dtype<float>(), DType::kFloat32},   {nb::dtype<uint8_t>(), DType::kUInt8},
               {nb::dtype<int8_t>(), DType::kInt8},     {nb::dtype<int32_t>(), DType::kInt32},
               {nb::dtype<int64_t>(), DType::kInt64},   {nb::dtype<bool>(), DType::kBool},
               {nb::dtype<uint16_t>(), DType::kFloat16}};
  for (const auto& k : kinds) {
    if (k.type == d) return k.tessera;
  }
  // numpy's float16 arrives with the float code and 16 bits.
  if (d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) && d.bits == 16) {
    return DType::kFloat16;
  }
  throw tessera::Error("input '" + name +
                       "': its dtype is not one Tessera holds (float32, float16, uint8, int8, "
                       "int32, int64, bool)");
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

struct Port {
  std::string name, dtype;
  std::vector<int64_t> shape;  // -1 where the model leaves a dimension open
};

Port port_of(const tessera::Value& v) {
  Port p{v.name, tessera::dtype_name(v.dtype), v.shape};
  for (size_t d = 0; d < p.shape.size() && d < v.open_dims.size(); ++d) {
    if (v.open_dims[d]) p.shape[d] = -1;
  }
  return p;
}

nb::list ports_list(const tessera::Graph& g, const std::vector<tessera::ValueId>& ids) {
  nb::list out;
  for (tessera::ValueId id : ids) {
    const Port p = port_of(g.value(id));
    out.append(nb::make_tuple(p.name, p.dtype, p.shape));
  }
  return out;
}

tessera::SessionOptions options_of(const std::optional<std::vector<std::string>>& targets,
                                   const std::optional<std::string>& precision, int threads,
                                   bool allow_fallback, bool replan) {
  tessera::SessionOptions o;
  if (targets) o.targets = *targets;
  if (precision) o.precision = *precision;
  o.threads = threads;
  o.allow_fallback = allow_fallback;
  o.replan_package = replan;
  return o;
}

class PySession {
 public:
  PySession(const std::string& model, const std::optional<std::vector<std::string>>& targets,
            const std::optional<std::string>& precision, int threads, bool allow_fallback,
            bool replan) {
    const tessera::SessionOptions o =
        options_of(targets, precision, threads, allow_fallback, replan);
    nb::gil_scoped_release unlocked;
    if (tessera::is_package_file(model)) {
      const tessera::Package package = tessera::read_package(model);
      ports_ = package.graph;
      session_ = std::make_unique<tessera::Session>(package, o);
    } else {
      tessera::Graph graph = tessera::import_onnx_file(model);
      ports_ = graph;
      session_ = std::make_unique<tessera::Session>(std::move(graph), o);
    }
  }

  nb::list inputs() const { return ports_list(ports_, ports_.inputs); }
  nb::list outputs() const { return ports_list(ports_, ports_.outputs); }

  nb::dict run(const std::map<std::string, Array>& feeds) {
    const std::vector<tessera::Tensor> out = run_tensors(feeds);
    nb::dict result;
    for (size_t i = 0; i < out.size(); ++i) {
      result[nb::str(ports_.value(ports_.outputs[i]).name.c_str())] = to_numpy(out[i]);
    }
    return result;
  }

  nb::dict bench(const std::map<std::string, Array>& feeds, int repeat, int warmup) {
    if (repeat < 1) throw tessera::Error("bench: repeat must be at least 1");
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
    return d;
  }

 private:
  std::vector<tessera::Tensor> run_tensors(const std::map<std::string, Array>& feeds) {
    std::map<std::string, tessera::Tensor> inputs;
    for (const auto& [name, a] : feeds) {
      const DType type = dtype_of(a.dtype(), name);
      tessera::Shape shape(a.ndim());
      for (size_t d = 0; d < a.ndim(); ++d) shape[d] = static_cast<int64_t>(a.shape(d));
      bool contiguous = true;
      int64_t expected = 1;
      for (size_t d = a.ndim(); d-- > 0;) {
        if (shape[d] != 1 && a.stride(d) != expected) contiguous = false;
        expected *= shape[d];
      }
      if (!contiguous) {
        throw tessera::Error("input '" + name +
                             "': the array is not C-contiguous (numpy.ascontiguousarray)");
      }
      // Read in place: `feeds` keeps the array alive for the whole run.
      std::shared_ptr<std::byte[]> data(static_cast<std::byte*>(a.data()), [](std::byte*) {});
      inputs[name] = tessera::Tensor::over(type, std::move(shape), std::move(data));
    }
    nb::gil_scoped_release unlocked;
    return session_->run(inputs);
  }

  tessera::Graph ports_;
  std::unique_ptr<tessera::Session> session_;
};

// tessera.compile(model, output, ...): a package, as `tessera compile` writes it.
nb::dict compile(const std::string& model, const std::string& output,
                 const std::optional<std::vector<std::string>>& targets,
                 const std::optional<std::string>& precision, bool overwrite) {
  nb::gil_scoped_release unlocked;
  if (tessera::is_package_file(model)) {
    throw tessera::Error(model + " is already a package; compile the ONNX model");
  }
  tessera::Session session(tessera::import_onnx_file(model),
                           options_of(targets, precision, 0, false, false));
  tessera::Package package = tessera::package_from_session(session);
  package.source_model = model;
  package.created_by = "tessera.compile (Python)";
  tessera::write_package(package, output, overwrite);
  nb::gil_scoped_acquire locked;
  nb::dict d;
  d["package"] = output;
  d["nodes"] = package.nodes.size();
  d["precision"] = package.precision;
  std::vector<std::string> specs;
  for (const tessera::PackageTarget& t : package.targets) specs.push_back(t.spec);
  d["targets"] = specs;
  return d;
}

}  // namespace

NB_MODULE(_tessera, m) {
  m.doc() = "Tessera: run neural networks on heterogeneous targets (compiled part)";
  nb::exception<tessera::Error>(m, "Error", PyExc_RuntimeError);
  m.def("version", [] { return std::string(TESSERA_VERSION); });
  m.def("compile", &compile, nb::arg("model"), nb::arg("output"), nb::arg("targets") = nb::none(),
        nb::arg("precision") = nb::none(), nb::arg("overwrite") = false,
        "Compiles an ONNX model for its targets into a package (.tsp).");
  nb::class_<PySession>(m, "Session",
                        "A model (package or ONNX) placed on the targets and compiled.")
      .def(nb::init<const std::string&, const std::optional<std::vector<std::string>>&,
                    const std::optional<std::string>&, int, bool, bool>(),
           nb::arg("model"), nb::arg("targets") = nb::none(), nb::arg("precision") = nb::none(),
           nb::arg("threads") = 0, nb::arg("allow_fallback") = false, nb::arg("replan") = false)
      .def_prop_ro("inputs", &PySession::inputs, "[(name, dtype, shape)], -1 for open dims")
      .def_prop_ro("outputs", &PySession::outputs, "[(name, dtype, shape)]")
      .def("run", &PySession::run, nb::arg("feeds"),
           "Runs on {input name: numpy array}; returns {output name: numpy array}.")
      .def("bench", &PySession::bench, nb::arg("feeds"), nb::arg("repeat") = 30,
           nb::arg("warmup") = 3, "Latency statistics over `repeat` runs after `warmup`.")
      .def("plan", &PySession::plan, "Where each node runs and why, the regions, warnings.");
}
