// Mono device library: GEMM tiles (fp16 tensor-core and fp32 SIMT) and operand loaders.
// SELF-CONTAINED (no includes); requires common.cuh to be included first.
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
// Operand tiles live in shared memory as [rows][ld] element arrays, K contiguous, where
// ld = BK + 8 (fp16) or BK + 4 (fp32): always a multiple of 16 bytes. Loaders fill them.
//
// Loader concept (ALL threads of the block call load cooperatively):
//   template <int ROWS, int BK> __device__ void load(T* dst, int ld, int r0, int k0) const;
//   fills dst[r][k] (r < ROWS, k < BK) with operand element (r0 + r, k0 + k), or 0 when the row
//   is out of range or k >= the operand's K. Loaders may use cp.async (the GEMM commits and waits
//   on the groups) or plain shared-memory stores (made visible by the GEMM's __syncthreads).
//   A loader may take a third template argument, load<ROWS, BK, NT>, NT = participating threads
//   (the GEMM passes kThreads when it is accepted; see detail::load_tile). DenseK operands are
//   not loaded through load() in the main loop but through detail::DenseKIter (cp.async, addresses
//   computed once per tile), DenseN through detail::DenseNIter (16-byte loads into registers
//   before the MMAs of the current stage, transposed shared stores after them); Gather and custom
//   loaders go through load() (synchronous unless they use cp.async themselves).
//
// Epilogue concept:
//   __device__ void operator()(int m, int n, float acc) const;   // exactly once per (m<M, n<N)
// or, for epilogues that read memory, the two-phase form (detail::HasLoad below): a struct In,
// load(m, n, In&) and operator()(m, n, acc, const In&), each called exactly once per element.
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

// Timing hook for the device-library probe (tests/gpu/device_lib_check.cu --probe): slot 0 on
// entry, 1 after the pipeline prologue, 2 + kt after k tile kt's barrier, 62 after the main loop,
// 63 after the epilogue. Empty in generated kernels.
#ifndef MONO_GEMM_PROBE
#define MONO_GEMM_PROBE(slot) ((void)0)
#endif

// Trait NAME<X>::value = X::MEMBER if X declares `static constexpr bool MEMBER`, else false.
#define MONO_FLAG_TRAIT(NAME, MEMBER)                          \
  template <class X, class = void>                             \
  struct NAME {                                                \
    static constexpr bool value = false;                       \
  };                                                           \
  template <class X>                                           \
  struct NAME<X, decltype(void(X::MEMBER))> {                  \
    static constexpr bool value = X::MEMBER;                   \
  };

namespace mono_dev {

// ------------------------------------------------------------------------------------------------
// PTX wrappers
// ------------------------------------------------------------------------------------------------

// 16-byte async copy global -> shared; bytes beyond src_bytes (0..16) are zero-filled and not read.
__device__ __forceinline__ void cp_async_16(unsigned int dst_smem, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst_smem), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(unsigned int (&r)[4], unsigned int addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x2(unsigned int (&r)[2], unsigned int addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(addr));
}

// mbarrier and bulk-copy wrappers (sm_90): a bulk copy moves `bytes` (a multiple of 16, both
// addresses 16-byte aligned) from global to shared memory through the TMA unit and counts them
// on an mbarrier's transaction count; the barrier's phase completes when its one arrival
// (arrive.expect_tx with the stage's total bytes) and all those bytes are in.
__device__ __forceinline__ void mbar_init(unsigned int bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_inval(unsigned int bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void mbar_expect_tx(unsigned int bar, unsigned int bytes) {
  asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(bar),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned int bar, unsigned int parity) {
  unsigned int done;
  do {
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}
__device__ __forceinline__ void bulk_copy_g2s(unsigned int dst, const void* src, unsigned int bytes,
                                              unsigned int bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// A tensor map (the driver's CUtensorMap: 128 opaque bytes, 64-byte aligned), encoded on the host
// (cuTensorMapEncodeTiled, compiler/runtime/cuda_model.cc) and read by the TMA unit from the
// kernel's __constant__ table.
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};
// One box of a 2-D tensor map at element coordinates (c0 innermost, c1) into shared memory,
// counted on an mbarrier like bulk_copy_g2s. Out-of-range elements arrive as zeros and count.
__device__ __forceinline__ void tma_load_2d(unsigned int dst, const TensorMap* map, int c0, int c1, unsigned int bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// D = A(16x16, row) * B(16x8, col) + D, fp16 inputs, fp32 accumulate.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned int (&a)[4], unsigned int b0,
                                          unsigned int b1) {
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ------------------------------------------------------------------------------------------------
// Split-K helpers
// ------------------------------------------------------------------------------------------------

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

// Functors applied to every accumulator element a thread owns (no lambdas: NVRTC's JIT mode
// treats lambdas in device code as host functions unless -default-device is given).
//
// Two-phase epilogues. An epilogue that reads tensors (residual, bias, scale...) may declare
//   struct In { ... };                                         // what it reads for one element
//   __device__ void load(int m, int n, In& in) const;          // the reads only, no stores
//   __device__ void operator()(int m, int n, float v, const In& in) const;
// Then every read of every element is issued before the first store: the compiler cannot move a
// load above a store through another pointer (they might alias), so a one-phase epilogue pays
// one memory round trip per element (measured in the PTX: ld/st alternating per element).
template <class E, class = void>
struct HasLoad {
  static constexpr bool value = false;
};
template <class E>
struct HasLoad<E, decltype(void(sizeof(typename E::In)))> {
  static constexpr bool value = true;
};

// An epilogue whose stores are contiguous along m (a transposed output) declares
//   static constexpr bool m_fastest = true;
// and the staged epilogue (GemmF16::StagedFrags) then hands neighbouring threads neighbouring m.
MONO_FLAG_TRAIT(MFastest, m_fastest)

// The two phases run over chunks of kEpiChunk elements (the In values of a chunk live in
// registers; a whole 64x128 tile's would not fit beside the accumulators). Elements outside the
// chunk [e0, e0 + kEpiChunk) are skipped; with everything unrolled that is resolved at compile time.
#ifndef MONO_EPI_CHUNK
#define MONO_EPI_CHUNK 8
#endif
constexpr int kEpiChunk = MONO_EPI_CHUNK;
template <class Epilogue>
struct LoadIn {  // phase 1
  const Epilogue& epi;
  typename Epilogue::In* in;
  int e0;
  __device__ __forceinline__ void operator()(int e, int m, int n, float) const {
    if (e >= e0 && e < e0 + kEpiChunk) epi.load(m, n, in[e - e0]);
  }
};
template <class Epilogue, bool kTwoPhase>
struct ApplyEpi {  // phase 2 (or the only phase)
  const Epilogue& epi;
  const void* in;
  int e0;
  __device__ __forceinline__ void operator()(int e, int m, int n, float v) const {
    if (kTwoPhase && (e < e0 || e >= e0 + kEpiChunk)) return;
    if constexpr (kTwoPhase)
      epi(m, n, v, static_cast<const typename Epilogue::In*>(in)[e - e0]);
    else
      epi(m, n, v);
  }
};

// Applies the epilogue to every element the thread owns (acc.visit(f) calls f(e, m, n, value),
// e = the element's slot < Acc::kElems, for every owned element with m < M, n < N).
// Vectorised stores. An epilogue whose output elements (m, n .. n + 7) are 8 consecutive,
// 16-byte aligned addresses whenever n % 8 == 0 and n + 8 <= N may declare
//   static constexpr bool vec8_stores = true;
//   __device__ void vec8(int m, int n, const float (&acc)[8]) const;   // all 8, one wide store
// next to its per-element form (still used for chunks cut by N). Accumulator views that hand
// each thread chunks of 8 consecutive n (GemmF16::ChunkFrags, kChunked) then call vec8 per chunk.
MONO_FLAG_TRAIT(Vec8, vec8_stores)
MONO_FLAG_TRAIT(Chunked, kChunked)

// The per-element epilogue of one element (both forms), for chunks vec8 cannot take.
template <class Epilogue>
__device__ __forceinline__ void epilogue_one(const Epilogue& epi, int m, int n, float v) {
  if constexpr (HasLoad<Epilogue>::value) {
    typename Epilogue::In in;
    epi.load(m, n, in);
    epi(m, n, v, in);
  } else {
    epi(m, n, v);
  }
}

template <class Acc, class Epilogue>
__device__ __forceinline__ void apply_epilogue(const Acc& acc, const Epilogue& epi) {
  if constexpr (Chunked<Acc>::value && Vec8<Epilogue>::value) {
    acc.visit_chunks(epi);
  } else if constexpr (HasLoad<Epilogue>::value) {
#pragma unroll
    for (int e0 = 0; e0 < Acc::kElems; e0 += kEpiChunk) {
      typename Epilogue::In in[kEpiChunk];
      acc.visit(LoadIn<Epilogue>{epi, in, e0});
      acc.visit(ApplyEpi<Epilogue, true>{epi, in, e0});
    }
  } else {
    acc.visit(ApplyEpi<Epilogue, false>{epi, nullptr, 0});
  }
}

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
template <class Acc>
__device__ __forceinline__ void add_partial(const Acc& acc, const float* slot) {
  constexpr int NT = Acc::kNT, E = Acc::kElems;
  if (!acc.computes) return;
  const int t = threadIdx.x;
  if constexpr (E % 4 == 0) {
    float4 p[E / 4];  // all loads in flight before the adds
#pragma unroll
    for (int q = 0; q < E / 4; ++q) p[q] = __ldcg(reinterpret_cast<const float4*>(slot) + q * NT + t);
#pragma unroll
    for (int q = 0; q < E / 4; ++q) {
      acc.el(4 * q) += p[q].x;
      acc.el(4 * q + 1) += p[q].y;
      acc.el(4 * q + 2) += p[q].z;
      acc.el(4 * q + 3) += p[q].w;
    }
  } else {
    float p[E];
#pragma unroll
    for (int e = 0; e < E; ++e) p[e] = __ldcg(slot + e * NT + t);
#pragma unroll
    for (int e = 0; e < E; ++e) acc.el(e) += p[e];
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
  if (split < splits - 1) {  // producer: publish the partial, count it, done
    store_partial(acc, workspace + (long long)split * kSlot);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(tile_counter, 1u);
    return;
  }
  if (threadIdx.x == 0) {  // reducer: wait for the producers (they never wait: see the top)
    while (ld_acquire_gpu(tile_counter) < (unsigned int)(splits - 1)) __nanosleep(32);
    __threadfence();
    *reinterpret_cast<volatile unsigned int*>(tile_counter) = 0u;  // next use: after a grid barrier or launch
  }
  __syncthreads();
#pragma unroll 1
  for (int s = 0; s < splits - 1; ++s) add_partial(acc, workspace + (long long)s * kSlot);
  apply_epilogue(acc, epi);
}

}  // namespace detail

// ------------------------------------------------------------------------------------------------
// Loaders
//
// The loaders below also accept an optional third template argument NT = the number of threads
// that take part (the GEMM passes kThreads when the loader accepts it, see detail::load_tile):
// with it the per-thread work is a compile-time unrolled list whose addresses and predicates do
// not depend on k0, so the compiler hoists them out of the GEMM's k loop. NT = 0 means "use
// blockDim.x at run time" (the plain two-argument concept).
// ------------------------------------------------------------------------------------------------

namespace detail {

// op(i) for every i in [0, TOTAL), spread over the block's threads.
template <int TOTAL, int NT, class Op>
__device__ __forceinline__ void for_units(const Op& op) {
  if constexpr (NT > 0) {
    if ((int)threadIdx.x >= NT) return;
    constexpr int IT = (TOTAL + NT - 1) / NT;
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      const int i = (int)threadIdx.x + it * NT;
      if (TOTAL % NT == 0 || i < TOTAL) op(i);
    }
  } else {
    for (int i = threadIdx.x; i < TOTAL; i += blockDim.x) op(i);
  }
}

// Same, but in batches of U: U values fetched (op.fetch(i), loads in flight together), then
// stored (op.store(i, v)). For synchronous (non-cp.async) loaders.
template <int TOTAL, int NT, int U, class Op>
__device__ __forceinline__ void for_units_batched(const Op& op) {
  using V = typename Op::value_type;
  if constexpr (NT > 0) {
    if ((int)threadIdx.x >= NT) return;
    constexpr int IT = (TOTAL + NT - 1) / NT;
#pragma unroll
    for (int b = 0; b < IT; b += U) {
      V v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = (int)threadIdx.x + (b + u) * NT;
        if (b + u < IT && (TOTAL % NT == 0 || i < TOTAL)) v[u] = op.fetch(i);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = (int)threadIdx.x + (b + u) * NT;
        if (b + u < IT && (TOTAL % NT == 0 || i < TOTAL)) op.store(i, v[u]);
      }
    }
  } else {
    const int nt = blockDim.x;
#pragma unroll 1
    for (int base = threadIdx.x; base < TOTAL; base += U * nt) {
      V v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = base + u * nt;
        if (i < TOTAL) v[u] = op.fetch(i);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = base + u * nt;
        if (i < TOTAL) op.store(i, v[u]);
      }
    }
  }
}

// Calls l.load<ROWS, BK, NT>(...) when the loader accepts a thread-count argument, else
// l.load<ROWS, BK>(...).
template <int ROWS, int BK, int NT, class L, class T>
__device__ __forceinline__ auto load_tile(const L& l, T* dst, int ld, int r0, int k0, int)
    -> decltype(l.template load<ROWS, BK, NT>(dst, ld, r0, k0), void()) {
  l.template load<ROWS, BK, NT>(dst, ld, r0, k0);
}
template <int ROWS, int BK, int NT, class L, class T>
__device__ __forceinline__ void load_tile(const L& l, T* dst, int ld, int r0, int k0, long) {
  l.template load<ROWS, BK>(dst, ld, r0, k0);
}

template <class T>
struct Pair {
  T v[2];
};
template <class T>
__device__ __forceinline__ unsigned int pack2(T lo, T hi) {
  union {
    unsigned int w;
    T h[2];
  } p;
  p.h[0] = lo;
  p.h[1] = hi;
  return p.w;
}

}  // namespace detail

// Operand stored [rows][K], K contiguous: element (r, k) = ptr[r * row_stride + k].
// Aggregate: DenseK<T>{ptr, rows, K, row_stride}. Batch: caller offsets ptr.
// ALIGNED = true promises the fast path's conditions (the code generator proves them from the
// buffer layout): no scalar fallback is compiled, which keeps the kernel's code small.
// Fast path (16-byte cp.async, zero-fill for tails) when ptr is 16-byte aligned and row_stride and
// k0 are multiples of 16/sizeof(T) elements (checked at run time); scalar loads otherwise.
template <class T, bool ALIGNED = false>
struct DenseK {
  const T* ptr;
  int rows;        // valid rows (limit)
  int K;           // valid k (limit)
  int row_stride;  // elements between consecutive rows

  static constexpr int VEC = 16 / (int)sizeof(T);

  template <int BK>
  struct VecOp {  // one 16-byte chunk
    const DenseK& L;
    unsigned int dbase;
    int ld, r0, k0;
    __device__ __forceinline__ void operator()(int c) const {
      constexpr int CPR = BK / VEC;
      const int r = c / CPR, kc = (c - r * CPR) * VEC;
      const int gr = r0 + r, gk = k0 + kc;
      const T* src = L.ptr;
      int bytes = 0;
      if (gr < L.rows && gk < L.K) {
        src = L.ptr + (long long)gr * L.row_stride + gk;
        const int rem = L.K - gk;
        bytes = (rem >= VEC ? VEC : rem) * (int)sizeof(T);
      }
      cp_async_16(dbase + (unsigned int)((r * ld + kc) * (int)sizeof(T)), src, bytes);
    }
  };
  template <int BK>
  struct ScalarOp {
    using value_type = T;
    const DenseK& L;
    T* dst;
    int ld, r0, k0;
    __device__ __forceinline__ T fetch(int i) const {
      const int r = i / BK, k = i - r * BK;
      const int gr = r0 + r, gk = k0 + k;
      return (gr < L.rows && gk < L.K) ? L.ptr[(long long)gr * L.row_stride + gk] : T{};
    }
    __device__ __forceinline__ void store(int i, T v) const {
      const int r = i / BK, k = i - r * BK;
      dst[r * ld + k] = v;
    }
  };

  // Scalar path only (the DenseK tile iterator falls back to it for unaligned operands). One
  // element per step, not unrolled: a cold path, whose copies would crowd the instruction cache.
  template <int ROWS, int BK>
  __device__ __forceinline__ void load_scalar(T* dst, int ld, int r0, int k0) const {
    detail::for_units_batched<ROWS * BK, 0, 1>(ScalarOp<BK>{*this, dst, ld, r0, k0});
  }

  template <int ROWS, int BK, int NT = 0>
  __device__ __forceinline__ void load(T* dst, int ld, int r0, int k0) const {
    static_assert(16 % sizeof(T) == 0 && BK % VEC == 0, "BK must be a multiple of 16 bytes");
    const bool vec_ok = ALIGNED ||
        (((ptr_bits(ptr) & 15ull) == 0) && (row_stride % VEC == 0) && (k0 % VEC == 0));
    if (vec_ok)
      detail::for_units<ROWS * (BK / VEC), NT>(VecOp<BK>{*this, smem_u32(dst), ld, r0, k0});
    else
      load_scalar<ROWS, BK>(dst, ld, r0, k0);
  }
};

// Operand stored transposed, [K][rows], rows contiguous: element (r, k) = ptr[k * k_stride + r].
// Aggregate: DenseN<T>{ptr, rows, K, k_stride}. Batch: caller offsets ptr. ALIGNED as for DenseK.
// Fast path when ptr is 16-byte aligned and k_stride and r0 are multiples of 16/sizeof(T): each
// unit reads 16 bytes (VEC consecutive rows) for 1 (fp32) or 2 (fp16) consecutive k and writes
// them transposed as 4-byte shared stores. Scalar otherwise. (Pre-transposing constant weights to
// [N][K] at compile time and using DenseK is faster than this loader.)
template <class T, bool ALIGNED = false>
struct DenseN {
  const T* ptr;
  int rows;      // valid rows (limit)
  int K;         // valid k (limit)
  int k_stride;  // elements between consecutive k

  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "DenseN: 2- or 4-byte elements");
  static constexpr int VEC = 16 / (int)sizeof(T);
  static constexpr int KP = (sizeof(T) == 2) ? 2 : 1;  // k per unit: 4-byte smem stores

  union Vec {
    u32x4 v;
    T e[VEC];
  };
  struct Unit {
    Vec q[KP];
  };

  template <int BK>
  struct VecOp {
    using value_type = Unit;
    const DenseN& L;
    T* dst;
    int ld, r0, k0;
    static constexpr int KU = BK / KP;  // units along k (fastest across threads)
    __device__ __forceinline__ Unit fetch(int u) const {
      const int rc = u / KU, kp = u - rc * KU;
      const int gr = r0 + rc * VEC, gk = k0 + kp * KP;
      Unit x;
#pragma unroll
      for (int q = 0; q < KP; ++q) {
        x.q[q].v = u32x4{0u, 0u, 0u, 0u};
        if (gk + q < L.K) {
          const T* src = L.ptr + (long long)(gk + q) * L.k_stride + gr;
          if (gr + VEC <= L.rows) {
            x.q[q].v = *reinterpret_cast<const u32x4*>(src);
          } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j)
              if (gr + j < L.rows) x.q[q].e[j] = src[j];
          }
        }
      }
      return x;
    }
    __device__ __forceinline__ void store(int u, const Unit& x) const {
      const int rc = u / KU, kp = u - rc * KU;
      const int r = rc * VEC, k = kp * KP;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        if constexpr (KP == 2)
          *reinterpret_cast<unsigned int*>(dst + (r + j) * ld + k) =
              detail::pack2(x.q[0].e[j], x.q[KP - 1].e[j]);
        else
          dst[(r + j) * ld + k] = x.q[0].e[j];
      }
    }
  };
  template <int ROWS, int BK>
  struct ScalarOp {
    using value_type = T;
    const DenseN& L;
    T* dst;
    int ld, r0, k0;
    __device__ __forceinline__ T fetch(int i) const {
      const int k = i / ROWS, r = i - k * ROWS;  // rows fastest: coalesced global reads
      const int gr = r0 + r, gk = k0 + k;
      return (gr < L.rows && gk < L.K) ? L.ptr[(long long)gk * L.k_stride + gr] : T{};
    }
    __device__ __forceinline__ void store(int i, T v) const {
      const int k = i / ROWS, r = i - k * ROWS;
      dst[r * ld + k] = v;
    }
  };

  // Unaligned operands: scalar (a cold path; see DenseK::load_scalar).
  template <int ROWS, int BK>
  __device__ __forceinline__ void load_scalar(T* dst, int ld, int r0, int k0) const {
    detail::for_units_batched<ROWS * BK, 0, 1>(ScalarOp<ROWS, BK>{*this, dst, ld, r0, k0});
  }

  template <int ROWS, int BK, int NT = 0>
  __device__ __forceinline__ void load(T* dst, int ld, int r0, int k0) const {
    static_assert(ROWS % VEC == 0 && BK % KP == 0, "DenseN tile shape");
    const bool vec_ok = ALIGNED ||
        (((ptr_bits(ptr) & 15ull) == 0) && (k_stride % VEC == 0) && (r0 % VEC == 0));
    if (vec_ok)
      detail::for_units_batched<(ROWS / VEC) * (BK / KP), NT, 2>(VecOp<BK>{*this, dst, ld, r0, k0});
    else
      load_scalar<ROWS, BK>(dst, ld, r0, k0);
  }
};

// Operand computed by a functor: element (r, k) = f(r, k), where F has
//   __device__ T operator()(int r, int k) const
// and returns 0 for any out-of-range (r, k) (rows >= limit, k >= K): used for im2col.
// Aggregate: Gather<T, F>{f}. Which index is fastest across threads decides coalescing: k by
// default (f's consecutive k are consecutive in memory), or r when F declares
//   static constexpr bool rows_fastest = true;
// (im2col: consecutive output pixels read consecutive input pixels of one channel, where
// consecutive k jump between channel planes and each lane's load is its own memory sector).
// fp16 pairs of consecutive k are packed into 4-byte shared stores.
namespace detail {
MONO_FLAG_TRAIT(RowsFastest, rows_fastest)
}  // namespace detail

template <class T, class F>
struct Gather {
  F f;

  static constexpr int KP = (sizeof(T) == 2) ? 2 : 1;

  template <int ROWS, int BK>
  struct Op {
    using value_type = detail::Pair<T>;
    const Gather& G;
    T* dst;
    int ld, r0, k0;
    static constexpr int KU = BK / KP;
    __device__ __forceinline__ static void unit(int i, int& r, int& k) {
      if constexpr (detail::RowsFastest<F>::value) {
        k = (i / ROWS) * KP;
        r = i - (i / ROWS) * ROWS;
      } else {
        r = i / KU;
        k = (i - r * KU) * KP;
      }
    }
    __device__ __forceinline__ value_type fetch(int i) const {
      int r, k;
      unit(i, r, k);
      value_type x;
#pragma unroll
      for (int q = 0; q < KP; ++q) x.v[q] = G.f(r0 + r, k0 + k + q);
      return x;
    }
    __device__ __forceinline__ void store(int i, const value_type& x) const {
      int r, k;
      unit(i, r, k);
      if constexpr (KP == 2)
        *reinterpret_cast<unsigned int*>(dst + r * ld + k) = detail::pack2(x.v[0], x.v[1]);
      else
        dst[r * ld + k] = x.v[0];
    }
  };

  template <int ROWS, int BK, int NT = 0>
  __device__ __forceinline__ void load(T* dst, int ld, int r0, int k0) const {
    static_assert(BK % KP == 0, "Gather tile shape");
    detail::for_units_batched<ROWS * (BK / KP), NT, 4>(Op<ROWS, BK>{*this, dst, ld, r0, k0});
  }
};

// Element functors for Gather over a strided matrix whose stride is not a multiple of 16 bytes
// (a ViT's 197 x 197 attention probabilities, its K^T [64][197]): no 16-byte loads are possible,
// and Gather's register-staged prefetch (GatherIter) keeps a stage's element loads in flight
// together, where DenseK/DenseN's scalar fallback would issue them one by one.
// StridedK: element (r, k) = p[r * stride + k]; StridedN: element (r, k) = p[k * stride + r].
// Eight consecutive outputs at p (16-byte aligned) from fp32 values: one 16-byte store (fp16) or
// two (fp32); the epilogues' vec8 (vec8_stores above).
__device__ __forceinline__ void store8(half_t* p, const float (&r)[8]) {
  uint4 u;
  u.x = detail::pack2<half_t>(from_float<half_t>(r[0]), from_float<half_t>(r[1]));
  u.y = detail::pack2<half_t>(from_float<half_t>(r[2]), from_float<half_t>(r[3]));
  u.z = detail::pack2<half_t>(from_float<half_t>(r[4]), from_float<half_t>(r[5]));
  u.w = detail::pack2<half_t>(from_float<half_t>(r[6]), from_float<half_t>(r[7]));
  *reinterpret_cast<uint4*>(p) = u;
}
__device__ __forceinline__ void store8(float* p, const float (&r)[8]) {
  reinterpret_cast<float4*>(p)[0] = make_float4(r[0], r[1], r[2], r[3]);
  reinterpret_cast<float4*>(p)[1] = make_float4(r[4], r[5], r[6], r[7]);
}

template <class T>
struct StridedK {
  const T* p;
  int rows, K;
  long long stride;
  __device__ __forceinline__ T operator()(int r, int k) const {
    return (r < rows && k < K) ? p[(long long)r * stride + k] : T{};
  }
};
template <class T>
struct StridedN {
  static constexpr bool rows_fastest = true;  // r is the contiguous index
  const T* p;
  int rows, K;
  long long stride;
  __device__ __forceinline__ T operator()(int r, int k) const {
    return (r < rows && k < K) ? p[(long long)k * stride + r] : T{};
  }
};

// ------------------------------------------------------------------------------------------------
// Tile iterators: what the GEMM main loops actually call. make_iter() builds, once per tile(),
// per-thread state for one operand; it.load(dst, dst_smem, k0) then fills one stage. For DenseK
// (the hot path) the 16-byte chunk addresses, shared offsets and row predicates are computed once
// and each k tile costs a few instructions per chunk; any other loader is called through its
// load() (with NT when it accepts it).
// ------------------------------------------------------------------------------------------------
namespace detail {

template <class L, int ROWS, int BK, int NT>
struct GenericIter {
  const L& l;
  int r0, ld;
  template <class T>
  __device__ __forceinline__ void load(T* dst, unsigned int /*dst_smem*/, int k0) {
    load_tile<ROWS, BK, NT>(l, dst, ld, r0, k0, 0);
  }
  template <class T>
  __device__ __forceinline__ void fetch(T* dst, unsigned int dst_smem, int k0) {
    load(dst, dst_smem, k0);
  }
  template <class T>
  __device__ __forceinline__ void store(T*) {}
};

template <int ROWS, int BK, int NT, class L>
__device__ __forceinline__ GenericIter<L, ROWS, BK, NT> make_iter(const L& l, int r0, int ld) {
  return GenericIter<L, ROWS, BK, NT>{l, r0, ld};
}

template <class T, bool ALIGNED, int ROWS, int BK, int NT>
struct DenseKIter {
  static constexpr int VEC = 16 / (int)sizeof(T);
  static constexpr int CPR = BK / VEC;
  static constexpr int CHUNKS = ROWS * CPR;
  static constexpr int IT = (CHUNKS + NT - 1) / NT;
  static_assert(BK % VEC == 0, "BK must be a multiple of 16 bytes");

  DenseK<T, ALIGNED> l;
  int r0, ld;
  bool vec;             // 16-byte path usable (alignment), uniform over the block
  const T* src[IT];     // chunk source at k = 0 (row base + chunk column); l.ptr if row invalid
  unsigned int soff[IT];  // chunk byte offset inside the stage
  int kc[IT];           // chunk column inside the tile
  bool ok[IT];          // chunk exists for this thread and its row is in range

  __device__ __forceinline__ DenseKIter(const DenseK<T, ALIGNED>& l_, int r0_, int ld_) : l(l_), r0(r0_), ld(ld_) {
    vec = ALIGNED || (((ptr_bits(l.ptr) & 15ull) == 0) && (l.row_stride % VEC == 0));
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      const int c = (int)threadIdx.x + it * NT;
      const int r = c / CPR;
      kc[it] = (c - r * CPR) * VEC;
      soff[it] = (unsigned int)((r * ld + kc[it]) * (int)sizeof(T));
      const bool exists = (int)threadIdx.x < NT && (CHUNKS % NT == 0 || c < CHUNKS);
      ok[it] = exists && r0 + r < l.rows;
      src[it] = ok[it] ? l.ptr + (long long)(r0 + r) * l.row_stride + kc[it] : l.ptr;
    }
  }

  __device__ __forceinline__ void fetch(T* dst, unsigned int dst_smem, int k0) { load(dst, dst_smem, k0); }
  __device__ __forceinline__ void store(T*) {}

  __device__ __forceinline__ void load(T* dst, unsigned int dst_smem, int k0) {
    if (!ALIGNED && (!vec || (k0 % VEC) != 0)) {  // unaligned operand: scalar fallback
      l.template load_scalar<ROWS, BK>(dst, ld, r0, k0);
      return;
    }
    if ((int)threadIdx.x >= NT) return;
    // One path for whole and partial k tiles (branch-free byte counts keep the code small).
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      if (CHUNKS % NT != 0 && (int)threadIdx.x + it * NT >= CHUNKS) continue;
      const int rem = l.K - (k0 + kc[it]);
      const int bytes = ok[it] ? min(max(rem, 0), VEC) * (int)sizeof(T) : 0;
      cp_async_16(dst_smem + soff[it], bytes ? src[it] + k0 : l.ptr, bytes);
    }
  }
};

template <int ROWS, int BK, int NT, class T, bool ALIGNED>
__device__ __forceinline__ DenseKIter<T, ALIGNED, ROWS, BK, NT> make_iter(const DenseK<T, ALIGNED>& l, int r0, int ld) {
  return DenseKIter<T, ALIGNED, ROWS, BK, NT>(l, r0, ld);
}

}  // namespace detail

// Operand stored [rows][K] like DenseK, read with bulk copies (TMA unit) instead of per-thread
// cp.async: one copy of BK elements per tile row, issued by one thread each, completion counted
// on the stage's mbarrier. The generator uses it only where it proves the conditions: ptr and
// row_stride 16-byte aligned, and every k tile whole (the K range a split reads is a multiple
// of BK), so no zero fill is needed. Rows at or beyond `rows` are not copied: their shared
// memory keeps stale data, which only feeds accumulators of output columns the epilogue never
// stores (row r of B meets column r of the product only).
template <class T>
struct BulkK {
  const T* ptr;
  int rows;
  int K;
  int row_stride;
};

namespace detail {

// What every bulk-copy iterator (D: BulkKIter, BulkTileKIter, TensorKIter) shares: the stage's
// mbarrier (set_stage_barrier points it before each load), issue at fetch time (the copy engine
// writes the stage itself), nothing to store afterwards.
template <class D>
struct BulkIter {
  static constexpr bool kBulk = true;
  unsigned int mbar = 0;
  template <class T>
  __device__ __forceinline__ void fetch(T* dst, unsigned int dst_smem, int k0) {
    static_cast<D*>(this)->load(dst, dst_smem, k0);
  }
  template <class T>
  __device__ __forceinline__ void store(T*) {}
};

template <class T, int ROWS, int BK, int NT>
struct BulkKIter : BulkIter<BulkKIter<T, ROWS, BK, NT>> {
  static constexpr int IT = (ROWS + NT - 1) / NT;
  BulkK<T> l;
  int r0, ld;
  unsigned int bytes;  // per stage: the valid rows' copies
  __device__ __forceinline__ BulkKIter(const BulkK<T>& l_, int r0_, int ld_) : l(l_), r0(r0_), ld(ld_) {
    const int valid = min(ROWS, max(l.rows - r0, 0));
    bytes = (unsigned int)(valid * BK * (int)sizeof(T));
  }
  __device__ __forceinline__ void load(T* /*dst*/, unsigned int dst_smem, int k0) {
    if (threadIdx.x == 0) mbar_expect_tx(this->mbar, bytes);
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      const int r = (int)threadIdx.x + it * NT;
      if ((int)threadIdx.x < NT && r < ROWS && r0 + r < l.rows)
        bulk_copy_g2s(dst_smem + (unsigned int)(r * ld * (int)sizeof(T)),
                      l.ptr + (long long)(r0 + r) * l.row_stride + k0, BK * (unsigned int)sizeof(T), this->mbar);
    }
  }
};

template <int ROWS, int BK, int NT, class T>
__device__ __forceinline__ BulkKIter<T, ROWS, BK, NT> make_iter(const BulkK<T>& l, int r0, int ld) {
  return BulkKIter<T, ROWS, BK, NT>(l, r0, ld);
}

}  // namespace detail

// Operand packed tile by tile at compile time (compiler/codegen/tile_pack.h): the ROWS x BK block
// of row tile r0 / ROWS and k tile k0 / BK is stored exactly as a pipeline stage lies in shared
// memory (ROWS rows of ld = BK + 8 elements; padding, rows beyond the operand and k beyond K
// zero), blocks ordered [row tile][k tile]. A stage is ONE bulk copy through the TMA unit, issued
// by one thread: no per-thread address arithmetic, no zero fill, no partial tiles. The packing's
// tile shape must be the GEMM's (ROWS = BM for A, BN for B; the same BK); r0 and every k0 are
// multiples of them (tile origins; split_k_range's BK-aligned ranges).
template <class T>
struct BulkTileK {
  const T* ptr;
  int ktiles;  // k tiles per row tile: ceil(K / BK)
};

namespace detail {

template <class T, int ROWS, int BK, int NT>
struct BulkTileKIter : BulkIter<BulkTileKIter<T, ROWS, BK, NT>> {
  const T* panel;  // this row tile's first block
  int block;       // elements per block
  __device__ __forceinline__ BulkTileKIter(const BulkTileK<T>& l, int r0, int ld)
      : panel(l.ptr + (long long)(r0 / ROWS) * l.ktiles * ROWS * ld), block(ROWS * ld) {}
  __device__ __forceinline__ void load(T* /*dst*/, unsigned int dst_smem, int k0) {
    if (threadIdx.x == 0) {
      const unsigned int bytes = (unsigned int)(block * (int)sizeof(T));
      mbar_expect_tx(this->mbar, bytes);
      bulk_copy_g2s(dst_smem, panel + (long long)(k0 / BK) * block, bytes, this->mbar);
    }
  }
};

template <int ROWS, int BK, int NT, class T>
__device__ __forceinline__ BulkTileKIter<T, ROWS, BK, NT> make_iter(const BulkTileK<T>& l, int r0, int ld) {
  return BulkTileKIter<T, ROWS, BK, NT>(l, r0, ld);
}

}  // namespace detail

// fp16 operand stored [rows][K] (K contiguous) and read through a 2-D tensor map (TMA unit) whose
// box is 64 k x ROWS rows with 128-byte swizzle: a stage is BK/64 tensor copies issued by one
// thread, with no per-thread address arithmetic and zero fill of rows beyond the operand and k
// beyond K done by the copy engine. The stage lands unpadded, [BK/64][ROWS][64] halves, 16-byte
// chunk c of row r at chunk c ^ (r % 8) (kSwizzled: GemmF16 reads its fragments so). The map
// (compiler/runtime/cuda_model.cc encodes it) is the operand's: dims {K, rows}, box {64, ROWS}.
template <class T>
struct TensorK {
  const TensorMap* map;
};

namespace detail {

template <class T, int ROWS, int BK, int NT>
struct TensorKIter : BulkIter<TensorKIter<T, ROWS, BK, NT>> {
  static constexpr bool kSwizzled = true;
  static_assert(sizeof(T) == 2 && BK % 64 == 0, "TensorK: fp16 with BK a multiple of 64 (128-byte rows)");
  static_assert(ROWS % 8 == 0 && ROWS <= 256, "TensorK: ROWS a multiple of 8, at most 256 (a box)");
  const TensorMap* map;
  int r0;
  __device__ __forceinline__ TensorKIter(const TensorK<T>& l, int r0_) : map(l.map), r0(r0_) {}
  __device__ __forceinline__ void load(T* /*dst*/, unsigned int dst_smem, int k0) {
    if (threadIdx.x == 0) {
      mbar_expect_tx(this->mbar, (unsigned int)(ROWS * BK * (int)sizeof(T)));
#pragma unroll
      for (int b = 0; b < BK / 64; ++b)
        tma_load_2d(dst_smem + (unsigned int)(b * ROWS * 128), map, k0 + b * 64, r0, this->mbar);
    }
  }
};

template <int ROWS, int BK, int NT, class T>
__device__ __forceinline__ TensorKIter<T, ROWS, BK, NT> make_iter(const TensorK<T>& l, int r0, int /*ld*/) {
  return TensorKIter<T, ROWS, BK, NT>(l, r0);
}

MONO_FLAG_TRAIT(IsBulk, kBulk)
MONO_FLAG_TRAIT(IsSwizzled, kSwizzled)
// Points a bulk iterator at the mbarrier of the stage it loads next (no-op for the others).
template <class I>
__device__ __forceinline__ void set_stage_barrier(I& it, unsigned int bar) {
  if constexpr (IsBulk<I>::value) it.mbar = bar;
}

// Register staging of one stage's units: fetch(op) loads this thread's units (op.fetch(u), all
// in flight together) into registers, store(op) writes them to shared memory (op.store(u, v)).
// The iterators below fetch a future stage before the current stage's MMAs and store it after
// them, so global latency overlaps compute where cp.async cannot be used.
template <class V, int UNITS, int NT>
struct Staged {
  static constexpr int IT = (UNITS + NT - 1) / NT;
  V buf[IT];
  template <class Op>
  __device__ __forceinline__ void fetch(const Op& op) {
    if ((int)threadIdx.x >= NT) return;
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      const int u = (int)threadIdx.x + it * NT;
      if (UNITS % NT == 0 || u < UNITS) buf[it] = op.fetch(u);
    }
  }
  template <class Op>
  __device__ __forceinline__ void store(const Op& op) const {
    if ((int)threadIdx.x >= NT) return;
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      const int u = (int)threadIdx.x + it * NT;
      if (UNITS % NT == 0 || u < UNITS) op.store(u, buf[it]);
    }
  }
};

// DenseN: 16-byte global loads staged in registers (no cp.async can transpose), written
// transposed to shared memory.
template <class T, bool ALIGNED, int ROWS, int BK, int NT>
struct DenseNIter {
  using L = DenseN<T, ALIGNED>;
  using Op = typename L::template VecOp<BK>;
  static constexpr int VEC = L::VEC;
  static_assert(ROWS % VEC == 0, "DenseN tile shape");

  L l;
  int r0, ld;
  bool vec;
  Staged<typename L::Unit, (ROWS / VEC) * (BK / L::KP), NT> st;

  __device__ __forceinline__ DenseNIter(const L& l_, int r0_, int ld_) : l(l_), r0(r0_), ld(ld_) {
    vec = ALIGNED || (((ptr_bits(l.ptr) & 15ull) == 0) && (l.k_stride % VEC == 0) && (r0 % VEC == 0));
  }
  __device__ __forceinline__ void fetch(T* dst, unsigned int, int k0) {
    if (!ALIGNED && !vec) {  // scalar fallback, synchronous
      l.template load_scalar<ROWS, BK>(dst, ld, r0, k0);
      return;
    }
    st.fetch(Op{l, dst, ld, r0, k0});
  }
  __device__ __forceinline__ void store(T* dst) {
    if (ALIGNED || vec) st.store(Op{l, dst, ld, r0, 0});
  }
  __device__ __forceinline__ void load(T* dst, unsigned int dst_smem, int k0) {
    fetch(dst, dst_smem, k0);
    store(dst);
  }
};

template <int ROWS, int BK, int NT, class T, bool ALIGNED>
__device__ __forceinline__ DenseNIter<T, ALIGNED, ROWS, BK, NT> make_iter(const DenseN<T, ALIGNED>& l, int r0, int ld) {
  return DenseNIter<T, ALIGNED, ROWS, BK, NT>(l, r0, ld);
}

// Gather (im2col, strided): every element of a stage computed and loaded into registers
// (Staged), all in flight together; through load() alone (batches of 4 loads, then their stores)
// each k tile paid several memory latencies with nothing to hide them.
template <class T, class F, int ROWS, int BK, int NT>
struct GatherIter {
  using G = Gather<T, F>;
  using Op = typename G::template Op<ROWS, BK>;

  const G& g;
  int r0, ld;
  Staged<typename Op::value_type, ROWS * (BK / G::KP), NT> st;

  __device__ __forceinline__ void fetch(T* dst, unsigned int, int k0) { st.fetch(Op{g, dst, ld, r0, k0}); }
  __device__ __forceinline__ void store(T* dst) { st.store(Op{g, dst, ld, r0, 0}); }
  __device__ __forceinline__ void load(T* dst, unsigned int dst_smem, int k0) {
    fetch(dst, dst_smem, k0);
    store(dst);
  }
};

template <int ROWS, int BK, int NT, class T, class F>
__device__ __forceinline__ GatherIter<T, F, ROWS, BK, NT> make_iter(const Gather<T, F>& g, int r0, int ld) {
  return GatherIter<T, F, ROWS, BK, NT>{g, r0, ld};
}

}  // namespace detail

// Which operand's pipeline prologue a GemmF16::preload() issued ahead of tile().
enum : int { kPreNone = 0, kPreA = 1, kPreB = 2 };

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
    float (&acc)[MI][NI][4];
    int mb, nb, M, N;
    bool computes;
    __device__ __forceinline__ float& el(int e) const { return acc[e / (NI * 4)][(e / 4) % NI][e % 4]; }
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

  // The staged epilogue: the accumulators go through shared memory, and each thread then owns
  // kElems elements spaced kThreads apart in row-major order (or column-major, M_FASTEST), so a
  // warp's epilogue reads and stores touch consecutive addresses (the mma layout's 8 rows x 4
  // column pairs per warp instruction scatter every store over 8 sectors). LDC: row stride in
  // floats; BN + 8 keeps the float2 writes and row-major reads conflict-free, BN + 1 the
  // scalar writes and column-major reads. Used when the tile fits in the pipeline's shared memory
  // and a thread owns at most 16 elements (a 64x128 tile's 32 spill under the register cap).
  template <bool M_FASTEST>
  struct StagedFrags {
    static constexpr int kElems = BM * BN / kThreads, kNT = kThreads;
    static constexpr int LDC = M_FASTEST ? BN + 1 : BN + 8;
    mutable float v[kElems];  // split-K: the reducer adds the partials to them
    int m0, n0, M, N;
    bool computes;
    __device__ __forceinline__ void pos(int e, int& m, int& n) const {
      const int i = e * kThreads + (int)threadIdx.x;
      m = M_FASTEST ? i % BM : i / BN;
      n = M_FASTEST ? i / BM : i % BN;
    }
    __device__ __forceinline__ float& el(int e) const { return v[e]; }
    __device__ __forceinline__ void gather(const float* st) {  // from the staged tile (finish_staged)
#pragma unroll
      for (int e = 0; e < kElems; ++e) {
        int m, n;
        pos(e, m, n);
        v[e] = computes ? st[m * LDC + n] : 0.0f;
      }
    }
    template <class F>
    __device__ __forceinline__ void visit(const F& f) const {
      if (!computes) return;
#pragma unroll
      for (int e = 0; e < kElems; ++e) {
        int m, n;
        pos(e, m, n);
        if (m0 + m < M && n0 + n < N) f(e, m0 + m, n0 + n, v[e]);
      }
    }
  };
#ifdef MONO_DIRECT_EPILOGUE  // generated code, unless mono-compile --staged-epilogue
  static constexpr bool kStagedFits = false;
#else
  static constexpr bool kStagedFits = BM * (BN + 8) * 4 <= kPipeBytes && BM * BN / kThreads <= 16;
#endif

  // The chunked epilogue, for epilogues with vec8 stores (detail::Vec8): the accumulators go
  // through shared memory (row-major, LDC = BN + 8 floats) and each thread then owns kChunks
  // chunks of 8 consecutive n, chunk c = q * kThreads + thread at row c / (BN / 8), so a warp's
  // 16-byte stores cover whole rows of the tile. 16 fp16 stores of 2 bytes per thread (64x64)
  // become 2 of 16 bytes, and the index arithmetic runs once per chunk.
  static constexpr bool kChunkFits = BN % 8 == 0 && (BM * BN / 8) % kThreads == 0 &&
                                     BM * (BN + 8) * 4 <= kPipeBytes && BM * BN / kThreads <= 16;
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

  // The staged epilogues' first step: the warp's accumulators into shared memory as a row-major
  // fp32 tile of row stride LDC, column pairs as float2 (SCALAR: one float at a time, for the
  // odd LDC of the column-major walk).
  template <int LDC, bool SCALAR>
  __device__ __forceinline__ static void stage_acc(const float (&acc)[MI][NI][4], float* st, int wm, int wn, int g, int t4) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float* d = st + (wm * WM + i * 16 + h * 8 + g) * LDC + wn * WN + j * 8 + 2 * t4;
          if constexpr (SCALAR) {
            d[0] = acc[i][j][2 * h];
            d[1] = acc[i][j][2 * h + 1];
          } else {
            *reinterpret_cast<float2*>(d) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
          }
        }
  }
  // A staged epilogue (view V = StagedFrags or ChunkFrags): the accumulators into shared memory
  // (stage_acc), each thread's elements of the view read back (V::gather), shared memory freed,
  // then the epilogue or the split-K protocol on the view.
  template <class V, bool SCALAR, class Epilogue>
  __device__ __forceinline__ static void finish_staged(const float (&acc)[MI][NI][4], unsigned char* smem, bool computes,
                                                       int wm, int wn, int g, int t4, int m0, int n0, int M, int N,
                                                       const Epilogue& epi, float* workspace, unsigned int* tile_counter,
                                                       int splits, int split) {
    float* st = reinterpret_cast<float*>(smem);
    if (computes) stage_acc<V::LDC, SCALAR>(acc, st, wm, wn, g, t4);
    __syncthreads();
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

  // Issues the first STAGES-1 k tiles of one operand of a later tile() call (OP = kPreA: `l` is
  // its A, rows from r0 = m0; kPreB: its B, rows from r0 = n0) as STAGES-1 cp.async groups; that
  // call then passes pre = OP and issues only the other operand's prologue. For constant operands
  // (weights) before a grid barrier: the block's shared memory must be free (its previous work
  // done and synchronised) and stay untouched until the tile() call.
  template <int OP, class Load>
  __device__ static void preload(int r0, int k_begin, int k_end, const Load& l, unsigned char* smem) {
    static_assert(OP == kPreA || OP == kPreB, "preload: OP is kPreA or kPreB");
    constexpr int kStage = OP == kPreA ? kStageA : kStageB;
    half_t* base = reinterpret_cast<half_t*>(smem) + (OP == kPreA ? 0 : STAGES * kStageA);
    const unsigned int base_u = smem_u32(base);
    auto it = detail::make_iter<OP == kPreA ? BM : BN, BK, kThreads>(l, r0, LDS);
    static_assert(!detail::IsBulk<decltype(it)>::value, "preload: cp.async loaders only");
    const int ktiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) it.load(base + s * kStage, base_u + (unsigned int)(s * kStage * 2), k_begin + s * BK);
      cp_async_commit();
    }
  }

  // pre: kPreNone, or the operand whose first STAGES-1 k tiles a preload() already issued (its
  // groups were committed first, so the main loop's cp_async_wait<STAGES-2> still covers them).
  template <class ALoad, class BLoad, class Epilogue>
  __device__ static void tile(int M, int N, int m0, int n0, int k_begin, int k_end, const ALoad& a,
                              const BLoad& b, const Epilogue& epi, unsigned char* smem,
                              float* workspace, unsigned int* tile_counter, int splits, int split,
                              int pre = kPreNone) {
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
    const unsigned int sA_u = smem_u32(sA), sB_u = smem_u32(sB);
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
        if (pre != kPreA) ait.load(sA + s * kStrideA, sA_u + s * kStageBytesA, k_begin + s * BK);
        if (pre != kPreB) bit.load(sB + s * kStageB, sB_u + s * kStageBytesB, k_begin + s * BK);
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
      finish_staged<ChunkFrags, false>(acc, smem, computes, wm, wn, g, t4, m0, n0, M, N, epi, workspace, tile_counter,
                                       splits, split);
    } else if constexpr (kStagedFits) {
      constexpr bool kMF = detail::MFastest<Epilogue>::value;
      finish_staged<StagedFrags<kMF>, kMF>(acc, smem, computes, wm, wn, g, t4, m0, n0, M, N, epi, workspace,
                                          tile_counter, splits, split);
    } else {
      const Frags fr{acc, m0 + wm * WM + g, n0 + wn * WN + 2 * t4, M, N, computes};
      detail::finish_tile(fr, epi, workspace, tile_counter, splits, split);
    }
    MONO_GEMM_PROBE(63);
  }
};

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
    const unsigned int sA_u = smem_u32(sA), sB_u = smem_u32(sB);
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
