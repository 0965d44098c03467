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
// Warps: the block's warpgroups (4 consecutive warps each) form KGROUPS k groups of
// WARPS_M x WARPS_N warps. In a k group, warpgroup g takes rows 64 (g % (WARPS_M / 4)) and
// columns WN (g / (WARPS_M / 4)) of the tile: BM = 16 x WARPS_M, WN = BN / WARPS_N. Its
// accumulators are laid out as GemmF16's with warp tile 16 x WN. With KGROUPS > 1 each k group
// takes 1 / KGROUPS of every k tile's k steps over the whole tile, and the groups' accumulators
// are summed in shared memory (group 0's, then group 1's, ...) on the way to the epilogue. The
// tensor cores read each operand byte of a stage once: split along n, every warpgroup reads all
// of A (a 64x64x128 k tile: 48 KB of shared-memory reads against 32 KB). Measured on the H100
// (bench/RESULTS.md, session 21): a lone 64x64 tile's 128-wide k tile 0.404 us with two
// warpgroups along n, 0.299 in two k groups; lone tile sets 6-9 % faster, with the weights in
// the L2 or from HBM; the whole models no faster, so the planner's default stays along n and
// the tuning space offers both.
//
// Pipeline: STAGES - 1 k tiles in flight ahead; each k tile is BK/16 wgmmas committed as one
// group; a warpgroup waits for all but its newest group, so the tensor cores are fed across
// the block barrier that frees the previous k tile's stage for the copy STAGES - 1 ahead.
#pragma once

namespace mono_dev {

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int KGROUPS = 1>
struct GemmWg {
  // Base: the epilogue views (over every thread of the block) and the finish; Acc: one k group's
  // accumulator layout.
  using Base = GemmF16<BM, BN, BK, WARPS_M, WARPS_N * KGROUPS, STAGES>;
  using Acc = GemmF16<BM, BN, BK, WARPS_M, WARPS_N, STAGES>;
  static constexpr int kBM = BM, kBN = BN, kBK = BK;
  static constexpr int kGroupThreads = WARPS_M * WARPS_N * 32;
  static constexpr int kThreads = kGroupThreads * KGROUPS;
  static constexpr int WN = BN / WARPS_N;  // the wgmma's N
  static constexpr int NI = WN / 8;
  static_assert(WARPS_M % 4 == 0 && BM == 16 * WARPS_M, "GemmWg: a warpgroup takes 64 rows (BM = 16 x warps_m, warps_m % 4 == 0)");
  static_assert(WN == 16 || WN == 32 || WN == 48 || WN == 64 || WN == 128, "GemmWg: BN / warps_n must be 16, 32, 48, 64 or 128");
  static_assert(BK % 64 == 0, "GemmWg: BK must be a multiple of 64 (128-byte swizzled rows)");
  static_assert(STAGES >= 2 && STAGES <= 8, "GemmWg: 2 <= STAGES <= 8");
  static_assert(KGROUPS >= 1 && (BK / 16) % KGROUPS == 0, "GemmWg: KGROUPS must divide the k tile's BK / 16 steps");
  static constexpr int kGroupSteps = BK / 16 / KGROUPS;  // k steps of 16 per k group and k tile
  // The k groups' sum goes through the staged epilogue (its view and staging).
  static_assert(KGROUPS == 1 || Base::kChunkFits, "GemmWg: k groups need a tile the staged epilogue takes (GemmF16::kChunkFits)");
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

  template <class ALoad, class BLoad, class Epilogue>
  __device__ static void tile(int M, int N, int m0, int n0, int k_begin, int k_end, const ALoad& a,
                              const BLoad& b, const Epilogue& epi, unsigned char* smem,
                              float* workspace, unsigned int* tile_counter, int splits, int split) {
    if (blockDim.x != kThreads) __trap();  // every warp is in a warpgroup that computes
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    constexpr bool computes = true;
    const int wm = warp % WARPS_M, wn = (warp / WARPS_M) % WARPS_N;  // GemmF16's warp layout
    const int kg = warp / (WARPS_M * WARPS_N);                       // k group
    const int ktiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;

    float acc[1][NI][4];  // Acc's layout
    float(&d)[NI * 4] = reinterpret_cast<float(&)[NI * 4]>(acc);
#pragma unroll
    for (int i = 0; i < NI * 4; ++i) d[i] = 0.0f;

    MONO_GEMM_PROBE(0);
    auto ait = detail::make_iter<BM, BK, kThreads>(a, m0, BK);
    auto bit = detail::make_iter<BN, BK, kThreads>(b, n0, BK);
    static_assert(detail::IsSwizzled<decltype(ait)>::value, "GemmWg: A must come through a tensor map (TensorK)");
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
    // next 64-k block rows x 128 bytes, the next stage the stage's bytes (all >> 4). k group kg
    // starts at k step kg x kGroupSteps of each k tile.
    const int kk0 = kg * kGroupSteps;
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
      for (int j = 0; j < kGroupSteps; ++j) {
        const int kk = kk0 + j;
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
    if constexpr (KGROUPS > 1) {  // the k groups' sum in shared memory, then the staged epilogue
      using V = typename Base::ChunkFrags;
      float* st = reinterpret_cast<float*>(smem);
#pragma unroll 1
      for (int q = 0; q < KGROUPS; ++q) {  // group q adds its partial sums (group 0 stores)
        if (kg == q) Acc::template stage_acc<V::LDC>(acc, st, wm, wn, g, t4, q > 0);
        __syncthreads();
      }
      Base::template finish_gathered<V>(st, m0, n0, M, N, epi, workspace, tile_counter, splits, split);
    } else if constexpr (Base::kChunkFits && detail::Vec8<Epilogue>::value) {
      Base::template finish_staged<typename Base::ChunkFrags>(acc, smem, computes, wm, wn, g, t4, m0, n0, M, N, epi,
                                                              workspace, tile_counter, splits, split);
    } else {
      const typename Base::Frags fr{acc, m0 + wm * 16 + g, n0 + wn * WN + 2 * t4, M, N, computes};
      detail::finish_tile(fr, epi, workspace, tile_counter, splits, split);
    }
    MONO_GEMM_PROBE(63);
  }
};

}  // namespace mono_dev
