// Mono device library: GEMM operands, how a tile reads A and B: DenseK, DenseN, Gather (with
// the element functors StridedK / StridedN), BulkTileK and TensorK, and the helpers that spread
// their loads over the block's threads.
// SELF-CONTAINED (no includes); requires common.cuh and ptx.cuh to be included first.
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
// The loaders below also accept an optional third template argument NT = the number of threads
// that take part (the GEMM passes kThreads when the loader accepts it, see detail::load_tile):
// with it the per-thread work is a compile-time unrolled list whose addresses and predicates do
// not depend on k0, so the compiler hoists them out of the GEMM's k loop. NT = 0 means "use
// blockDim.x at run time" (the plain two-argument concept).
//
// BulkTileK and TensorK have no load(): the GEMMs read them only through their tile iterators
// (iterators.cuh), as they read DenseK, DenseN and Gather in the main loop.
#pragma once

namespace mono_dev {

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

// Operand of a channels-last convolution (activations [N][H][W][C]), im2col on the fly:
// element (r, k) of the [P][K] matrix, r = an output pixel (n, oh, ow) of all N images, k =
// (kh, kw, c) with c fastest, is x[n][oh*SH - PH + kh*DH][ow*SW - PW + kw*DW][c], or 0 in the
// padding. G holds the geometry as constants (the code generator emits one struct per
// convolution): H, W, C, KW, SH, SW, PH, PW, DH, DW, OH, OW, P = N*OH*OW, K = KH*KW*C. C is a
// multiple of 16 bytes, so a 16-byte chunk of k never leaves its kernel position and one
// cp.async (zero-filled in the padding) moves it. Read only through Im2colKIter (iterators.cuh).
// Aggregate: Im2colK<T, G>{x}.
template <class T, class G>
struct Im2colK {
  static_assert((G::C * (int)sizeof(T)) % 16 == 0, "Im2colK: channels must fill whole 16-byte chunks");
  static_assert((long long)G::H * G::W * G::C < (1LL << 31), "Im2colK: an image's elements must fit an int");
  const T* x;
};

// Element functors for Gather over a strided matrix whose stride is not a multiple of 16 bytes
// (a ViT's 197 x 197 attention probabilities, its K^T [64][197]): no 16-byte loads are possible,
// and Gather's register-staged prefetch (GatherIter) keeps a stage's element loads in flight
// together, where DenseK/DenseN's scalar fallback would issue them one by one.
// StridedK: element (r, k) = p[r * stride + k]; StridedN: element (r, k) = p[k * stride + r].
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

}  // namespace mono_dev
