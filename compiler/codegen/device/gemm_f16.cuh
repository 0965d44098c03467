// Mono device library: GemmF16, the fp16 tensor-core GEMM tile (GemmF32, gemm_f32.cuh, keeps the
// same contract).
// SELF-CONTAINED (no includes); requires common.cuh, ptx.cuh, epilogue.cuh, split_k.cuh,
// loaders.cuh and iterators.cuh to be included first, in that order.
//
//   C[m][n] = sum_k A[m][k] * B[n][k]      (m < M, n < N, k in [k_begin, k_end))
//
// One call of Gemm*::tile computes ONE BM x BN output tile at (m0, n0). All threads of the block
// call it (blockDim.x >= kThreads; threads beyond kThreads only take part in the barriers, and in
// the loads of plain two-argument loaders). The tile's fixed per-call cost (pipeline fill, about
// one memory latency, and the epilogue) is paid per tile, so prefer few k tiles of BK = 64 over
// many of BK = 32 where shared memory allows. Shared memory
// `smem` (kSmemBytes bytes, 16-byte aligned) is owned by the call: tile() starts and ends with
// __syncthreads(), so the caller may use the same shared memory before and after.
//
// Operands: loaders.cuh; epilogues: epilogue.cuh; split-K (splits > 1): split_k.cuh.
#pragma once

// Timing hook for the device-library probe (tests/gpu/device_lib_check.cu --probe): slot 0 on
// entry, 1 after the pipeline prologue, 2 + kt after k tile kt's barrier, 62 after the main loop,
// 63 after the epilogue. Empty in generated kernels.
#ifndef MONO_GEMM_PROBE
#define MONO_GEMM_PROBE(slot) ((void)0)
#endif

namespace mono_dev {

// ------------------------------------------------------------------------------------------------
// fp16 tensor-core GEMM tile: mma.sync m16n8k16, fp32 accumulation, STAGES-deep cp.async pipeline.
// Warp (wm, wn) computes a (BM/WARPS_M) x (BN/WARPS_N) sub-tile; fragments come from ldmatrix.
// ------------------------------------------------------------------------------------------------
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES>
struct GemmF16 {
  static constexpr int kBM = BM, kBN = BN, kBK = BK;
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static_assert(BM % WARPS_M == 0 && BN % WARPS_N == 0, "tile not divisible by the warp layout");
  static constexpr int WM = BM / WARPS_M;  // warp tile
  static constexpr int WN = BN / WARPS_N;
  static_assert(WM % 16 == 0, "GemmF16: BM / WARPS_M must be a multiple of 16");
  static_assert(WN % 8 == 0, "GemmF16: BN / WARPS_N must be a multiple of 8");
  static_assert(BK % 16 == 0, "GemmF16: BK must be a multiple of 16");
  static_assert(STAGES >= 2 && STAGES <= 8, "GemmF16: 2 <= STAGES <= 8");
  static constexpr int MI = WM / 16;  // m16 fragments per warp
  static constexpr int NI = WN / 8;   // n8 fragments per warp
  static constexpr int LDS = BK + 8;  // padded smem row (halves): conflict-free ldmatrix
  static constexpr int kStageA = BM * LDS;  // halves
  static constexpr int kStageB = BN * LDS;
  static constexpr int kPipeBytes = STAGES * (kStageA + kStageB) * 2;
  static constexpr int kSmemBytes = kPipeBytes + 64;  // + one mbarrier per stage (bulk loaders)
  static_assert(kSmemBytes <= 227 * 1024, "GemmF16: shared memory > 227 KB");

  // Accumulator layout (m16n8 f32): c0,c1 -> row g, cols 2t,2t+1; c2,c3 -> row g+8 (g = lane/4,
  // t = lane%4); (mb, nb) = global (row, col) of c0 of fragment (0, 0).
  struct Frags {
    static constexpr int kElems = MI * NI * 4, kNT = kThreads;
    static constexpr bool kElemPos = true;  // elem_pos: where any thread's elements go (split_k.cuh)
    float (&acc)[MI][NI][4];
    int mb, nb, M, N;
    bool computes;
    __device__ __forceinline__ float& el(int e) const { return acc[e / (NI * 4)][(e / 4) % NI][e % 4]; }
    // The output position of element e of thread t (this view's thread is threadIdx.x).
    __device__ __forceinline__ void elem_pos(int t, int e, int& m, int& n) const {
      const int w0 = (int)threadIdx.x >> 5, l0 = (int)threadIdx.x & 31, w = t >> 5, l = t & 31;
      const int i = e / (NI * 4), j = (e / 4) % NI, q = e % 4;
      m = mb - ((w0 % WARPS_M) * WM + (l0 >> 2)) + (w % WARPS_M) * WM + (l >> 2) + i * 16 + (q >> 1) * 8;
      n = nb - (((w0 / WARPS_M) % WARPS_N) * WN + 2 * (l0 & 3)) + ((w / WARPS_M) % WARPS_N) * WN + 2 * (l & 3) + j * 8 + (q & 1);
    }
    template <class F>
    __device__ __forceinline__ void visit(const F& f) const {
      if (!computes) return;
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int m = mb + i * 16 + (q >> 1) * 8;
            const int n = nb + j * 8 + (q & 1);
            if (m < M && n < N) f((i * NI + j) * 4 + q, m, n, acc[i][j][q]);
          }
    }
  };

  // The chunked epilogue, for epilogues with vec8 stores (detail::Vec8): the accumulators go
  // through shared memory (row-major, LDC = BN + 8 floats) and each thread then owns kChunks
  // chunks of 8 consecutive n, chunk c = q * kThreads + thread at row c / (BN / 8), so a warp's
  // 16-byte stores cover whole rows of the tile. 16 fp16 stores of 2 bytes per thread (64x64)
  // become 2 of 16 bytes, and the index arithmetic runs once per chunk. Tiles of up to 32 values
  // a thread (64x128, 128x64 over 256 threads) take it too: measured on the H100 against 16, same
  // call (bench/RESULTS.md session 21, run192): vit-base 593.5 -> 556.5 us, gpt2 419.1 -> 410.4,
  // resnet50 333.4 -> 322.2, bert-base 414.1 either way.
  static constexpr int kChunkValues = 32;
  static constexpr bool kChunkFits = BN % 8 == 0 && (BM * BN / 8) % kThreads == 0 &&
                                     BM * (BN + 8) * 4 <= kPipeBytes && BM * BN / kThreads <= kChunkValues;
  struct ChunkFrags {
    static constexpr bool kChunked = true;
    static constexpr int kChunks = kChunkFits ? BM * BN / 8 / kThreads : 1, kElems = 8 * kChunks, kNT = kThreads;
    static constexpr int LDC = BN + 8;
    mutable float v[kElems];  // split-K: the reducer adds the partials to them
    int m0, n0, M, N;
    bool computes;
    __device__ __forceinline__ void pos(int q, int& m, int& n) const {
      const int c = q * kThreads + (int)threadIdx.x;
      m = c / (BN / 8);
      n = (c % (BN / 8)) * 8;
    }
    // Where chunk c of the tile (chunk c / kThreads of thread c % kThreads) starts, in the output.
    __device__ __forceinline__ void chunk_pos(int c, int& m, int& n) const {
      m = m0 + c / (BN / 8);
      n = n0 + (c % (BN / 8)) * 8;
    }
    __device__ __forceinline__ float& el(int e) const { return v[e]; }
    __device__ __forceinline__ void gather(const float* st) {  // from the staged tile (finish_staged)
#pragma unroll
      for (int q = 0; q < kChunks; ++q) {
        int m, n;
        pos(q, m, n);
        const float4* src = reinterpret_cast<const float4*>(st + m * LDC + n);
        const float4 lo = computes ? src[0] : make_float4(0.f, 0.f, 0.f, 0.f);
        const float4 hi = computes ? src[1] : make_float4(0.f, 0.f, 0.f, 0.f);
        v[8 * q] = lo.x, v[8 * q + 1] = lo.y, v[8 * q + 2] = lo.z, v[8 * q + 3] = lo.w;
        v[8 * q + 4] = hi.x, v[8 * q + 5] = hi.y, v[8 * q + 6] = hi.z, v[8 * q + 7] = hi.w;
      }
    }
    template <class F>
    __device__ __forceinline__ void visit(const F& f) const {
      if (!computes) return;
#pragma unroll
      for (int e = 0; e < kElems; ++e) {
        int m, n;
        pos(e / 8, m, n);
        if (m0 + m < M && n0 + n + e % 8 < N) f(e, m0 + m, n0 + n + e % 8, v[e]);
      }
    }
    template <class Epilogue>
    __device__ __forceinline__ void visit_chunks(const Epilogue& epi) const {
      if (!computes) return;
#pragma unroll
      for (int q = 0; q < kChunks; ++q) {
        int m, n;
        pos(q, m, n);
        m += m0;
        n += n0;
        if (m >= M) continue;
        if (n + 8 <= N) {
          epi.vec8(m, n, *reinterpret_cast<const float(*)[8]>(v + 8 * q));
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j)
            if (n + j < N) detail::epilogue_one(epi, m, n + j, v[8 * q + j]);
        }
      }
    }
  };

  // The staged epilogue's first step: the warp's accumulators into shared memory as a row-major
  // fp32 tile of row stride LDC, column pairs as float2 (add: added to what is there).
  template <int LDC>
  __device__ __forceinline__ static void stage_acc(const float (&acc)[MI][NI][4], float* st, int wm, int wn, int g, int t4,
                                                   bool add = false) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float2* d = reinterpret_cast<float2*>(st + (wm * WM + i * 16 + h * 8 + g) * LDC + wn * WN + j * 8 + 2 * t4);
          float2 v = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
          if (add) {
            const float2 o = *d;
            v.x = o.x + v.x;
            v.y = o.y + v.y;
          }
          *d = v;
        }
  }
  // The staged epilogue (view V = ChunkFrags): the accumulators into shared memory (stage_acc),
  // each thread's elements of the view read back (V::gather), shared memory freed, then the
  // epilogue or the split-K protocol on the view.
  template <class V, class Epilogue>
  __device__ __forceinline__ static void finish_staged(const float (&acc)[MI][NI][4], unsigned char* smem, bool computes,
                                                       int wm, int wn, int g, int t4, int m0, int n0, int M, int N,
                                                       const Epilogue& epi, float* workspace, unsigned int* tile_counter,
                                                       int splits, int split) {
    float* st = reinterpret_cast<float*>(smem);
    if (computes) stage_acc<V::LDC>(acc, st, wm, wn, g, t4);
    __syncthreads();
    finish_gathered<V>(st, m0, n0, M, N, epi, workspace, tile_counter, splits, split);
  }
  // The rest of it, from the staged tile st (every thread's stores to it done and synchronized).
  template <class V, class Epilogue>
  __device__ __forceinline__ static void finish_gathered(const float* st, int m0, int n0, int M, int N, const Epilogue& epi,
                                                         float* workspace, unsigned int* tile_counter, int splits,
                                                         int split) {
    V v;
    v.m0 = m0;
    v.n0 = n0;
    v.M = M;
    v.N = N;
    v.computes = (int)threadIdx.x < kThreads;
    v.gather(st);
    __syncthreads();  // smem free for the caller
    detail::finish_tile(v, epi, workspace, tile_counter, splits, split);
  }

  // ldmatrix the A (MI x4) and B (NI/2 x4, or x2 for an odd last n8 block) fragments of k-step
  // kk from the per-lane stage addresses a_rd / b_rd. SWA: A's stage is the swizzled unpadded
  // layout of TensorK (a_rd = this lane's row, a_x[q] = its chunk offset at k-step q of 4).
  template <bool SWA>
  __device__ __forceinline__ static void load_frags(unsigned int (&af)[MI][4], unsigned int (&bf)[NI][2],
                                                    unsigned int a_rd, const unsigned int (&a_x)[4], unsigned int b_rd,
                                                    int kk) {
#pragma unroll
    for (int i = 0; i < MI; ++i) {
      if constexpr (SWA)
        ldmatrix_x4(af[i], a_rd + (unsigned int)(i * 16 * 128 + (kk / 4) * BM * 128) + a_x[kk % 4]);
      else
        ldmatrix_x4(af[i], a_rd + (unsigned int)((i * 16 * LDS + kk * 16) * 2));
    }
#pragma unroll
    for (int j = 0; j < NI; j += 2) {
      const unsigned int addr = b_rd + (unsigned int)((j * 8 * LDS + kk * 16) * 2);
      if (j + 1 < NI) {
        unsigned int t[4];
        ldmatrix_x4(t, addr);
        bf[j][0] = t[0];
        bf[j][1] = t[1];
        bf[j + 1][0] = t[2];
        bf[j + 1][1] = t[3];
      } else {
        unsigned int t[2];
        ldmatrix_x2(t, addr);  // lanes 0-15 addresses: n = lane%8, k = (lane/8)*8
        bf[j][0] = t[0];
        bf[j][1] = t[1];
      }
    }
  }

  template <class ALoad, class BLoad, class Epilogue>
  __device__ static void tile(int M, int N, int m0, int n0, int k_begin, int k_end, const ALoad& a,
                              const BLoad& b, const Epilogue& epi, unsigned char* smem,
                              float* workspace, unsigned int* tile_counter, int splits, int split) {
    half_t* sA = reinterpret_cast<half_t*>(smem);
    half_t* sB = sA + STAGES * kStageA;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const bool computes = warp < WARPS_M * WARPS_N;
    const int wm = warp % WARPS_M, wn = (warp / WARPS_M) % WARPS_N;
    const int ktiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;

    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

    MONO_GEMM_PROBE(0);
    auto ait = detail::make_iter<BM, BK, kThreads>(a, m0, LDS);
    auto bit = detail::make_iter<BN, BK, kThreads>(b, n0, LDS);
    constexpr bool kBulk = detail::IsBulk<decltype(ait)>::value || detail::IsBulk<decltype(bit)>::value;
    // A through a tensor map (TensorK): its stages are unpadded and 128-byte swizzled, BM x BK
    // halves each, and must start 1024-byte aligned (the swizzle pattern's period).
    constexpr bool kSwA = detail::IsSwizzled<decltype(ait)>::value;
    constexpr int kStrideA = kSwA ? BM * BK : kStageA;  // halves from one A stage to the next
    static_assert(!kSwA || (kStrideA * 2) % 1024 == 0, "GemmF16: swizzled A stages must stay 1024-byte aligned");
    const unsigned int bar0 = smem_u32(smem + kPipeBytes);  // stage s: bar0 + 8 s
    unsigned int phases = 0;                                 // bit s: parity stage s waits for
    if constexpr (kBulk) {  // one arrival (arrive.expect_tx) per bulk operand and stage
      constexpr unsigned int kArrivals = detail::IsBulk<decltype(ait)>::value + detail::IsBulk<decltype(bit)>::value;
      if (threadIdx.x == 0)
        for (int s = 0; s < STAGES; ++s) mbar_init(bar0 + 8 * s, kArrivals);
      mbar_fence_init();
    }
    __syncthreads();  // smem may still be in use by the caller's previous work; barriers ready
    constexpr unsigned int kStageBytesA = kStrideA * 2, kStageBytesB = kStageB * 2;
    // B's shared address from A's by 32-bit arithmetic (as GemmF32 does, for the ptxas fault
    // described there).
    const unsigned int sA_u = smem_u32(sA), sB_u = sA_u + STAGES * kStageA * 2;
    if constexpr (kSwA) {
      if (sA_u & 1023u) __trap();  // the kernel's shared memory must start 1024-byte aligned
      // A was written by ordinary stores of earlier stages (made visible to this thread by the
      // grid barrier); the TMA unit reads it through the async proxy, which needs this fence.
      if (threadIdx.x == 0) asm volatile("fence.proxy.async.global;" ::: "memory");
    }
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) {
        detail::set_stage_barrier(ait, bar0 + 8 * s);
        detail::set_stage_barrier(bit, bar0 + 8 * s);
        ait.load(sA + s * kStrideA, sA_u + s * kStageBytesA, k_begin + s * BK);
        bit.load(sB + s * kStageB, sB_u + s * kStageBytesB, k_begin + s * BK);
      }
      cp_async_commit();
    }
    MONO_GEMM_PROBE(1);

    // Per-lane ldmatrix source addresses (shared window), stage 0.
    // A (x4): lanes 0-15 rows 0-15 at k 0, lanes 16-31 rows 0-15 at k 8 -> a0..a3 of m16n8k16.
    // B (x4 over two n8 blocks): lane -> n = (lane/16)*8 + lane%8, k = ((lane/8)%2)*8.
    // Swizzled A (TensorK): row r's 16-byte chunk c sits at chunk c ^ (r % 8), and r % 8 = lane % 8.
    unsigned int a_rd = kSwA ? sA_u + (unsigned int)((wm * WM + (lane & 15)) * 128)
                             : sA_u + (unsigned int)(((wm * WM + (lane & 15)) * LDS + (lane >> 4) * 8) * 2);
    unsigned int a_x[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) a_x[q] = (unsigned int)((((q * 2) + (lane >> 4)) ^ (lane & 7)) << 4);
    unsigned int b_rd = sB_u + (unsigned int)(((wn * WN + ((lane >> 4) << 3) + (lane & 7)) * LDS +
                                               ((lane >> 3) & 1) * 8) * 2);
    int read_stage = 0, write_stage = STAGES - 1;
    int k_next = k_begin + (STAGES - 1) * BK;
    // Fragments are double-buffered across the BK/16 k-steps (when they fit: FB == 2): the
    // ldmatrix of step kk+1 is issued before the mma of step kk, and step 0 of a k tile is loaded
    // right after the barrier, before the cp.async issue of the next stage, so shared-memory
    // latency overlaps other work. Large warp tiles (128x128 blocks) use one buffer (no spills
    // under a 128-register cap).
    constexpr int FB = (MI * 4 + NI * 2 <= 16) ? 2 : 1;
    unsigned int af[FB][MI][4];
    unsigned int bf[FB][NI][2];
    for (int kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<STAGES - 2>();
      if constexpr (kBulk) {
        mbar_wait(bar0 + 8 * read_stage, (phases >> read_stage) & 1u);
        phases ^= 1u << read_stage;
      }
      __syncthreads();  // stage kt visible to all; stage kt-1 fully consumed by all warps
      MONO_GEMM_PROBE(2 + (kt < 59 ? kt : 59));
      if (computes) load_frags<kSwA>(af[0], bf[0], a_rd, a_x, b_rd, 0);
      const bool more = kt + STAGES - 1 < ktiles;
      half_t* const wa = sA + write_stage * kStrideA;
      half_t* const wb = sB + write_stage * kStageB;
      if (more) {  // cp.async issue (DenseK) or register prefetch (DenseN) of stage kt+STAGES-1
        detail::set_stage_barrier(ait, bar0 + 8 * write_stage);
        detail::set_stage_barrier(bit, bar0 + 8 * write_stage);
        ait.fetch(wa, sA_u + write_stage * kStageBytesA, k_next);
        bit.fetch(wb, sB_u + write_stage * kStageBytesB, k_next);
      }
      cp_async_commit();
      k_next += BK;
      write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
      if (computes) {
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          constexpr int KK = BK / 16;
          const int cur = FB == 2 ? (kk & 1) : 0;
          if (FB == 2 && kk + 1 < KK) load_frags<kSwA>(af[(kk + 1) % FB], bf[(kk + 1) % FB], a_rd, a_x, b_rd, kk + 1);
#pragma unroll
          for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j) mma_16816(acc[i][j], af[cur][i], bf[cur][j][0], bf[cur][j][1]);
          if (FB == 1 && kk + 1 < KK) load_frags<kSwA>(af[0], bf[0], a_rd, a_x, b_rd, kk + 1);
        }
      }
      if (more) {  // register-staged loaders write their stage now (no-op for cp.async ones)
        ait.store(wa);
        bit.store(wb);
      }
      if (++read_stage == STAGES) {
        read_stage = 0;
        a_rd -= (STAGES - 1) * kStageBytesA;
        b_rd -= (STAGES - 1) * kStageBytesB;
      } else {
        a_rd += kStageBytesA;
        b_rd += kStageBytesB;
      }
    }
    cp_async_wait<0>();
    __syncthreads();  // smem free for the caller
    if constexpr (kBulk) {  // every issued stage was waited for: the barriers are idle
      if (threadIdx.x == 0)
        for (int s = 0; s < STAGES; ++s) mbar_inval(bar0 + 8 * s);
    }
    MONO_GEMM_PROBE(62);

    const int g = lane >> 2, t4 = lane & 3;
    if constexpr (kChunkFits && detail::Vec8<Epilogue>::value) {
      finish_staged<ChunkFrags>(acc, smem, computes, wm, wn, g, t4, m0, n0, M, N, epi, workspace, tile_counter, splits,
                                split);
    } else {
      const Frags fr{acc, m0 + wm * WM + g, n0 + wn * WN + 2 * t4, M, N, computes};
      detail::finish_tile(fr, epi, workspace, tile_counter, splits, split);
    }
    MONO_GEMM_PROBE(63);
  }
};

}  // namespace mono_dev
