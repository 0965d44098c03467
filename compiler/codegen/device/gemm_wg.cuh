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
// A LayerNormalization in front (A is NormK, loaders.cuh): the tile's whole A panel, every k
// tile of its BM rows, is copied once through x's tensor map into shared memory past the B
// stages, normalized there in place (normalize_panel), and read by every k tile; only B goes
// through the pipeline. Shared memory: norm_smem_bytes(K).
#pragma once

namespace mono_dev {

// LayerNormalization of the rows of an A panel in shared memory, in place: `panel` holds rows
// [0, BM) of K halves as GemmWg's stages lay out A (64-k blocks of BM rows x 128 bytes, 16-byte
// chunk c of row r at chunk c ^ (r % 8)). One warp per row, the row's chunks in registers; the
// statistics as layer_norm_row_f (rows.cuh) computes them (the mean of x - x[0] plus x[0], the
// biased variance about the mean), so both paths round to the same fp16. Rows from `rows` on
// are left as they are (the tensor map's zeros). `out` (or null): row r also goes to out[r][.].
// ptr_bits is common.cuh's.
template <int BM, int K, int WARPS, class G, class B>
__device__ __forceinline__ void normalize_panel(unsigned char* panel, int rows, const G* gamma, const B* beta,
                                                float eps, half_t* out) {
  constexpr int KC = K / 8;               // 16-byte chunks in a row
  constexpr int CPL = (KC + 31) / 32;     // chunks per lane
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float g[CPL][8], bt[CPL][8];
#pragma unroll
  for (int j = 0; j < CPL; ++j) {
    const int c = lane + 32 * j;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      g[j][e] = c < KC ? to_float(gamma[c * 8 + e]) : 0.0f;
      bt[j][e] = c < KC && beta ? to_float(beta[c * 8 + e]) : 0.0f;
    }
  }
  const float inv_len = 1.0f / (float)K;
  for (int r = warp; r < rows; r += WARPS) {
    float v[CPL][8];
    u32x4* at[CPL];
#pragma unroll
    for (int j = 0; j < CPL; ++j) {
      const int c = lane + 32 * j;
      at[j] = reinterpret_cast<u32x4*>(panel + (c / 8) * (BM * 128) + r * 128 + (((c % 8) ^ (r & 7)) * 16));
      if (c < KC) {
        const u32x4 w = *at[j];
        const unsigned int h[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          v[j][2 * e] = half_bits_to_float((unsigned short)(h[e] & 0xffffu));
          v[j][2 * e + 1] = half_bits_to_float((unsigned short)(h[e] >> 16));
        }
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) v[j][e] = 0.0f;
      }
    }
    const float shift = __shfl_sync(0xffffffffu, v[0][0], 0);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < CPL; ++j)
      if (lane + 32 * j < KC)
#pragma unroll
        for (int e = 0; e < 8; ++e) s += v[j][e] - shift;
    const float mean = shift + warp_sum(s) * inv_len;
    float q = 0.0f;
#pragma unroll
    for (int j = 0; j < CPL; ++j)
      if (lane + 32 * j < KC)
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const float d = v[j][e] - mean;
          q += d * d;
        }
    const float rstd = rsqrtf(warp_sum(q) * inv_len + eps);
#pragma unroll
    for (int j = 0; j < CPL; ++j) {
      const int c = lane + 32 * j;
      if (c >= KC) continue;
      unsigned int h[4];
#pragma unroll
      for (int e = 0; e < 4; ++e)
        h[e] = pack_half2((v[j][2 * e] - mean) * rstd * g[j][2 * e] + bt[j][2 * e],
                          (v[j][2 * e + 1] - mean) * rstd * g[j][2 * e + 1] + bt[j][2 * e + 1]);
      const u32x4 w{h[0], h[1], h[2], h[3]};
      *at[j] = w;
      if (!out) continue;
      half_t* o = out + (long long)r * K + c * 8;
      if ((ptr_bits(o) & 15u) == 0) {  // the arena's are; a graph output (the caller's) need not be
        *reinterpret_cast<u32x4*>(o) = w;
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) o[e].bits = (unsigned short)(h[e / 2] >> (16 * (e % 2)));
      }
    }
  }
}

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

  // With a LayerNormalization in front (NormK of length K): the B stages, then the A panel of
  // every k tile, then the barriers (the B stages' and the panel's); the epilogue's staging from 0.
  __host__ __device__ static constexpr int panel_offset() { return STAGES * kStageB * 2; }
  __host__ __device__ static constexpr int norm_barrier_offset(int K) {
    return panel_offset() + (K + BK - 1) / BK * kStageA * 2 > kStagedBytes ? panel_offset() + (K + BK - 1) / BK * kStageA * 2
                                                                         : kStagedBytes;
  }
  __host__ __device__ static constexpr int norm_smem_bytes(int K) { return norm_barrier_offset(K) + 8 * (STAGES + 1); }

  template <class ALoad, class BLoad, class Epilogue>
  __device__ static void tile(int M, int N, int m0, int n0, int k_begin, int k_end, const ALoad& a,
                              const BLoad& b, const Epilogue& epi, unsigned char* smem,
                              float* workspace, unsigned int* tile_counter, int splits, int split) {
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
    // Without a normalization: the A stages, the B stages. With one: the B stages, the A panel.
    const unsigned int s_u = smem_u32(smem);
    const unsigned int sA_u = kNorm ? s_u + panel_offset() : s_u;
    const unsigned int sB_u = kNorm ? s_u : s_u + STAGES * kStageA * 2;
    // stage s: bar0 + 8 s (the epilogue's staging stays below); the panel's: bar0 + 8 STAGES
    constexpr int kBarriers = [] {
      if constexpr (kNorm) return norm_barrier_offset(ALoad::kK);
      else return kBarrierOffset;
    }();
    const unsigned int bar0 = s_u + kBarriers;
    if (threadIdx.x == 0) {
      for (int s = 0; s < STAGES; ++s) mbar_init(bar0 + 8 * s, kNorm ? 1 : 2);  // one arrival per operand
      if (kNorm) mbar_init(bar0 + 8 * STAGES, ktiles > 0 ? ktiles : 1);     // one per k tile of the panel
    }
    mbar_fence_init();
    __syncthreads();  // smem may still be in use by the caller's previous work; barriers ready
    if (s_u & 1023u) __trap();  // the kernel's shared memory must start 1024-byte aligned
    // A was written by ordinary stores of earlier stages; the TMA unit reads it through the
    // async proxy, which needs this fence (see GemmF16).
    if (threadIdx.x == 0) asm volatile("fence.proxy.async.global;" ::: "memory");
    if constexpr (kNorm) {  // the whole panel at once, all its boxes in flight together
      detail::set_stage_barrier(ait, bar0 + 8 * STAGES);
      for (int kt = 0; kt < ktiles; ++kt) ait.load((half_t*)nullptr, sA_u + kt * kStageA * 2, k_begin + kt * BK);
    }
    auto issue = [&](int kt) {  // k tile kt into stage kt % STAGES (thread 0 copies)
      const int s = kt % STAGES;
      detail::set_stage_barrier(bit, bar0 + 8 * s);
      if constexpr (!kNorm) {
        detail::set_stage_barrier(ait, bar0 + 8 * s);
        ait.load((half_t*)nullptr, sA_u + s * kStageA * 2, k_begin + kt * BK);
      }
      bit.load((half_t*)nullptr, sB_u + s * kStageB * 2, k_begin + kt * BK);
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s)
      if (s < ktiles) issue(s);
    if constexpr (kNorm) {
      static_assert(ALoad::kK % 8 == 0, "GemmWg: a normalized A needs K a multiple of 8 (16-byte rows)");
      if (k_begin != 0 || k_end != ALoad::kK) __trap();  // the panel is whole rows: no split-K
      mbar_wait(bar0 + 8 * STAGES, 0);
      normalize_panel<BM, ALoad::kK, kThreads / 32>(smem + panel_offset(), M - m0 < BM ? M - m0 : BM, a.gamma, a.beta,
                                                    a.eps, a.out ? a.out + (long long)m0 * ALoad::kK : nullptr);
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the wgmmas read it through the async proxy
      __syncthreads();
    }
    MONO_GEMM_PROBE(1);

    // Descriptors of this warpgroup's operands in stage 0 at k 0; a k step adds 32 bytes, the
    // next 64-k block rows x 128 bytes, the next stage the stage's bytes (all >> 4). A normalized
    // A is read at k tile kt of its panel instead of stage s.
    const unsigned long long da0 = wgmma_desc_sw128(sA_u + (unsigned int)((wm / 4) * 64 * 128));
    const unsigned long long db0 = wgmma_desc_sw128(sB_u + (unsigned int)(wn * WN * 128));
    unsigned int phases = 0;  // bit s: the parity stage s waits for
    for (int kt = 0; kt < ktiles; ++kt) {
      const int s = kt % STAGES;
      mbar_wait(bar0 + 8 * s, (phases >> s) & 1u);
      phases ^= 1u << s;
      MONO_GEMM_PROBE(2 + (kt < 59 ? kt : 59));
      const int sa = kNorm ? kt : s;
      // Every warp issues (no branch around wgmma: ptxas serializes wgmmas on divergent paths).
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const unsigned long long da = da0 + (unsigned long long)((sa * kStageA * 2 + (kk / 4) * BM * 128 + (kk % 4) * 32) >> 4);
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
      for (int s = 0; s < (kNorm ? STAGES + 1 : STAGES); ++s) mbar_inval(bar0 + 8 * s);
    MONO_GEMM_PROBE(62);

    const int g = lane >> 2, t4 = lane & 3;
    if constexpr (Base::kChunkFits && detail::Vec8<Epilogue>::value) {
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
