// Session: construction, target lists, plans per input signature, and execution of independent
// regions at once (see session.hpp; planning is session_planning.cpp, stages
// session_stages.cpp).
#include "exec/session_impl.hpp"

namespace tessera {

namespace {

std::string trimmed(const std::string& text) {
  const size_t b = text.find_first_not_of(" \t");
  const size_t e = text.find_last_not_of(" \t");
  return b == std::string::npos ? "" : text.substr(b, e - b + 1);
}

// "layout=nchw,build_options=-DX" of `entry` -> name/value pairs.
std::vector<std::pair<std::string, std::string>> parse_entry_options(const std::string& text,
                                                                     const std::string& entry) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trimmed(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = trimmed(item.substr(0, eq));
    if (eq == std::string::npos || name.empty()) {
      throw Error("`targets` entry '" + entry + "': option '" + item +
                  "' is not name=value (e.g. mali:any[layout=nchw])");
    }
    for (const auto& [seen, value] : out) {
      if (seen == name)
        throw Error("`targets` entry '" + entry + "': option '" + name + "' is given twice");
    }
    out.emplace_back(name, trimmed(item.substr(eq + 1)));
  }
  return out;
}

}  // namespace

std::vector<TargetListEntry> parse_target_entries(const std::string& list) {
  std::vector<TargetListEntry> out;
  size_t start = 0;
  while (start <= list.size()) {
    // An entry ends at the first comma outside brackets.
    size_t end = start;
    bool open = false;
    while (end < list.size() && (open || list[end] != ',')) {
      if (list[end] == '[') open = true;
      if (list[end] == ']') open = false;
      ++end;
    }
    const std::string entry = trimmed(list.substr(start, end - start));
    start = end + 1;
    if (entry.empty()) continue;
    TargetListEntry e;
    const size_t bracket = entry.find('[');
    e.spec = trimmed(entry.substr(0, bracket));
    if (bracket != std::string::npos) {
      const size_t close = entry.find(']', bracket);
      if (close == std::string::npos) {
        throw Error("`targets` entry '" + entry + "': '[' has no closing ']'");
      }
      if (close + 1 != entry.size()) {
        throw Error("`targets` entry '" + entry + "': text after the options' ']'");
      }
      e.options = parse_entry_options(entry.substr(bracket + 1, close - bracket - 1), entry);
    }
    if (e.spec.empty()) throw Error("`targets` entry '" + entry + "' names no plugin");
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> parse_target_list(const std::string& list) {
  std::vector<std::string> out;
  for (const TargetListEntry& e : parse_target_entries(list)) {
    if (!e.options.empty()) {
      throw Error("target '" + e.spec + "': options ('[...]') are not accepted here");
    }
    out.push_back(e.spec);
  }
  return out;
}

namespace {

// A value input's elements for a plan's signature: exact (floats to 9 digits, which round-trip).
std::string tensor_values_text(const Tensor& t) {
  std::string text;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) text += ",";
    if (t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat16) {
      char number[32];
      std::snprintf(number, sizeof(number), "%.9g", t.scalar_as_double(i));
      text += number;
    } else {
      text += std::to_string(t.scalar_as_int64(i));
    }
  }
  return text;
}

// RunStats::max_regions_in_flight and overlap_us of the `regions`' [start, end) intervals, by a
// sweep over their starts and ends.
void measure_overlap(const std::vector<RegionProfile>& regions, RunStats& stats) {
  std::vector<std::pair<double, int>> events;  // time, +1 start / -1 end (ends sort first)
  for (const RegionProfile& r : regions) {
    events.emplace_back(r.start_us, 1);
    events.emplace_back(r.start_us + r.time_us, -1);
  }
  std::sort(events.begin(), events.end());
  int in_flight = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (in_flight >= 2) stats.overlap_us += events[i].first - events[i - 1].first;
    in_flight += events[i].second;
    stats.max_regions_in_flight = std::max(stats.max_regions_in_flight, in_flight);
  }
}

}  // namespace

using session_detail::resolve_targets;

namespace {

void check_session_options(const SessionOptions& options) {
  if (options.plan_cache_size < 1) {
    throw Error("Session: plan_cache_size must be at least 1, got " +
                std::to_string(options.plan_cache_size));
  }
  if (options.mixed_precision.enabled && options.precision == "fp32") {
    throw Error(
        "Session: mixed precision keeps some nodes in fp32 and runs the rest in the "
        "session's precision, which is fp32: it needs precision fp16 or fp16-acc32");
  }
}

std::shared_ptr<const PluginHost> make_plugin_host(const SessionOptions& options,
                                                   std::vector<std::string> only = {}) {
  PluginHostOptions host_options;
  host_options.dirs = options.plugin_dirs;
  host_options.use_environment = options.use_plugin_environment;
  host_options.use_default_dirs = options.use_default_plugin_dirs;
  host_options.allow_shadowing = options.allow_plugin_shadowing;
  host_options.only = std::move(only);
  return std::make_shared<const PluginHost>(host_options);
}

std::vector<std::string> package_plugins(const Package& package) {
  std::vector<std::string> names;
  for (const PackageTarget& t : package.targets) {
    if (std::find(names.begin(), names.end(), t.plugin) == names.end()) names.push_back(t.plugin);
  }
  return names;
}

// The options a package's session runs with: its targets, precision and target settings, unless
// the caller's options set them.
SessionOptions package_options(const Package& package, const SessionOptions& given) {
  SessionOptions o = given;
  std::vector<std::string> specs;
  for (const PackageTarget& t : package.targets) specs.push_back(t.spec);
  if (!given.targets.empty() && given.targets != specs) {
    std::string list;
    for (const std::string& s : specs) list += (list.empty() ? "" : ",") + s;
    throw Error(package.file + ": the package was compiled for the targets " + list +
                "; compile the model again for other targets");
  }
  o.targets = specs;
  if (given.precision == "fp32") o.precision = package.precision;
  if (o.precision != package.precision) {
    throw Error(package.file + ": the package was compiled for precision " + package.precision +
                ", not " + o.precision + "; compile the model again for it");
  }
  for (const PackageTarget& t : package.targets) {
    TargetSettings& settings = o.target_settings[t.spec];
    if (settings.threads == 0) settings.threads = t.threads;
    if (settings.options.empty()) settings.options = t.options;
    if (settings.origin.empty()) settings.origin = package.file + ": target " + t.spec;
  }
  // Configs come from the package, not from packs (a re-plan reads packs again, see
  // adopt_package).
  o.mixed_precision.enabled = false;
  return o;
}

}  // namespace

void Session::Impl::first_plan() {
  if (!given.unsized_inputs.empty()) {
    // Open dims with no size: plan from the shapes of the first run, then per signature.
    waiting_plan = base_plan;
    std::string names;
    for (ValueId id : given.unsized_inputs) {
      names += (names.empty() ? "'" : ", '") + given.value(id).name + "' " +
               open_shape_str(given.value(id));
    }
    waiting_plan.warnings.push_back("input(s) " + names +
                                    " have open dimensions: the graph is planned at the first "
                                    "run for the shapes it brings, and again for other shapes");
    return;
  }
  if (!given.value_needed_at_run.empty()) {
    // Preparation met a value computed at run time (prepare_graph): stages, made at first run.
    waiting_plan = base_plan;
    waiting_plan.warnings.push_back(
        "shapes depend on values the model computes (NonZero, NonMaxSuppression, a TopK k or an "
        "If condition from data): it runs in stages, planned at the first run");
    return;
  }
  if (!value_inputs.empty()) {
    // Shapes depend on input values: each run's values are prepared and planned (then cached).
    waiting_plan = base_plan;
    std::string names;
    for (ValueId id : value_inputs) {
      names += (names.empty() ? "'" : ", '") + given.value(id).name + "'";
    }
    waiting_plan.warnings.push_back(
        "shapes depend on the values of input(s) " + names +
        ": the graph is prepared and planned at the first run, and again for other values");
    waiting_plan.value_inputs = names;
    return;
  }
  auto first = build(given);
  first->plan.plan_number = ++plans_made;
  first->plan.input_signature = signature(nullptr);
  plans.emplace_front(first->plan.input_signature, first);
  make_current(first);
}

Session::Session(Graph graph, const SessionOptions& options)
    : Session(std::move(graph), options, make_plugin_host(options)) {}

Session::Session(Graph graph, const SessionOptions& options, std::shared_ptr<const PluginHost> host)
    : impl_(std::make_unique<Impl>()) {
  if (!host) throw Error("Session: no plugin host given");
  check_session_options(options);
  Impl& impl = *impl_;
  impl.given = std::move(graph);
  impl.host = std::move(host);
  impl.options = options;
  impl.value_inputs = impl.given.value_inputs;
  impl.replans = impl.given.unprepared != nullptr || planned_at_first_run(impl.given);
  impl.resolve();
  impl.first_plan();
}

namespace {

// `package` when SessionOptions::trusted_keys accept it (checked before any plugin loads).
const Package& trusted_package(const Package& package, const SessionOptions& options) {
  if (const auto problem = package_trust_problem(package, options.trusted_keys)) {
    throw Error((package.file.empty() ? std::string("package") : package.file) +
                ": refused: " + *problem);
  }
  return package;
}

}  // namespace

Session::Session(const Package& package, const SessionOptions& options)
    : Session(package, options,
              make_plugin_host(options, package_plugins(trusted_package(package, options)))) {}

Session::Session(const Package& package, const SessionOptions& options,
                 std::shared_ptr<const PluginHost> host)
    : impl_(std::make_unique<Impl>()) {
  if (!host) throw Error("Session: no plugin host given");
  trusted_package(package, options);
  SessionOptions o = package_options(package, options);
  check_session_options(o);
  Impl& impl = *impl_;
  impl.given = package.graph;
  impl.host = std::move(host);
  impl.options = o;
  // The package's configs need no packs; a package planned again reads them as a model would.
  impl.options.pack_mode = PackMode::kNone;
  impl.targets = resolve_targets(*impl.host, impl.options, impl.base_plan);
  if (!impl.adopt_package(package)) impl.options.pack_mode = o.pack_mode;
  impl.resolve_packs();
  impl.first_plan();
}

Session::~Session() = default;

// "x: float32 [1, 3, 224, 224]; shape: int64 [2] = 1,-1" from the tensors given, or from the
// given graph's inputs (nullptr). Values are part of it only for value inputs.
std::string Session::Impl::signature(const std::map<std::string, Tensor>* inputs) const {
  std::string text;
  for (ValueId id : given.inputs) {
    const Value& v = given.value(id);
    const Tensor* t = nullptr;
    if (inputs != nullptr) {
      auto it = inputs->find(v.name);
      if (it != inputs->end()) t = &it->second;
    }
    text += (text.empty() ? "" : "; ") + v.name + ": " + dtype_name(t ? t->dtype() : v.dtype) +
            " " + shape_str(t ? t->shape() : v.shape);
    if (t != nullptr &&
        std::find(value_inputs.begin(), value_inputs.end(), id) != value_inputs.end()) {
      text += " = " + tensor_values_text(*t);
    }
  }
  return text;
}

void Session::Impl::make_current(const std::shared_ptr<Planned>& p) {
  if (current == p) return;
  if (current) current->buffers.release();
  current = p;
  current->buffers.retain();
}

std::shared_ptr<Planned> Session::Impl::planned_for(const std::map<std::string, Tensor>& inputs) {
  const std::string where = given.source.empty() ? "graph" : given.source;
  for (const auto& [name, tensor] : inputs) {
    const ValueId id = given.find_value(name);
    if (id == kNoValue ||
        std::find(given.inputs.begin(), given.inputs.end(), id) == given.inputs.end()) {
      throw Error(where + ": '" + name +
                  "' is not an input of the model (its inputs: " + given.input_names() + ")");
    }
  }
  for (ValueId id : given.inputs) {
    const Value& v = given.value(id);
    if (inputs.count(v.name) == 0)
      throw Error(where + ": no tensor given for input '" + v.name + "'");
  }
  const std::string key = signature(&inputs);
  for (auto it = plans.begin(); it != plans.end(); ++it) {
    if (it->first != key) continue;
    plans.splice(plans.begin(), plans, it);
    make_current(it->second);
    return current;
  }
  if (!replans) {
    // A graph prepared without its unprepared form (built in memory) runs only as planned.
    for (ValueId id : given.inputs) {
      const Value& v = given.value(id);
      const Tensor& t = inputs.at(v.name);
      if (t.dtype() != v.dtype || t.shape() != v.shape) {
        throw Error(where + ": input '" + v.name + "' expects " + dtype_name(v.dtype) + " " +
                    shape_str(v.shape) + ", got " + dtype_name(t.dtype()) + " " +
                    shape_str(t.shape()));
      }
    }
  }
  Graph prepared = prepare_for_inputs(given, inputs);
  for (ValueId id : prepared.value_inputs) {
    if (std::find(value_inputs.begin(), value_inputs.end(), id) == value_inputs.end()) {
      value_inputs.push_back(id);
    }
  }
  auto p = build(std::move(prepared));
  p->plan.plan_number = ++plans_made;
  p->plan.input_signature = signature(&inputs);  // with any value inputs found just now
  for (ValueId id : value_inputs) {
    p->plan.value_inputs +=
        (p->plan.value_inputs.empty() ? "'" : ", '") + given.value(id).name + "'";
  }
  plans.emplace_front(p->plan.input_signature, p);
  while (plans.size() > static_cast<size_t>(options.plan_cache_size)) plans.pop_back();
  make_current(p);
  return current;
}

namespace {

// Where every value of one run lives: constants, the caller's inputs, the returned tensors and
// the run's boundary buffers. All of it is decided before any step runs, so steps running at
// once only read it.
struct RunMemory {
  std::vector<const void*> location;              // per value (host memory; nullptr on device)
  std::vector<tsr_buffer> device;                 // per value: its device buffer, or nullptr
  std::vector<const void*> inputs;                // per step, its inputs' locations, concatenated
  std::vector<void*> outputs;                     // per step, its outputs' locations, concatenated
  std::vector<size_t> first_input, first_output;  // per step, index into inputs / outputs
  // The same as host memory or device buffer, for steps with a device-resident value
  // (Planned::step_uses_buffers), at the same indices.
  std::vector<tsr_io> io_inputs, io_outputs;
};

// The returned tensors are allocated first and the steps producing graph outputs write into them,
// so an output is never copied out of the boundary buffers (for a segmentation map, 4 MiB
// zero-filled and copied per run). An output listed twice, or one no step produces (an input or a
// constant), is copied by the caller afterwards.
RunMemory place_values(const Planned& planned, const std::map<std::string, Tensor>& inputs,
                       std::vector<Tensor>& outputs, BufferPool::Set& buffers) {
  const Graph& graph = planned.graph;
  RunMemory m;
  std::vector<const void*>& location = m.location;
  location.assign(graph.values.size(), nullptr);
  for (size_t i = 0; i < graph.values.size(); ++i) {
    if (graph.values[i].constant) location[i] = graph.values[i].constant->raw();
  }
  for (ValueId id : graph.inputs) {
    location[static_cast<size_t>(id)] = inputs.at(graph.value(id).name).raw();
  }
  std::vector<void*> output_memory(graph.values.size(), nullptr);
  for (ValueId id : graph.outputs) {
    const Value& v = graph.value(id);
    outputs.emplace_back(v.dtype, v.shape, Tensor::Uninitialized{});
    if (output_memory[static_cast<size_t>(id)] == nullptr &&
        location[static_cast<size_t>(id)] == nullptr) {
      output_memory[static_cast<size_t>(id)] = outputs.back().raw();
    }
  }
  m.device.assign(graph.values.size(), nullptr);
  for (const Planned::Step& step : planned.steps) {
    m.first_output.push_back(m.outputs.size());
    for (ValueId v : step.outputs) {
      void* p = output_memory[static_cast<size_t>(v)];
      if (p == nullptr) {
        BufferPool::Slot& slot =
            buffers[static_cast<size_t>(planned.value_buffer[static_cast<size_t>(v)])];
        if (slot.device) {
          m.device[static_cast<size_t>(v)] = slot.device->buffer;
        } else {
          p = slot.host.data();
        }
      }
      m.outputs.push_back(p);
      location[static_cast<size_t>(v)] = p;
      m.io_outputs.push_back({p, m.device[static_cast<size_t>(v)]});
    }
  }
  for (const Planned::Step& step : planned.steps) {
    m.first_input.push_back(m.inputs.size());
    for (ValueId v : step.inputs) {
      m.inputs.push_back(location[static_cast<size_t>(v)]);
      m.io_inputs.push_back(
          {const_cast<void*>(location[static_cast<size_t>(v)]), m.device[static_cast<size_t>(v)]});
    }
  }
  return m;
}

// Runs every step of `planned`, each as soon as the steps it is after have finished, calling
// `run_step(s)` for step s. A plan whose steps form one chain runs on the calling thread; others
// run as oneTBB tasks, which the calling thread helps with while it waits. Each step is isolated,
// so a thread waiting inside a plugin's own parallel loop never picks up another step (of this run
// or another run) that could wait on a region lock it holds. The first exception is rethrown once
// the steps it did not prevent have finished.
template <typename RunStep>
void run_steps(const Planned& planned, const RunStep& run_step) {
  const std::vector<Planned::Step>& steps = planned.steps;
  if (!planned.concurrent) {
    for (size_t s = 0; s < steps.size(); ++s) run_step(s);
    return;
  }
  std::unique_ptr<std::atomic<int>[]> waiting(new std::atomic<int>[steps.size()]);
  for (size_t s = 0; s < steps.size(); ++s) {
    waiting[s].store(static_cast<int>(steps[s].after.size()), std::memory_order_relaxed);
  }
  tbb::task_group group;
  std::function<void(size_t)> start = [&](size_t s) {
    group.run([&, s] {
      tbb::this_task_arena::isolate([&] { run_step(s); });
      for (int n : steps[s].next) {
        if (waiting[static_cast<size_t>(n)].fetch_sub(1, std::memory_order_acq_rel) == 1) {
          start(static_cast<size_t>(n));
        }
      }
    });
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    if (steps[s].after.empty()) start(s);
  }
  group.wait();
}

}  // namespace

std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& inputs) {
  std::shared_ptr<Planned> planned;
  std::shared_ptr<Staged> staged;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->staged) {
      try {
        planned = impl_->planned_for(inputs);
      } catch (const ValueNeededAtRun& e) {
        impl_->stage(e);
      }
    }
    staged = impl_->staged;
  }
  if (staged) return impl_->run_staged(*staged, inputs);
  const Graph& graph = planned->graph;
  std::unique_ptr<BufferPool::Set> buffers =
      planned->buffers.take(planned->buffer_sizes, planned->buffer_on_device, [&](size_t b) {
        const Target& target = impl_->targets[static_cast<size_t>(planned->buffer_target[b])];
        return std::make_unique<BufferPool::DeviceBuffer>(target.plugin, target.device,
                                                          planned->buffer_sizes[b]);
      });
  std::vector<Tensor> outputs;
  const RunMemory memory = place_values(*planned, inputs, outputs, *buffers);
  std::vector<RegionProfile> profile(planned->steps.size());
  const auto run_start = std::chrono::steady_clock::now();
  const auto run_step = [&](size_t s) {
    Planned::Step& step = planned->steps[s];
    RegionProfile& rp = profile[s];
    rp.region = static_cast<int>(s);
    rp.plugin = step.region->plugin().name();
    std::lock_guard<std::mutex> region_lock(*step.mutex);
    const auto start = std::chrono::steady_clock::now();
    if (planned->step_uses_buffers[s]) {
      step.region->execute(memory.io_inputs.data() + memory.first_input[s],
                           memory.io_outputs.data() + memory.first_output[s]);
    } else {
      step.region->execute(memory.inputs.data() + memory.first_input[s],
                           memory.outputs.data() + memory.first_output[s]);
    }
    const auto end = std::chrono::steady_clock::now();
    rp.time_us = std::chrono::duration<double, std::micro>(end - start).count();
    rp.start_us = std::chrono::duration<double, std::micro>(start - run_start).count();
    rp.node_times_us = step.region->last_profile();
  };
  try {
    run_steps(*planned, run_step);
  } catch (...) {
    planned->buffers.give_back(std::move(buffers));
    throw;
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    Tensor& t = outputs[i];
    const void* produced = memory.location[static_cast<size_t>(graph.outputs[i])];
    if (t.nbytes() > 0 && produced != t.raw()) std::memcpy(t.raw(), produced, t.nbytes());
  }
  planned->buffers.give_back(std::move(buffers));
  RunStats stats;
  stats.host_device_bytes = planned->host_device_bytes;
  measure_overlap(profile, stats);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->last_profile = std::move(profile);
  impl_->last_stats = stats;
  return outputs;
}

const ExecutionPlan& Session::plan() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->staged) return impl_->staged_plan;
  return impl_->current ? impl_->current->plan : impl_->waiting_plan;
}

std::vector<RegionProfile> Session::profile() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last_profile;
}

RunStats Session::last_run_stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last_stats;
}

const Graph& Session::graph() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->staged) return impl_->given;
  return impl_->current ? impl_->current->graph : impl_->given;
}
const PluginHost& Session::plugin_host() const {
  return *impl_->host;
}

int Session::plans_held() const {
  std::shared_ptr<Staged> staged;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->staged) return static_cast<int>(impl_->plans.size());
    staged = impl_->staged;
  }
  std::lock_guard<std::mutex> lock(staged->mutex);
  return (staged->first ? staged->first->plans_held() : 0) +
         (staged->rest ? staged->rest->plans_held() : 0);
}

}  // namespace tessera
