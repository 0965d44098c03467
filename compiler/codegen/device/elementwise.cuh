// Scalar helpers the generated elementwise code calls (numpy/ONNX semantics).
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

// Prefetches [ptr, ptr + bytes) into L2, the lines spread over every thread of the grid.
__device__ __forceinline__ void prefetch_l2(const unsigned char* ptr, unsigned long long bytes) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x * 128ull;
  for (unsigned long long off = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) * 128ull; off < bytes;
       off += stride)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(ptr + off));
}

}  // namespace mono_dev
