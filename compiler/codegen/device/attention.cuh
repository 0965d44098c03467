// Mono device library: attention as one work item in registers (flash-style), fp16 on mma.sync.
// SELF-CONTAINED (no includes); requires common.cuh and ptx.cuh to be included first.
//
// One item is BQ = 16 * RB query rows of one batch entry against all its keys:
//   S = Q K^T (+ the score's elementwise epilogue), P = softmax(S) over the keys (+ its
//   epilogue, e.g. the NaN guard), O = P V (+ its epilogue and the store).
// Q, K and V are fp16 [rows][D] matrices (D contiguous, K stored as [keys][D]); they are copied
// whole into shared memory (Q and K, then V, which S and the softmax do not wait for), S stays in
// registers, the softmax reduces across warps through shared memory, P is reused from S's
// accumulators as the A operand of the second MMA, and the warps' partial O are summed through
// shared memory. No score or probability goes to global memory. FlashStream (below) takes keys
// beyond what shared memory holds at once, in chunks, with an online softmax.
// Warps: 8, as RB row blocks of 16 rows x KG = 8 / RB key groups; key group kg takes the
// 16-key tiles kg, kg + KG, ... (KT tiles cover the keys; those past `sk` are masked).
// The functors: s_fn(row, key, v) -> the score after its epilogue; p_fn(row, key, v) -> the
// probability after its epilogue; o_fn(row, d, v) stores an output element. Rows are the batch
// entry's query rows (q0 + r), keys 0 .. sk-1; they are called for valid rows and keys only.
// CAUSAL: key k is masked for row q unless k <= q + causal_off (the causal mask the model added
// as a tensor, applied by index: planner/attention_fusion.cc causal_mask); masked scores are
// -inf, K and V rows past the item's last unmasked key are not copied, and key tiles past it are
// skipped in both MMAs (their probabilities are 0, p_fn(0) must be 0).
#pragma once

namespace mono_dev {

// Copies rows [0, n) of a [rows][D] fp16 matrix into shared rows of stride D + 8 halves from
// shared address `dst`, with the flash items' 256 threads; rows n .. total-1 are zero-filled (their source is row 0, not read).
// Shared addresses here are 32-bit offsets from one smem_u32, never generic pointers converted
// back (the ptxas fault gemm_f32.cuh describes).
template <int D>
__device__ __forceinline__ void stage_head_rows(unsigned int dst, const half_t* src, int n, int total) {
  constexpr int CH = D / 8, kLd = D + 8;
  for (int c = threadIdx.x; c < total * CH; c += 256) {
    const int r = c / CH, k8 = c % CH;
    const half_t* from = src + (long long)(r < n ? r : 0) * D + k8 * 8;
    cp_async_16(dst + (unsigned int)((r * kLd + k8 * 8) * 2), from, r < n ? 16 : 0);
  }
}

// One warp's 16 query rows (A fragments qa, from ldmatrix) against the 16 keys of a K tile at
// shared address k_tile ([16][D + 8] halves): s[nb][e] += scores in the mma accumulator layout
// (row g + 8 (e / 2), key 8 nb + 2 t + e % 2).
template <int D>
__device__ __forceinline__ void score_tile(float (&s)[2][4], const unsigned int (&qa)[D / 16][4], unsigned int k_tile) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    unsigned int kb[4];
    ldmatrix_x4(kb, k_tile + (unsigned int)((((lane & 7) + (lane >> 4) * 8) * (D + 8) + ks * 16 + ((lane >> 3) & 1) * 8) * 2));
    mma_16816(s[0], qa[ks], kb[0], kb[1]);
    mma_16816(s[1], qa[ks], kb[2], kb[3]);
  }
}

// o += P V for one 16-key tile: p in the accumulator layout of score_tile (fp32, rounded to fp16
// here as the A operand), V's tile at shared address v_tile ([16][D + 8] halves).
template <int D>
__device__ __forceinline__ void pv_tile(float (&o)[D / 8][4], const float (&p)[2][4], unsigned int v_tile) {
  const int lane = threadIdx.x & 31;
  const unsigned int pa[4] = {pack_half2(p[0][0], p[0][1]), pack_half2(p[0][2], p[0][3]),
                              pack_half2(p[1][0], p[1][1]), pack_half2(p[1][2], p[1][3])};
#pragma unroll
  for (int np = 0; np < D / 16; ++np) {
    unsigned int vb[4];
    ldmatrix_x4_trans(vb, v_tile + (unsigned int)((((lane & 7) + ((lane >> 3) & 1) * 8) * (D + 8) + np * 16 + (lane >> 4) * 8) * 2));
    mma_16816(o[2 * np], pa, vb[0], vb[1]);
    mma_16816(o[2 * np + 1], pa, vb[2], vb[3]);
  }
}

// The warp's Q fragments: rows rb * 16 .. + 15 of the shared Q at sQ ([BQ][D + 8] halves).
template <int D>
__device__ __forceinline__ void load_q_fragments(unsigned int (&qa)[D / 16][4], unsigned int sQ, int rb) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks)
    ldmatrix_x4(qa[ks], sQ + (unsigned int)(((rb * 16 + (lane & 15)) * (D + 8) + ks * 16 + (lane >> 4) * 8) * 2));
}

template <int D, int RB, int KT, bool CAUSAL = false>
struct FlashAttention {
  static_assert(D % 16 == 0 && D <= 128, "head size: a multiple of 16 up to 128");
  static_assert(RB == 1 || RB == 2 || RB == 4, "row blocks per item: 1, 2 or 4");
  static constexpr int kWarps = 8, KG = kWarps / RB, TMAX = (KT + KG - 1) / KG;
  static constexpr int BQ = 16 * RB, SKP = 16 * KT;
  static constexpr int kLd = D + 8;  // shared row stride in halves: ldmatrix rows land in distinct banks
  static constexpr int kQBytes = BQ * kLd * 2, kKVBytes = SKP * kLd * 2;
  static constexpr int kOBytes = kWarps * 16 * D * 4, kRedBytes = 2 * kWarps * 16 * 4;
  static constexpr int kSmemBytes = kQBytes + 2 * kKVBytes + kOBytes + kRedBytes;

  // The rows' totals under `op` (max or sum) of a per-thread pair v (rows g and g + 8 of the
  // warp's 16 query rows): over the quad of lanes that share a row, then over the KG warps that
  // share the rows, through `buf` (one float per warp row). Ends with the block synchronized.
  template <class Op>
  __device__ static void reduce_rows(float (&v)[2], float* buf, float init, float (&total)[2], const Op& op) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int rb = w / KG, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      v[h] = op(v[h], __shfl_xor_sync(0xffffffffu, v[h], 1));
      v[h] = op(v[h], __shfl_xor_sync(0xffffffffu, v[h], 2));
    }
    if (t == 0) {
      buf[w * 16 + g] = v[0];
      buf[w * 16 + g + 8] = v[1];
    }
    __syncthreads();
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      total[h] = init;
      for (int k = 0; k < KG; ++k) total[h] = op(total[h], buf[(rb * KG + k) * 16 + g + 8 * h]);
    }
  }

  template <class SFn, class PFn, class OFn>
  __device__ static void item(const half_t* Q, const half_t* K, const half_t* V, int q0, int nq, int sk,
                              const SFn& s_fn, const PFn& p_fn, const OFn& o_fn, unsigned char* smem,
                              int causal_off = 0) {
    const unsigned int sQ = smem_u32(smem), sK = sQ + kQBytes, sV = sK + kKVBytes;  // shared addresses
    float* sO = reinterpret_cast<float*>(smem + kQBytes + 2 * kKVBytes);
    float* sMax = sO + kWarps * 16 * D;
    float* sSum = sMax + kWarps * 16;
    __syncthreads();  // the block's previous work may still read shared memory
    // Keys [0, kv_end) can be unmasked for some row of the item; key tiles [0, ktc) hold them.
    const int kv_end = CAUSAL ? (q0 + nq + causal_off < sk ? q0 + nq + causal_off : sk) : sk;
    const int ktc = CAUSAL ? (kv_end + 15) / 16 : KT;
    // Q and K, then V, as two copy groups: S and the softmax start once Q and K are in, while V
    // is still on its way.
    stage_head_rows<D>(sQ, Q + (long long)q0 * D, nq, BQ);
    stage_head_rows<D>(sK, K, kv_end, 16 * ktc);
    cp_async_commit();
    stage_head_rows<D>(sV, V, kv_end, 16 * ktc);
    cp_async_commit();
    cp_async_wait<1>();  // run105 on the H100: gpt2 423.9 us against 430.6 waiting for all three
    __syncthreads();

    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int rb = w / KG, kg = w % KG, g = lane >> 2, t = lane & 3;
    const float neg_inf = -__int_as_float(0x7f800000);
    unsigned int qa[D / 16][4];
    load_q_fragments<D>(qa, sQ, rb);

    // S = Q K^T for this warp's key tiles; s[j][nb][e]: tile kg + KG j, n8 block nb, the mma
    // accumulator layout (row g + 8 (e / 2), key 8 nb + 2 t + e % 2).
    float s[TMAX][2][4];
#pragma unroll
    for (int j = 0; j < TMAX; ++j) {
      const int kt = kg + KG * j;
#pragma unroll
      for (int nb = 0; nb < 2; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][nb][e] = 0.0f;
      if (kt < ktc) score_tile<D>(s[j], qa, sK + (unsigned int)(kt * 16 * kLd * 2));
    }
    // The scores' epilogue; padding (rows past nq, keys past sk) is -inf. Row maxima.
    float mx[2] = {neg_inf, neg_inf};
#pragma unroll
    for (int j = 0; j < TMAX; ++j)
#pragma unroll
      for (int nb = 0; nb < 2; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = rb * 16 + g + 8 * (e >> 1), key = (kg + KG * j) * 16 + nb * 8 + 2 * t + (e & 1);
          const bool live = r < nq && key < sk && (!CAUSAL || key <= q0 + r + causal_off);
          const float v = live ? s_fn(q0 + r, key, s[j][nb][e]) : neg_inf;
          s[j][nb][e] = v;
          mx[e >> 1] = fmaxf(mx[e >> 1], v);
        }
    float m[2];
    reduce_rows(mx, sMax, neg_inf, m, [](float a, float b) { return fmaxf(a, b); });
    float sum[2] = {0.0f, 0.0f};
    // exp(s - max) as softmax_row_f computes it (a row of -inf gives NaN there too).
#pragma unroll
    for (int j = 0; j < TMAX; ++j)
#pragma unroll
      for (int nb = 0; nb < 2; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = (kg + KG * j) * 16 + nb * 8 + 2 * t + (e & 1);
          const float p = key < sk ? expf(s[j][nb][e] - m[e >> 1]) : 0.0f;
          s[j][nb][e] = p;
          sum[e >> 1] += p;
        }
    float inv[2];
    reduce_rows(sum, sSum, 0.0f, inv, [](float a, float b) { return a + b; });
#pragma unroll
    for (int h = 0; h < 2; ++h) inv[h] = 1.0f / inv[h];
    cp_async_wait<0>();  // V: this thread's copies, then everyone's
    __syncthreads();
    // P (its epilogue applied, in fp16 as the model stores it) as the A operand of P V, and the
    // warp's partial O over its key tiles.
    float o[D / 8][4];
#pragma unroll
    for (int nb = 0; nb < D / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[nb][e] = 0.0f;
#pragma unroll
    for (int j = 0; j < TMAX; ++j) {
      const int kt = kg + KG * j;
      if (kt >= ktc) continue;
      float p[2][4];
#pragma unroll
      for (int nb = 0; nb < 2; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = rb * 16 + g + 8 * (e >> 1), key = kt * 16 + nb * 8 + 2 * t + (e & 1);
          p[nb][e] = (r < nq && key < sk) ? p_fn(q0 + r, key, s[j][nb][e] * inv[e >> 1]) : 0.0f;
        }
      pv_tile<D>(o, p, sV + (unsigned int)(kt * 16 * kLd * 2));
    }
    // The key groups' partial O summed through shared memory, then stored row by row.
#pragma unroll
    for (int nb = 0; nb < D / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) sO[(w * 16 + g + 8 * (e >> 1)) * D + nb * 8 + 2 * t + (e & 1)] = o[nb][e];
    __syncthreads();
    for (int idx = threadIdx.x; idx < BQ * D; idx += kWarps * 32) {
      const int r = idx / D, c = idx % D;
      if (r >= nq) continue;
      float v = 0.0f;
      for (int k = 0; k < KG; ++k) v += sO[(((r / 16) * KG + k) * 16 + r % 16) * D + c];
      o_fn(q0 + r, c, v);
    }
    __syncthreads();  // the next item rewrites shared memory
  }
};

// A streamed chunk's scores after their epilogue (s_fn), and this thread's maxima of its two
// rows (mx, for online_softmax_step). Score e of n8 block b (x[b][e], the accumulator layout) is
// row r0 + 8 (e / 2) of the item and key key0(b) + 2t + e % 2; padding rows and keys, and keys
// the causal mask hides, are -inf. `whole` (every row and key of the chunk live) skips the tests.
template <bool CAUSAL, int NB, class KeyOf, class SFn>
__device__ __forceinline__ void chunk_scores(float (&x)[NB][4], float (&mx)[2], bool whole, int r0, const KeyOf& key0,
                                             int q0, int nq, int kv_end, int causal_off, const SFn& s_fn) {
  const float neg_inf = -__int_as_float(0x7f800000);
  const int t = threadIdx.x & 3;
  mx[0] = mx[1] = neg_inf;
  const auto apply = [&](auto masked) {
#pragma unroll
    for (int b = 0; b < NB; ++b)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = r0 + 8 * (e >> 1), key = key0(b) + 2 * t + (e & 1);
        const bool live = !masked.value || (r < nq && key < kv_end && (!CAUSAL || key <= q0 + r + causal_off));
        const float v = live ? s_fn(q0 + r, key, x[b][e]) : neg_inf;
        x[b][e] = v;
        mx[e >> 1] = fmaxf(mx[e >> 1], v);
      }
  };
  if (whole)
    apply(Constant<bool, false>{});
  else
    apply(Constant<bool, true>{});
}

// One step of an online softmax for a thread's two rows (g and g + 8 of its warp's 16): `mx`,
// this thread's maxima of the chunk's scores, become the rows' (the quad of lanes holding a row);
// the running maximum `m` takes them; `base` is what the exponents subtract (0 while every key so
// far is masked, -inf: exp then gives 0); the old sum `l` and O (`o`, the accumulator layout,
// o[n8 block][e], row 8 (e / 2)) are rescaled to the new maximum. exp(x - base) is computed as
// 2^((x - base) log2(e)): the difference first, so that a maximum near -FLT_MAX (a padding mask of
// torch.finfo(float32).min) does not overflow to -inf when scaled, which would make every
// exponent +inf and the row NaN.
template <int NB>
__device__ __forceinline__ void online_softmax_step(float (&mx)[2], float (&m)[2], float (&l)[2], float (&o)[NB][4],
                                                    float (&base)[2]) {
  constexpr float kLog2e = 1.4426950408889634f;
  const float neg_inf = -__int_as_float(0x7f800000);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
    const float mn = fmaxf(m[h], mx[h]);
    base[h] = mn == neg_inf ? 0.0f : mn;
    const float alpha = ex2_approx((m[h] - base[h]) * kLog2e);
    l[h] *= alpha;
#pragma unroll
    for (int nb = 0; nb < NB; ++nb) {
      o[nb][2 * h] *= alpha;
      o[nb][2 * h + 1] *= alpha;
    }
    m[h] = mn;
  }
}

// Attention over more keys than shared memory holds at once: the keys in chunks of CT 16-key
// tiles, streamed through two shared buffers (the next chunk's K and V copies in flight while this
// one computes), and an online softmax. Each warp keeps, for its 16 rows, a running maximum, sum
// and O over its own key tiles (tile kg + KG j of every chunk), rescaling them when the maximum
// grows; the KG key groups' results are merged once, at the end. There is no probabilities'
// epilogue (the planner checks it is empty): P is stored unnormalized in fp16 as the A operand of
// P V, and O is divided by the row's sum at the end. Items and functors as FlashAttention's;
// CAUSAL also as there (chunks past the item's last unmasked key are not copied).
template <int D, int RB, int CT, bool CAUSAL = false>
struct FlashStream {
  static_assert(D % 16 == 0 && D <= 128, "head size: a multiple of 16 up to 128");
  static_assert(RB == 1 || RB == 2 || RB == 4 || RB == 8, "row blocks per item: 1, 2, 4 or 8");
  static constexpr int kWarps = 8, KG = kWarps / RB, J = CT / KG;
  // Each warp holds the scores of its J key tiles of a chunk (8 J floats a thread).
  static_assert(J <= 8, "a warp's key tiles a chunk: at most 8 (8 row blocks: chunks of 128 keys)");
  static_assert(CT % KG == 0, "a chunk's key tiles split evenly over the key groups");
  static constexpr int BQ = 16 * RB, CK = 16 * CT;  // query rows an item, keys a chunk
  static constexpr int kLd = D + 8;
  static constexpr int kQBytes = BQ * kLd * 2, kChunkBytes = CK * kLd * 2;  // K (or V) of a chunk
  // The buffers: K0, V0, K1, V1; the warps' partial O reuse them after the last chunk.
  static constexpr int kOBytes = kWarps * 16 * D * 4;
  static constexpr int kBufBytes = 4 * kChunkBytes > kOBytes ? 4 * kChunkBytes : kOBytes;
  static constexpr int kRedBytes = 2 * kWarps * 16 * 4;
  static constexpr int kSmemBytes = kQBytes + kBufBytes + kRedBytes;
  static constexpr float kLog2e = 1.4426950408889634f;

  template <class SFn, class OFn>
  __device__ static void item(const half_t* Q, const half_t* K, const half_t* V, int q0, int nq, int sk,
                              const SFn& s_fn, const OFn& o_fn, unsigned char* smem, int causal_off = 0) {
    const unsigned int sQ = smem_u32(smem), sB = sQ + kQBytes;  // shared addresses
    float* sO = reinterpret_cast<float*>(smem + kQBytes);
    float* sMax = reinterpret_cast<float*>(smem + kQBytes + kBufBytes);
    float* sSum = sMax + kWarps * 16;
    __syncthreads();  // the block's previous work may still read shared memory
    const int kv_end = CAUSAL ? (q0 + nq + causal_off < sk ? q0 + nq + causal_off : sk) : sk;
    const int chunks = (kv_end + CK - 1) / CK;
    const auto stage_chunk = [&](int c) {
      const unsigned int kd = sB + (unsigned int)((c & 1) * 2 * kChunkBytes);
      const int k0 = c * CK, n = kv_end - k0 < CK ? kv_end - k0 : CK;
      stage_head_rows<D>(kd, K + (long long)k0 * D, n, CK);
      stage_head_rows<D>(kd + kChunkBytes, V + (long long)k0 * D, n, CK);
    };
    stage_head_rows<D>(sQ, Q + (long long)q0 * D, nq, BQ);
    stage_chunk(0);
    cp_async_commit();

    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int rb = w / KG, kg = w % KG, g = lane >> 2, t = lane & 3;
    const float neg_inf = -__int_as_float(0x7f800000);
    unsigned int qa[D / 16][4];
    float o[D / 8][4];
#pragma unroll
    for (int nb = 0; nb < D / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[nb][e] = 0.0f;
    // Rows g and g + 8 of the warp's 16: running maximum, and this thread's part of the sum.
    float m[2] = {neg_inf, neg_inf}, l[2] = {0.0f, 0.0f};
    for (int c = 0; c < chunks; ++c) {
      if (c + 1 < chunks) stage_chunk(c + 1);
      cp_async_commit();  // (empty at the last chunk: the wait below counts groups)
      cp_async_wait<1>();
      __syncthreads();
      if (c == 0) load_q_fragments<D>(qa, sQ, rb);
      const unsigned int sK = sB + (unsigned int)((c & 1) * 2 * kChunkBytes), sV = sK + kChunkBytes;
      // Scores of this warp's tiles, after their epilogue; padding and masked keys are -inf. A
      // chunk of whole rows, all its keys below kv_end and unmasked, skips the per-score tests.
      const bool whole = nq == BQ && (c + 1) * CK <= kv_end && (!CAUSAL || (c + 1) * CK - 1 <= q0 + causal_off);
      float s[J][2][4];
#pragma unroll
      for (int j = 0; j < J; ++j) {
        const int kt = kg + KG * j;
#pragma unroll
        for (int nb = 0; nb < 2; ++nb)
#pragma unroll
          for (int e = 0; e < 4; ++e) s[j][nb][e] = 0.0f;
        if (c * CK + kt * 16 < kv_end) score_tile<D>(s[j], qa, sK + (unsigned int)(kt * 16 * kLd * 2));
      }
      float mx[2];  // n8 block b of s: the warp's key tile kg + KG (b / 2), its half b % 2
      chunk_scores<CAUSAL>(reinterpret_cast<float(&)[2 * J][4]>(s), mx, whole, rb * 16 + g,
                           [&](int b) { return c * CK + (kg + KG * (b >> 1)) * 16 + (b & 1) * 8; }, q0, nq, kv_end,
                           causal_off, s_fn);
      float base[2];
      online_softmax_step(mx, m, l, o, base);
#pragma unroll
      for (int j = 0; j < J; ++j) {
        const int kt = kg + KG * j;
        if (c * CK + kt * 16 >= kv_end) continue;
        float p[2][4];
#pragma unroll
        for (int nb = 0; nb < 2; ++nb)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            p[nb][e] = ex2_approx((s[j][nb][e] - base[e >> 1]) * kLog2e);
            l[e >> 1] += p[nb][e];
          }
        pv_tile<D>(o, p, sV + (unsigned int)(kt * 16 * kLd * 2));
      }
      __syncthreads();  // the next chunk's copy overwrites the buffers this one read
    }
    cp_async_wait<0>();
    // Merge the key groups: each warp's maximum per row, then every warp rescales its sum and O
    // to the rows' maximum over the key groups; the sums and O are added through shared memory.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    }
    if (t == 0) {
      sMax[w * 16 + g] = m[0];
      sMax[w * 16 + g + 8] = m[1];
    }
    __syncthreads();
    float f[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float top = neg_inf;
      for (int k = 0; k < KG; ++k) top = fmaxf(top, sMax[(rb * KG + k) * 16 + g + 8 * h]);
      f[h] = __expf(m[h] - (top == neg_inf ? 0.0f : top));
    }
    if (t == 0) {
      sSum[w * 16 + g] = l[0] * f[0];
      sSum[w * 16 + g + 8] = l[1] * f[1];
    }
#pragma unroll
    for (int nb = 0; nb < D / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        sO[(w * 16 + g + 8 * (e >> 1)) * D + nb * 8 + 2 * t + (e & 1)] = o[nb][e] * f[e >> 1];
    __syncthreads();
    for (int idx = threadIdx.x; idx < BQ * D; idx += kWarps * 32) {
      const int r = idx / D, c = idx % D;
      if (r >= nq) continue;
      float v = 0.0f, sum = 0.0f;
      for (int k = 0; k < KG; ++k) {
        const int wr = ((r / 16) * KG + k) * 16 + r % 16;
        v += sO[wr * D + c];
        sum += sSum[wr];
      }
      o_fn(q0 + r, c, v / sum);
    }
    __syncthreads();  // the next item rewrites shared memory
  }
};


// Copies rows [0, n) of a [rows][64] fp16 matrix into shared memory at `dst` (1024-byte aligned)
// in the 128-byte swizzled layout wgmma reads (ptx.cuh wgmma_desc_sw128: 16-byte chunk c of row r
// at chunk c ^ (r % 8)), with the item's 256 threads; rows n .. total-1 are zero-filled.
__device__ __forceinline__ void stage_rows_sw128(unsigned int dst, const half_t* src, int n, int total) {
  for (int c = threadIdx.x; c < total * 8; c += 256) {
    const int r = c >> 3, k8 = c & 7;
    const half_t* from = src + (long long)(r < n ? r : 0) * 64 + k8 * 8;
    cp_async_16(dst + (unsigned int)(r * 128 + ((k8 ^ (r & 7)) << 4)), from, r < n ? 16 : 0);
  }
}

// FlashStream's work (keys in chunks, online softmax, no probabilities' epilogue) on Hopper's
// warpgroup MMA, for heads of 64: an item is 128 query rows, 64 a warpgroup; a chunk is 128 keys.
// Per chunk, each warpgroup computes its 64 x 128 scores with one wgmma chain (Q and K from
// shared memory, read once per warpgroup rather than once per 16-row warp), runs the online
// softmax on them in registers (a thread holds 2 rows x 32 keys, the rows' quad of lanes
// together a row's 128), and adds P V with P from registers (the score accumulators rounded to
// fp16 are the A fragments) and V from shared memory, transposed (MN-major) as stored, [keys][64].
// Q, K and V are staged swizzled by cp.async; the next chunk's K and V are in flight while this
// one computes. Items, functors and CAUSAL as FlashStream's.
template <int D, bool CAUSAL = false>
struct FlashWg {
  static_assert(D == 64, "FlashWg: heads of 64 (one 128-byte swizzled row of Q, K and V)");
  static constexpr int BQ = 128, CK = 128;        // query rows an item, keys a chunk
  static constexpr int kQBytes = BQ * D * 2;      // 16 KB
  static constexpr int kChunkBytes = CK * D * 2;  // K (or V) of a chunk: 16 KB
  static constexpr int kSmemBytes = kQBytes + 4 * kChunkBytes;  // Q, then K0 V0 K1 V1
  static constexpr float kLog2e = 1.4426950408889634f;

  template <class SFn, class OFn>
  __device__ static void item(const half_t* Q, const half_t* K, const half_t* V, int q0, int nq, int sk,
                              const SFn& s_fn, const OFn& o_fn, unsigned char* smem, int causal_off = 0) {
    const unsigned int sQ = smem_u32(smem), sB = sQ + kQBytes;
    if (sQ & 1023u) __trap();  // the swizzle is a function of the address: 1024-byte aligned row groups
    __syncthreads();           // the block's previous work may still read shared memory
    const int kv_end = CAUSAL ? (q0 + nq + causal_off < sk ? q0 + nq + causal_off : sk) : sk;
    const int chunks = (kv_end + CK - 1) / CK;
    const auto stage_chunk = [&](int c) {
      const unsigned int kd = sB + (unsigned int)((c & 1) * 2 * kChunkBytes);
      const int k0 = c * CK, n = kv_end - k0 < CK ? kv_end - k0 : CK;
      stage_rows_sw128(kd, K + (long long)k0 * D, n, CK);
      stage_rows_sw128(kd + kChunkBytes, V + (long long)k0 * D, n, CK);
    };
    stage_rows_sw128(sQ, Q + (long long)q0 * D, nq, BQ);
    stage_chunk(0);
    cp_async_commit();

    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, wg = w >> 2;
    const int g = lane >> 2, t = lane & 3;
    const int r0 = wg * 64 + (w & 3) * 16 + g;  // this thread's rows of the item: r0 and r0 + 8
    const float neg_inf = -__int_as_float(0x7f800000);
    // Accumulators in wgmma's layout: element q of n8 block j (s[4j + q], o[j][q]) is row r0 + 8 (q / 2),
    // column 8j + 2t + q % 2.
    float o[D / 8][4];  // m64n64: O's accumulators (flat, o_flat, for the wgmma)
    float(&o_flat)[D / 2] = reinterpret_cast<float(&)[D / 2]>(o);
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o_flat[i] = 0.0f;
    float m[2] = {neg_inf, neg_inf}, l[2] = {0.0f, 0.0f};  // running maximum; this thread's part of the sum
    const unsigned long long dq = wgmma_desc_sw128(sQ + (unsigned int)(wg * 64 * 128));
    float s[CK / 2];  // a chunk's scores (the first k step's MMA overwrites them)
#pragma unroll
    for (int i = 0; i < CK / 2; ++i) s[i] = 0.0f;
    for (int c = 0; c < chunks; ++c) {
      if (c + 1 < chunks) stage_chunk(c + 1);
      cp_async_commit();  // (empty at the last chunk: the wait below counts groups)
      cp_async_wait<1>();
      fence_proxy_async_smem();  // the copies, visible to the tensor cores' reads
      __syncthreads();
      const unsigned int sK = sB + (unsigned int)((c & 1) * 2 * kChunkBytes), sV = sK + kChunkBytes;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)  // a k step of 16: 32 bytes along the swizzled rows
        Wgmma<CK>::mma(s, dq + (unsigned long long)(kk * 2), wgmma_desc_sw128(sK) + (unsigned long long)(kk * 2), kk > 0);
      wgmma_commit();
      wgmma_wait<0>();
      wgmma_fence_acc(s);
      // Scores after their epilogue; padding and masked keys -inf. A chunk of whole rows, all its
      // keys below kv_end and unmasked, skips the per-score tests.
      const bool whole = nq == BQ && (c + 1) * CK <= kv_end && (!CAUSAL || (c + 1) * CK - 1 <= q0 + causal_off);
      float mx[2];
      chunk_scores<CAUSAL>(reinterpret_cast<float(&)[CK / 8][4]>(s), mx, whole, r0, [&](int b) { return c * CK + 8 * b; },
                           q0, nq, kv_end, causal_off, s_fn);
      float base[2];
      online_softmax_step(mx, m, l, o, base);
      // P, unnormalized, rounded to fp16 as the A fragments of the k steps of 16 keys.
      unsigned int pa[CK / 16][4];
#pragma unroll
      for (int kk = 0; kk < CK / 16; ++kk) {
        float p[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const int q = e & 3;  // e < 4: n8 block 2kk, else 2kk + 1
          p[e] = ex2_approx((s[4 * (2 * kk + (e >> 2)) + q] - base[q >> 1]) * kLog2e);
          l[q >> 1] += p[e];
        }
        pa[kk][0] = pack_half2(p[0], p[1]);
        pa[kk][1] = pack_half2(p[2], p[3]);
        pa[kk][2] = pack_half2(p[4], p[5]);
        pa[kk][3] = pack_half2(p[6], p[7]);
      }
      wgmma_fence();  // P and the rescaled O, written by this thread, before the MMAs read them
#pragma unroll
      for (int kk = 0; kk < CK / 16; ++kk)  // 16 keys: two 8-row groups of V, 2048 bytes
        WgmmaRsT64::mma(o_flat, pa[kk], wgmma_desc_sw128(sV + (unsigned int)(kk * 2048)), 1);
      wgmma_commit();
      wgmma_wait<0>();
      wgmma_fence_acc(o_flat);
#pragma unroll
      for (int kk = 0; kk < CK / 16; ++kk)  // P's registers stay P's until the MMAs that read them are done
        asm volatile("" : "+r"(pa[kk][0]), "+r"(pa[kk][1]), "+r"(pa[kk][2]), "+r"(pa[kk][3])::"memory");
      __syncthreads();  // the next chunk's copy overwrites the buffers this one read
    }
    cp_async_wait<0>();
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    }
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int r = r0 + 8 * (q >> 1);
        if (r < nq) o_fn(q0 + r, 8 * j + 2 * t + (q & 1), o[j][q] / l[q >> 1]);
      }
    __syncthreads();  // the next item rewrites shared memory
  }
};

}  // namespace mono_dev
