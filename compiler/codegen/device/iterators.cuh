// Mono device library: GEMM tile iterators, one per operand kind of loaders.cuh.
//
// Tile iterators: what the GEMM main loops actually call. make_iter() builds, once per tile(),
// per-thread state for one operand; it.load(dst, dst_smem, k0) then fills one stage. For DenseK
// (the hot path) the 16-byte chunk addresses, shared offsets and row predicates are computed once
// and each k tile costs a few instructions per chunk; any other loader is called through its
// load() (with NT when it accepts it).
// Bulk iterators (BulkTileK, TensorK) count their stage on an mbarrier that the GEMM points them
// at (set_stage_barrier); register-staged ones (DenseN, Gather) fetch a stage before the MMAs
// and store it after them (Staged).
// SELF-CONTAINED (no includes); requires common.cuh, ptx.cuh and loaders.cuh to be included first.
#pragma once

namespace mono_dev {

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

// Im2colK (loaders.cuh): 16-byte cp.async chunks as DenseKIter's; a chunk's pixel (its input
// window's corner and image) is found once per tile, its kernel position and channel per k tile.
template <class T, class G, int ROWS, int BK, int NT>
struct Im2colKIter {
  static constexpr int VEC = 16 / (int)sizeof(T);
  static constexpr int CPR = BK / VEC;
  static constexpr int CHUNKS = ROWS * CPR;
  static constexpr int IT = (CHUNKS + NT - 1) / NT;
  static_assert(BK % VEC == 0, "BK must be a multiple of 16 bytes");

  const T* x;
  const T* img[IT];       // the chunk's image
  int ih0[IT], iw0[IT];   // its pixel's window corner in the input (may be negative: padding)
  unsigned int soff[IT];  // chunk byte offset inside the stage
  int kc[IT];             // chunk column inside the tile
  bool ok[IT];            // chunk exists for this thread and its pixel is in range

  __device__ __forceinline__ Im2colKIter(const Im2colK<T, G>& l, int r0, int ld) : x(l.x) {
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      const int c = (int)threadIdx.x + it * NT;
      const int r = c / CPR;
      kc[it] = (c - r * CPR) * VEC;
      soff[it] = (unsigned int)((r * ld + kc[it]) * (int)sizeof(T));
      const int p = r0 + r;
      ok[it] = (int)threadIdx.x < NT && (CHUNKS % NT == 0 || c < CHUNKS) && p < G::P;
      const int n = p / (G::OH * G::OW), q = p - n * (G::OH * G::OW), oh = q / G::OW, ow = q - oh * G::OW;
      img[it] = x + (long long)n * (G::H * G::W * G::C);
      ih0[it] = oh * G::SH - G::PH;
      iw0[it] = ow * G::SW - G::PW;
    }
  }

  __device__ __forceinline__ void fetch(T* dst, unsigned int dst_smem, int k0) { load(dst, dst_smem, k0); }
  __device__ __forceinline__ void store(T*) {}

  __device__ __forceinline__ void load(T* /*dst*/, unsigned int dst_smem, int k0) {
    if ((int)threadIdx.x >= NT) return;
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      if (CHUNKS % NT != 0 && (int)threadIdx.x + it * NT >= CHUNKS) continue;
      const int k = k0 + kc[it];
      const int pos = k / G::C, ch = k - pos * G::C;  // kernel position (kh, kw) and channel
      const int kh = pos / G::KW, kw = pos - kh * G::KW;
      const int ih = ih0[it] + kh * G::DH, iw = iw0[it] + kw * G::DW;
      const bool in = ok[it] && k < G::K && ih >= 0 && ih < G::H && iw >= 0 && iw < G::W;
      cp_async_16(dst_smem + soff[it], in ? img[it] + ((long long)(ih * G::W + iw) * G::C + ch) : x, in ? 16 : 0);
    }
  }
};

template <int ROWS, int BK, int NT, class T, class G>
__device__ __forceinline__ Im2colKIter<T, G, ROWS, BK, NT> make_iter(const Im2colK<T, G>& l, int r0, int ld) {
  return Im2colKIter<T, G, ROWS, BK, NT>(l, r0, ld);
}

// What every bulk-copy iterator (D: BulkTileKIter, TensorKIter) shares: the stage's
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

// BulkTileK (loaders.cuh): one bulk copy of the packed block per stage, issued by thread 0.
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

// TensorK (loaders.cuh): BK/64 tensor-map boxes per stage, issued by thread 0, landing swizzled.
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

}  // namespace mono_dev
