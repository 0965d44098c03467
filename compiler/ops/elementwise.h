// Shared machinery of the elementwise ops: dtype dispatch, numpy broadcasting, and the shape
// rules and reference loops of unary, binary and comparison ops. Arithmetic on float16 happens
// in float and is rounded once per op (what numpy and ONNX's reference do); integers compute
// in int64.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "compiler/ops/op.h"

namespace mono {

// Storage type of each dtype: float, Half, int64_t, int32_t, bool as uint8_t.
template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<Half> { using type = float; };
template <> struct ComputeOf<int32_t> { using type = int64_t; };
template <> struct ComputeOf<uint8_t> { using type = bool; };
template <typename T> using compute_t = typename ComputeOf<T>::type;

template <typename T> inline compute_t<T> load(T v) { return static_cast<compute_t<T>>(v); }
template <> inline float load<Half>(Half v) { return half_to_float(v); }
template <typename T, typename C> inline T store(C v) { return static_cast<T>(v); }
template <> inline Half store<Half, float>(float v) { return float_to_half(v); }
template <> inline Half store<Half, double>(double v) { return float_to_half(static_cast<float>(v)); }

// Calls f(T{}) with T the storage type of `t`.
template <typename F>
void visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kF32: f(float{}); return;
    case DType::kF16: f(Half{}); return;
    case DType::kI64: f(int64_t{}); return;
    case DType::kI32: f(int32_t{}); return;
    case DType::kBool: f(uint8_t{}); return;
  }
}
template <typename F>
void visit_float(DType t, F&& f) {
  if (t == DType::kF32) f(float{});
  else if (t == DType::kF16) f(Half{});
  else MONO_CHECK(false, "visit_float on ", dtype_name(t));
}

// ---- exact integer arithmetic -----------------------------------------------------------

// int64 arithmetic that wraps on overflow like two's complement hardware (and numpy),
// without the undefined behaviour of signed overflow.
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrap_neg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

// NaN test that is simply false for integer and bool compute types.
template <typename C>
inline bool is_nan_value(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

// Float -> integer conversion truncating toward zero, saturating at the integer type's
// limits and mapping NaN to 0 (a static_cast would be undefined for those).
template <typename I>
inline I float_to_int(double v) {
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());  // -2^(n-1): exact
  constexpr double hi = -lo;                                                 // 2^(n-1): exact
  if (!(v == v)) return 0;
  if (v <= lo) return std::numeric_limits<I>::min();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// ---- broadcasting ---------------------------------------------------------------------

// The numpy-broadcast shape of several shapes; false if they are incompatible.
bool broadcast_shapes(const std::vector<const Shape*>& shapes, Shape* out);

// For every element of `out_shape` in order, calls f(i, offsets) where offsets[k] is the
// linear index of the matching element in input k (broadcast by numpy rules).
template <size_t N, typename F>
void for_each_broadcast(const Shape& out_shape, const std::array<const Shape*, N>& in_shapes,
                        F&& f) {
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  int64_t total = shape_numel(out_shape);
  if (total <= 0) return;
  std::array<std::vector<int64_t>, N> strides;  // per output axis; 0 where broadcast
  for (size_t k = 0; k < N; ++k) {
    const Shape& s = *in_shapes[k];
    strides[k].assign(rank, 0);
    int64_t stride = 1;
    for (int64_t ax = rank - 1, j = static_cast<int64_t>(s.size()) - 1; j >= 0; --ax, --j) {
      strides[k][ax] = s[j] == 1 ? 0 : stride;
      stride *= s[j];
    }
  }
  const int64_t inner = rank ? out_shape[rank - 1] : 1;
  std::array<int64_t, N> inner_stride{}, base{};
  for (size_t k = 0; k < N; ++k) inner_stride[k] = rank ? strides[k][rank - 1] : 0;
  std::vector<int64_t> idx(rank > 0 ? rank - 1 : 0, 0);
  std::array<int64_t, N> offs;
  for (int64_t i = 0; i < total; i += inner) {
    for (int64_t j = 0; j < inner; ++j) {
      for (size_t k = 0; k < N; ++k) offs[k] = base[k] + j * inner_stride[k];
      f(i + j, offs);
    }
    // Advance the outer index (all axes but the last).
    for (int64_t ax = rank - 2; ax >= 0; --ax) {
      for (size_t k = 0; k < N; ++k) base[k] += strides[k][ax];
      if (++idx[ax] < out_shape[ax]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= strides[k][ax] * out_shape[ax];
      idx[ax] = 0;
    }
  }
}

// ---- shape rules ----------------------------------------------------------------------

// The numpy-broadcast shape of all present inputs; fails naming them if they do not broadcast.
Shape broadcast_inputs(InferContext& ctx);
// Fails unless input i is f32, f16, i64 or i32 (no bool).
void expect_numeric(InferContext& ctx, int i);

// Output: the inputs' common dtype, broadcast shape (all inputs must share the dtype).
void infer_broadcast(InferContext& ctx);
// Same, with the inputs restricted to float types.
void infer_broadcast_float(InferContext& ctx);
// Same, with the inputs restricted to numeric types (no bool).
void infer_broadcast_numeric(InferContext& ctx);
// Comparison: broadcast shape, bool output.
void infer_compare(InferContext& ctx);
// Logical: bool inputs, broadcast shape, bool output.
void infer_logical(InferContext& ctx);
// Unary: output type = input type; `floats_only` rejects integer inputs.
void infer_unary(InferContext& ctx, bool floats_only);
inline void infer_unary_float(InferContext& ctx) { infer_unary(ctx, true); }
inline void infer_unary_any(InferContext& ctx) { infer_unary(ctx, false); }

// ---- reference loops ------------------------------------------------------------------

// out = f(x) for float inputs; f takes and returns float.
template <typename F>
void unary_float(ComputeContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.mutable_data<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = store<T>(f(load(in[i])));
  });
}

// out = f(x) for any numeric input; f is generic over float and int64.
template <typename F>
void unary_numeric(ComputeContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, uint8_t>) {
      MONO_CHECK(false, "unary_numeric on bool");
    } else {
      const T* in = x.data<T>();
      T* out = y.mutable_data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = store<T>(f(load(in[i])));
    }
  });
}

// out = f(a, b) with broadcasting; the output has the inputs' dtype. f is generic over
// float and int64 (and bool when `allow_bool`).
template <typename F>
void binary_numeric(ComputeContext& ctx, F f) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.output(0);
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, uint8_t>) {
      MONO_CHECK(false, "binary_numeric on bool");
    } else {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* out = y.mutable_data<T>();
      if (a.shape() == b.shape()) {
        for (int64_t i = 0, n = a.numel(); i < n; ++i) out[i] = store<T>(f(load(pa[i]), load(pb[i])));
        return;
      }
      for_each_broadcast<2>(y.shape(), {&a.shape(), &b.shape()},
                            [&](int64_t i, const std::array<int64_t, 2>& o) {
                              out[i] = store<T>(f(load(pa[o[0]]), load(pb[o[1]])));
                            });
    }
  });
}

// out = f(a, b) -> bool with broadcasting; a and b share a dtype (any, bool included).
template <typename F>
void binary_predicate(ComputeContext& ctx, F f) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.output(0);
  uint8_t* out = y.mutable_data<uint8_t>();
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    if (a.shape() == b.shape()) {
      for (int64_t i = 0, n = a.numel(); i < n; ++i) out[i] = f(load(pa[i]), load(pb[i])) ? 1 : 0;
      return;
    }
    for_each_broadcast<2>(y.shape(), {&a.shape(), &b.shape()},
                          [&](int64_t i, const std::array<int64_t, 2>& o) {
                            out[i] = f(load(pa[o[0]]), load(pb[o[1]])) ? 1 : 0;
                          });
  });
}

// Variadic fold with broadcasting: out = f(...f(f(x0, x1), x2)..., xn) over the inputs
// (all of one numeric dtype). The running value is kept in the output's storage type, so
// f must be exact in it (max, min: not a sum of float16 values).
template <typename F>
void fold_inputs(ComputeContext& ctx, F f) {
  Tensor& y = ctx.output(0);
  visit_dtype(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, uint8_t>) {
      MONO_CHECK(false, "fold_inputs on bool");
    } else {
      T* out = y.mutable_data<T>();
      const int64_t n = y.numel();
      const Tensor& x0 = ctx.input(0);
      const T* p0 = x0.data<T>();
      if (x0.shape() == y.shape()) {
        for (int64_t i = 0; i < n; ++i) out[i] = p0[i];
      } else {
        for_each_broadcast<1>(y.shape(), {&x0.shape()},
                              [&](int64_t i, const std::array<int64_t, 1>& o) { out[i] = p0[o[0]]; });
      }
      for (int k = 1; k < ctx.num_inputs(); ++k) {
        const Tensor& x = ctx.input(k);
        const T* p = x.data<T>();
        if (x.shape() == y.shape()) {
          for (int64_t i = 0; i < n; ++i) out[i] = store<T>(f(load(out[i]), load(p[i])));
        } else {
          for_each_broadcast<1>(y.shape(), {&x.shape()},
                                [&](int64_t i, const std::array<int64_t, 1>& o) {
                                  out[i] = store<T>(f(load(out[i]), load(p[o[0]])));
                                });
        }
      }
    }
  });
}

}  // namespace mono
