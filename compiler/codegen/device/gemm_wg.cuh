// Mono device library: GemmWg, the fp16 GEMM tile on Hopper's warpgroup MMA (wgmma, sm_90a).
// Same contract as GemmF16 (gemm_f16.cuh): one BM x BN output tile of C = A * B^T over
// [k_begin, k_end), all threads of the block call tile() (blockDim.x must be kThreads), which starts and ends with
// __syncthreads(); the same epilogues and split-K protocol (it finishes through GemmF16's).
// SELF-CONTAINED (no includes); requires gemm_f16.cuh and everything before it.
//
// Operands: both must arrive 128-byte swizzled by the copy engine, which is what wgmma reads
// (ptx.cuh wgmma_desc_sw128): A through a tensor map (TensorK), B as weights packed tile by
// tile in the swizzled layout (tile_pack.h, swizzled = true) and copied whole (BulkTileK). A
// stage is [BK/64][rows][64] halves. No thread loads or reads operands itself: thread 0 issues
// the copies, the tensor cores read shared memory directly (no ldmatrix, no fragments).
//
// Warps: warpgroup (4 consecutive warps) g takes rows 64 (g % (WARPS_M / 4)) and columns
// WN (g / (WARPS_M / 4)) of the tile: BM = 16 x WARPS_M, WN = BN / WARPS_N. Its accumulators
// are laid out as GemmF16's with warp tile 16 x WN, so the epilogue views are GemmF16's.
//
// Pipeline: STAGES - 1 k tiles in flight ahead; each k tile is BK/16 wgmmas committed as one
// group; a warpgroup waits for all but its newest group, so the tensor cores are fed across
// the block barrier that frees the previous k tile's stage for the copy STAGES - 1 ahead.
//
// A LayerNormalization in front (A is NormK, loaders.cuh): A is the normalization's input x, as
// it is; once the first copies are in flight, the block loads its rows' statistics (written by
// x's producer, row_stats.cuh), and after the last k tile combines them into the rows' mean and
// 1/stddev and corrects its accumulators (NormK's identity) before the epilogue.
//
// With `rs` (row_stats.cuh), the block that applies the epilogue then writes the row statistics
// of the tile it stored.
#pragma once

namespace mono_dev {

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES>
struct GemmWg {
  using Base = GemmF16<BM, BN, BK, WARPS_M, WARPS_N, STAGES>;  // its epilogue views and finish
  static constexpr int kBM = BM, kBN = BN, kBK = BK;
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int WN = BN / WARPS_N;  // the wgmma's N
  static constexpr int NI = WN / 8;
  static_assert(WARPS_M % 4 == 0 && BM == 16 * WARPS_M, "GemmWg: a warpgroup takes 64 rows (BM = 16 x warps_m, warps_m % 4 == 0)");
  static_assert(WN == 16 || WN == 32 || WN == 64 || WN == 128, "GemmWg: BN / warps_n must be 16, 32, 64 or 128");
  static_assert(BK % 64 == 0, "GemmWg: BK must be a multiple of 64 (128-byte swizzled rows)");
  static_assert(STAGES >= 2 && STAGES <= 8, "GemmWg: 2 <= STAGES <= 8");
  static constexpr int kStageA = BM * BK, kStageB = BN * BK;  // halves, unpadded
  static constexpr int kPipeBytes = STAGES * (kStageA + kStageB) * 2;
  // The chunked epilogue's staging (GemmF16's, used when its test passes: then it fits GemmF16's
  // padded pipeline, so kSmemBytes never exceeds GemmF16's, which the planner reserves).
  static constexpr int kStagedBytes = Base::kChunkFits ? BM * (BN + 8) * 4 : 0;
  static constexpr int kBarrierOffset = kPipeBytes > kStagedBytes ? kPipeBytes : kStagedBytes;  // past both
  static constexpr int kSmemBytes = kBarrierOffset + 64;
  static_assert(kSmemBytes <= Base::kSmemBytes, "GemmWg: more shared memory than the planner reserves (GemmF16's)");
  static_assert(kSmemBytes <= 227 * 1024, "GemmWg: shared memory > 227 KB");
  static_assert((kStageA * 2) % 1024 == 0 && (kStageB * 2) % 1024 == 0, "GemmWg: stages must stay 1024-byte aligned");
  // With a LayerNormalization of length K in front, past the barriers: the rows' mean and rstd
  // (float2 [BM]), the fold's u and c for the tile's columns (float [BN] each), then the rows'
  // chunk statistics (float2 [BM][ceil(K / 32)], row_stats.cuh) as copied from global memory.
  // The planner reserves all of it (support.h gemm_norm_smem_bytes).
  static constexpr int kStatsOffset = kSmemBytes;
  static constexpr int kFoldOffset = kStatsOffset + BM * 8;
  static constexpr int kChunkOffset = kFoldOffset + 2 * BN * 4;
  template <int K>
  __host__ __device__ static constexpr int norm_smem_bytes() {
    return kChunkOffset + (BM * ((K + kRowStatsChunk - 1) / kRowStatsChunk) * 8 + 15) / 16 * 16;
  }

  // NormK's `out`: this tile's share of LayerNorm(x) for its rows, 16-byte chunks tn, tn + tiles_n,
  // ... of each row (tn = this tile's column), from x (ld.cg: written by other blocks) and the
  // rows' statistics.
  template <class ALoad>
  __device__ static void write_normalized(const ALoad& a, int M, int m0, int n0, int N, const float2* stats) {
    constexpr int KC = ALoad::kK / 8;
    const int tiles_n = (N + BN - 1) / BN, tn = n0 / BN;
    const int rows = M - m0 < BM ? M - m0 : BM;
    const int per_row = (KC - tn + tiles_n - 1) / tiles_n;  // chunks tn + i tiles_n < KC
    for (int i = threadIdx.x; i < rows * per_row; i += kThreads) {
      const int r = i / per_row, ch = tn + (i % per_row) * tiles_n;
      const long long at = (long long)(m0 + r) * ALoad::kK + ch * 8;
      const uint4 w = __ldcg(reinterpret_cast<const uint4*>(a.x + at));
      const unsigned int h[4] = {w.x, w.y, w.z, w.w};
      const float2 st = stats[r];
      unsigned int o[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int k = ch * 8 + 2 * e;
        float v[2];
#pragma unroll
        for (int f = 0; f < 2; ++f)
          v[f] = (half_bits_to_float((unsigned short)(h[e] >> (16 * f))) - st.x) * st.y * to_float(a.gamma[k + f]) +
                 (a.beta ? to_float(a.beta[k + f]) : 0.0f);
        o[e] = pack_half2(v[0], v[1]);
      }
      *reinterpret_cast<uint4*>(a.out + at) = make_uint4(o[0], o[1], o[2], o[3]);  // the arena's: 16-byte aligned
    }
  }

  template <class ALoad, class BLoad, class Epilogue>
  __device__ static void tile(int M, int N, int m0, int n0, int k_begin, int k_end, const ALoad& a,
                              const BLoad& b, const Epilogue& epi, unsigned char* smem,
                              float* workspace, unsigned int* tile_counter, int splits, int split,
                              const RowStats& rs = RowStats{}) {
    if (blockDim.x != kThreads) __trap();  // every warp is in a warpgroup that computes
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    constexpr bool computes = true;
    const int wm = warp % WARPS_M, wn = (warp / WARPS_M) % WARPS_N;  // GemmF16's warp layout
    const int ktiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;

    float acc[1][NI][4];
    float(&d)[NI * 4] = reinterpret_cast<float(&)[NI * 4]>(acc);
#pragma unroll
    for (int i = 0; i < NI * 4; ++i) d[i] = 0.0f;

    MONO_GEMM_PROBE(0);
    constexpr bool kNorm = detail::IsNorm<ALoad>::value;
    auto ait = [&] {
      if constexpr (kNorm) return detail::make_iter<BM, BK, kThreads>(TensorK<half_t>{a.map}, m0, BK);
      else return detail::make_iter<BM, BK, kThreads>(a, m0, BK);
    }();
    auto bit = detail::make_iter<BN, BK, kThreads>(b, n0, BK);
    static_assert(detail::IsSwizzled<decltype(ait)>::value, "GemmWg: A must come through a tensor map (TensorK, NormK)");
    static_assert(detail::IsBulk<decltype(bit)>::value && !detail::IsSwizzled<decltype(bit)>::value,
                  "GemmWg: B must be weights packed tile by tile, swizzled (BulkTileK)");
    const unsigned int sA_u = smem_u32(smem), sB_u = sA_u + STAGES * kStageA * 2;
    const unsigned int bar0 = sA_u + kBarrierOffset;  // stage s: bar0 + 8 s (the epilogue's staging stays below)
    if (threadIdx.x == 0)
      for (int s = 0; s < STAGES; ++s) mbar_init(bar0 + 8 * s, 2);  // one arrival per operand
    mbar_fence_init();
    __syncthreads();  // smem may still be in use by the caller's previous work; barriers ready
    if (sA_u & 1023u) __trap();  // the kernel's shared memory must start 1024-byte aligned
    // A was written by ordinary stores of earlier stages; the TMA unit reads it through the
    // async proxy, which needs this fence (see GemmF16).
    if (threadIdx.x == 0) asm volatile("fence.proxy.async.global;" ::: "memory");
    // A normalized in front: the fold's vectors for the tile's columns and the rows' chunk
    // statistics into shared memory by cp.async, used after the k loop. Not through registers:
    // loads into registers before the loop made the tiles ~2 us slower on the H100 (run100,
    // run102), as if the first wgmma waited for them.
    if constexpr (kNorm) {
      if (k_begin != 0 || k_end != ALoad::kK) __trap();  // whole rows: no split-K
      constexpr int kChunks = (ALoad::kK + kRowStatsChunk - 1) / kRowStatsChunk;
      const int cols = N - n0 < BN ? N - n0 : BN, rows = M - m0 < BM ? M - m0 : BM;
      cp_async_bytes(sA_u + kFoldOffset, a.u + n0, cols * 4);
      if (a.c) cp_async_bytes(sA_u + kFoldOffset + BN * 4, a.c + n0, cols * 4);
      cp_async_bytes(sA_u + kChunkOffset, a.rstats + (long long)m0 * kChunks, rows * kChunks * 8);
      cp_async_commit();
    }
    auto issue = [&](int kt) {  // k tile kt into stage kt % STAGES (thread 0 copies)
      const int s = kt % STAGES;
      detail::set_stage_barrier(ait, bar0 + 8 * s);
      detail::set_stage_barrier(bit, bar0 + 8 * s);
      ait.load((half_t*)nullptr, sA_u + s * kStageA * 2, k_begin + kt * BK);
      bit.load((half_t*)nullptr, sB_u + s * kStageB * 2, k_begin + kt * BK);
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s)
      if (s < ktiles) issue(s);
    MONO_GEMM_PROBE(1);

    // Descriptors of this warpgroup's operands in stage 0 at k 0; a k step adds 32 bytes, the
    // next 64-k block rows x 128 bytes, the next stage the stage's bytes (all >> 4).
    const unsigned long long da0 = wgmma_desc_sw128(sA_u + (unsigned int)((wm / 4) * 64 * 128));
    const unsigned long long db0 = wgmma_desc_sw128(sB_u + (unsigned int)(wn * WN * 128));
    unsigned int phases = 0;  // bit s: the parity stage s waits for
    for (int kt = 0; kt < ktiles; ++kt) {
      const int s = kt % STAGES;
      mbar_wait(bar0 + 8 * s, (phases >> s) & 1u);
      phases ^= 1u << s;
      MONO_GEMM_PROBE(2 + (kt < 59 ? kt : 59));
      // Every warp issues (no branch around wgmma: ptxas serializes wgmmas on divergent paths).
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const unsigned long long da = da0 + (unsigned long long)((s * kStageA * 2 + (kk / 4) * BM * 128 + (kk % 4) * 32) >> 4);
        const unsigned long long db = db0 + (unsigned long long)((s * kStageB * 2 + (kk / 4) * BN * 128 + (kk % 4) * 32) >> 4);
        Wgmma<WN>::mma(d, da, db, 1);
      }
      wgmma_commit();
      wgmma_wait<1>();  // k tile kt-1's MMAs are done: its stage is free for this warpgroup
      __syncthreads();  // ... and for every warpgroup
      if (kt + STAGES - 1 < ktiles) issue(kt + STAGES - 1);  // into k tile kt-1's stage
    }
    wgmma_wait<0>();
    wgmma_fence_acc(d);
    __syncthreads();  // every stage consumed: smem free for the epilogue and the caller
    if (threadIdx.x == 0)  // every issued stage was waited for: the barriers are idle
      for (int s = 0; s < STAGES; ++s) mbar_inval(bar0 + 8 * s);
    MONO_GEMM_PROBE(62);

    const int g = lane >> 2, t4 = lane & 3;
    if constexpr (kNorm) {
      float2* stats = reinterpret_cast<float2*>(smem + kStatsOffset);  // [BM]: mean, rstd
      const float* fold = reinterpret_cast<const float*>(smem + kFoldOffset);  // u [BN], c [BN]
      cp_async_wait<0>();
      __syncthreads();
      combine_row_stats<BM, kThreads, ALoad::kK>(reinterpret_cast<const float2*>(smem + kChunkOffset), M, m0, a.eps, stats);
      __syncthreads();
      // rows wm*16 + g (+ 8), columns wn*WN + 8j + 2 t4 (+ 1) of the tile: GemmF16's fragment layout
      const float2 r0 = stats[wm * 16 + g], r1 = stats[wm * 16 + g + 8];
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int n = wn * WN + 8 * j + 2 * t4 + e;
          const float u = fold[n], c = a.c ? fold[BN + n] : 0.0f;
          acc[0][j][e] = fmaf(r0.y, fmaf(-r0.x, u, acc[0][j][e]), c);
          acc[0][j][2 + e] = fmaf(r1.y, fmaf(-r1.x, u, acc[0][j][2 + e]), c);
        }
      if (a.out) write_normalized(a, M, m0, n0, N, stats);
    }
    bool applied;
    if constexpr (Base::kChunkFits && detail::Vec8<Epilogue>::value) {
      applied = Base::template finish_staged<typename Base::ChunkFrags>(acc, smem, computes, wm, wn, g, t4, m0, n0, M, N,
                                                                        epi, workspace, tile_counter, splits, split);
    } else {
      const typename Base::Frags fr{acc, m0 + wm * 16 + g, n0 + wn * WN + 2 * t4, M, N, computes};
      applied = detail::finish_tile(fr, epi, workspace, tile_counter, splits, split);
    }
    if constexpr (BN % kRowStatsChunk == 0) {
      if (rs.stats && applied) detail::tile_row_stats<BM, BN>(rs, M, N, m0, n0);
    } else {
      if (rs.stats) __trap();  // the planner gives row statistics only to tiles of 32-column multiples
    }
    MONO_GEMM_PROBE(63);
  }
};

}  // namespace mono_dev
