// Mono device library: row-wise ops (LayerNormalization, Softmax), ONE WARP PER ROW, or one
// block per row for rows longer than a warp's register cache (the *_block_f variants).
// SELF-CONTAINED (no includes); requires common.cuh to be included first.
//
// Scheduling note: a 256-thread block has 8 warps, so one block work item handles 8 rows:
//   row = item * (blockDim.x / 32) + (threadIdx.x / 32);  if (row < rows) op(..., row, ...);
// (rows_per_block() / warp_row() below). The warp variants have no __syncthreads inside, so
// warps may diverge freely; the block variants synchronise the block (every thread calls).
//
// Input functor: `float in(int row, int i) const` returns element i of the row (fused producers).
// Output: either a pointer T* out to a row-major [rows][len] tensor (element row*len + i), or a
// functor `void out(int row, int i, float y) const` (fused consumers): the *_f variants.
// Rows of up to 1024 elements are cached in registers (32 per lane); longer rows re-read the
// input functor per pass (the block variants 16 values a thread at a time). All arithmetic in fp32.
#pragma once

namespace mono_dev {

__device__ __forceinline__ int rows_per_block() { return (int)(blockDim.x >> 5); }
__device__ __forceinline__ int warp_row(int item) {
  return item * rows_per_block() + (int)(threadIdx.x >> 5);
}

namespace detail {
constexpr int kRowCache = 32;  // values per lane cached in registers (len <= 1024)
constexpr int kRowChunk = 16;  // the block variants: values per thread loaded together, a chunk at a time

template <class T>
struct RowStore {
  T* out;
  int len;
  __device__ __forceinline__ void operator()(int row, int i, float y) const {
    out[(long long)row * len + i] = from_float<T>(y);
  }
};
}  // namespace detail

namespace detail {
struct NoStats {
  __device__ __forceinline__ void operator()(int, float, float) const {}
};

// The kRowChunk values of a row from `base`, `stride` apart, `fill` past its end: all loads
// issued before any is used (the block variants' passes).
template <class InF>
__device__ __forceinline__ void load_chunk(const InF& in, int row, int len, int base, int stride, float fill,
                                           float (&v)[kRowChunk]) {
#pragma unroll
  for (int j = 0; j < kRowChunk; ++j) {
    const int i = base + stride * j;
    v[j] = i < len ? in(row, i) : fill;
  }
}

// The statistics of a row a warp holds in registers, K values a lane (those with valid(k) set),
// lane 0's v[0] being the row's first value x[0]: the mean of x - x[0] with x[0] added back,
// then 1 / sqrt(the mean of the centred squares + eps).
template <int K, class Valid>
__device__ __forceinline__ void warp_row_stats(const float (&v)[K], const Valid& valid, float inv_len, float eps,
                                               float& mean, float& rstd) {
  const float shift = __shfl_sync(0xffffffffu, v[0], 0);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k)
    if (valid(k)) s += v[k] - shift;
  mean = shift + warp_sum(s) * inv_len;
  float q = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const float d = v[k] - mean;
    if (valid(k)) q += d * d;
  }
  rstd = rsqrtf(warp_sum(q) * inv_len + eps);
}
}  // namespace detail

// One row over every thread of the block, for rows longer than a warp caches, in a group of
// their own (a block per row; support.h block_per_row). Every thread of the block must call, with
// the same row; `scratch` is 33 floats of shared memory (block_sum). Three passes over the input
// functor, each in chunks of kRowChunk values a thread, all of a chunk's loads issued before any
// is used and before any store. Over one warp a row, ALBERT-xxlarge's 4096-wide LayerNorm kept 16
// of 132 blocks busy and took 63 us a stage; a block a row, 11 us (H100, bench/RESULTS.md
// session 16). The warp variants' long rows keep their element loops: chunked the same way inside
// whisper's attention, its attention stages went 292 -> 437 us (same session).
template <class G, class B, class InF, class OutF, class StatsF = detail::NoStats>
__device__ void layer_norm_row_block_f(const InF& in, int row, int len, const G* gamma, const B* beta, float eps,
                                       float* scratch, const OutF& out, const StatsF& stats = StatsF{}) {
  using detail::kRowChunk;
  const int first = (int)threadIdx.x, stride = (int)blockDim.x;
  const float inv_len = 1.0f / (float)len;
  const float shift = in(row, 0);
  float s = 0.0f;
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
    detail::load_chunk(in, row, len, base, stride, shift, v);
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) s += v[j] - shift;
  }
  const float mean = shift + block_sum(s, scratch) * inv_len;
  float q = 0.0f;
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
    detail::load_chunk(in, row, len, base, stride, mean, v);
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) q += (v[j] - mean) * (v[j] - mean);
  }
  const float rstd = rsqrtf(block_sum(q, scratch) * inv_len + eps);
  stats(row, mean, rstd);
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk], g[kRowChunk], b[kRowChunk];
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) {
      const int i = base + stride * j;
      v[j] = i < len ? in(row, i) : 0.0f;
      g[j] = i < len ? to_float(gamma[i]) : 0.0f;
      b[j] = (i < len && beta) ? to_float(beta[i]) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) {
      const int i = base + stride * j;
      if (i < len) out(row, i, (v[j] - mean) * rstd * g[j] + b[j]);
    }
  }
}

template <class InF, class OutF>
__device__ void softmax_row_block_f(const InF& in, int row, int len, float* scratch, const OutF& out) {
  using detail::kRowChunk;
  const int first = (int)threadIdx.x, stride = (int)blockDim.x;
  const float neg_inf = -__int_as_float(0x7f800000);
  float mx = neg_inf;
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
    detail::load_chunk(in, row, len, base, stride, neg_inf, v);
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) mx = fmaxf(mx, v[j]);
  }
  mx = block_max(mx, scratch);
  float s = 0.0f;
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
    detail::load_chunk(in, row, len, base, stride, neg_inf, v);
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) s += expf(v[j] - mx);
  }
  const float inv = 1.0f / block_sum(s, scratch);
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
    detail::load_chunk(in, row, len, base, stride, neg_inf, v);
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) {
      const int i = base + stride * j;
      if (i < len) out(row, i, expf(v[j] - mx) * inv);
    }
  }
}

// y = (x - mean) / sqrt(var + eps) * gamma + beta   (biased variance; beta may be null).
// The mean is taken of x - x[0] and x[0] added back: a row whose mean is far larger than its
// spread (a residual stream with a large offset) keeps its precision (the CPU reference does
// the same).
// `stats(row, mean, rstd)` is called by every lane once the row's statistics are known (the
// optional Mean and InvStdDev outputs). gamma and beta may differ in storage type (fp16
// calibration keeps a tensor fp32 when its range does not fit).
template <class G, class B, class InF, class OutF, class StatsF = detail::NoStats>
__device__ void layer_norm_row_f(const InF& in, int row, int len, const G* gamma, const B* beta,
                                 float eps, const OutF& out, const StatsF& stats = StatsF{}) {
  const int lane = threadIdx.x & 31;
  const float inv_len = 1.0f / (float)len;
  if (len <= 32 * detail::kRowCache) {
    // gamma and beta are read here, with the row, not next to the stores below: the compiler
    // may not move a load above a store through another pointer, so reads interleaved with the
    // stores would cost one memory round trip per element.
    float v[detail::kRowCache], g[detail::kRowCache], b[detail::kRowCache];
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      v[j] = i < len ? in(row, i) : 0.0f;
      g[j] = i < len ? to_float(gamma[i]) : 0.0f;
      b[j] = (i < len && beta) ? to_float(beta[i]) : 0.0f;
    }
    float mean, rstd;
    detail::warp_row_stats(v, [&](int j) { return lane + 32 * j < len; }, inv_len, eps, mean, rstd);
    stats(row, mean, rstd);
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      if (i < len) out(row, i, (v[j] - mean) * rstd * g[j] + b[j]);
    }
  } else {
    const float shift = in(row, 0);
    float s = 0.0f;
    for (int i = lane; i < len; i += 32) s += in(row, i) - shift;
    const float mean = shift + warp_sum(s) * inv_len;
    float q = 0.0f;
    for (int i = lane; i < len; i += 32) {
      const float d = in(row, i) - mean;
      q += d * d;
    }
    const float rstd = rsqrtf(warp_sum(q) * inv_len + eps);
    stats(row, mean, rstd);
    for (int i = lane; i < len; i += 32) {
      float y = (in(row, i) - mean) * rstd * to_float(gamma[i]);
      if (beta) y += to_float(beta[i]);
      out(row, i, y);
    }
  }
}

namespace detail {
// Eight consecutive values at p (16-byte aligned) into v[0..7] as floats: one 16-byte load (fp16),
// two (fp32).
__device__ __forceinline__ void load8(const half_t* p, float* v) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const unsigned int w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    v[2 * j] = half_bits_to_float((unsigned short)(w[j] & 0xffffu));
    v[2 * j + 1] = half_bits_to_float((unsigned short)(w[j] >> 16));
  }
}
__device__ __forceinline__ void load8(const float* p, float* v) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
}  // namespace detail

// layer_norm_row_f for an fp16 row x[row * len ...] whose length is a multiple of 256, up to
// 32 * kRowCache: each lane loads 8 consecutive values (and their gamma and beta) with one
// 16-byte access per chunk of 256 (three for a 768-wide row, against 72 two-byte loads a lane
// element by element), and hands them to out8(row, i, y[8]) for one 16-byte store (store8).
// x, gamma, beta and the output must be 16-byte aligned. The statistics are the element
// version's (the mean of x - x[0], then the centred sum of squares); only the order of the sums
// differs.
template <class G, class B, class Out8>
__device__ void layer_norm_row_v8(const half_t* x, int row, int len, const G* gamma, const B* beta,
                                  float eps, const Out8& out8) {
  constexpr int kChunks = detail::kRowCache / 8;  // value 8c + j of a lane: element (32c + lane) * 8 + j
  const int lane = threadIdx.x & 31;
  const half_t* xr = x + (long long)row * len;
  float v[detail::kRowCache], g[detail::kRowCache], b[detail::kRowCache];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int i = (c * 32 + lane) * 8;
#pragma unroll
    for (int j = 0; j < 8; ++j) v[8 * c + j] = g[8 * c + j] = b[8 * c + j] = 0.0f;
    if (i < len) {
      detail::load8(xr + i, v + 8 * c);
      detail::load8(gamma + i, g + 8 * c);
      if (beta) detail::load8(beta + i, b + 8 * c);
    }
  }
  float mean, rstd;
  detail::warp_row_stats(v, [&](int k) { return ((k / 8) * 32 + lane) * 8 < len; }, 1.0f / (float)len, eps, mean, rstd);
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int i = (c * 32 + lane) * 8;
    if (i >= len) continue;
    float y[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) y[j] = (v[8 * c + j] - mean) * rstd * g[8 * c + j] + b[8 * c + j];
    out8(row, i, y);
  }
}

template <class T, class InF, class G, class B>
__device__ __forceinline__ void layer_norm_row(const InF& in, int row, int len, const G* gamma,
                                               const B* beta, float eps, T* out) {
  layer_norm_row_f(in, row, len, gamma, beta, eps, detail::RowStore<T>{out, len});
}

// y_i = exp(x_i - max) / sum_j exp(x_j - max)
template <class InF, class OutF>
__device__ void softmax_row_f(const InF& in, int row, int len, const OutF& out) {
  const int lane = threadIdx.x & 31;
  const float neg_inf = -__int_as_float(0x7f800000);
  if (len <= 32 * detail::kRowCache) {
    float v[detail::kRowCache];
    float mx = neg_inf;
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      v[j] = i < len ? in(row, i) : neg_inf;
      mx = fmaxf(mx, v[j]);
    }
    mx = warp_max(mx);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      v[j] = i < len ? expf(v[j] - mx) : 0.0f;
      s += v[j];
    }
    const float inv = 1.0f / warp_sum(s);
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      if (i < len) out(row, i, v[j] * inv);
    }
  } else {
    float mx = neg_inf;
    for (int i = lane; i < len; i += 32) mx = fmaxf(mx, in(row, i));
    mx = warp_max(mx);
    float s = 0.0f;
    for (int i = lane; i < len; i += 32) s += expf(in(row, i) - mx);
    const float inv = 1.0f / warp_sum(s);
    for (int i = lane; i < len; i += 32) out(row, i, expf(in(row, i) - mx) * inv);
  }
}

template <class T, class InF>
__device__ __forceinline__ void softmax_row(const InF& in, int row, int len, T* out) {
  softmax_row_f(in, row, len, detail::RowStore<T>{out, len});
}


}  // namespace mono_dev
