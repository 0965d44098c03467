// Mono device library: common helpers.
//
// SELF-CONTAINED: this file (like every file in compiler/codegen/device/) includes no header at
// all, so it can be embedded as a string and compiled by NVRTC (sm_80 / sm_90) as well as by nvcc.
// Only compiler builtins (__syncthreads, __shfl_xor_sync, atomicAdd, expf/erff/tanhf, ...) and
// inline PTX are used. The includer includes the files in dependency order, this one first
// (device_include_order(), compiler/codegen/cuda_emitter.h); each file's first paragraph names
// the files it needs.
#pragma once

// Trait NAME<X>::value = X::MEMBER if X declares `static constexpr bool MEMBER`, else false.
#define MONO_FLAG_TRAIT(NAME, MEMBER)                          \
  template <class X, class = void>                             \
  struct NAME {                                                \
    static constexpr bool value = false;                       \
  };                                                           \
  template <class X>                                           \
  struct NAME<X, decltype(void(X::MEMBER))> {                  \
    static constexpr bool value = X::MEMBER;                   \
  };

namespace mono_dev {

// ------------------------------------------------------------------------------------------------
// Basic types
// ------------------------------------------------------------------------------------------------

// IEEE fp16 storage (bit pattern). A struct rather than a bare `unsigned short` so that it can
// never silently take part in integer arithmetic or overload resolution for integer types.
struct alignas(2) half_t {
  unsigned short bits;
};

// 16-byte / 8-byte raw vectors (own definitions so that no CUDA header is needed).
struct alignas(16) u32x4 {
  unsigned int x, y, z, w;
};
struct alignas(8) u32x2 {
  unsigned int x, y;
};

// A compile-time value as an argument (std::integral_constant without the header): a generic
// lambda called with Constant<bool, true>{} and Constant<bool, false>{} compiles twice.
template <class T, T V>
struct Constant {
  static constexpr T value = V;
};

// ------------------------------------------------------------------------------------------------
// Conversions
// ------------------------------------------------------------------------------------------------

__device__ __forceinline__ float half_bits_to_float(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short float_to_half_bits(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
// Two floats -> one packed f16x2 register: `lo` in bits 0..15, `hi` in bits 16..31.
__device__ __forceinline__ unsigned int pack_half2(float lo, float hi) {
  unsigned int r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(half_t x) { return half_bits_to_float(x.bits); }
__device__ __forceinline__ float to_float(double x) { return (float)x; }
__device__ __forceinline__ float to_float(long long x) { return (float)x; }
__device__ __forceinline__ float to_float(int x) { return (float)x; }
__device__ __forceinline__ float to_float(unsigned char x) { return (float)x; }
__device__ __forceinline__ float to_float(signed char x) { return (float)x; }
__device__ __forceinline__ float to_float(bool x) { return x ? 1.0f : 0.0f; }

// from_float<T>(x): float -> T. Integers truncate toward zero (ONNX Cast semantics for in-range
// values); bool is x != 0; half rounds to nearest even.
template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ half_t from_float<half_t>(float x) {
  half_t h;
  h.bits = float_to_half_bits(x);
  return h;
}
template <> __device__ __forceinline__ double from_float<double>(float x) { return (double)x; }
template <> __device__ __forceinline__ long long from_float<long long>(float x) { return (long long)x; }
template <> __device__ __forceinline__ int from_float<int>(float x) { return (int)x; }
template <> __device__ __forceinline__ unsigned char from_float<unsigned char>(float x) {
  return (unsigned char)(int)x;
}
template <> __device__ __forceinline__ signed char from_float<signed char>(float x) {
  return (signed char)(int)x;
}
template <> __device__ __forceinline__ bool from_float<bool>(float x) { return x != 0.0f; }

namespace detail {
// Two 2-byte values (half_t) in one 32-bit word, `lo` in bits 0..15: the 4-byte shared stores of
// the fp16 loaders and the 16-byte output stores of store8.
template <class T>
__device__ __forceinline__ unsigned int pack2(T lo, T hi) {
  union {
    unsigned int w;
    T h[2];
  } p;
  p.h[0] = lo;
  p.h[1] = hi;
  return p.w;
}
}  // namespace detail

// ------------------------------------------------------------------------------------------------
// Small PTX helpers shared by the other files
// ------------------------------------------------------------------------------------------------

// Generic pointer to a shared-memory pointer -> 32-bit shared-window address.
__device__ __forceinline__ unsigned int smem_u32(const void* p) {
  unsigned long long a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return (unsigned int)a;
}
__device__ __forceinline__ unsigned long long ptr_bits(const void* p) {
  return reinterpret_cast<unsigned long long>(p);
}
// Global load that bypasses L1 (L1 is not coherent between blocks inside one kernel).
__device__ __forceinline__ float ld_cg(const float* p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  return v;
}
// The same through the compiler's builtin (not volatile: loads may be batched and reordered;
// for data this block wrote before a __syncthreads, or that a fence-and-count protocol published).
__device__ __forceinline__ float ld_cg_float(const float* p) { return __ldcg(p); }
__device__ __forceinline__ float ld_cg_float(const half_t* p) {
  return half_bits_to_float(__ldcg(reinterpret_cast<const unsigned short*>(p)));
}
// Two-phase GEMM epilogues (epilogue.cuh): one 8-byte load of the float pair at p (8-byte aligned)
// into two epilogue slots; returns the first.
__device__ __forceinline__ float ld_pair_slots(float* slots, const float* p) {
  const float2 v = *reinterpret_cast<const float2*>(p);
  slots[0] = v.x;
  slots[1] = v.y;
  return v.x;
}
__device__ __forceinline__ unsigned int ld_acquire_gpu(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void red_add_release_gpu(unsigned int* p, unsigned int v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// ------------------------------------------------------------------------------------------------
// Reductions
// ------------------------------------------------------------------------------------------------

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Copies `bytes` bytes from src to dst over every thread of the grid: 16 bytes at a time where
// both are 16-byte aligned (the kernel's copies of graph outputs that no group writes).
__device__ __forceinline__ void grid_copy(void* dst, const void* src, unsigned long long bytes) {
  const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long nt = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long done = 0;
  if (((ptr_bits(dst) | ptr_bits(src)) & 15ull) == 0) {
    done = bytes / 16 * 16;
    for (unsigned long long i = tid; i < bytes / 16; i += nt)
      reinterpret_cast<u32x4*>(dst)[i] = reinterpret_cast<const u32x4*>(src)[i];
  }
  for (unsigned long long i = done + tid; i < bytes; i += nt)
    static_cast<unsigned char*>(dst)[i] = static_cast<const unsigned char*>(src)[i];
}

// Block-wide reductions over blockDim.x threads (blockDim.x a multiple of 32, <= 1024). Every
// thread of the block must call; every thread gets the result. `scratch` is shared memory of at
// least 33 floats. Ends with __syncthreads(), so back-to-back calls may reuse the same scratch.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float t = lane < nwarps ? scratch[lane] : 0.0f;
    t = warp_sum(t);
    if (lane == 0) scratch[32] = t;
  }
  __syncthreads();
  const float r = scratch[32];
  __syncthreads();
  return r;
}
__device__ __forceinline__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
  v = warp_max(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float t = lane < nwarps ? scratch[lane] : -__int_as_float(0x7f800000);
    t = warp_max(t);
    if (lane == 0) scratch[32] = t;
  }
  __syncthreads();
  const float r = scratch[32];
  __syncthreads();
  return r;
}

// ------------------------------------------------------------------------------------------------
// Math used by elementwise code
// ------------------------------------------------------------------------------------------------

__device__ __forceinline__ float gelu_erf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
__device__ __forceinline__ float gelu_tanh(float x) {
  const float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
}
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

}  // namespace mono_dev
