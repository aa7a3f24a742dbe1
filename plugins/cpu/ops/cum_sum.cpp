// CumSum over float32, int32 and int64 with a constant axis: position ids computed from an
// attention mask at run time, running totals in masks and schedules. The input is [outer, n,
// inner]; each step adds the next inner-long run to the running one, so the inner loop is a
// contiguous vector add, and every element is summed in the order the reference kernel sums it
// (the results match it exactly). Integer sums wrap, as the reference's do.
#include <tbb/parallel_for.h>

#include <type_traits>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

namespace {

bool cum_sum_dtype(const tsr_tensor* t) {
  return t != nullptr && (t->dtype == TSR_DTYPE_FLOAT32 || t->dtype == TSR_DTYPE_INT32 ||
                          t->dtype == TSR_DTYPE_INT64);
}

// Integers add as unsigned (wrapping, no undefined overflow); floats as themselves.
template <class T, bool = std::is_integral_v<T>>
struct AddTypeOf {
  using type = T;
};
template <class T>
struct AddTypeOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using AddType = typename AddTypeOf<T>::type;

// One [n, inner] slice; `sum` holds `inner` zeros on entry.
template <class T>
void cum_sum_slice(const T* x, T* y, int64_t n, int64_t inner, bool exclusive, bool reverse,
                   AddType<T>* sum) {
  using A = AddType<T>;
  for (int64_t s = 0; s < n; ++s) {
    const int64_t j = reverse ? n - 1 - s : s;
    const T* in = x + j * inner;
    T* out = y + j * inner;
    if (exclusive) {
      for (int64_t i = 0; i < inner; ++i) {
        out[i] = static_cast<T>(sum[i]);
        sum[i] = static_cast<A>(sum[i] + static_cast<A>(in[i]));
      }
    } else {
      for (int64_t i = 0; i < inner; ++i) {
        sum[i] = static_cast<A>(sum[i] + static_cast<A>(in[i]));
        out[i] = static_cast<T>(sum[i]);
      }
    }
  }
}

template <class T>
Step cum_sum_step(int32_t in, int32_t out, int64_t outer, int64_t n, int64_t inner, bool exclusive,
                  bool reverse) {
  return [=](std::vector<float*>& v) {
    const T* x = reinterpret_cast<const T*>(v[in]);
    T* y = reinterpret_cast<T*>(v[out]);
    tbb::parallel_for(int64_t{0}, outer, [&](int64_t o) {
      std::vector<AddType<T>> sum(static_cast<size_t>(inner));
      cum_sum_slice(x + o * n * inner, y + o * n * inner, n, inner, exclusive, reverse, sum.data());
    });
  };
}

}  // namespace

std::string query_cum_sum(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!cum_sum_dtype(x) || node.output(0)->dtype != x->dtype) {
    return "only float32, int32 and int64 are implemented";
  }
  std::vector<int64_t> axis;
  if (!constant_ints(node.input(1), &axis) || axis.size() != 1) {
    return "the axis must be a constant int32/int64 scalar";
  }
  if (normalize_axis(axis[0], x->rank) < 0) return "axis out of range";
  return "";
}

Step build_cum_sum(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  std::vector<int64_t> axis_value;
  constant_ints(ctx.node.input(1), &axis_value);
  const int64_t axis = normalize_axis(axis_value[0], x->rank);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dims[d];
  for (int64_t d = axis + 1; d < x->rank; ++d) inner *= x->dims[d];
  const int64_t n = x->dims[axis];
  // Any nonzero value sets a flag, as in ONNX's reference implementation.
  const bool exclusive = ctx.node.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.node.attr_int("reverse", 0) != 0;
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  switch (x->dtype) {
    case TSR_DTYPE_INT32:
      return cum_sum_step<int32_t>(in, out, outer, n, inner, exclusive, reverse);
    case TSR_DTYPE_INT64:
      return cum_sum_step<int64_t>(in, out, outer, n, inner, exclusive, reverse);
    default:
      return cum_sum_step<float>(in, out, outer, n, inner, exclusive, reverse);
  }
}

}  // namespace tessera::cpu
