// Mono device library: row-wise ops (LayerNormalization, Softmax), ONE WARP PER ROW.
// SELF-CONTAINED (no includes); requires common.cuh to be included first.
//
// Scheduling note: a 256-thread block has 8 warps, so one block work item handles 8 rows:
//   row = item * (blockDim.x / 32) + (threadIdx.x / 32);  if (row < rows) op(..., row, ...);
// (rows_per_block() / warp_row() below). No __syncthreads inside, so warps may diverge freely.
//
// Input functor: `float in(int row, int i) const` returns element i of the row (fused producers).
// Output: either a pointer T* out to a row-major [rows][len] tensor (element row*len + i), or a
// functor `void out(int row, int i, float y) const` (fused consumers): the *_f variants.
// Rows of up to 1024 elements are cached in registers (32 per lane); longer rows re-read the
// input functor per pass. All arithmetic in fp32.
#pragma once

namespace mono_dev {

__device__ __forceinline__ int rows_per_block() { return (int)(blockDim.x >> 5); }
__device__ __forceinline__ int warp_row(int item) {
  return item * rows_per_block() + (int)(threadIdx.x >> 5);
}

namespace detail {
constexpr int kRowCache = 32;  // values per lane cached in registers (len <= 1024)

template <class T>
struct RowStore {
  T* out;
  int len;
  __device__ __forceinline__ void operator()(int row, int i, float y) const {
    out[(long long)row * len + i] = from_float<T>(y);
  }
};
}  // namespace detail

// y = (x - mean) / sqrt(var + eps) * gamma + beta   (biased variance; beta may be null)
template <class P, class InF, class OutF>
__device__ void layer_norm_row_f(const InF& in, int row, int len, const P* gamma, const P* beta,
                                 float eps, const OutF& out) {
  const int lane = threadIdx.x & 31;
  const float inv_len = 1.0f / (float)len;
  if (len <= 32 * detail::kRowCache) {
    // gamma and beta are read here, with the row, not next to the stores below: the compiler
    // may not move a load above a store through another pointer, so reads interleaved with the
    // stores would cost one memory round trip per element.
    float v[detail::kRowCache], g[detail::kRowCache], b[detail::kRowCache];
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      v[j] = i < len ? in(row, i) : 0.0f;
      g[j] = i < len ? to_float(gamma[i]) : 0.0f;
      b[j] = (i < len && beta) ? to_float(beta[i]) : 0.0f;
      s += v[j];
    }
    const float mean = warp_sum(s) * inv_len;
    float q = 0.0f;
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      const float d = v[j] - mean;
      if (i < len) q += d * d;
    }
    const float rstd = rsqrtf(warp_sum(q) * inv_len + eps);
#pragma unroll
    for (int j = 0; j < detail::kRowCache; ++j) {
      const int i = lane + 32 * j;
      if (i < len) out(row, i, (v[j] - mean) * rstd * g[j] + b[j]);
    }
  } else {
    float s = 0.0f;
    for (int i = lane; i < len; i += 32) s += in(row, i);
    const float mean = warp_sum(s) * inv_len;
    float q = 0.0f;
    for (int i = lane; i < len; i += 32) {
      const float d = in(row, i) - mean;
      q += d * d;
    }
    const float rstd = rsqrtf(warp_sum(q) * inv_len + eps);
    for (int i = lane; i < len; i += 32) {
      float y = (in(row, i) - mean) * rstd * to_float(gamma[i]);
      if (beta) y += to_float(beta[i]);
      out(row, i, y);
    }
  }
}

template <class T, class InF, class P>
__device__ __forceinline__ void layer_norm_row(const InF& in, int row, int len, const P* gamma,
                                               const P* beta, float eps, T* out) {
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


// ---- LayerNorm folded into its neighbouring GEMMs (plan.h LnFold) ------------------------------
//
// The GEMM that writes x (row-major, `len` per row) computes the row statistics; the normalised
// y = (x - mean) * rstd * gamma + beta is never stored: readers apply it to x (a GEMM reading y as
// its A operand multiplies x by gamma-scaled weights and corrects its epilogue with the stats).
//
// ln_row_stats runs after the epilogue of one ROWS x COLS tile at (row0, c0) (this block's own
// stores; NT threads): the tile's share of each row, (sum, sum of squares about the tile's own
// mean), goes to part[row * PARTS + p], p = c0 / COLS. The tile then counts itself on its row
// panel's counter; the last tile of the panel (no waiting) combines the panel's PARTS partials
// (PARTS = ceil(len / COLS)) in column order, so the result does not depend on which tile is
// last, writes stats[row] = (rstd, -mean * rstd) and resets the counter. `smem`: 4 free bytes.
template <int ROWS, int COLS, int PARTS, int NT, class T>
__device__ void ln_row_stats(const T* x, int len, int rows, long long row0, int c0, float2* part, float2* stats,
                             unsigned int* counter, float eps, unsigned char* smem) {
  constexpr int kTpr = NT / ROWS >= 32 ? 32 : (NT / ROWS < 1 ? 1 : NT / ROWS);  // threads per row
  constexpr int kRowsPerPass = NT / kTpr;
  constexpr int kVals = (COLS + kTpr - 1) / kTpr;
  __syncthreads();  // the epilogue's stores are visible to the whole block
  const int t = threadIdx.x;
  const int j = t % kTpr;
  const int cols = min(COLS, len - c0);
  if (t < NT) {
#pragma unroll 1
    for (int r0 = 0; r0 < ROWS; r0 += kRowsPerPass) {
      const int r = r0 + t / kTpr;
      const bool live = r < rows;
      // Every load is issued (clamped into the tile), then masked: no branch between them, so
      // they are all in flight at once.
      const T* xr = x + (row0 + min(r, rows - 1)) * len + c0;
      float v[kVals];
#pragma unroll
      for (int i = 0; i < kVals; ++i) v[i] = ld_cg_float(xr + min(j + i * kTpr, cols - 1));
      float s = 0.0f;
#pragma unroll
      for (int i = 0; i < kVals; ++i) {
        if (!live || j + i * kTpr >= cols) v[i] = 0.0f;
        s += v[i];
      }
#pragma unroll
      for (int o = kTpr / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
      const float mean = s / (float)cols;
      float q = 0.0f;
#pragma unroll
      for (int i = 0; i < kVals; ++i) {
        const float d = v[i] - mean;
        if (j + i * kTpr < cols) q += d * d;
      }
#pragma unroll
      for (int o = kTpr / 2; o > 0; o >>= 1) q += __shfl_xor_sync(0xffffffffu, q, o);
      if (live && j == 0) __stcg(part + (row0 + r) * PARTS + c0 / COLS, make_float2(s, q));
    }
  }
  __threadfence();  // publish the partials before counting them
  __syncthreads();
  unsigned int* last = reinterpret_cast<unsigned int*>(smem);
  if (t == 0) *last = atomicAdd(counter, 1u) == (unsigned int)(PARTS - 1);
  __syncthreads();
  if (!*last) return;
  __threadfence();  // acquire: the other tiles' partials
  for (int r = t; r < rows; r += blockDim.x) {
    float2 pk[PARTS];  // all loads in flight before the combination
#pragma unroll
    for (int k = 0; k < PARTS; ++k) pk[k] = __ldcg(part + (row0 + r) * PARTS + k);
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;  // Chan et al.'s pairwise update, in column order
#pragma unroll
    for (int k = 0; k < PARTS; ++k) {
      const float nk = (float)min(COLS, len - k * COLS);
      const float mk = pk[k].x / nk, d = mk - mean, nn = n + nk;
      mean += d * (nk / nn);
      m2 += pk[k].y + d * d * (n * nk / nn);
      n = nn;
    }
    const float rstd = rsqrtf(m2 / (float)len + eps);
    __stcg(stats + row0 + r, make_float2(rstd, -mean * rstd));
  }
  if (t == 0) *reinterpret_cast<volatile unsigned int*>(counter) = 0u;  // next use: after a grid barrier or launch
}

}  // namespace mono_dev
