// Definitions of the shared OpenCL plugin helpers declared in tessera_opencl/plugin_support.hpp.
#include "tessera_opencl/plugin_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

namespace tessera::opencl::support {

const tsr_attribute* NodeView::find_attribute(const char* name) const {
  for (int32_t i = 0; i < node_->num_attributes; ++i) {
    const tsr_attribute& a = node_->attributes[i];
    if (a.name && std::strcmp(a.name, name) == 0) return &a;
  }
  return nullptr;
}

int64_t NodeView::attr_int(const char* name, int64_t fallback) const {
  const tsr_attribute* a = find_attribute(name);
  if (!a) return fallback;
  if (a->kind != TSR_ATTR_INT) throw Error(describe() + ": attribute '" + name + "' is not an int");
  return a->i;
}

float NodeView::attr_float(const char* name, float fallback) const {
  const tsr_attribute* a = find_attribute(name);
  if (!a) return fallback;
  if (a->kind != TSR_ATTR_FLOAT) {
    throw Error(describe() + ": attribute '" + name + "' is not a float");
  }
  return a->f;
}

std::string NodeView::attr_string(const char* name, const std::string& fallback) const {
  const tsr_attribute* a = find_attribute(name);
  if (!a) return fallback;
  if (a->kind != TSR_ATTR_STRING || !a->s) {
    throw Error(describe() + ": attribute '" + name + "' is not a string");
  }
  return a->s;
}

std::vector<int64_t> NodeView::attr_ints(const char* name,
                                         const std::vector<int64_t>& fallback) const {
  const tsr_attribute* a = find_attribute(name);
  if (!a) return fallback;
  if (a->kind != TSR_ATTR_INTS) throw Error(describe() + ": attribute '" + name + "' is not ints");
  return std::vector<int64_t>(a->ints, a->ints + a->count);
}

bool contains_ci(const std::string& hay, const std::string& needle) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return lower(hay).find(lower(needle)) != std::string::npos;
}

void write_message(tsr_message message, const std::string& text) {
  if (!message.text || message.capacity == 0) return;
  std::snprintf(message.text, message.capacity, "%s", text.c_str());
}

Window2d window_2d(const NodeView& node, const std::array<int64_t, 2>& kernel) {
  // A 1-D window (rank-3 input) is the 2-D one of height 1: no stride, dilation or pad there.
  const bool one_d = node.has_input(0) && node.input(0).rank == 3;
  std::vector<int64_t> strides = node.attr_ints("strides", one_d ? std::vector<int64_t>{1}
                                                                 : std::vector<int64_t>{1, 1});
  std::vector<int64_t> dilations = node.attr_ints(
      "dilations", one_d ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 1});
  std::vector<int64_t> pads = node.attr_ints(
      "pads", one_d ? std::vector<int64_t>{0, 0} : std::vector<int64_t>{0, 0, 0, 0});
  if (one_d && strides.size() == 1 && dilations.size() == 1 && pads.size() == 2) {
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4) {
    throw Error(node.describe() + ": strides, dilations and pads must describe a 1-D or 2-D " +
                "window");
  }
  Window2d w;
  w.kernel = kernel;
  w.strides = {strides[0], strides[1]};
  w.dilations = {dilations[0], dilations[1]};
  w.pads = {pads[0], pads[1], pads[2], pads[3]};
  return w;
}

Window2d pool_window_2d(const NodeView& node) {
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape", {});
  if (kernel.size() == 1) return window_2d(node, {1, kernel[0]});
  return window_2d(node, {kernel.at(0), kernel.at(1)});
}

std::array<int64_t, 4> nchw_dims(const tsr_tensor& t) {
  if (t.rank == 3) return {t.dims[0], t.dims[1], 1, t.dims[2]};
  if (t.rank != 4) throw Error("nchw_dims: rank " + std::to_string(t.rank) + " is not 3 or 4");
  return {t.dims[0], t.dims[1], t.dims[2], t.dims[3]};
}

std::string check_data_tensor(const tsr_tensor& t, const std::string& what) {
  switch (t.dtype) {
    case TSR_DTYPE_FLOAT32:
    case TSR_DTYPE_INT64:
    case TSR_DTYPE_INT32:
    case TSR_DTYPE_INT8:
    case TSR_DTYPE_UINT8:
    case TSR_DTYPE_BOOL:
      break;
    default:
      return what + " has dtype " + std::to_string(t.dtype) + ", which device memory does not hold";
  }
  if (t.rank < 0 || t.rank > TESSERA_MAX_RANK) return what + " has an unknown rank";
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.dims[d] < 0) return what + " has an unknown dim";
  }
  if (plugin::tensor_numel(t) > INT_MAX / 2) {
    return what + " is too large for 32-bit kernel indexing";
  }
  return "";
}

std::string check_alias(const NodeView& node) {
  if (!node.has_input(0)) return "input 0 missing";
  std::string r = check_data_tensor(node.input(0), "input 0");
  if (!r.empty()) return r;
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  if (node.output_index(0) < 0) return "output 0 missing";
  // The output shares the input's bytes: a Cast aliases only when it changes nothing.
  if (node.output(0).dtype != node.input(0).dtype) return "output 0's dtype differs from input 0's";
  if (plugin::tensor_numel(node.output(0)) != plugin::tensor_numel(node.input(0))) {
    return "output and input element counts differ";
  }
  return "";
}

int32_t Config::get(const std::string& knob) const {
  for (size_t i = 0; i < schedule->knobs.size() && i < values.size(); ++i) {
    if (knob == schedule->knobs[i].name) return values[i];
  }
  throw Error(std::string("schedule '") + schedule->id + "' has no knob '" + knob + "'");
}

void Config::set(const std::string& knob, int32_t value) {
  for (size_t i = 0; i < schedule->knobs.size() && i < values.size(); ++i) {
    if (knob == schedule->knobs[i].name) {
      values[i] = value;
      return;
    }
  }
  throw Error(std::string("schedule '") + schedule->id + "' has no knob '" + knob + "'");
}

std::string Config::str() const {
  std::string s = std::string(schedule->id) + "{";
  for (size_t i = 0; i < schedule->knobs.size() && i < values.size(); ++i) {
    s += (i ? "," : "") + std::string(schedule->knobs[i].name) + "=" + std::to_string(values[i]);
  }
  return s + "}";
}

std::string Config::defines() const {
  std::string out;
  for (size_t i = 0; i < schedule->knobs.size() && i < values.size(); ++i) {
    if (!schedule->knobs[i].build_time) continue;
    std::string macro;
    if (schedule->knobs[i].macro != nullptr) {
      macro = schedule->knobs[i].macro;
    } else {
      for (const char* p = schedule->knobs[i].name; *p; ++p) {
        macro += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
      }
    }
    out += " -D" + macro + "=" + std::to_string(values[i]);
  }
  return out;
}

int32_t default_wg_x(const Schedule& s, const DeviceInfo& device, int64_t work_dim0, int64_t cap) {
  int64_t limit = device.max_work_group_size > 0 ? device.max_work_group_size : 64;
  if (!device.max_work_item_sizes.empty() && device.max_work_item_sizes[0] > 0) {
    limit = std::min(limit, device.max_work_item_sizes[0]);
  }
  limit = std::min(limit, cap);
  int32_t best = 0;
  for (const Knob& k : s.knobs) {
    if (std::string(k.name) != "wg_x") continue;
    for (int32_t v : k.candidates) {
      if (v > 0 && v <= limit && (best == 0 || v <= work_dim0)) best = std::max(best, v);
    }
  }
  return best;
}

int64_t busy_work_items(const DeviceInfo& device) {
  const int64_t units = std::max<int32_t>(device.compute_units, 1);
  return device.kind == "gpu" ? units * 1024 : units * 64;
}

int64_t split_local_bytes(int64_t lx, int64_t ks, int64_t tile_bytes) {
  return lx * (ks - 1) * tile_bytes;
}

std::optional<std::pair<int64_t, int64_t>> split_group(int64_t wg_x, int64_t ks, int64_t tile_bytes,
                                                       const DeviceInfo& device) {
  int64_t lx = wg_x > 0 ? wg_x : std::max<int64_t>(1, 64 / ks);
  const int64_t max_group = device.max_work_group_size > 0 ? device.max_work_group_size : 64;
  const int64_t local_limit = device.local_memory_bytes > 0 ? device.local_memory_bytes : 16384;
  if (ks < 1 || ks > max_group) return std::nullopt;
  while (lx > 1 && (lx * ks > max_group || split_local_bytes(lx, ks, tile_bytes) > local_limit)) {
    lx /= 2;
  }
  if (split_local_bytes(lx, ks, tile_bytes) > local_limit) return std::nullopt;
  return std::make_pair(lx, ks);
}

SplitLaunch split_launch(const std::pair<int64_t, int64_t>& group, int64_t tile_bytes, int64_t dim0,
                         int64_t dim1) {
  const auto [lx, ks] = group;
  SplitLaunch l;
  l.global = {static_cast<size_t>(dim0), static_cast<size_t>(dim1), static_cast<size_t>(ks)};
  l.local = {static_cast<size_t>(lx), 1, static_cast<size_t>(ks)};
  // A zero-sized __local argument is invalid: one float4 at least.
  l.scratch_bytes =
      static_cast<size_t>(std::max<int64_t>(split_local_bytes(lx, ks, tile_bytes), 16));
  return l;
}

int32_t default_split(int64_t items, int64_t blocks, const DeviceInfo& device) {
  int32_t ks = 1;
  while (ks < 32 && items * ks < busy_work_items(device) && blocks / (ks * 2) >= 4) ks *= 2;
  return ks;
}

size_t round_up(size_t global, size_t local) {
  return local == 0 ? global : (global + local - 1) / local * local;
}

void fit_launch(const Kernel& kernel, std::vector<size_t>& global, std::vector<size_t>& local) {
  const bool any_local = std::any_of(local.begin(), local.end(), [](size_t l) { return l > 0; });
  if (!any_local) {
    local.clear();
  } else {
    local.resize(global.size(), 1);
    size_t product = 1;
    for (size_t& l : local) {
      if (l == 0) l = 1;
      product *= l;
    }
    const size_t limit = kernel.max_work_group_size();
    for (size_t d = 0; d < local.size(); ++d) {
      while (product > limit && local[d] > 1) {
        product /= local[d];
        local[d] /= 2;
        product *= local[d];
      }
    }
    for (size_t i = 0; i < global.size(); ++i) {
      global[i] = round_up(std::max<size_t>(global[i], 1), local[i]);
    }
  }
  for (size_t& g : global) {
    if (g == 0) g = 1;
  }
}

std::string workload_key(const NodeView& node, const char* layout) {
  auto dims = [](const tsr_tensor& t) {
    std::string s;
    for (int32_t d = 0; d < t.rank; ++d) s += (d ? "x" : "") + std::to_string(t.dims[d]);
    return s.empty() ? std::string("scalar") : s;
  };
  // Op names lower-cased: the pack format's keys start with [a-z0-9_]+.
  std::string op = node.op_type();
  for (char& c : op) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::ostringstream key;
  key << op << "|in=";
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    key << (i ? "," : "");
    if (!node.has_input(i)) {
      key << "-";
      continue;
    }
    key << dims(node.input(i)) << (node.input(i).data ? "c" : "");
  }
  key << "|out=";
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    key << (i ? "," : "") << (node.output_index(i) >= 0 ? dims(node.output(i)) : "-");
  }
  std::map<std::string, std::string> attrs;
  for (int32_t i = 0; i < node.raw().num_attributes; ++i) {
    const tsr_attribute* a = &node.raw().attributes[i];
    if (!a->name) continue;
    std::ostringstream v;
    switch (a->kind) {
      case TSR_ATTR_INT:
        v << a->i;
        break;
      case TSR_ATTR_FLOAT:
        v << a->f;
        break;
      case TSR_ATTR_STRING:
        v << (a->s ? a->s : "");
        break;
      case TSR_ATTR_INTS:
        for (int64_t i = 0; i < a->count; ++i) v << (i ? "," : "") << a->ints[i];
        break;
      default:
        v << "?";
        break;
    }
    attrs[a->name] = v.str();
  }
  for (const auto& [name, value] : attrs) key << "|" << name << "=" << value;
  const int32_t dtype = node.num_inputs() > 0 && node.has_input(0) ? node.input(0).dtype : 0;
  key << "|"
      << (dtype == TSR_DTYPE_FLOAT32   ? "f32"
          : dtype == TSR_DTYPE_FLOAT16 ? "f16"
                                       : "dt" + std::to_string(dtype))
      << "|" << layout;
  return key.str();
}

double node_flops(const NodeView& node) {
  const std::string op = node.op_type();
  if (node.num_outputs() < 1 || node.output_index(0) < 0) return 0.0;
  const double out = static_cast<double>(plugin::tensor_numel(node.output(0)));
  if (op == "Conv" && node.has_input(1) && node.input(1).rank >= 3) {
    const tsr_tensor& w = node.input(1);
    double per_output = 1.0;
    for (int32_t d = 1; d < w.rank; ++d) per_output *= static_cast<double>(w.dims[d]);
    return 2.0 * out * per_output;
  }
  if ((op == "Gemm" || op == "MatMul") && node.has_input(0) && node.input(0).rank >= 1) {
    const tsr_tensor& a = node.input(0);
    int64_t k = a.dims[a.rank - 1];
    if (op == "Gemm" && node.attr_int("transA", 0) != 0 && a.rank == 2) k = a.dims[0];
    return 2.0 * out * static_cast<double>(k);
  }
  return out;
}

int32_t option_int(const std::string& name, const std::string& value) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || v < INT32_MIN || v > INT32_MAX) {
    throw Error("option '" + name + "' = '" + value + "' is not an integer");
  }
  return static_cast<int32_t>(v);
}

void CompiledSteps::add_step(int32_t node, Kernel kernel, std::vector<size_t> global,
                             std::vector<size_t> local, const std::string& config) {
  fit_launch(kernel, global, local);
  steps.push_back(Step{node, std::move(kernel), std::move(global), std::move(local), config});
}

void CompiledSteps::execute(const void* const* in, void* const* out) {
  std::vector<tsr_io> ins(inputs.size()), outs(outputs.size());
  for (size_t i = 0; i < ins.size(); ++i) ins[i].host = const_cast<void*>(in[i]);
  for (size_t i = 0; i < outs.size(); ++i) outs[i].host = out[i];
  execute(ins.data(), outs.data());
}

void CompiledSteps::execute(const tsr_io* in, const tsr_io* out) {
  // Where a failure happened, turned into words only in the handler (the loop below is the
  // per-run hot path): 0 inputs, 1 launches, 2 outputs, 3 finish; `at` indexes the phase.
  int phase = 0;
  size_t at = 0;
  try {
    for (; at < inputs.size(); ++at) {
      if (in[at].buffer != nullptr) {
        context->copy(reinterpret_cast<cl_mem>(in[at].buffer), inputs[at]->get(), input_bytes[at]);
      } else {
        context->write(*inputs[at], in[at].host, input_bytes[at]);
      }
    }
    phase = 1;
    static const int32_t kClear = 0;  // static: the write may complete after this returns
    for (const Check& c : checks) context->write(*c.flag, &kClear, sizeof(kClear));
    std::vector<Event> events;
    if (profile) events.reserve(steps.size());
    for (at = 0; at < steps.size(); ++at) {
      const Step& s = steps[at];
      if (profile) {
        events.push_back(context->launch(s.kernel, s.global, s.local));
      } else {
        context->launch(s.kernel, s.global, s.local, /*timed=*/false);
      }
    }
    phase = 2;
    for (at = 0; at < outputs.size(); ++at) {
      if (out[at].buffer != nullptr) {
        context->copy(outputs[at]->get(), reinterpret_cast<cl_mem>(out[at].buffer),
                      output_bytes[at]);
      } else {
        context->read(*outputs[at], out[at].host, output_bytes[at]);
      }
    }
    phase = 3;
    context->finish();
    for (const Check& c : checks) {
      int32_t set = 0;
      context->read(*c.flag, &set, sizeof(set));
      if (set != 0) throw Error(label(c.node) + ": " + c.what);
    }
    if (profile) {
      last_times_us.assign(static_cast<size_t>(num_nodes), 0.0);
      for (size_t i = 0; i < steps.size(); ++i) {
        last_times_us[static_cast<size_t>(steps[i].node)] += events[i].duration_us();
      }
    }
  } catch (const ClError& e) {
    context->drain();
    throw ClError(e.code(), where(phase, at) + ": " + e.what());
  } catch (...) {
    context->drain();
    throw;
  }
}

std::string CompiledSteps::where(int phase, size_t at) const {
  switch (phase) {
    case 0:
      return "writing input " + std::to_string(at) + " of " + all_nodes();
    case 1:
      return at < steps.size() ? label(steps[at].node) + " [" + steps[at].config + "]"
                               : all_nodes();
    case 2:
      return "reading output " + std::to_string(at) + " of " + all_nodes();
    default:
      return "finishing " + all_nodes();
  }
}

std::string CompiledSteps::label(int32_t node) const {
  return node >= 0 && static_cast<size_t>(node) < node_labels.size()
             ? node_labels[static_cast<size_t>(node)]
             : "node #" + std::to_string(node);
}

std::string CompiledSteps::all_nodes() const {
  if (node_labels.empty()) return "the region";
  if (node_labels.size() == 1) return "the region of " + node_labels.front();
  return "the region of " + node_labels.front() + " .. " + node_labels.back();
}

const Program& ProgramPool::get(Context& context, const std::string& file,
                                const std::string& options) {
  const std::string key = file + "\n" + options;
  auto it = programs_.find(key);
  if (it != programs_.end()) return *it->second;
  auto program = std::make_unique<Program>(context.build(file, source(file), options));
  return *programs_.emplace(key, std::move(program)).first->second;
}

std::string ProgramPool::source(const std::string& file) const {
  const char* common = kernel_source_("common.cl");
  const char* helpers = kernel_source_("helpers.cl");
  const char* body = kernel_source_(file.c_str());
  if (!common || !body) {
    throw Error(std::string(plugin_) + ": kernel source '" + file + "' is not embedded");
  }
  return std::string(common) + (helpers ? helpers : "") + body;
}

std::string write_new_source_file(const std::string& dir, const std::string& stem,
                                  const std::string& content) {
  bool raced = false;  // the name was taken between our look and our link
  for (int n = 1; n < 10000; ++n) {
    const std::string path =
        dir + "/" + stem + (n == 1 ? std::string() : "." + std::to_string(n)) + ".cl";
    // Only a file of content's size can hold the same source: a larger one is not read.
    const RegularFile existing = read_regular_file(path, content.size());
    if (existing.state == RegularFile::State::kRead && existing.bytes == content) return path;
    // A name that still looks free after a lost race (a dangling symlink) is passed over too.
    if (existing.state != RegularFile::State::kMissing || raced) {
      raced = false;
      continue;
    }
    std::string tmp = dir + "/." + stem + ".XXXXXX";
    std::vector<char> tmpl(tmp.begin(), tmp.end());
    tmpl.push_back('\0');
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
      throw Error("cannot create a temporary file in kernel dump directory '" + dir +
                  "': " + std::strerror(errno) + " (does it exist and is it writable?)");
    }
    tmp = tmpl.data();
    // mkstemp creates the file 0600; a kernel source is for people and tools to read, so it gets
    // the mode any new file would (0666 less the process umask, read once: umask() can only be
    // read by setting it).
    static const mode_t kUmask = [] {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      return mask;
    }();
    bool ok = ::fchmod(fd, 0666 & ~kUmask) == 0;
    size_t done = 0;
    while (ok && done < content.size()) {
      const ssize_t w = ::write(fd, content.data() + done, content.size() - done);
      if (w < 0 && errno == EINTR) continue;
      ok = w > 0;
      if (ok) done += static_cast<size_t>(w);
    }
    ok = ok && ::fsync(fd) == 0;
    const int write_errno = errno;
    ::close(fd);
    if (!ok) {
      ::unlink(tmp.c_str());
      throw Error("cannot write kernel source '" + path + "': " + std::strerror(write_errno));
    }
    if (::link(tmp.c_str(), path.c_str()) == 0) {
      ::unlink(tmp.c_str());
      return path;
    }
    const int link_errno = errno;
    ::unlink(tmp.c_str());
    if (link_errno == EEXIST) {
      --n;  // someone created it meanwhile: compare with theirs
      raced = true;
      continue;
    }
    throw Error("cannot create kernel source '" + path + "': " + std::strerror(link_errno));
  }
  throw Error("kernel dump directory '" + dir + "' already holds 9999 different '" + stem +
              "' sources; pick an empty directory");
}

void KernelDump::add(const std::string& kernel, const std::string& file, const std::string& source,
                     const std::string& build_options, const std::string& node) {
  for (Entry& e : entries_) {
    if (e.kernel == kernel && e.file == file && e.build_options == build_options) {
      if (std::find(e.nodes.begin(), e.nodes.end(), node) == e.nodes.end()) {
        e.nodes.push_back(node);
      }
      return;
    }
  }
  entries_.push_back({kernel, file, source, build_options, {node}});
}

std::vector<std::string> KernelDump::write(const std::string& dir,
                                           const std::string& plugin) const {
  std::vector<std::string> paths;
  for (const Entry& e : entries_) {
    std::string nodes;
    for (const std::string& n : e.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
    std::string header = "/* tessera " + plugin + ": kernel " + e.kernel + " of kernels/" + e.file +
                         " (with common.cl prepended)\n * node(s): " + nodes +
                         "\n * build options: " + e.build_options + "\n */\n";
    // A node name holding "*/" must not end the comment early.
    const std::string body = header.substr(3, header.size() - 7);  // between "/* " and " */\n"
    std::string safe;
    for (size_t i = 0; i < body.size(); ++i) {
      safe += body[i];
      if (body[i] == '*' && i + 1 < body.size() && body[i + 1] == '/') safe += '_';
    }
    header = "/* " + safe + " */\n";
    std::string stem;
    for (char c : e.kernel) {
      stem += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
    }
    paths.push_back(write_new_source_file(dir, stem.empty() ? "kernel" : stem, header + e.source));
  }
  return paths;
}

Kernel pooled_kernel(ProgramPool& pool, Context& context, const Config& config,
                     const std::string& options, KernelDump* dump, const std::string& node) {
  Kernel k =
      pool.get(context, config.schedule->kernel_file, options).kernel(config.schedule->kernel_name);
  if (dump != nullptr) {
    dump->add(config.schedule->kernel_name, config.schedule->kernel_file,
              pool.source(config.schedule->kernel_file), options, node);
  }
  return k;
}

}  // namespace tessera::opencl::support
