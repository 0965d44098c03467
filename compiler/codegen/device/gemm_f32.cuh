// Mono device library: GemmF32, the fp32 SIMT GEMM tile. Its tile() keeps GemmF16's contract
// (gemm_f16.cuh): one BM x BN output tile per call, all threads of the block, shared memory owned
// by the call; operands, epilogues and split-K as for GemmF16.
// SELF-CONTAINED (no includes); requires common.cuh, ptx.cuh, epilogue.cuh, split_k.cuh,
// loaders.cuh and iterators.cuh to be included first, in that order.
#pragma once

namespace mono_dev {

// ------------------------------------------------------------------------------------------------
// fp32 SIMT GEMM tile: double-buffered (cp.async when the loaders use it), each thread owns a
// TM x TN register micro-tile (rows strided by 8, cols strided by 4 inside its warp tile) and reads
// 16-byte K-vectors of A and B from shared memory (conflict-free with the BK+4 row padding).
// ------------------------------------------------------------------------------------------------
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N>
struct GemmF32 {
  static constexpr int kBM = BM, kBN = BN, kBK = BK;
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int STAGES = 2;
  static_assert(BM % WARPS_M == 0 && BN % WARPS_N == 0, "tile not divisible by the warp layout");
  static constexpr int WM = BM / WARPS_M;
  static constexpr int WN = BN / WARPS_N;
  static constexpr int LM = 8, LN = 4;  // lanes along m / n inside a warp
  static_assert(WM % LM == 0, "GemmF32: BM / WARPS_M must be a multiple of 8");
  static_assert(WN % LN == 0, "GemmF32: BN / WARPS_N must be a multiple of 4");
  static_assert(BK % 4 == 0, "GemmF32: BK must be a multiple of 4");
  static constexpr int TM = WM / LM;  // micro-tile
  static constexpr int TN = WN / LN;
  static constexpr int LDS = BK + 4;  // floats
  static constexpr int kStageA = BM * LDS;
  static constexpr int kStageB = BN * LDS;
  static constexpr int kSmemBytes = STAGES * (kStageA + kStageB) * 4;
  static_assert(kSmemBytes <= 227 * 1024, "GemmF32: shared memory > 227 KB");

  struct alignas(16) F4 {
    float x, y, z, w;
  };

  // Thread owns rows mb + i*LM (i < TM) and cols nb + j*LN (j < TN).
  struct Frags {
    static constexpr int kElems = TM * TN, kNT = kThreads;
    float (&acc)[TM][TN];
    int mb, nb, M, N;
    bool computes;
    __device__ __forceinline__ float& el(int e) const { return acc[e / TN][e % TN]; }
    template <class F>
    __device__ __forceinline__ void visit(const F& f) const {
      if (!computes) return;
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int m = mb + i * LM, n = nb + j * LN;
          if (m < M && n < N) f(i * TN + j, m, n, acc[i][j]);
        }
    }
  };

  template <class ALoad, class BLoad, class Epilogue>
  __device__ static void tile(int M, int N, int m0, int n0, int k_begin, int k_end, const ALoad& a,
                              const BLoad& b, const Epilogue& epi, unsigned char* smem,
                              float* workspace, unsigned int* tile_counter, int splits, int split) {
    float* sA = reinterpret_cast<float*>(smem);
    float* sB = sA + STAGES * kStageA;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const bool computes = warp < WARPS_M * WARPS_N;
    const int wm = warp % WARPS_M, wn = (warp / WARPS_M) % WARPS_N;
    const int lm = lane >> 2, ln = lane & 3;
    const int ktiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    __syncthreads();
    auto ait = detail::make_iter<BM, BK, kThreads>(a, m0, LDS);
    auto bit = detail::make_iter<BN, BK, kThreads>(b, n0, LDS);
    constexpr unsigned int kStageBytesA = kStageA * 4, kStageBytesB = kStageB * 4;
    // B's shared address from A's by 32-bit arithmetic, not smem_u32(sB): converting the generic
    // pointer sB back made ptxas (CUDA 13.0, -O3) keep the generic address's high word in a
    // register whose operand-reuse flag it then got wrong. A later LEA read that stale high word
    // (the shared window's) as A's shared base: misaligned cp.async addresses in whisper-encoder's
    // fp32 attention, depending on the code around it (bench/RESULTS.md, session 7, run92).
    const unsigned int sA_u = smem_u32(sA), sB_u = sA_u + STAGES * kStageA * 4;
    if (ktiles > 0) {
      ait.load(sA, sA_u, k_begin);
      bit.load(sB, sB_u, k_begin);
    }
    cp_async_commit();

    const int a_row = wm * WM + lm, b_row = wn * WN + ln;
    for (int kt = 0; kt < ktiles; ++kt) {
      const int st = kt & 1;
      cp_async_wait<0>();
      __syncthreads();
      const bool more = kt + 1 < ktiles;
      float* const wa = sA + (st ^ 1) * kStageA;
      float* const wb = sB + (st ^ 1) * kStageB;
      if (more) {
        const int k1 = k_begin + (kt + 1) * BK;
        ait.fetch(wa, sA_u + (st ^ 1) * kStageBytesA, k1);
        bit.fetch(wb, sB_u + (st ^ 1) * kStageBytesB, k1);
      }
      cp_async_commit();
      if (computes) {
        const float* pa = sA + st * kStageA + a_row * LDS;
        const float* pb = sB + st * kStageB + b_row * LDS;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 4) {
          F4 av[TM], bv[TN];
#pragma unroll
          for (int i = 0; i < TM; ++i) av[i] = *reinterpret_cast<const F4*>(pa + i * LM * LDS + kk);
#pragma unroll
          for (int j = 0; j < TN; ++j) bv[j] = *reinterpret_cast<const F4*>(pb + j * LN * LDS + kk);
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) {
              float c = acc[i][j];
              c = fmaf(av[i].x, bv[j].x, c);
              c = fmaf(av[i].y, bv[j].y, c);
              c = fmaf(av[i].z, bv[j].z, c);
              c = fmaf(av[i].w, bv[j].w, c);
              acc[i][j] = c;
            }
        }
      }
      if (more) {
        ait.store(wa);
        bit.store(wb);
      }
    }
    cp_async_wait<0>();
    __syncthreads();

    const Frags fr{acc, m0 + a_row, n0 + b_row, M, N, computes};
    detail::finish_tile(fr, epi, workspace, tile_counter, splits, split);
  }
};

}  // namespace mono_dev
