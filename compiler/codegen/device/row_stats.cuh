// Mono device library: row statistics for a LayerNormalization folded into the GEMMs that read
// it (planner/norm_fusion.cc). The tensor x the normalization reads is [M][N] fp16, N its
// normalized length; its statistics are kept per row and per 32-column chunk, as float2
// (mean, M2) of the chunk's min(32, N - 32 c) elements (M2 = the sum of squared deviations from
// the chunk's mean), at stats[row * chunks + c], chunks = ceil(N / 32). Whoever writes x writes
// them: the GEMM tiles that produce x (tile_row_stats, after their epilogue), or, for x copied
// into the arena as a kernel input, the whole grid before the first stage (grid_row_stats). The
// reading tiles copy their rows' chunks into shared memory and combine them into each row's mean
// and 1/stddev (combine_row_stats).
// Chunks combine by Chan et al.'s pairwise update, which never subtracts two large sums: the
// variance does not cancel when a row's mean is large against its spread.
// SELF-CONTAINED (no includes); requires common.cuh and ptx.cuh to be included first.
#pragma once

namespace mono_dev {

// A GEMM tile's request to write the row statistics of what its epilogue stored: `out` is the
// tile's output, [M][N] row-major (the epilogue's store index m * N + n), `stats` the chunks
// above. A null `stats` writes nothing.
struct RowStats {
  const half_t* out = nullptr;
  float2* stats = nullptr;
};

constexpr int kRowStatsChunk = 32;

// (n, mean, m2) of a set merged with (nb, mb, m2b) of a disjoint one.
__device__ __forceinline__ void chan_merge(float& n, float& mean, float& m2, float nb, float mb, float m2b) {
  const float total = n + nb;
  if (nb == 0.0f) return;
  const float d = mb - mean, f = nb / total;
  mean = fmaf(d, f, mean);
  m2 = m2 + m2b + d * d * n * f;
  n = total;
}

namespace detail {

// (n, mean, m2) of the up to 8 fp16 values of one 16-byte chunk whose first `valid` count.
__device__ __forceinline__ void chunk8_stats(uint4 w, int valid, float& n, float& mean, float& m2) {
  const unsigned int h[4] = {w.x, w.y, w.z, w.w};
  float v[8], s = 0.0f;
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    v[e] = half_bits_to_float((unsigned short)(h[e / 2] >> (16 * (e % 2))));
    if (e < valid) s += v[e];
  }
  n = (float)(valid > 0 ? valid : 0);
  mean = valid > 0 ? s / n : 0.0f;
  m2 = 0.0f;
#pragma unroll
  for (int e = 0; e < 8; ++e)
    if (e < valid) m2 = fmaf(v[e] - mean, v[e] - mean, m2);
}

// Merges the (n, mean, m2) of the 4 lanes of each aligned lane quad (a 32-column chunk of one
// row). Every lane of the warp must call it.
__device__ __forceinline__ void quad_merge(float& n, float& mean, float& m2) {
#pragma unroll
  for (int x = 1; x <= 2; x <<= 1) {
    const float nb = __shfl_xor_sync(0xffffffffu, n, x), mb = __shfl_xor_sync(0xffffffffu, mean, x),
                m2b = __shfl_xor_sync(0xffffffffu, m2, x);
    chan_merge(n, mean, m2, nb, mb, m2b);
  }
}

// The statistics of the 32-column chunks of the BM x BN tile at (m0, n0) of x = rs.out ([M][N]),
// which this block's epilogue has just stored (n0 and BN multiples of 32, N of 8). Starts with
// __syncthreads (the stores of every thread of the block are then visible to it) and reads x
// back from L2. Four consecutive threads take the four 16-byte chunks of a 32-column chunk; all
// threads of the block take part (blockDim.x a multiple of 32).
template <int BM, int BN>
__device__ void tile_row_stats(const RowStats& rs, int M, int N, int m0, int n0) {
  static_assert(BN % kRowStatsChunk == 0, "tile_row_stats: BN must be a multiple of 32");
  constexpr int C8 = BN / 8, kChunks = BM * C8;
  const int nt = blockDim.x, rounds = (kChunks + nt - 1) / nt;
  const int chunks = (N + kRowStatsChunk - 1) / kRowStatsChunk;
  __syncthreads();
#pragma unroll 1
  for (int q = 0; q < rounds; ++q) {  // every lane runs every round: the shuffles need the warp
    const int c = q * nt + (int)threadIdx.x;
    const int r = c / C8, col = n0 + (c % C8) * 8, m = m0 + r;
    const bool row_ok = c < kChunks && m < M;
    const int valid = row_ok ? (N - col < 8 ? N - col : 8) : 0;
    uint4 w = make_uint4(0u, 0u, 0u, 0u);
    if (valid > 0) w = __ldcg(reinterpret_cast<const uint4*>(rs.out + (long long)m * N + col));
    float n, mean, m2;
    chunk8_stats(w, valid, n, mean, m2);
    quad_merge(n, mean, m2);
    if (row_ok && (threadIdx.x & 3) == 0 && n > 0.0f)
      rs.stats[(long long)m * chunks + col / kRowStatsChunk] = make_float2(mean, m2);
  }
}

}  // namespace detail

// The same statistics for all of x ([M][N], N a multiple of 8), by the whole grid: for a
// normalization's input that the kernel copies into the arena (no GEMM writes it). A grid
// barrier must follow before they are read.
__device__ inline void grid_row_stats(const half_t* x, int M, int N, float2* stats) {
  const int chunks = (N + kRowStatsChunk - 1) / kRowStatsChunk;
  const long long total = (long long)M * chunks * 4;  // four threads a chunk
  const long long step = (long long)gridDim.x * blockDim.x;
  const long long rounds = (total + step - 1) / step;
#pragma unroll 1
  for (long long q = 0; q < rounds; ++q) {
    const long long i = q * step + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const bool ok = i < total;
    const long long chunk = i / 4;
    const int m = (int)(chunk / chunks), col = (int)(chunk % chunks) * kRowStatsChunk + (int)(i % 4) * 8;
    const int valid = ok && col < N ? (N - col < 8 ? N - col : 8) : 0;
    uint4 w = make_uint4(0u, 0u, 0u, 0u);
    if (valid > 0) w = __ldcg(reinterpret_cast<const uint4*>(x + (long long)m * N + col));
    float n, mean, m2;
    detail::chunk8_stats(w, valid, n, mean, m2);
    detail::quad_merge(n, mean, m2);
    if (ok && (i % 4) == 0) stats[chunk] = make_float2(mean, m2);
  }
}

// The mean and 1/sqrt(variance + eps) of rows m0 .. m0 + BM - 1 of x ([M][N], rows < M) from
// their chunks' statistics `chunk` (rows m0.. of the [M][chunks] array, already in shared memory)
// into out[BM] (shared memory; rows past M get (0, 0)), with no block barrier (the caller's
// follows). NT threads, P = NT / BM (a power of two <= 32) consecutive threads a row.
template <int BM, int NT, int N>
__device__ __forceinline__ void combine_row_stats(const float2* chunk, int M, int m0, float eps, float2* out) {
  constexpr int P = NT / BM, kChunks = (N + kRowStatsChunk - 1) / kRowStatsChunk;
  static_assert(NT % BM == 0 && P >= 1 && P <= 32 && (P & (P - 1)) == 0, "combine_row_stats: NT / BM threads a row");
  const int r = threadIdx.x / P, part = threadIdx.x % P, m = m0 + r;
  float n = 0.0f, mean = 0.0f, m2 = 0.0f;
  if (m < M)
#pragma unroll
    for (int c = part; c < kChunks; c += P) {
      const float2 s = chunk[r * kChunks + c];
      const int left = N - c * kRowStatsChunk;
      chan_merge(n, mean, m2, (float)(left < kRowStatsChunk ? left : kRowStatsChunk), s.x, s.y);
    }
#pragma unroll
  for (int x = 1; x < P; x <<= 1) {
    const float nb = __shfl_xor_sync(0xffffffffu, n, x), mb = __shfl_xor_sync(0xffffffffu, mean, x),
                m2b = __shfl_xor_sync(0xffffffffu, m2, x);
    chan_merge(n, mean, m2, nb, mb, m2b);
  }
  if (part == 0) out[r] = m < M ? make_float2(mean, rsqrtf(m2 / (float)N + eps)) : make_float2(0.0f, 0.0f);
}

// Copies `bytes` bytes from global `src` (16-byte aligned) to shared `dst` (16-byte aligned) with
// cp.async (no register holds them: a warp's later wgmma does not wait for them), zero-filling
// the last 16-byte piece past `bytes`; the caller commits and waits.
__device__ __forceinline__ void cp_async_bytes(unsigned int dst, const void* src, int bytes) {
  for (int i = threadIdx.x; i * 16 < bytes; i += blockDim.x) {
    const int left = bytes - i * 16;
    cp_async_16(dst + (unsigned int)(i * 16), static_cast<const char*>(src) + i * 16, left < 16 ? left : 16);
  }
}

}  // namespace mono_dev
