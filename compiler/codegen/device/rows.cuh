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
// input functor per pass, 16 values a thread at a time. All arithmetic in fp32.
#pragma once

namespace mono_dev {

__device__ __forceinline__ int rows_per_block() { return (int)(blockDim.x >> 5); }
__device__ __forceinline__ int warp_row(int item) {
  return item * rows_per_block() + (int)(threadIdx.x >> 5);
}

namespace detail {
constexpr int kRowCache = 32;  // values per lane cached in registers (len <= 1024)
constexpr int kRowChunk = 16;  // longer rows: values per thread loaded together, a chunk at a time

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
}  // namespace detail

namespace detail {
// Who shares a row: the lanes of one warp, or every thread of a block (rows too long for one
// warp to finish quickly; every thread of the block must call).
struct WarpRow {
  __device__ __forceinline__ int first() const { return (int)(threadIdx.x & 31); }
  __device__ __forceinline__ int stride() const { return 32; }
  __device__ __forceinline__ float sum(float v) const { return warp_sum(v); }
  __device__ __forceinline__ float max(float v) const { return warp_max(v); }
};
struct BlockRow {
  float* scratch;  // 33 floats of shared memory (block_sum)
  __device__ __forceinline__ int first() const { return (int)threadIdx.x; }
  __device__ __forceinline__ int stride() const { return (int)blockDim.x; }
  __device__ __forceinline__ float sum(float v) const { return block_sum(v, scratch); }
  __device__ __forceinline__ float max(float v) const { return block_max(v, scratch); }
};
}  // namespace detail

// Rows longer than the register cache: three passes over the input functor, each in chunks of
// kRowChunk values a thread, all of a chunk's loads issued before any is used and before any
// store. A loop of single loads, or of a load after the previous element's store, waits out the
// memory latency once per element: ALBERT-xxlarge's 4096-wide LayerNorm took 63 us a stage so
// (H100, bench/RESULTS.md session 16).
template <class Team, class G, class B, class InF, class OutF, class StatsF>
__device__ void layer_norm_row_chunked(const Team& team, const InF& in, int row, int len, const G* gamma,
                                       const B* beta, float eps, const OutF& out, const StatsF& stats) {
  using detail::kRowChunk;
  const int first = team.first(), stride = team.stride();
  const float inv_len = 1.0f / (float)len;
  const float shift = in(row, 0);
  float s = 0.0f;
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) {
      const int i = base + stride * j;
      v[j] = i < len ? in(row, i) : shift;
    }
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) s += v[j] - shift;
  }
  const float mean = shift + team.sum(s) * inv_len;
  float q = 0.0f;
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) {
      const int i = base + stride * j;
      v[j] = i < len ? in(row, i) : mean;
    }
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) q += (v[j] - mean) * (v[j] - mean);
  }
  const float rstd = rsqrtf(team.sum(q) * inv_len + eps);
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

template <class Team, class InF, class OutF>
__device__ void softmax_row_chunked(const Team& team, const InF& in, int row, int len, const OutF& out) {
  using detail::kRowChunk;
  const int first = team.first(), stride = team.stride();
  const float neg_inf = -__int_as_float(0x7f800000);
  float mx = neg_inf;
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) {
      const int i = base + stride * j;
      v[j] = i < len ? in(row, i) : neg_inf;
    }
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) mx = fmaxf(mx, v[j]);
  }
  mx = team.max(mx);
  float s = 0.0f;
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) {
      const int i = base + stride * j;
      v[j] = i < len ? in(row, i) : neg_inf;
    }
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) s += expf(v[j] - mx);
  }
  const float inv = 1.0f / team.sum(s);
  for (int base = first; base < len; base += stride * kRowChunk) {
    float v[kRowChunk];
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) {
      const int i = base + stride * j;
      v[j] = i < len ? in(row, i) : neg_inf;
    }
#pragma unroll
    for (int j = 0; j < kRowChunk; ++j) {
      const int i = base + stride * j;
      if (i < len) out(row, i, expf(v[j] - mx) * inv);
    }
  }
}

// One row over every thread of the block (rows longer than a warp's register cache, in a group
// of their own: a block per row). Every thread of the block must call, with the same row.
template <class G, class B, class InF, class OutF, class StatsF = detail::NoStats>
__device__ __forceinline__ void layer_norm_row_block_f(const InF& in, int row, int len, const G* gamma, const B* beta,
                                                       float eps, float* scratch, const OutF& out,
                                                       const StatsF& stats = StatsF{}) {
  layer_norm_row_chunked(detail::BlockRow{scratch}, in, row, len, gamma, beta, eps, out, stats);
}
template <class InF, class OutF>
__device__ __forceinline__ void softmax_row_block_f(const InF& in, int row, int len, float* scratch, const OutF& out) {
  softmax_row_chunked(detail::BlockRow{scratch}, in, row, len, out);
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
    const float shift = __shfl_sync(0xffffffffu, v[0], 0);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j)
      if (lane + 32 * j < len) s += v[j] - shift;
    const float mean = shift + warp_sum(s) * inv_len;
    float q = 0.0f;
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      const float d = v[j] - mean;
      if (i < len) q += d * d;
    }
    const float rstd = rsqrtf(warp_sum(q) * inv_len + eps);
    stats(row, mean, rstd);
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      if (i < len) out(row, i, (v[j] - mean) * rstd * g[j] + b[j]);
    }
  } else {
    layer_norm_row_chunked(detail::WarpRow{}, in, row, len, gamma, beta, eps, out, stats);
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
    softmax_row_chunked(detail::WarpRow{}, in, row, len, out);
  }
}

template <class T, class InF>
__device__ __forceinline__ void softmax_row(const InF& in, int row, int len, T* out) {
  softmax_row_f(in, row, len, detail::RowStore<T>{out, len});
}


}  // namespace mono_dev
