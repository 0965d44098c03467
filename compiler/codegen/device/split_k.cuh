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
//
// Splits together (an epilogue declaring split_together_items; a view that says where each
// thread's elements go: GemmF16::ChunkFrags, or GemmF16::Frags in groups of 4): when the
// grid has at least that many blocks (the caller's promise: then every work item of the stage has
// a block of its own, so the splits of a tile all run at once and may wait for one another),
// every split stores its partial (slot `split`), all wait for the tile's count, and split s then
// sums and finishes its own 1/splits of the tile's chunks (or groups of 4): the reduction's loads and the epilogue
// are shared out instead of falling on one block. The sums are the single reducer's, in the same
// order (the last split's partial, then slots 0, 1, ...): the same bits either way.
// The workspace holds `splits` slots per tile (the single reducer uses the first splits - 1).
// Measured on the H100 against the single reducer, same call (bench/RESULTS.md session 21, run189):
// bert-base 427.3 -> 416.0 us, gpt2 422.3 -> 414.5 (its FFN2 stage 8.2-8.7 -> 7.7-7.9 us).
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

// Epilogue::split_together_items (0 when it declares none): see "Splits together" above.
template <class E, class = void>
struct SplitTogether {
  static constexpr int items = 0;
};
template <class E>
struct SplitTogether<E, decltype(void(E::split_together_items))> {
  static constexpr int items = E::split_together_items;
};

MONO_FLAG_TRAIT(ElemPos, kElemPos)

// Sums W floats (W = 4 or 8: W / 4 float4s at float4 indices f0, f0 + NT, ...) of every split's
// slot in the single reducer's order: the last split's, then slots 0, 1, ... (up to 4 slots' loads
// in flight at once).
template <int W, int NT>
__device__ __forceinline__ void sum_slots(const float* workspace, int kSlot, int splits, int f0, float (&v)[W]) {
  const float4* last = reinterpret_cast<const float4*>(workspace + (long long)(splits - 1) * kSlot);
#pragma unroll
  for (int h = 0; h < W / 4; ++h) {
    const float4 a = __ldcg(last + f0 + h * NT);
    v[4 * h] = a.x, v[4 * h + 1] = a.y, v[4 * h + 2] = a.z, v[4 * h + 3] = a.w;
  }
  for (int s0 = 0; s0 < splits - 1; s0 += 4) {
    float4 p[4][W / 4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (s0 + j < splits - 1)
#pragma unroll
        for (int h = 0; h < W / 4; ++h)
          p[j][h] = __ldcg(reinterpret_cast<const float4*>(workspace + (long long)(s0 + j) * kSlot) + f0 + h * NT);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (s0 + j < splits - 1)
#pragma unroll
        for (int h = 0; h < W / 4; ++h)
          v[4 * h] += p[j][h].x, v[4 * h + 1] += p[j][h].y, v[4 * h + 2] += p[j][h].z, v[4 * h + 3] += p[j][h].w;
  }
}

// The splits-together form (see the top). A chunked view (GemmF16::ChunkFrags): chunk c of the
// tile is chunk c / kNT of thread c % kNT, at acc.chunk_pos(c), finished 8 wide. An element view
// (GemmF16::Frags): group u of 4 elements is elements 4 (u / kNT) .. + 3 of thread u % kNT, at
// acc.elem_pos, finished one element at a time (reads first).
template <class Acc, class Epilogue>
__device__ __forceinline__ void finish_together(const Acc& acc, const Epilogue& epi, float* workspace,
                                                unsigned int* tile_counter, int splits, int split) {
  constexpr int NT = Acc::kNT, kSlot = NT * Acc::kElems;
  store_partial(acc, workspace + (long long)split * kSlot);
  __syncthreads();
  unsigned int departed = 0;  // thread 0: the departures counted before its own
  if (threadIdx.x == 0) {
    red_add_release_gpu(tile_counter, 1u);  // arrival, releasing the block's partial (the bar.sync before)
    while (ld_acquire_gpu(tile_counter) < (unsigned int)splits) __nanosleep(32);
    // Departure: the count goes on to 2 x splits only after every split has seen it reach splits;
    // the last to depart resets it (next use: after a grid barrier or launch).
    departed = atomicAdd(tile_counter, 1u);
  }
  __syncthreads();  // every partial visible to every thread
  if constexpr (Chunked<Acc>::value) {
    constexpr int kUnits = NT * Acc::kChunks;
    const int lo = split * kUnits / splits, hi = (split + 1) * kUnits / splits;
    for (int c = lo + (int)threadIdx.x; c < hi && (int)threadIdx.x < NT; c += NT) {
      float v[8];
      sum_slots<8, NT>(workspace, kSlot, splits, (2 * (c / NT)) * NT + c % NT, v);
      int m, n;
      acc.chunk_pos(c, m, n);
      if (m >= acc.M) continue;
      if constexpr (Vec8<Epilogue>::value) {
        if (n + 8 <= acc.N) {
          epi.vec8(m, n, v);
          continue;
        }
      }
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (n + j < acc.N) epilogue_one(epi, m, n + j, v[j]);
    }
  } else {
    static_assert(Acc::kElems % 4 == 0, "finish_together: an element view in groups of 4");
    constexpr int kUnits = NT * (Acc::kElems / 4);
    const int lo = split * kUnits / splits, hi = (split + 1) * kUnits / splits;
    for (int u = lo + (int)threadIdx.x; u < hi && (int)threadIdx.x < NT; u += NT) {
      float v[4];
      sum_slots<4, NT>(workspace, kSlot, splits, u, v);  // float4 (u / NT) of thread u % NT
      int m[4], n[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) acc.elem_pos(u % NT, 4 * (u / NT) + j, m[j], n[j]);
      if constexpr (HasLoad<Epilogue>::value) {  // every read before the first store
        typename Epilogue::In in[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (m[j] < acc.M && n[j] < acc.N) epi.load(m[j], n[j], in[j]);
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (m[j] < acc.M && n[j] < acc.N) epi(m[j], n[j], v[j], in[j]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (m[j] < acc.M && n[j] < acc.N) epi(m[j], n[j], v[j]);
      }
    }
  }
  if (threadIdx.x == 0 && departed == 2u * splits - 1u) *reinterpret_cast<volatile unsigned int*>(tile_counter) = 0u;
}

// Finishes the tile: the epilogue directly, or the split-K protocol described at the top
// (workspace: this tile's slots of Acc::kNT * Acc::kElems floats).
template <class Acc, class Epilogue>
__device__ __forceinline__ void finish_tile(const Acc& acc, const Epilogue& epi, float* workspace,
                                            unsigned int* tile_counter, int splits, int split) {
  if (splits <= 1 || workspace == nullptr || tile_counter == nullptr) {
    apply_epilogue(acc, epi);
    return;
  }
  if constexpr ((Chunked<Acc>::value || ElemPos<Acc>::value) && SplitTogether<Epilogue>::items > 0) {
    if ((int)(gridDim.x * gridDim.y * gridDim.z) >= SplitTogether<Epilogue>::items) {
      finish_together(acc, epi, workspace, tile_counter, splits, split);
      return;
    }
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
