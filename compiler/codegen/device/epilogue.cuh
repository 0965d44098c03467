// Mono device library: GEMM epilogues, the functors the code generator writes to finish a tile
// (bias, activation, residual, the store), and how a tile's accumulators reach them: one-phase,
// two-phase (all reads before the first store) or 8-wide (vec8); store8 for the 8-wide form.
// SELF-CONTAINED (no includes); requires common.cuh to be included first.
//
// Epilogue concept:
//   __device__ void operator()(int m, int n, float acc) const;   // exactly once per (m<M, n<N)
// or, for epilogues that read memory, the two-phase form (detail::HasLoad below): a struct In,
// load(m, n, In&) and operator()(m, n, acc, const In&), each called exactly once per element.
#pragma once

namespace mono_dev {

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

// The two phases run over chunks of kEpiChunk elements (the In values of a chunk live in
// registers; a whole 64x128 tile's would not fit beside the accumulators). Elements outside the
// chunk [e0, e0 + kEpiChunk) are skipped; with everything unrolled that is resolved at compile time.
constexpr int kEpiChunk = 8;
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

}  // namespace detail

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

}  // namespace mono_dev
