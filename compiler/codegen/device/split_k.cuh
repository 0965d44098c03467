// Mono device library: split-K (several work items share one GEMM tile's K range and sum their
// partial tiles in a fixed order) and finish_tile, which ends every GEMM tile.
// SELF-CONTAINED (no includes); requires common.cuh and epilogue.cuh to be included first.
//
// Split-K (splits > 1): the caller runs `splits` work items for the same tile with disjoint K
// ranges [k_begin, k_end), `split` = 0 .. splits-1; IMPORTANT: every range boundary except the
// operand's K must be a multiple of BK (loaders zero-fill only beyond K, so a range ending
// mid-tile would be counted twice). split_k_range() below computes such ranges. Splits 0 ..
// splits-2 (producers) store their partial tile to `workspace` slot `split` (BM x BN floats per
// slot, in the accumulators' register order, so the stores and loads of a warp are contiguous),
// then count themselves on `tile_counter`. Split splits-1 (the reducer) waits for that count,
// adds the partials to its own accumulators in slot order, resets the counter and applies the
// epilogue. No float atomics: the sum is the same in every run. The counter must be zero when
// first used. The reducer WAITS for the producers, so the caller must order work items so that
// no block reaches a reducer before it has run every producer it was given: number items with
// the split slowest (item = split * tiles + tile) and let each block walk its items upwards.
#pragma once

namespace mono_dev {

// K range of split s (0 <= s < splits) for K split into BK-aligned pieces (ranges may be empty when
// splits exceeds the number of BK tiles; an empty range still takes part in the split protocol).
__device__ __forceinline__ void split_k_range(int K, int BK, int splits, int s, int& k_begin,
                                              int& k_end) {
  const int ktiles = (K + BK - 1) / BK;
  const int per = ktiles / splits, rem = ktiles % splits;
  const int t0 = s * per + (s < rem ? s : rem);
  const int t1 = t0 + per + (s < rem ? 1 : 0);
  k_begin = t0 * BK;
  k_end = t1 * BK < K ? t1 * BK : K;
}

namespace detail {

// A split-K partial slot: element e of thread t at float4 (e / 4) * NT + t (or, when a thread owns
// a number of elements that is not a multiple of 4, float e * NT + t). acc.el(e) is element e of
// the thread, Acc::kNT the tile's threads. Stores and loads go to L2 (.cg): L1 is not coherent.
template <class Acc>
__device__ __forceinline__ void store_partial(const Acc& acc, float* slot) {
  constexpr int NT = Acc::kNT, E = Acc::kElems;
  if (!acc.computes) return;
  const int t = threadIdx.x;
  if constexpr (E % 4 == 0) {
#pragma unroll
    for (int q = 0; q < E / 4; ++q)
      __stcg(reinterpret_cast<float4*>(slot) + q * NT + t,
             make_float4(acc.el(4 * q), acc.el(4 * q + 1), acc.el(4 * q + 2), acc.el(4 * q + 3)));
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) __stcg(slot + e * NT + t, acc.el(e));
  }
}
// Adds the partials of up to F consecutive slots (n of them, n >= 1; the layout store_partial
// writes) to the accumulators: every load first, then the adds slot by slot.
template <int F, class Acc>
__device__ __forceinline__ void add_partials(const Acc& acc, const float* slots, int n) {
  constexpr int NT = Acc::kNT, E = Acc::kElems, kSlot = NT * E;
  if (!acc.computes) return;
  const int t = threadIdx.x;
  float p[F][E];
#pragma unroll
  for (int j = 0; j < F; ++j) {
    if (j >= n) break;
    if constexpr (E % 4 == 0) {
#pragma unroll
      for (int q = 0; q < E / 4; ++q) {
        const float4 v = __ldcg(reinterpret_cast<const float4*>(slots + j * kSlot) + q * NT + t);
        p[j][4 * q] = v.x, p[j][4 * q + 1] = v.y, p[j][4 * q + 2] = v.z, p[j][4 * q + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int e = 0; e < E; ++e) p[j][e] = __ldcg(slots + j * kSlot + e * NT + t);
    }
  }
#pragma unroll
  for (int j = 0; j < F; ++j) {
    if (j >= n) break;
#pragma unroll
    for (int e = 0; e < E; ++e) acc.el(e) += p[j][e];
  }
}

// Finishes the tile: the epilogue directly, or the split-K protocol described at the top
// (workspace: this tile's splits-1 slots of Acc::kNT * Acc::kElems floats).
template <class Acc, class Epilogue>
__device__ __forceinline__ void finish_tile(const Acc& acc, const Epilogue& epi, float* workspace,
                                            unsigned int* tile_counter, int splits, int split) {
  if (splits <= 1 || workspace == nullptr || tile_counter == nullptr) {
    apply_epilogue(acc, epi);
    return;
  }
  constexpr int kSlot = Acc::kNT * Acc::kElems;
  // The grid barrier's ordering (barrier.cuh), without fences: the block's partial stores, a
  // bar.sync, then one release add by thread 0 (cumulative over the bar.sync); the reducer's
  // thread 0 acquires the count, and the bar.sync after it orders the block's partial loads.
  if (split < splits - 1) {  // producer: publish the partial, count it, done
    store_partial(acc, workspace + (long long)split * kSlot);
    __syncthreads();
    if (threadIdx.x == 0) red_add_release_gpu(tile_counter, 1u);
    return;
  }
  if (threadIdx.x == 0) {  // reducer: wait for the producers (they never wait: see the top)
    while (ld_acquire_gpu(tile_counter) < (unsigned int)(splits - 1)) __nanosleep(32);
    *reinterpret_cast<volatile unsigned int*>(tile_counter) = 0u;  // next use: after a grid barrier or launch
  }
  __syncthreads();
  // Several slots' loads in flight at once (one L2 round trip for up to kFlight slots, not one a
  // slot), added in slot order: the same sums as one slot at a time. Measured (run182): a lone
  // 128 x 768 x 3072 split-4 tile set 6.92 -> 6.28 us; gpt2 420.8 -> 414.4 us.
  constexpr int kFlight = Acc::kElems <= 16 ? 4 : Acc::kElems <= 32 ? 2 : 1;
#pragma unroll 1
  for (int s0 = 0; s0 < splits - 1; s0 += kFlight) add_partials<kFlight>(acc, workspace + (long long)s0 * kSlot, splits - 1 - s0);
  apply_epilogue(acc, epi);
}

}  // namespace detail

}  // namespace mono_dev
