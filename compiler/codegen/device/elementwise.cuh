// Mono device library: scalar helpers the generated elementwise code calls (numpy/ONNX semantics).
// SELF-CONTAINED (no includes); needs no other device header.
#pragma once

namespace mono_dev {

// Max/min that propagate NaN like numpy.maximum/minimum.
__device__ __forceinline__ float fmax_nan(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b); }
__device__ __forceinline__ float fmin_nan(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b); }

// Integer power by squaring; negative exponents give 0 except for bases 1 and -1.
__device__ __forceinline__ long long ipow(long long base, long long e) {
  if (e < 0) return base == 1 ? 1 : (base == -1 ? ((e & 1) ? -1 : 1) : 0);
  long long r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

// float -> int64 truncating toward zero, NaN -> 0, saturating at the limits.
__device__ __forceinline__ long long float_to_int(float x) {
  if (x != x) return 0;
  if (x >= 9.2233720368547758e18f) return 9223372036854775807LL;
  if (x <= -9.2233720368547758e18f) return -9223372036854775807LL - 1;
  return (long long)x;
}

template <class T> __device__ __forceinline__ T sq(T x) { return x * x; }

// Activations with the ONNX definitions (each operand evaluated once).
__device__ __forceinline__ float softplus(float x) { return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }
__device__ __forceinline__ float softsign(float x) { return x / (1.0f + fabsf(x)); }
__device__ __forceinline__ float mish(float x) { return x * tanhf(softplus(x)); }
__device__ __forceinline__ float hard_sigmoid(float x, float alpha, float beta) {
  return fmaxf(0.0f, fminf(1.0f, alpha * x + beta));
}
__device__ __forceinline__ float swish(float x, float alpha) { return x * sigmoid(alpha * x); }
__device__ __forceinline__ float hard_swish(float x) { return x * fmaxf(0.0f, fminf(1.0f, x * (1.0f / 6.0f) + 0.5f)); }
__device__ __forceinline__ float leaky_relu(float x, float alpha) { return x < 0.0f ? alpha * x : x; }
__device__ __forceinline__ float prelu(float x, float slope) { return x < 0.0f ? slope * x : x; }
__device__ __forceinline__ float elu(float x, float alpha) { return x < 0.0f ? alpha * expm1f(x) : x; }
__device__ __forceinline__ float selu(float x, float alpha, float gamma) {
  return x > 0.0f ? gamma * x : gamma * alpha * expm1f(x);
}
__device__ __forceinline__ float celu(float x, float alpha) {
  return fmaxf(0.0f, x) + fminf(0.0f, alpha * expm1f(x / alpha));
}
__device__ __forceinline__ float thresholded_relu(float x, float alpha) { return x > alpha ? x : 0.0f; }
__device__ __forceinline__ float shrink(float x, float bias, float lambd) {
  return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0f);
}

// An index into an axis of extent n, negative counting from the end; out of range: -1.
__device__ __forceinline__ long long wrap_index(long long i, long long n) {
  if (i < 0) i += n;
  return (i < 0 || i >= n) ? -1 : i;
}

// IsInf with its two switches.
__device__ __forceinline__ bool is_inf(float x, bool positive, bool negative) {
  return isinf(x) && (x > 0.0f ? positive : negative);
}

// Sign: -1, 0 or 1; NaN stays NaN.
__device__ __forceinline__ float sign_of(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); }
__device__ __forceinline__ long long sign_of(long long x) { return (x > 0) - (x < 0); }

// Integer Mod: Python's % (the divisor's sign) or, with c_fmod, C's (the dividend's); by 0 or
// -1 the remainder is 0 (numpy's result for 0; -1 also avoids INT64_MIN % -1).
__device__ __forceinline__ long long imod(long long a, long long b, bool c_fmod) {
  if (b == 0 || b == -1) return 0;
  long long r = a % b;
  if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace mono_dev
