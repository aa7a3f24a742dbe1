// The CLML emulator layer (clml_emulator.h): layer entry points, the device extension, the
// interface tables, and each CLML function as host loops over the cl_mem contents.
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "clml_emulator.h"

#include <CL/cl_icd.h>
#include <CL/cl_layer.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "api/clml_api.h"

#define CLML_EMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

const cl_icd_dispatch* g_next = nullptr;
cl_icd_dispatch g_layer;
bool g_active = false;

// ---- faults and counters ----

struct Rule {
  int64_t skip = 0, times = 0, calls = 0, injected = 0;
  cl_int error = 0;
  bool armed = false;
};

struct State {
  std::mutex mutex;
  std::map<std::string, Rule> rules;
  std::map<std::string, int64_t> live;
  int64_t tuning_hits = 0;
};

State& state() {
  static State s;
  return s;
}

// Counts a call of `name`; CL_SUCCESS, or the armed error when its rule fires.
cl_int call(const char* name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Rule& r = state().rules[name];
  ++r.calls;
  if (!r.armed || r.calls <= r.skip) return CL_SUCCESS;
  if (r.times >= 0 && r.injected >= r.times) return CL_SUCCESS;
  ++r.injected;
  return r.error != 0 ? r.error : CL_OUT_OF_RESOURCES;
}

void live(const char* kind, int64_t delta) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().live[kind] += delta;
}

#define EMU_CALL(name)                       \
  do {                                       \
    const cl_int fault_ = call(name);        \
    if (fault_ != CL_SUCCESS) return fault_; \
  } while (0)

// ---- tensors and their memory ----

struct Tensor {
  cl_ml_tensor_desc_qcom desc;
  bool unused() const { return desc.num_dimensions == CL_TENSOR_UNUSED_QCOM; }
  size_t elements() const { return size_t(desc.n) * desc.c * desc.h * desc.w; }
  size_t element_bytes() const { return desc.data_type == CL_HALF_FLOAT ? 2 : 4; }
  size_t padded_c() const { return (desc.c + 3) / 4 * 4; }
  size_t memory_bytes() const {
    if (desc.layout == CL_TENSOR_LAYOUT_OPTIMAL_QCOM) {
      return size_t(desc.n) * desc.h * desc.w * padded_c() * element_bytes();
    }
    return elements() * element_bytes();
  }
};

Tensor* T(cl_ml_tensor_qcom t) {
  return reinterpret_cast<Tensor*>(t);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int e = int((x >> 23) & 0xffu) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xffu) == 0xffu) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (e >= 31) return uint16_t(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return uint16_t(sign | h);
}

// Offset (in elements) of NCHW element (n, c, h, w) in memory of `layout`.
size_t offset(const Tensor& t, cl_ml_tensor_layout_qcom layout, size_t n, size_t c, size_t h,
              size_t w) {
  const cl_ml_tensor_desc_qcom& d = t.desc;
  switch (layout) {
    case CL_TENSOR_LAYOUT_OPTIMAL_QCOM:
      return ((n * d.h + h) * d.w + w) * t.padded_c() + c;
    case CL_TENSOR_LAYOUT_NHWC_QCOM:
      return ((n * d.h + h) * d.w + w) * d.c + c;
    default:
      return ((n * d.c + c) * d.h + h) * d.w + w;
  }
}

size_t layout_bytes(const Tensor& t, cl_ml_tensor_layout_qcom layout) {
  Tensor view = t;
  view.desc.layout = layout;
  return view.memory_bytes();
}

// Raw bytes of `layout` -> NCHW floats.
std::vector<float> decode(const Tensor& t, cl_ml_tensor_layout_qcom layout,
                          const std::vector<unsigned char>& raw) {
  const cl_ml_tensor_desc_qcom& d = t.desc;
  std::vector<float> out(t.elements());
  size_t i = 0;
  for (size_t n = 0; n < d.n; ++n)
    for (size_t c = 0; c < d.c; ++c)
      for (size_t h = 0; h < d.h; ++h)
        for (size_t w = 0; w < d.w; ++w, ++i) {
          const size_t at = offset(t, layout, n, c, h, w);
          if (t.element_bytes() == 2) {
            uint16_t v;
            std::memcpy(&v, raw.data() + at * 2, 2);
            out[i] = half_to_float(v);
          } else {
            std::memcpy(&out[i], raw.data() + at * 4, 4);
          }
        }
  return out;
}

std::vector<unsigned char> encode(const Tensor& t, cl_ml_tensor_layout_qcom layout,
                                  const std::vector<float>& values) {
  const cl_ml_tensor_desc_qcom& d = t.desc;
  std::vector<unsigned char> raw(layout_bytes(t, layout), 0);
  size_t i = 0;
  for (size_t n = 0; n < d.n; ++n)
    for (size_t c = 0; c < d.c; ++c)
      for (size_t h = 0; h < d.h; ++h)
        for (size_t w = 0; w < d.w; ++w, ++i) {
          const size_t at = offset(t, layout, n, c, h, w);
          if (t.element_bytes() == 2) {
            const uint16_t v = float_to_half(values[i]);
            std::memcpy(raw.data() + at * 2, &v, 2);
          } else {
            std::memcpy(raw.data() + at * 4, &values[i], 4);
          }
        }
  return raw;
}

cl_int read_mem(cl_command_queue q, cl_mem mem, std::vector<unsigned char>& raw) {
  if (!mem) return CL_INVALID_MEM_OBJECT;
  size_t size = 0;
  cl_int err = g_next->clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr);
  if (err != CL_SUCCESS) return err;
  if (size < raw.size()) return CL_INVALID_BUFFER_SIZE;
  return g_next->clEnqueueReadBuffer(q, mem, CL_TRUE, 0, raw.size(), raw.data(), 0, nullptr,
                                     nullptr);
}

cl_int write_mem(cl_command_queue q, cl_mem mem, const std::vector<unsigned char>& raw) {
  if (!mem) return CL_INVALID_MEM_OBJECT;
  size_t size = 0;
  cl_int err = g_next->clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr);
  if (err != CL_SUCCESS) return err;
  if (size < raw.size()) return CL_INVALID_BUFFER_SIZE;
  return g_next->clEnqueueWriteBuffer(q, mem, CL_TRUE, 0, raw.size(), raw.data(), 0, nullptr,
                                      nullptr);
}

// The tensor's NCHW values from `mem` in its own layout.
cl_int load(cl_command_queue q, const Tensor& t, cl_mem mem, std::vector<float>& out) {
  std::vector<unsigned char> raw(t.memory_bytes());
  const cl_int err = read_mem(q, mem, raw);
  if (err == CL_SUCCESS) out = decode(t, t.desc.layout, raw);
  return err;
}

cl_int store(cl_command_queue q, const Tensor& t, cl_mem mem, const std::vector<float>& values) {
  return write_mem(q, mem, encode(t, t.desc.layout, values));
}

cl_int finish_event(cl_command_queue q, cl_uint nwait, const cl_event* wait, cl_event* event) {
  if (nwait > 0) {
    const cl_int err = g_next->clWaitForEvents(nwait, wait);
    if (err != CL_SUCCESS) return err;
  }
  if (event) return g_next->clEnqueueMarkerWithWaitList(q, 0, nullptr, event);
  return CL_SUCCESS;
}

// ---- ops ----

enum class Kind {
  kConv,
  kActivation,
  kBatchNorm,
  kPool,
  kFullyConnected,
  kBinary,
  kSoftmax,
  kConcat,
  kReshape,
  kPad,
  kResize,
  kClip
};

struct Op {
  Kind kind;
  std::vector<Tensor*> t;  // operands in the create call's order (inputs first, output last)
  cl_ml_op_convolution_desc_qcom conv{};
  bool has_activation = false;
  cl_ml_op_activation_desc_qcom act{};
  cl_ml_op_pooling_desc_qcom pool{};
  cl_ml_op_binary_desc_qcom binary{};
  cl_ml_op_softmax_desc_qcom softmax{};
  cl_ml_op_concat_desc_qcom concat{};
  cl_ml_op_pad_desc_qcom pad{};
  cl_ml_op_resize_bilinear_desc_qcom resize{};
  cl_ml_op_clip_desc_qcom clip{};
  float epsilon = 1e-5f;
  std::string key;  // for the tuning cache
};

struct TuningCache {
  std::map<std::string, uint32_t> entries;
};

struct DescSet {
  std::map<const Tensor*, cl_mem> memory;
};

std::string dims_key(const Tensor* t) {
  const auto& d = t->desc;
  return std::to_string(d.n) + "x" + std::to_string(d.c) + "x" + std::to_string(d.h) + "x" +
         std::to_string(d.w) + "t" + std::to_string(d.data_type);
}

cl_int create_op(Op* op, cl_ml_op_qcom* out, cl_ml_tuningcache_qcom cache) {
  if (!out) {
    delete op;
    return CL_INVALID_VALUE;
  }
  op->key = std::to_string(int(op->kind));
  for (const Tensor* t : op->t) op->key += "|" + (t ? dims_key(t) : std::string("-"));
  if (cache) {
    auto* tc = reinterpret_cast<TuningCache*>(cache);
    if (tc->entries.count(op->key)) {
      std::lock_guard<std::mutex> lock(state().mutex);
      ++state().tuning_hits;
    }
  }
  *out = reinterpret_cast<cl_ml_op_qcom>(op);
  live("op", 1);
  return CL_SUCCESS;
}

bool same_dims(const Tensor* a, const Tensor* b) {
  return a->desc.n == b->desc.n && a->desc.c == b->desc.c && a->desc.h == b->desc.h &&
         a->desc.w == b->desc.w;
}

float activate(cl_activation_function_qcom f, float x) {
  switch (f) {
    case CL_ACTIVATION_RELU:
      return x > 0 ? x : 0;
    case CL_ACTIVATION_RELU6:
      return std::min(std::max(x, 0.0f), 6.0f);
    case CL_ACTIVATION_SIGMOID:
      return 1.0f / (1.0f + std::exp(-x));
    case CL_ACTIVATION_TANH:
      return std::tanh(x);
    default:
      return x;
  }
}

cl_int conv_output_ok(const Op& op) {
  const auto& in = op.t[0]->desc;
  const auto& w = op.t[1]->desc;
  const auto& out = op.t.back()->desc;
  const auto& c = op.conv;
  const cl_uint groups = c.mode == CL_CONVOLUTION_MODE_DEPTHWISE_QCOM ? in.c : c.group_count;
  if (groups == 0 || in.c % groups || w.c != in.c / groups || out.c != w.n || out.n != in.n) {
    return CL_INVALID_VALUE;
  }
  for (int k = 0; k < 2; ++k) {
    const long size = k == 0 ? in.h : in.w;
    const long kernel = k == 0 ? w.h : w.w;
    const long eff = (kernel - 1) * c.dilation[k] + 1;
    if (c.filter_stride[k] == 0) return CL_INVALID_VALUE;
    const long o =
        (size + c.input_padding_before[k] + c.input_padding_after[k] - eff) / c.filter_stride[k] +
        1;
    if (o != (k == 0 ? long(out.h) : long(out.w))) return CL_INVALID_VALUE;
  }
  return CL_SUCCESS;
}

// Runs `op` with its tensors' memory from `set`.
cl_int run(cl_command_queue q, Op& op, DescSet& set) {
  std::vector<std::vector<float>> in;
  std::vector<cl_mem> mem;
  for (Tensor* t : op.t) {
    if (!t || t->unused()) {
      mem.push_back(nullptr);
      continue;
    }
    auto it = set.memory.find(t);
    if (it == set.memory.end()) return CL_INVALID_MEM_OBJECT;
    mem.push_back(it->second);
  }
  // Every operand but the output is read (the binary op also reads C when gamma != 0).
  for (size_t i = 0; i + 1 < op.t.size(); ++i) {
    in.emplace_back();
    if (!op.t[i] || op.t[i]->unused()) continue;
    const cl_int err = load(q, *op.t[i], mem[i], in.back());
    if (err != CL_SUCCESS) return err;
  }
  Tensor& ot = *op.t.back();
  const auto& o = ot.desc;
  std::vector<float> y(ot.elements(), 0.0f);
  auto at = [](const cl_ml_tensor_desc_qcom& d, size_t n, size_t c, size_t h, size_t w) {
    return ((n * d.c + c) * d.h + h) * d.w + w;
  };
  switch (op.kind) {
    case Kind::kConv: {
      const auto& id = op.t[0]->desc;
      const auto& wd = op.t[1]->desc;
      const auto& c = op.conv;
      const size_t groups = c.mode == CL_CONVOLUTION_MODE_DEPTHWISE_QCOM ? id.c : c.group_count;
      const size_t cin_g = id.c / groups, cout_g = o.c / groups;
      for (size_t n = 0; n < o.n; ++n)
        for (size_t oc = 0; oc < o.c; ++oc) {
          const size_t g = oc / cout_g;
          for (size_t oh = 0; oh < o.h; ++oh)
            for (size_t ow = 0; ow < o.w; ++ow) {
              double acc = in[2].empty() ? 0.0 : in[2][oc];
              for (size_t ic = 0; ic < cin_g; ++ic)
                for (size_t kh = 0; kh < wd.h; ++kh) {
                  const long ih = long(oh * c.filter_stride[0] + kh * c.dilation[0]) -
                                  long(c.input_padding_before[0]);
                  if (ih < 0 || ih >= long(id.h)) continue;
                  for (size_t kw = 0; kw < wd.w; ++kw) {
                    const long iw = long(ow * c.filter_stride[1] + kw * c.dilation[1]) -
                                    long(c.input_padding_before[1]);
                    if (iw < 0 || iw >= long(id.w)) continue;
                    acc += double(in[0][at(id, n, g * cin_g + ic, ih, iw)]) *
                           in[1][at(wd, oc, ic, kh, kw)];
                  }
                }
              float v = float(acc);
              if (op.has_activation) v = activate(op.act.function, v);
              y[at(o, n, oc, oh, ow)] = v;
            }
        }
      break;
    }
    case Kind::kActivation:
      for (size_t i = 0; i < y.size(); ++i) y[i] = activate(op.act.function, in[0][i]);
      break;
    case Kind::kClip:
      for (size_t i = 0; i < y.size(); ++i) {
        y[i] = std::min(std::max(in[0][i], op.clip.clip_value_min.u.fp32),
                        op.clip.clip_value_max.u.fp32);
      }
      break;
    case Kind::kBatchNorm: {  // input, mean, variance, scale, bias, output
      for (size_t n = 0; n < o.n; ++n)
        for (size_t c = 0; c < o.c; ++c) {
          const float s = in[3][c] / std::sqrt(in[2][c] + op.epsilon);
          for (size_t hw = 0; hw < size_t(o.h) * o.w; ++hw) {
            const size_t i = (n * o.c + c) * o.h * o.w + hw;
            y[i] = (in[0][i] - in[1][c]) * s + in[4][c];
          }
        }
      break;
    }
    case Kind::kPool: {
      const auto& id = op.t[0]->desc;
      const auto& p = op.pool;
      for (size_t n = 0; n < o.n; ++n)
        for (size_t c = 0; c < o.c; ++c)
          for (size_t oh = 0; oh < o.h; ++oh)
            for (size_t ow = 0; ow < o.w; ++ow) {
              const bool max =
                  p.mode == CL_POOLING_MODE_MAX_QCOM || p.mode == CL_POOLING_MODE_GLOBAL_MAX_QCOM;
              double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
              size_t count = 0;
              for (size_t kh = 0; kh < p.window_size[0]; ++kh)
                for (size_t kw = 0; kw < p.window_size[1]; ++kw) {
                  const long ih = long(oh * p.stride[0] + kh) - long(p.input_padding_before[0]);
                  const long iw = long(ow * p.stride[1] + kw) - long(p.input_padding_before[1]);
                  const bool inside = ih >= 0 && ih < long(id.h) && iw >= 0 && iw < long(id.w);
                  const bool in_padded = ih < long(id.h + p.input_padding_after[0]) &&
                                         iw < long(id.w + p.input_padding_after[1]);
                  if (p.mode == CL_POOLING_MODE_AVERAGE_INCLUDE_PADDING_QCOM && in_padded) ++count;
                  if (!inside) continue;
                  const float v = in[0][at(id, n, c, ih, iw)];
                  if (max) {
                    acc = std::max(acc, double(v));
                  } else {
                    acc += v;
                    if (p.mode != CL_POOLING_MODE_AVERAGE_INCLUDE_PADDING_QCOM) ++count;
                  }
                }
              y[at(o, n, c, oh, ow)] = float(max ? acc : acc / double(std::max<size_t>(count, 1)));
            }
      break;
    }
    case Kind::kFullyConnected: {  // input (n, K...), weight (N, K), bias (1, N), output (n, N)
      const size_t k = op.t[1]->desc.c, n_out = op.t[1]->desc.n;
      for (size_t n = 0; n < o.n; ++n)
        for (size_t j = 0; j < n_out; ++j) {
          double acc = in[2].empty() ? 0.0 : in[2][j];
          for (size_t i = 0; i < k; ++i) acc += double(in[0][n * k + i]) * in[1][j * k + i];
          y[n * n_out + j] = float(acc);
        }
      break;
    }
    case Kind::kBinary: {
      const auto& b = op.binary;
      std::vector<float> prior;
      if (b.gamma.u.fp32 != 0.0f) {
        const cl_int err = load(q, ot, mem.back(), prior);
        if (err != CL_SUCCESS) return err;
      }
      for (size_t i = 0; i < y.size(); ++i) {
        const float a = b.alpha.u.fp32 * in[0][i], c = b.beta.u.fp32 * in[1][i];
        float v = 0;
        switch (b.binary_op) {
          case CL_TENSOR_OP_ADD_QCOM:
            v = a + c;
            break;
          case CL_TENSOR_OP_SUB_QCOM:
            v = a - c;
            break;
          case CL_TENSOR_OP_MUL_QCOM:
            v = a * c;
            break;
          case CL_TENSOR_OP_DIV_QCOM:
            v = a / c;
            break;
          case CL_TENSOR_OP_MIN_QCOM:
            v = std::min(a, c);
            break;
          case CL_TENSOR_OP_MAX_QCOM:
            v = std::max(a, c);
            break;
        }
        y[i] = v + (prior.empty() ? 0.0f : b.gamma.u.fp32 * prior[i]);
      }
      break;
    }
    case Kind::kSoftmax: {  // channel mode
      for (size_t n = 0; n < o.n; ++n)
        for (size_t hw = 0; hw < size_t(o.h) * o.w; ++hw) {
          float m = -std::numeric_limits<float>::infinity();
          for (size_t c = 0; c < o.c; ++c) m = std::max(m, in[0][(n * o.c + c) * o.h * o.w + hw]);
          double sum = 0;
          for (size_t c = 0; c < o.c; ++c)
            sum += std::exp(in[0][(n * o.c + c) * o.h * o.w + hw] - m);
          for (size_t c = 0; c < o.c; ++c) {
            const size_t i = (n * o.c + c) * o.h * o.w + hw;
            y[i] = float(std::exp(in[0][i] - m) / sum);
          }
        }
      break;
    }
    case Kind::kConcat: {
      const cl_uint axis = op.concat.axis;
      const cl_uint od[4] = {o.n, o.c, o.h, o.w};
      size_t outer = 1, inner = 1;
      for (cl_uint d = 0; d < axis; ++d) outer *= od[d];
      for (cl_uint d = axis + 1; d < 4; ++d) inner *= od[d];
      size_t base = 0;
      for (size_t i = 0; i + 1 < op.t.size(); ++i) {
        const auto& d = op.t[i]->desc;
        const cl_uint dd[4] = {d.n, d.c, d.h, d.w};
        const size_t len = dd[axis];
        for (size_t a = 0; a < outer; ++a)
          for (size_t j = 0; j < len * inner; ++j) {
            y[(a * od[axis] + base) * inner + j] = in[i][a * len * inner + j];
          }
        base += len;
      }
      break;
    }
    case Kind::kReshape:
      y = in[0];
      break;
    case Kind::kPad: {
      const auto& id = op.t[0]->desc;
      const cl_uint* p = op.pad.paddings;
      for (size_t n = 0; n < id.n; ++n)
        for (size_t c = 0; c < id.c; ++c)
          for (size_t h = 0; h < id.h; ++h)
            for (size_t w = 0; w < id.w; ++w) {
              y[at(o, n + p[0], c + p[2], h + p[4], w + p[6])] = in[0][at(id, n, c, h, w)];
            }
      break;
    }
    case Kind::kResize: {
      const auto& id = op.t[0]->desc;
      const auto& r = op.resize;
      auto src = [&](size_t out_i, size_t out_len, size_t in_len) {
        if (r.align_corners) {
          return out_len > 1 ? double(out_i) * (in_len - 1) / (out_len - 1) : 0.0;
        }
        const double scale = double(out_len) / in_len;
        if (r.half_pixel_centers) return std::max((out_i + 0.5) / scale - 0.5, 0.0);
        return out_i / scale;
      };
      for (size_t n = 0; n < o.n; ++n)
        for (size_t c = 0; c < o.c; ++c)
          for (size_t oh = 0; oh < o.h; ++oh) {
            const double sy = src(oh, o.h, id.h);
            const size_t y0 = std::min<size_t>(size_t(sy), id.h - 1),
                         y1 = std::min<size_t>(y0 + 1, id.h - 1);
            const double fy = sy - y0;
            for (size_t ow = 0; ow < o.w; ++ow) {
              const double sx = src(ow, o.w, id.w);
              const size_t x0 = std::min<size_t>(size_t(sx), id.w - 1),
                           x1 = std::min<size_t>(x0 + 1, id.w - 1);
              const double fx = sx - x0;
              const double top =
                  in[0][at(id, n, c, y0, x0)] * (1 - fx) + in[0][at(id, n, c, y0, x1)] * fx;
              const double bot =
                  in[0][at(id, n, c, y1, x0)] * (1 - fx) + in[0][at(id, n, c, y1, x1)] * fx;
              y[at(o, n, c, oh, ow)] = float(top * (1 - fy) + bot * fy);
            }
          }
      break;
    }
  }
  return store(q, ot, mem.back(), y);
}

// ---- the interface functions ----

cl_int CreateTensor(cl_context, const cl_ml_tensor_properties_qcom*,
                    const cl_ml_tensor_desc_qcom* desc, cl_ml_tensor_qcom* out) {
  EMU_CALL("clCreateMLTensorQCOM");
  if (!desc || !out) return CL_INVALID_VALUE;
  if (desc->num_dimensions != CL_TENSOR_UNUSED_QCOM) {
    if (desc->num_dimensions != CL_TENSOR_DIMENSIONS_4D_QCOM) return CL_INVALID_VALUE;
    if (desc->data_type != CL_FLOAT && desc->data_type != CL_HALF_FLOAT) return CL_INVALID_VALUE;
    if (desc->layout > CL_TENSOR_LAYOUT_NHWC_QCOM) return CL_ML_INVALID_TENSOR_LAYOUT_QCOM;
    if (!desc->n || !desc->c || !desc->h || !desc->w) return CL_INVALID_VALUE;
  }
  *out = reinterpret_cast<cl_ml_tensor_qcom>(new Tensor{*desc});
  live("tensor", 1);
  return CL_SUCCESS;
}

cl_int TensorMemorySize(cl_context, cl_ml_tensor_qcom t, cl_uint* size) {
  EMU_CALL("clGetMLTensorMemorySizeQCOM");
  if (!t || !size || T(t)->unused()) return CL_INVALID_VALUE;
  if (T(t)->memory_bytes() > std::numeric_limits<cl_uint>::max()) return CL_INVALID_BUFFER_SIZE;
  *size = static_cast<cl_uint>(T(t)->memory_bytes());
  return CL_SUCCESS;
}

cl_int ReleaseTensor(cl_ml_tensor_qcom t) {
  EMU_CALL("clReleaseMLTensorQCOM");
  if (!t) return CL_INVALID_VALUE;
  delete T(t);
  live("tensor", -1);
  return CL_SUCCESS;
}

cl_int ReleaseOp(cl_ml_op_qcom op) {
  EMU_CALL("clReleaseMLOpQCOM");
  if (!op) return CL_INVALID_VALUE;
  delete reinterpret_cast<Op*>(op);
  live("op", -1);
  return CL_SUCCESS;
}

cl_int CreateConvolution(cl_context, const cl_ml_op_properties_qcom*,
                         const cl_ml_op_convolution_desc_qcom* desc, cl_ml_tensor_qcom input,
                         cl_ml_tensor_qcom weight, cl_ml_tensor_qcom bias, cl_ml_tensor_qcom output,
                         cl_ml_op_qcom* op, cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpConvolutionForwardQCOM");
  if (!desc || !input || !weight || !output) return CL_INVALID_VALUE;
  auto* o = new Op{Kind::kConv};
  o->conv = *desc;
  o->t = {T(input), T(weight), bias ? T(bias) : nullptr, T(output)};
  if (conv_output_ok(*o) != CL_SUCCESS) {
    delete o;
    return CL_INVALID_VALUE;
  }
  return create_op(o, op, cache);
}

cl_int CreateConvolutionActivation(cl_context ctx, const cl_ml_op_properties_qcom* props,
                                   const cl_ml_op_convolution_desc_qcom* desc,
                                   const cl_ml_op_activation_desc_qcom* act,
                                   cl_ml_tensor_qcom input, cl_ml_tensor_qcom weight,
                                   cl_ml_tensor_qcom bias, cl_ml_tensor_qcom,
                                   cl_ml_tensor_qcom output, cl_ml_op_qcom* op,
                                   cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpFusedConvolutionActivationForwardQCOM");
  if (!desc || !act || !input || !weight || !output) return CL_INVALID_VALUE;
  auto* o = new Op{Kind::kConv};
  o->conv = *desc;
  o->has_activation = true;
  o->act = *act;
  o->t = {T(input), T(weight), bias ? T(bias) : nullptr, T(output)};
  (void)ctx;
  (void)props;
  if (conv_output_ok(*o) != CL_SUCCESS) {
    delete o;
    return CL_INVALID_VALUE;
  }
  return create_op(o, op, cache);
}

cl_int CreateBatchNorm(cl_context, const cl_ml_op_properties_qcom* props,
                       const cl_ml_op_batchnorm_desc_qcom* desc, cl_ml_tensor_qcom input,
                       cl_ml_tensor_qcom mean, cl_ml_tensor_qcom variance, cl_ml_tensor_qcom scale,
                       cl_ml_tensor_qcom bias, cl_ml_tensor_qcom output, cl_ml_op_qcom* op,
                       cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpBatchNormForwardQCOM");
  if (!desc || !input || !mean || !variance || !scale || !bias || !output) return CL_INVALID_VALUE;
  auto* o = new Op{Kind::kBatchNorm};
  for (const cl_ml_op_properties_qcom* p = props; p && *p; p += 2) {
    if (p[0] == CL_ML_BATCH_NORM_OP_EPSILON_QCOM) {
      const uint32_t bits = static_cast<uint32_t>(p[1]);
      std::memcpy(&o->epsilon, &bits, 4);
    }
  }
  o->t = {T(input), T(mean), T(variance), T(scale), T(bias), T(output)};
  return create_op(o, op, cache);
}

cl_int CreateActivation(cl_context, const cl_ml_op_properties_qcom*,
                        const cl_ml_op_activation_desc_qcom* desc, cl_ml_tensor_qcom input,
                        cl_ml_tensor_qcom, cl_ml_tensor_qcom output, cl_ml_op_qcom* op,
                        cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpActivationForwardQCOM");
  if (!desc || !input || !output || !same_dims(T(input), T(output))) return CL_INVALID_VALUE;
  auto* o = new Op{Kind::kActivation};
  o->act = *desc;
  o->t = {T(input), T(output)};
  return create_op(o, op, cache);
}

cl_int CreatePooling(cl_context, const cl_ml_op_properties_qcom*,
                     const cl_ml_op_pooling_desc_qcom* desc, cl_ml_tensor_qcom input,
                     cl_ml_tensor_qcom, cl_ml_tensor_qcom output, cl_ml_op_qcom* op,
                     cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpPoolingForwardQCOM");
  if (!desc || !input || !output) return CL_INVALID_VALUE;
  auto* o = new Op{Kind::kPool};
  o->pool = *desc;
  o->t = {T(input), T(output)};
  return create_op(o, op, cache);
}

cl_int CreateFullyConnected(cl_context, const cl_ml_op_properties_qcom*,
                            const cl_ml_op_fully_connected_desc_qcom* desc, cl_ml_tensor_qcom input,
                            cl_ml_tensor_qcom weight, cl_ml_tensor_qcom bias,
                            cl_ml_tensor_qcom output, cl_ml_op_qcom* op,
                            cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpFullyConnectedQCOM");
  if (!desc || !input || !weight || !output) return CL_INVALID_VALUE;
  const auto& in = T(input)->desc;
  const auto& w = T(weight)->desc;
  if (size_t(in.c) * in.h * in.w != w.c || T(output)->desc.c != w.n || T(output)->desc.n != in.n) {
    return CL_INVALID_VALUE;
  }
  auto* o = new Op{Kind::kFullyConnected};
  o->t = {T(input), T(weight), bias ? T(bias) : nullptr, T(output)};
  return create_op(o, op, cache);
}

cl_int CreateBinary(cl_context, const cl_ml_op_properties_qcom*,
                    const cl_ml_op_binary_desc_qcom* desc, cl_ml_tensor_qcom a, cl_ml_tensor_qcom b,
                    cl_ml_tensor_qcom c, cl_ml_op_qcom* op, cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpBinaryQCOM");
  if (!desc || !a || !b || !c || !same_dims(T(a), T(b)) || !same_dims(T(a), T(c))) {
    return CL_INVALID_VALUE;
  }
  auto* o = new Op{Kind::kBinary};
  o->binary = *desc;
  o->t = {T(a), T(b), T(c)};
  return create_op(o, op, cache);
}

cl_int CreateSoftmax(cl_context, const cl_ml_op_properties_qcom*,
                     const cl_ml_op_softmax_desc_qcom* desc, cl_ml_tensor_qcom input,
                     cl_ml_tensor_qcom output, cl_ml_op_qcom* op, cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpSoftmaxQCOM");
  if (!desc || desc->mode != CL_SOFTMAX_MODE_CHANNEL_QCOM || !input || !output) {
    return CL_INVALID_VALUE;
  }
  auto* o = new Op{Kind::kSoftmax};
  o->softmax = *desc;
  o->t = {T(input), T(output)};
  return create_op(o, op, cache);
}

cl_int CreateConcat(cl_context, const cl_ml_op_properties_qcom*,
                    const cl_ml_op_concat_desc_qcom* desc, cl_ml_tensor_qcom* inputs,
                    cl_ml_tensor_qcom output, cl_ml_op_qcom* op, cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpConcatQCOM");
  if (!desc || !inputs || !output || desc->axis > 3 || desc->num_input_tensors == 0) {
    return CL_INVALID_VALUE;
  }
  // Every input matches the output off the axis, and the axis sizes add up.
  const auto dims_of = [](const Tensor* t) {
    return std::array<cl_uint, 4>{t->desc.n, t->desc.c, t->desc.h, t->desc.w};
  };
  const std::array<cl_uint, 4> od = dims_of(T(output));
  size_t along = 0;
  for (cl_uint i = 0; i < desc->num_input_tensors; ++i) {
    if (!inputs[i]) return CL_INVALID_VALUE;
    const std::array<cl_uint, 4> d = dims_of(T(inputs[i]));
    for (cl_uint k = 0; k < 4; ++k) {
      if (k != desc->axis && d[k] != od[k]) return CL_INVALID_VALUE;
    }
    along += d[desc->axis];
  }
  if (along != od[desc->axis]) return CL_INVALID_VALUE;
  auto* o = new Op{Kind::kConcat};
  o->concat = *desc;
  for (cl_uint i = 0; i < desc->num_input_tensors; ++i) o->t.push_back(T(inputs[i]));
  o->t.push_back(T(output));
  return create_op(o, op, cache);
}

cl_int CreateReshape(cl_context, const cl_ml_op_properties_qcom*, cl_ml_tensor_qcom input,
                     cl_ml_tensor_qcom output, cl_ml_op_qcom* op, cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpReshapeQCOM");
  if (!input || !output || T(input)->elements() != T(output)->elements()) return CL_INVALID_VALUE;
  auto* o = new Op{Kind::kReshape};
  o->t = {T(input), T(output)};
  return create_op(o, op, cache);
}

cl_int CreateResize(cl_context, const cl_ml_op_properties_qcom*,
                    const cl_ml_op_resize_bilinear_desc_qcom* desc, cl_ml_tensor_qcom input,
                    cl_ml_tensor_qcom output, cl_ml_op_qcom* op, cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpResizeBilinearQCOM");
  if (!desc || !input || !output) return CL_INVALID_VALUE;
  auto* o = new Op{Kind::kResize};
  o->resize = *desc;
  o->t = {T(input), T(output)};
  return create_op(o, op, cache);
}

cl_int CreatePad(cl_context, const cl_ml_op_properties_qcom*, const cl_ml_op_pad_desc_qcom* desc,
                 cl_ml_tensor_qcom input, cl_ml_tensor_qcom output, cl_ml_op_qcom* op,
                 cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpPadQCOM");
  if (!desc || !input || !output || desc->pad_mode != CL_PAD_MODE_CONSTANT_QCOM) {
    return CL_INVALID_VALUE;
  }
  const auto& i = T(input)->desc;
  const auto& o_ = T(output)->desc;
  const cl_uint* p = desc->paddings;
  if (o_.n != i.n + p[0] + p[1] || o_.c != i.c + p[2] + p[3] || o_.h != i.h + p[4] + p[5] ||
      o_.w != i.w + p[6] + p[7]) {
    return CL_INVALID_VALUE;
  }
  auto* o = new Op{Kind::kPad};
  o->pad = *desc;
  o->t = {T(input), T(output)};
  return create_op(o, op, cache);
}

cl_int CreateClip(cl_context, const cl_ml_op_properties_qcom*, const cl_ml_op_clip_desc_qcom* desc,
                  cl_ml_tensor_qcom input, cl_ml_tensor_qcom output, cl_ml_op_qcom* op,
                  cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clCreateMLOpClipQCOM");
  if (!desc || !input || !output || desc->clip_mode != CL_CLIP_BY_VALUE_QCOM) {
    return CL_INVALID_VALUE;
  }
  auto* o = new Op{Kind::kClip};
  o->clip = *desc;
  o->t = {T(input), T(output)};
  return create_op(o, op, cache);
}

cl_int EnqueueOp(cl_command_queue q, cl_ml_op_qcom op, cl_ml_tensor_mem_desc_set_qcom set,
                 cl_uint nwait, const cl_event* wait, cl_event* event) {
  EMU_CALL("clEnqueueMLOpQCOM");
  if (!op || !set) return CL_INVALID_VALUE;
  if (nwait) {
    const cl_int err = g_next->clWaitForEvents(nwait, wait);
    if (err != CL_SUCCESS) return err;
  }
  const cl_int err = run(q, *reinterpret_cast<Op*>(op), *reinterpret_cast<DescSet*>(set));
  if (err != CL_SUCCESS) return err;
  return finish_event(q, 0, nullptr, event);
}

cl_int ReadTensor(cl_command_queue q, cl_ml_tensor_qcom t, cl_mem mem, void* host,
                  cl_ml_tensor_layout_qcom layout, cl_uint nwait, const cl_event* wait,
                  cl_event* event) {
  EMU_CALL("clEnqueueReadMLTensorDataQCOM");
  if (!t || !host || layout == CL_TENSOR_LAYOUT_OPTIMAL_QCOM) return CL_INVALID_VALUE;
  std::vector<float> values;
  cl_int err = load(q, *T(t), mem, values);
  if (err != CL_SUCCESS) return err;
  const std::vector<unsigned char> raw = encode(*T(t), layout, values);
  std::memcpy(host, raw.data(), raw.size());
  return finish_event(q, nwait, wait, event);
}

cl_int WriteTensor(cl_command_queue q, void* host, cl_ml_tensor_layout_qcom layout,
                   cl_ml_tensor_qcom t, cl_mem mem, cl_uint nwait, const cl_event* wait,
                   cl_event* event) {
  EMU_CALL("clEnqueueWriteMLTensorDataQCOM");
  if (!t || !host || layout == CL_TENSOR_LAYOUT_OPTIMAL_QCOM) return CL_INVALID_VALUE;
  std::vector<unsigned char> raw(layout_bytes(*T(t), layout));
  std::memcpy(raw.data(), host, raw.size());
  const cl_int err = store(q, *T(t), mem, decode(*T(t), layout, raw));
  if (err != CL_SUCCESS) return err;
  return finish_event(q, nwait, wait, event);
}

cl_int CopyTensor(cl_command_queue q, cl_ml_tensor_qcom src, cl_mem src_mem, cl_ml_tensor_qcom dst,
                  cl_mem dst_mem, cl_uint nwait, const cl_event* wait, cl_event* event) {
  EMU_CALL("clEnqueueCopyMLTensorDataQCOM");
  if (!src || !dst || !same_dims(T(src), T(dst)) ||
      T(src)->desc.data_type != T(dst)->desc.data_type) {
    return CL_INVALID_VALUE;
  }
  std::vector<float> values;
  cl_int err = load(q, *T(src), src_mem, values);
  if (err == CL_SUCCESS) err = store(q, *T(dst), dst_mem, values);
  if (err != CL_SUCCESS) return err;
  return finish_event(q, nwait, wait, event);
}

cl_int CreateDescSet(cl_ml_tensor_mem_desc_set_qcom* out) {
  EMU_CALL("clCreateMLTensorMemoryDescriptorSetQCOM");
  if (!out) return CL_INVALID_VALUE;
  *out = reinterpret_cast<cl_ml_tensor_mem_desc_set_qcom>(new DescSet);
  live("desc_set", 1);
  return CL_SUCCESS;
}

cl_int ReleaseDescSet(cl_ml_tensor_mem_desc_set_qcom set) {
  EMU_CALL("clReleaseMLTensorMemoryDescriptorSetQCOM");
  if (!set) return CL_INVALID_VALUE;
  delete reinterpret_cast<DescSet*>(set);
  live("desc_set", -1);
  return CL_SUCCESS;
}

cl_int UpdateDescSet(cl_ml_tensor_mem_desc_set_qcom set, uint32_t count,
                     cl_ml_tensor_memory_desc_qcom* pairs) {
  EMU_CALL("clUpdateMLTensorMemoryDescriptorSetQCOM");
  if (!set || (count && !pairs)) return CL_INVALID_VALUE;
  auto* s = reinterpret_cast<DescSet*>(set);
  for (uint32_t i = 0; i < count; ++i) s->memory[T(pairs[i].tensor)] = pairs[i].memory;
  return CL_SUCCESS;
}

// The emulator's tuning "result" per op is a number derived from the op's shape: what matters
// for tests is that caches round-trip through save/load and are found again at op creation.
constexpr char kCacheMagic[] = "TSR-CLML-EMU-TUNE 1\n";

cl_int CreateTuningCache(cl_ml_tuningcache_qcom* out) {
  EMU_CALL("clCreateMLTuningCacheQCOM");
  if (!out) return CL_INVALID_VALUE;
  *out = reinterpret_cast<cl_ml_tuningcache_qcom>(new TuningCache);
  live("tuning_cache", 1);
  return CL_SUCCESS;
}

cl_int TuneOp(cl_command_queue q, cl_ml_op_qcom op, cl_ml_tensor_mem_desc_set_qcom set,
              cl_ml_tuningcache_qcom cache, cl_ulong* tuned_time) {
  EMU_CALL("clTuneMLOpQCOM");
  if (!op || !set || !cache) return CL_INVALID_VALUE;
  auto* o = reinterpret_cast<Op*>(op);
  const cl_int err = run(q, *o, *reinterpret_cast<DescSet*>(set));
  if (err != CL_SUCCESS) return err;
  reinterpret_cast<TuningCache*>(cache)->entries[o->key] =
      static_cast<uint32_t>(std::hash<std::string>{}(o->key) % 4);
  if (tuned_time) *tuned_time = 1000;
  return CL_SUCCESS;
}

cl_int SaveTuningCache(cl_ml_tuningcache_qcom cache, size_t len, unsigned char* bytes,
                       size_t* len_ret) {
  EMU_CALL("clSaveMLTuningCacheQCOM");
  if (!cache) return CL_INVALID_VALUE;
  std::string blob = kCacheMagic;
  for (const auto& [key, choice] : reinterpret_cast<TuningCache*>(cache)->entries) {
    blob += key + "\t" + std::to_string(choice) + "\n";
  }
  if (len_ret) *len_ret = blob.size();
  if (bytes) {
    if (len < blob.size()) return CL_INVALID_VALUE;
    std::memcpy(bytes, blob.data(), blob.size());
  }
  return CL_SUCCESS;
}

cl_int LoadTuningCache(cl_ml_tuningcache_qcom cache, size_t len, unsigned char* bytes) {
  EMU_CALL("clLoadMLTuningCacheQCOM");
  if (!cache || !bytes) return CL_INVALID_VALUE;
  const std::string blob(reinterpret_cast<const char*>(bytes), len);
  if (blob.compare(0, sizeof(kCacheMagic) - 1, kCacheMagic) != 0) return CL_INVALID_BINARY;
  std::map<std::string, uint32_t> entries;
  std::istringstream lines(blob.substr(sizeof(kCacheMagic) - 1));
  std::string line;
  while (std::getline(lines, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) return CL_INVALID_BINARY;
    char* end = nullptr;
    const unsigned long v = std::strtoul(line.c_str() + tab + 1, &end, 10);
    if (*end != '\0' || v > 3) return CL_INVALID_BINARY;
    entries[line.substr(0, tab)] = static_cast<uint32_t>(v);
  }
  reinterpret_cast<TuningCache*>(cache)->entries = std::move(entries);
  return CL_SUCCESS;
}

cl_int ReleaseTuningCache(cl_ml_tuningcache_qcom cache) {
  EMU_CALL("clReleaseMLTuningCacheQCOM");
  if (!cache) return CL_INVALID_VALUE;
  delete reinterpret_cast<TuningCache*>(cache);
  live("tuning_cache", -1);
  return CL_SUCCESS;
}

template <class Table>
void fill(Table& t, int major) {
  std::memset(&t, 0, sizeof(t));
  t.majorVersion = major;
  t.minorVersion = 0;
  t.clCreateMLOpFullyConnectedQCOM = CreateFullyConnected;
  t.clCreateMLOpConvolutionForwardQCOM = CreateConvolution;
  t.clCreateMLOpBatchNormForwardQCOM = CreateBatchNorm;
  t.clCreateMLOpActivationForwardQCOM = CreateActivation;
  t.clCreateMLOpPoolingForwardQCOM = CreatePooling;
  t.clCreateMLOpFusedConvolutionActivationForwardQCOM = CreateConvolutionActivation;
  t.clCreateMLOpBinaryQCOM = CreateBinary;
  t.clCreateMLOpSoftmaxQCOM = CreateSoftmax;
  t.clCreateMLOpConcatQCOM = CreateConcat;
  t.clCreateMLOpReshapeQCOM = CreateReshape;
  t.clCreateMLOpResizeBilinearQCOM = CreateResize;
  t.clCreateMLOpPadQCOM = CreatePad;
  t.clCreateMLTensorQCOM = CreateTensor;
  t.clGetMLTensorMemorySizeQCOM = TensorMemorySize;
  t.clReleaseMLOpQCOM = ReleaseOp;
  t.clReleaseMLTensorQCOM = ReleaseTensor;
  t.clEnqueueMLOpQCOM = EnqueueOp;
  t.clEnqueueReadMLTensorDataQCOM = ReadTensor;
  t.clEnqueueWriteMLTensorDataQCOM = WriteTensor;
  t.clEnqueueCopyMLTensorDataQCOM = CopyTensor;
  t.clCreateMLTuningCacheQCOM = CreateTuningCache;
  t.clTuneMLOpQCOM = TuneOp;
  t.clSaveMLTuningCacheQCOM = SaveTuningCache;
  t.clLoadMLTuningCacheQCOM = LoadTuningCache;
  t.clReleaseMLTuningCacheQCOM = ReleaseTuningCache;
  t.clCreateMLTensorMemoryDescriptorSetQCOM = CreateDescSet;
  t.clReleaseMLTensorMemoryDescriptorSetQCOM = ReleaseDescSet;
  t.clUpdateMLTensorMemoryDescriptorSetQCOM = UpdateDescSet;
  t.clCreateMLOpClipQCOM = CreateClip;
}

CLMLInterfaceV2QCOM g_v2;
CLMLInterfaceV3QCOM g_v3;
std::vector<std::pair<cl_int, cl_int>> g_versions = {{2, 0}, {3, 0}};

cl_int QueryVersions(cl_int* majors, cl_int* minors, cl_uint num, cl_uint* num_ret) {
  EMU_CALL("clQueryMLInterfaceVersionsQCOM");
  if (num_ret) *num_ret = static_cast<cl_uint>(g_versions.size());
  if (majors || minors) {
    if (num < g_versions.size() || !majors || !minors) return CL_INVALID_VALUE;
    for (size_t i = 0; i < g_versions.size(); ++i) {
      majors[i] = g_versions[i].first;
      minors[i] = g_versions[i].second;
    }
  }
  return CL_SUCCESS;
}

cl_int GetInterface(void* out, cl_int major, cl_int minor) {
  EMU_CALL("clGetMLInterfaceQCOM");
  if (!out) return CL_INVALID_VALUE;
  bool offered = false;
  for (const auto& [ma, mi] : g_versions) offered |= ma == major && mi == minor;
  void* table = !offered     ? nullptr
                : major == 2 ? static_cast<void*>(&g_v2)
                : major == 3 ? static_cast<void*>(&g_v3)
                             : nullptr;
  if (!table) return CL_INVALID_VALUE;
  *static_cast<void**>(out) = table;
  return CL_SUCCESS;
}

// ---- the OpenCL calls the layer changes ----

cl_int CL_API_CALL GetDeviceInfo(cl_device_id device, cl_device_info param, size_t size,
                                 void* value, size_t* size_ret) {
  if (param != CL_DEVICE_EXTENSIONS) {
    return g_next->clGetDeviceInfo(device, param, size, value, size_ret);
  }
  size_t n = 0;
  cl_int err = g_next->clGetDeviceInfo(device, param, 0, nullptr, &n);
  if (err != CL_SUCCESS) return err;
  std::string ext(n, '\0');
  err = g_next->clGetDeviceInfo(device, param, n, ext.data(), nullptr);
  if (err != CL_SUCCESS) return err;
  ext.resize(std::strlen(ext.c_str()));
  if (!ext.empty() && ext.back() != ' ') ext += ' ';
  ext += "cl_qcom_ml_ops";
  if (size_ret) *size_ret = ext.size() + 1;
  if (value) {
    if (size < ext.size() + 1) return CL_INVALID_VALUE;
    std::memcpy(value, ext.c_str(), ext.size() + 1);
  }
  return CL_SUCCESS;
}

void* entry(const char* name) {
  if (!name) return nullptr;
  if (std::strcmp(name, "clQueryMLInterfaceVersionsQCOM") == 0) {
    return reinterpret_cast<void*>(&QueryVersions);
  }
  if (std::strcmp(name, "clGetMLInterfaceQCOM") == 0) return reinterpret_cast<void*>(&GetInterface);
  return nullptr;
}

void* CL_API_CALL GetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                         const char* name) {
  if (void* fn = entry(name)) return fn;
  return g_next->clGetExtensionFunctionAddressForPlatform(platform, name);
}

void* CL_API_CALL GetExtensionFunctionAddress(const char* name) {
  if (void* fn = entry(name)) return fn;
  return g_next->clGetExtensionFunctionAddress(name);
}

void configure_from_environment() {
  if (const char* v = std::getenv("TESSERA_CLML_EMU_VERSIONS")) {
    g_versions.clear();
    std::stringstream list(v);
    std::string item;
    while (std::getline(list, item, ',')) {
      int ma = 0, mi = 0;
      if (std::sscanf(item.c_str(), "%d.%d", &ma, &mi) == 2) g_versions.emplace_back(ma, mi);
    }
  }
  if (const char* v = std::getenv("TESSERA_CLML_EMU_FAIL")) {
    std::stringstream list(v);
    std::string item;
    while (std::getline(list, item, ',')) {
      char name[128] = {0};
      long long skip = 0, times = 1;
      int error = 0;
      const int got =
          std::sscanf(item.c_str(), "%127[^:]:%lld:%lld:%d", name, &skip, &times, &error);
      if (got >= 1) clml_emu_fail(name, skip, times, error);
    }
  }
}

}  // namespace

// ---- layer entry points ----

CLML_EMU_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size, void* value,
                                                  size_t* size_ret) {
  static const char kName[] = "tessera CLML emulator (test-only; host loops, not Qualcomm CLML)";
  const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  const void* src = nullptr;
  size_t n = 0;
  if (param == CL_LAYER_API_VERSION) {
    src = &version;
    n = sizeof(version);
  } else if (param == CL_LAYER_NAME) {
    src = kName;
    n = sizeof(kName);
  } else {
    return CL_INVALID_VALUE;
  }
  if (value) {
    if (size < n) return CL_INVALID_VALUE;
    std::memcpy(value, src, n);
  }
  if (size_ret) *size_ret = n;
  return CL_SUCCESS;
}

CLML_EMU_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target,
                                               cl_uint* num_entries_ret,
                                               const cl_icd_dispatch** layer_dispatch) {
  constexpr cl_uint kEntries = sizeof(cl_icd_dispatch) / sizeof(void*);
  if (!target || !num_entries_ret || !layer_dispatch) return CL_INVALID_VALUE;
  std::memset(&g_layer, 0, sizeof(g_layer));
  std::memcpy(&g_layer, target, sizeof(void*) * std::min(num_entries, kEntries));
  g_next = target;
  g_layer.clGetDeviceInfo = GetDeviceInfo;
  g_layer.clGetExtensionFunctionAddressForPlatform = GetExtensionFunctionAddressForPlatform;
  g_layer.clGetExtensionFunctionAddress = GetExtensionFunctionAddress;
  fill(g_v2, 2);
  fill(g_v3, 3);
  configure_from_environment();
  *num_entries_ret = kEntries;
  *layer_dispatch = &g_layer;
  g_active = true;
  return CL_SUCCESS;
}

CLML_EMU_EXPORT int clml_emu_active(void) {
  return g_active ? 1 : 0;
}

CLML_EMU_EXPORT void clml_emu_fail(const char* name, int64_t skip, int64_t times, int32_t error) {
  if (!name) return;
  std::lock_guard<std::mutex> lock(state().mutex);
  Rule& r = state().rules[name];
  r.armed = true;
  r.skip = skip < 0 ? 0 : skip;
  r.times = times < -1 ? -1 : times;
  r.error = error;
  r.calls = 0;
  r.injected = 0;
}

CLML_EMU_EXPORT void clml_emu_reset(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().rules.clear();
  state().tuning_hits = 0;
}

CLML_EMU_EXPORT int64_t clml_emu_calls(const char* name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().rules.find(name ? name : "");
  return it == state().rules.end() ? 0 : it->second.calls;
}

CLML_EMU_EXPORT int64_t clml_emu_live(const char* kind) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().live.find(kind ? kind : "");
  return it == state().live.end() ? 0 : it->second;
}

CLML_EMU_EXPORT int64_t clml_emu_tuning_hits(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().tuning_hits;
}
