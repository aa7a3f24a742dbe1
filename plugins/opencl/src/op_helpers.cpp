// Helpers shared by the OpenCL ops (tessera_opencl/op_helpers.hpp).
#include "tessera_opencl/op_helpers.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "tessera/checked_math.hpp"

namespace tessera::opencl {

std::string check_float_io(const NodeView& node, const char* plugin) {
  const std::string float_only = std::string("(") + plugin + " runs float32 only)";
  const std::string r = support::check_float_inputs(node, float_only.c_str());
  if (!r.empty()) return r;
  if (node.num_outputs() < 1 || node.output_index(0) < 0) return "output 0 is missing";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  return support::check_float_tensor(node.output(0), "output 0", float_only.c_str());
}

std::string check_float_data_io(const NodeView& node, const char* plugin) {
  if (!node.has_input(0) || node.input(0).dtype != TSR_DTYPE_FLOAT32) {
    return std::string("input 0 is not float32 (") + plugin + " runs float32 only)";
  }
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  if (node.output_index(0) < 0 || node.output(0).dtype != TSR_DTYPE_FLOAT32) {
    return "output 0 is not float32";
  }
  return "";
}

std::string check_alias(const NodeView& node, const Device&) {
  return support::check_alias(node);
}

void lower_alias(Lowering& lw, const NodeView& node, int32_t) {
  lw.alias(node.output_index(0), node.input_index(0));
}

StoragePlan follow_input0(const NodeView& node, const Lowering& lowering) {
  if (node.input(0).rank != 4 || lowering.storage(node.input_index(0)) != Storage::kNchw4c) {
    return {};
  }
  return {Storage::kNchw4c, {0}};
}

std::string element_defines(const tsr_tensor& t) {
  if (t.dtype == TSR_DTYPE_FLOAT32) return "";
  switch (element_bytes(t)) {
    case 1:
      return "-DTSR_ELEM=uchar";
    case 4:
      return "-DTSR_ELEM=uint";
    default:
      return "-DTSR_ELEM=ulong";
  }
}

void lower_strided_copy(Lowering& lw, const NodeView& node, int32_t index,
                        const support::StridedCopy& copy, int32_t output) {
  const int64_t n = plugin::tensor_numel(node.output(output));
  const Config config = lw.config_for("copy.strided", n);
  Kernel k = lw.kernel(config, element_defines(node.output(output)));
  support::bind_strided_copy(k, lw.buffer(node.input_index(0)),
                             lw.buffer(node.output_index(output)), to_i32(n, node), copy);
  lw.add_1d_step(index, std::move(k), n, config);
}

support::StridedCopy strided_copy_6d(const NodeView& node, const std::array<int64_t, 6>& dims,
                                     const std::array<int64_t, 6>& strides) {
  support::StridedCopy copy;
  for (size_t d = 0; d < 6; ++d) {
    copy.dims[d] = to_i32(dims[d], node);
    copy.strides[d] = to_i32(strides[d], node);
  }
  return copy;
}

}  // namespace tessera::opencl

namespace tessera::opencl {
namespace {

const Schedule kUnaryAny{"eltwise.any.unary", "unary.cl", "unary_any_f32", {wg_x_knob()}};
const Schedule kBinaryStrided{
    "eltwise.buffer.binary", "binary.cl", "binary_strided_f32", {wg_x_knob()}};
const Schedule kReduceAxes{"reduce.axes", "reduce.cl", "reduce_axes_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kUnaryAny);
TESSERA_OPENCL_SCHEDULE(kBinaryStrided);
TESSERA_OPENCL_SCHEDULE(kReduceAxes);
// `threads` work-items (a power of two) per output.
const Schedule kReduceAxesGroup{"reduce.axes.group",
                                "reduce.cl",
                                "reduce_axes_group_f32",
                                {{"threads", {32, 64, 128, 256}, false}}};
TESSERA_OPENCL_SCHEDULE(kReduceAxesGroup);
const Schedule kBinaryInt{
    "eltwise.buffer.binary_int", "binary.cl", "binary_strided_int", {wg_x_knob()}};
const Schedule kCompare{"compare.strided", "compare.cl", "compare_strided", {wg_x_knob()}};
const Schedule kArgReduce{"reduce.arg", "arg_reduce.cl", "arg_reduce", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kBinaryInt);
TESSERA_OPENCL_SCHEDULE(kCompare);
const Schedule kClassify{"classify", "compare.cl", "classify_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kClassify);
TESSERA_OPENCL_SCHEDULE(kArgReduce);

bool is_int_dtype(int32_t dtype) {
  return dtype == TSR_DTYPE_INT64 || dtype == TSR_DTYPE_INT32;
}

// Add, Sub, Mul, Div, Max or Min of int64 / int32 operands.
bool is_integer_arithmetic(const NodeView& node) {
  static const char* const kOps[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  const std::string op = node.op_type();
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps) &&
         is_int_dtype(node.input(0).dtype);
}

// check_broadcast_operands, and every input of input 0's dtype; `same_out`: the output's too.
std::string check_walk2(const NodeView& node, bool same_out) {
  const std::string r = check_broadcast_operands(node);
  if (!r.empty()) return r;
  for (int32_t i = 1; i < node.num_inputs(); ++i) {
    if (node.input(i).dtype != node.input(0).dtype) return "inputs differ in dtype";
  }
  if (same_out && node.output(0).dtype != node.input(0).dtype) {
    return "output 0's dtype differs from the inputs'";
  }
  return "";
}

std::string check_integer_arithmetic(const NodeView& node) {
  const std::string r = check_walk2(node, true);
  if (!r.empty()) return r;
  if (!is_int_dtype(node.output(0).dtype)) return "output 0 is not int64 or int32";
  if (node.op_type() != "Div") return "";
  // A kernel cannot stop on a zero divisor the way core's Div does (an error naming the node),
  // so only a constant divisor with no zero runs here.
  const tsr_tensor& b = node.input(1);
  if (b.data == nullptr) return "an integer divisor known only at run time may be zero";
  for (int64_t i = 0; i < plugin::tensor_numel(b); ++i) {
    const int64_t v = b.dtype == TSR_DTYPE_INT64 ? static_cast<const int64_t*>(b.data)[i]
                                                 : static_cast<const int32_t*>(b.data)[i];
    if (v == 0) return "an integer division by zero";
  }
  return "";
}

// y[i] = f(a, b) over the output's 6-slot walk (kernels whose arguments are a, b, y, n, od, sa,
// sb, code): binary_strided_int and compare_strided. One input: b is a.
void lower_walk2(Lowering& lw, const NodeView& node, int32_t index, const Schedule& schedule,
                 const std::string& defines, int32_t code) {
  const tsr_tensor& y = node.output(0);
  const int64_t n = plugin::tensor_numel(y);
  const int32_t second = node.num_inputs() > 1 ? 1 : 0;
  const support::StridedCopy wa = support::broadcast_walk(node, node.input(0), y);
  const support::StridedCopy wb = support::broadcast_walk(node, node.input(second), y);
  const Config config = lw.config_for(schedule.id, n);
  Kernel k = lw.kernel(config, defines);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.input_index(second)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32x8(wa.dims)
      .i32x8(wa.strides)
      .i32x8(wb.strides)
      .i32(code);
  lw.add_1d_step(index, std::move(k), n, config);
}

constexpr int kMaxReduceRank = 8;

// The axes a Reduce* node reduces (sorted, non-negative), or nullopt with `why`.
std::optional<std::vector<int64_t>> reduce_axes_of(const NodeView& node, std::string* why) {
  const bool from_input = node.num_inputs() > 1 && node.has_input(1);
  const bool listed = from_input || !node.attr_ints("axes", {}).empty();
  if (listed) return support::reduced_axes(node, why);
  if (node.attr_int("noop_with_empty_axes", 0) != 0) {
    *why = "noop_with_empty_axes with no axes (an identity) is left to another plugin";
    return std::nullopt;
  }
  std::vector<int64_t> all(static_cast<size_t>(node.input(0).rank));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  return all;
}

}  // namespace

std::string check_unary_any(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  if (plugin::tensor_numel(node.input(0)) != plugin::tensor_numel(node.output(0))) {
    return "input and output element counts differ";
  }
  return "";
}

void lower_unary_any(Lowering& lw, const NodeView& node, int32_t index, UnaryCode code, float a,
                     float b) {
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for(kUnaryAny.id, n);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(static_cast<int32_t>(code))
      .f32(a)
      .f32(b);
  lw.add_1d_step(index, std::move(k), n, config);
}

std::string check_binary_strided(const NodeView& node, const Device& device) {
  if (node.num_inputs() != 2 || !node.has_input(0) || !node.has_input(1)) {
    return "expects exactly 2 inputs";
  }
  if (is_integer_arithmetic(node)) return check_integer_arithmetic(node);
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  if (node.output(0).rank > 6) return "output rank above 6";
  return support::coalesce_broadcast(node.input(0), node.input(1), node.output(0))
             ? ""
             : "a broadcast that needs more than 4 dims after merging contiguous ones";
}

namespace {

// y = a op b over float buffers, a and b broadcasting to node's output 0 (`y`).
void add_binary_step(Lowering& lw, const NodeView& node, int32_t index, cl_mem a,
                     const tsr_tensor& ta, cl_mem b, const tsr_tensor& tb, BinaryCode code) {
  const tsr_tensor& y = node.output(0);
  const support::Broadcast4 bc = *support::coalesce_broadcast(ta, tb, y);
  const int64_t n = plugin::tensor_numel(y);
  const Config config = lw.config_for(kBinaryStrided.id, n);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(a)
      .buffer(b)
      .buffer(lw.buffer(node.output_index(0)))
      .i32x4(to_i32(bc.dims[0], node), to_i32(bc.dims[1], node), to_i32(bc.dims[2], node),
             to_i32(bc.dims[3], node))
      .i32x4(to_i32(bc.sa[0], node), to_i32(bc.sa[1], node), to_i32(bc.sa[2], node),
             to_i32(bc.sa[3], node))
      .i32x4(to_i32(bc.sb[0], node), to_i32(bc.sb[1], node), to_i32(bc.sb[2], node),
             to_i32(bc.sb[3], node))
      .i32(static_cast<int32_t>(code));
  lw.add_step(index, std::move(k), {static_cast<size_t>(std::max<int64_t>(n, 1))}, config);
}

}  // namespace

std::string check_variadic(const NodeView& node, const Device& device) {
  if (node.num_inputs() == 2 && node.op_type() != "Mean") return check_binary_strided(node, device);
  if (node.num_inputs() < 1) return "no inputs";
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  const tsr_tensor& y = node.output(0);
  if (y.rank > 6) return "output rank above 6";
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) return "input " + std::to_string(i) + " missing";
    if (!support::coalesce_broadcast(y, node.input(i), y)) {
      return "input " + std::to_string(i) + ": a broadcast that needs more than 4 dims";
    }
  }
  const int32_t second = node.num_inputs() > 1 ? 1 : 0;
  if (!support::coalesce_broadcast(node.input(0), node.input(second), y)) {
    return "inputs 0 and 1: a broadcast that needs more than 4 dims";
  }
  return "";
}

void lower_variadic(Lowering& lw, const NodeView& node, int32_t index, BinaryCode code) {
  const bool mean = node.op_type() == "Mean";
  if (node.num_inputs() == 2 && !mean) {
    lower_binary_strided(lw, node, index, code);
    return;
  }
  const tsr_tensor& y = node.output(0);
  const cl_mem out = lw.buffer(node.output_index(0));
  // The first step writes the output (a lone input as max(x, x), which is x whatever the op);
  // each later input folds into it in place, element i read before it is written.
  const int32_t second = node.num_inputs() > 1 ? 1 : 0;
  const BinaryCode first = node.num_inputs() == 1 ? BinaryCode::kMax : code;
  add_binary_step(lw, node, index, lw.buffer(node.input_index(0)), node.input(0),
                  lw.buffer(node.input_index(second)), node.input(second), first);
  for (int32_t i = 2; i < node.num_inputs(); ++i) {
    add_binary_step(lw, node, index, out, y, lw.buffer(node.input_index(i)), node.input(i), code);
  }
  if (mean && node.num_inputs() > 1) {
    tsr_tensor scalar{};
    scalar.dtype = TSR_DTYPE_FLOAT32;
    scalar.rank = 0;
    const float inv = 1.0f / static_cast<float>(node.num_inputs());
    add_binary_step(lw, node, index, out, y, lw.constant_buffer({inv}), scalar, BinaryCode::kMul);
  }
}

void lower_binary_strided(Lowering& lw, const NodeView& node, int32_t index, BinaryCode code) {
  if (is_integer_arithmetic(node)) {
    lower_walk2(lw, node, index, kBinaryInt,
                std::string("-DTSR_INT=") + opencl_c_type(node.input(0).dtype),
                static_cast<int32_t>(code));
    return;
  }
  add_binary_step(lw, node, index, lw.buffer(node.input_index(0)), node.input(0),
                  lw.buffer(node.input_index(1)), node.input(1), code);
}

std::string check_reduce_axes(const NodeView& node, const Device& device) {
  const std::string r = check_float_data_io(node, device.flavor.name);
  if (!r.empty()) return r;
  const tsr_tensor& x = node.input(0);
  if (x.rank < 1 || x.rank > kMaxReduceRank) {
    return "rank " + std::to_string(x.rank) + " (1 to 8 reduce here)";
  }
  std::string why;
  if (!reduce_axes_of(node, &why)) return why;
  return support::check_float_tensor(x, "input 0", "");
}

std::vector<Config> reduce_axes_options(const NodeView& node, const Device& device) {
  std::string why;
  const auto axes = reduce_axes_of(node, &why);
  return axes ? reduce_over_options(node, device, *axes)
              : std::vector<Config>{device.config(kReduceAxes.id, 1)};
}

std::vector<Config> reduce_over_options(const NodeView& node, const Device& device,
                                        const std::vector<int64_t>& axes) {
  const tsr_tensor& x = node.input(0);
  int64_t count = 1;
  for (int64_t a : axes) count *= x.dims[a];
  const int64_t n_out = count == 0 ? 0 : plugin::tensor_numel(x) / count;
  const Config per_item = device.config(kReduceAxes.id, n_out);
  if (n_out == 0 || count == 0) return {per_item};  // an empty launch has no work-group shape
  int32_t threads = 32;
  while (threads < 256 && threads * 8 < count) threads *= 2;
  const Config group = device.config(kReduceAxesGroup.id, n_out, {{"threads", threads}});
  // A GPU wants many work-items busy: a work-group per output when the outputs are too few to
  // fill it and each folds enough elements; a CPU device gains nothing from it.
  const bool few = n_out * 256 < support::busy_work_items(device.info);
  if (device.info.kind == "gpu" && few && count >= 256) return {group, per_item};
  return {per_item, group};
}

void lower_reduce_axes(Lowering& lw, const NodeView& node, int32_t index, ReduceCode code) {
  std::string why;
  lower_reduce_over(lw, node, index, code, *reduce_axes_of(node, &why));
}

void lower_reduce_over(Lowering& lw, const NodeView& node, int32_t index, ReduceCode code,
                       const std::vector<int64_t>& axes) {
  const tsr_tensor& x = node.input(0);
  std::array<int32_t, 8> out_dims{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<int32_t, 8> red_dims{1, 1, 1, 1, 1, 1, 1, 1};
  std::array<int32_t, 8> strides{0, 0, 0, 0, 0, 0, 0, 0};
  // Right-aligned in the 8 slots so the leading (unused) ones are 1 x stride 0.
  const int32_t shift = kMaxReduceRank - x.rank;
  int64_t stride = 1, count = 1;
  for (int32_t d = x.rank - 1; d >= 0; --d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    (reduced ? red_dims : out_dims)[shift + d] = to_i32(x.dims[d], node);
    strides[shift + d] = to_i32(stride, node);
    stride *= x.dims[d];
    if (reduced) count *= x.dims[d];
  }
  const int64_t n_out = plugin::tensor_numel(node.output(0));
  const Config config =
      choose_config(lw, index, lw.forced(reduce_over_options(node, lw.op_device(), axes)));
  Kernel k = lw.kernel(config);
  KernelArgs args = k.args();
  args.buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n_out, node))
      .i32(to_i32(count, node))
      .i32x8(out_dims)
      .i32x8(red_dims)
      .i32x8(strides)
      .i32(static_cast<int32_t>(code));
  if (std::string(config.schedule->id) == kReduceAxesGroup.id) {
    const int64_t threads = config.get("threads");
    args.local(static_cast<size_t>(threads) * sizeof(float));
    lw.add_step(index, std::move(k),
                {static_cast<size_t>(checked_mul(n_out, threads, "reduction work-items"))},
                {static_cast<size_t>(threads)}, config);
    return;
  }
  lw.add_1d_step(index, std::move(k), n_out, config);
}

const char* opencl_c_type(int32_t dtype) {
  switch (dtype) {
    case TSR_DTYPE_FLOAT32:
      return "float";
    case TSR_DTYPE_INT64:
      return "long";
    case TSR_DTYPE_INT32:
      return "int";
    case TSR_DTYPE_INT8:
      return "char";
    case TSR_DTYPE_UINT8:
    case TSR_DTYPE_BOOL:
      return "uchar";
    default:
      throw Error("dtype " + std::to_string(dtype) + " has no OpenCL C type here");
  }
}

std::string check_broadcast_operands(const NodeView& node) {
  if (node.num_outputs() < 1 || node.output_index(0) < 0) return "output 0 missing";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) return "optional output " + std::to_string(i) + " unsupported";
  }
  const tsr_tensor& y = node.output(0);
  std::string r = support::check_data_tensor(y, "output 0");
  if (!r.empty()) return r;
  if (y.rank > support::kMaxStridedRank) return "output rank above 6";
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    const std::string what = "input " + std::to_string(i);
    if (!node.has_input(i)) return what + " missing";
    const tsr_tensor& x = node.input(i);
    r = support::check_data_tensor(x, what);
    if (!r.empty()) return r;
    if (!support::broadcasts_to(x, y)) return what + " does not broadcast to the output";
  }
  return "";
}

std::string check_compare(const NodeView& node, const Device&) {
  const std::string op = node.op_type();
  const bool logical = op == "And" || op == "Or" || op == "Xor" || op == "Not";
  const int32_t inputs = op == "Not" ? 1 : 2;
  if (node.num_inputs() != inputs) return "expects " + std::to_string(inputs) + " inputs";
  const std::string r = check_walk2(node, false);
  if (!r.empty()) return r;
  if (node.output(0).dtype != TSR_DTYPE_BOOL) return "output 0 is not bool";
  const int32_t dtype = node.input(0).dtype;
  if (logical) return dtype == TSR_DTYPE_BOOL ? "" : "inputs are not bool";
  const bool ordered = dtype == TSR_DTYPE_FLOAT32 || is_int_dtype(dtype);
  if (ordered || (op == "Equal" && dtype == TSR_DTYPE_BOOL)) return "";
  return "inputs are not float32, int64 or int32";
}

void lower_compare(Lowering& lw, const NodeView& node, int32_t index, CompareCode code) {
  lower_walk2(lw, node, index, kCompare,
              std::string("-DTSR_T=") + opencl_c_type(node.input(0).dtype),
              static_cast<int32_t>(code));
}

std::string check_arg_reduce(const NodeView& node, const Device&) {
  if (!node.has_input(0) || node.num_outputs() != 1 || node.output_index(0) < 0) {
    return "input 0 or output 0 missing";
  }
  const tsr_tensor& x = node.input(0);
  std::string r = support::check_data_tensor(x, "input 0");
  if (!r.empty()) return r;
  if (x.dtype != TSR_DTYPE_FLOAT32 && !is_int_dtype(x.dtype)) {
    return "input 0 is not float32, int64 or int32";
  }
  if (node.output(0).dtype != TSR_DTYPE_INT64) return "output 0 is not int64";
  const int64_t axis = node.attr_int("axis", 0);
  if (x.rank < 1 || axis < -x.rank || axis >= x.rank) return "axis out of range";
  if (x.dims[axis < 0 ? axis + x.rank : axis] == 0) return "an empty axis has no extreme";
  return "";
}

void lower_arg_reduce(Lowering& lw, const NodeView& node, int32_t index, bool is_max) {
  const tsr_tensor& x = node.input(0);
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += x.rank;
  const auto [outer, inner] = outer_inner(x, axis);
  const int64_t n = outer * inner;
  const Config config = lw.config_for(kArgReduce.id, n);
  Kernel k = lw.kernel(config, std::string("-DTSR_T=") + opencl_c_type(x.dtype));
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(outer, node))
      .i32(to_i32(x.dims[axis], node))
      .i32(to_i32(inner, node))
      .i32(is_max ? 0 : 1)
      .i32(node.attr_int("select_last_index", 0) != 0 ? 1 : 0);
  lw.add_1d_step(index, std::move(k), n, config);
}

std::pair<int64_t, int64_t> outer_inner(const tsr_tensor& t, int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.dims[d];
  for (int64_t d = axis + 1; d < t.rank; ++d) inner *= t.dims[d];
  return {outer, inner};
}

std::string check_classify(const NodeView& node, const Device&) {
  if (node.num_inputs() != 1 || !node.has_input(0) || node.num_outputs() != 1 ||
      node.output_index(0) < 0) {
    return "expects 1 input and 1 output";
  }
  if (node.input(0).dtype != TSR_DTYPE_FLOAT32) return "input 0 is not float32";
  if (node.output(0).dtype != TSR_DTYPE_BOOL) return "output 0 is not bool";
  return support::check_data_tensor(node.input(0), "input 0");
}

void lower_classify(Lowering& lw, const NodeView& node, int32_t index, bool is_inf) {
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for(kClassify.id, n);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(is_inf ? 1 : 0)
      .i32(node.attr_int("detect_positive", 1) != 0 ? 1 : 0)
      .i32(node.attr_int("detect_negative", 1) != 0 ? 1 : 0);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace tessera::opencl
