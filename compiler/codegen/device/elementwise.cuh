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

}  // namespace mono_dev
