// Measure-first probes for fusing a transformer's MLP (FFN1, GELU, FFN2) into one stage, and its
// attention with the out-projection
// (device_lib_check --fusion-probe; informational, except the fused item's correctness check,
// which counts as a failure when it misses).
//
// Today each layer runs FFN1 (128 x 3072 x 768, GELU) and FFN2 (128 x 768 x 3072, split-K) as two
// stages with a grid barrier between them. Fused, a work item (row tile r, hidden chunk c) computes
// H = GELU(X[r] W1[c]^T) (64 x BH) into the L2, then its partial product H W2[:, c]^T (64 x 768)
// and adds it into an fp32 output with vector reductions (red.global.add.v4.f32): one stage, no
// barrier between the two GEMMs, but M x 768 x (3072 / BH) fp32 additions go through the L2's
// atomic units. What this probe measures, lone launches through CUDA graphs of 50 (each launch
// pays the ~1 us grid-to-grid gap that a stage's barrier stands for):
//   1. the reductions alone, in the fused stage's pattern (and in the attention + out-projection
//      pattern: 16-row items of 12 heads), against plain stores of the same bytes;
//   2. the fused MLP item set (BH 64: 96 items; BH 128: 48 items), weights cold (each launch reads
//      its own copy of W1 and W2, past the L2), against FFN1 + FFN2 as two launches of today's tile
//      (device_lib_check --bench-one 815 ... with MONO_BENCH_COLD=1, run beside it);
//   3. GPT-2's attention items with the out-projection of their O in the item (W_o's head slice
//      cold, red.v4 into fp32), against the attention alone (and --bench-one 831 128 768 768 1,
//      today's out-projection tile).
// Measured on the H200 (bench/RESULTS.md, session 30, run243): the MLP's reductions alone take
// 5.3-8.5 us (the L2 takes ~2.2 TB/s of red.v4 or of stores), about FFN2's whole stage, and the
// fused item set 28 us against 12.1 for the two stages: the MLP stays two stages. GPT-2's attention
// with its out-projection in the items (3.) takes 9.21 us against 3.89 + 4.89 for the two
// launches (run244): the out-projection stays a stage of its own too.
#include "tests/gpu/device_lib_check.cuh"

#include "compiler/codegen/device/attention.cuh"

namespace {

// ---- 1. reductions alone ---------------------------------------------------------------------

// Block b adds (MODE 1: red.v4; MODE 2: scalar red) or stores (MODE 0) rows x cols floats at
// region b % regions of y: `blocks / regions` blocks share each region, as the heads (or hidden
// chunks) of a fused stage share their rows of the output.
template <int MODE>
__global__ void red_pattern(float* y, int rows, int cols, int regions, float v) {
  float* base = y + size_t(blockIdx.x % regions) * rows * cols;
  const int n4 = rows * cols / 4;
  for (int i = threadIdx.x; i < n4; i += blockDim.x) {
    float* p = base + 4 * size_t(i);
    if constexpr (MODE == 0) {
      *reinterpret_cast<float4*>(p) = make_float4(v, v, v, v);
    } else if constexpr (MODE == 1) {
      asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v), "f"(v), "f"(v), "f"(v)
                   : "memory");
    } else {
      for (int j = 0; j < 4; ++j) asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p + j), "f"(v) : "memory");
    }
  }
}
__global__ void empty_kernel() {}

void reduction_patterns() {
  float* y;
  CK(cudaMalloc(&y, sizeof(float) * 128 * 768));
  CK(cudaMemset(y, 0, sizeof(float) * 128 * 768));
  const double gap = time_launches([&](cudaStream_t s, int) { empty_kernel<<<132, 256, 0, s>>>(); });
  std::printf("fusion probe: an empty launch of 132 blocks: %.2f us (the grid-to-grid gap in every figure below)\n", gap);
  struct Pattern {
    const char* what;
    int blocks, rows, regions;
  };
  const Pattern patterns[] = {
      {"attention + out-projection: 96 items (12 heads x 8 tiles of 16 rows), 12 per row", 96, 16, 8},
      {"MLP, hidden chunks of 128: 48 items (24 chunks x 2 tiles of 64 rows), 24 per row", 48, 64, 2},
      {"MLP, hidden chunks of 64: 96 items (48 chunks x 2 tiles of 64 rows), 48 per row", 96, 64, 2},
  };
  for (const Pattern& p : patterns) {
    const double mb = double(p.blocks) * p.rows * 768 * 4 / 1e6;
    const double st = time_launches([&](cudaStream_t s, int) { red_pattern<0><<<p.blocks, 256, 0, s>>>(y, p.rows, 768, p.regions, 1.f); });
    const double v4 = time_launches([&](cudaStream_t s, int) { red_pattern<1><<<p.blocks, 256, 0, s>>>(y, p.rows, 768, p.regions, 1.f); });
    const double sc = time_launches([&](cudaStream_t s, int) { red_pattern<2><<<p.blocks, 256, 0, s>>>(y, p.rows, 768, p.regions, 1.f); });
    std::printf("fusion probe: %s, %.1f MB: stores %.2f us, red.v4.f32 %.2f us, scalar red.f32 %.2f us\n", p.what, mb, st,
                v4, sc);
  }
  CK(cudaFree(y));
}

// ---- 2. the fused MLP item set ---------------------------------------------------------------

// H = GELU(acc) in fp16 (tanh form, as GPT-2's), 8 at a time.
struct GeluStoreEpi {
  half_t* h;
  int ld;
  static constexpr bool vec8_stores = true;
  __device__ static float gelu(float x) { return 0.5f * x * (1.f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))); }
  __device__ void operator()(int m, int n, float acc) const { h[(long long)m * ld + n] = mono_dev::from_float<half_t>(gelu(acc)); }
  __device__ void vec8(int m, int n, const float (&acc)[8]) const {
    float g[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) g[i] = gelu(acc[i]);
    mono_dev::store8(h + (long long)m * ld + n, g);
  }
};
// Y += acc in fp32 through the L2's reductions, 8 at a time as two red.v4.
struct RedAddEpi {
  float* y;
  int ld;
  static constexpr bool vec8_stores = true;
  __device__ void operator()(int m, int n, float acc) const {
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(y + (long long)m * ld + n), "f"(acc) : "memory");
  }
  __device__ void vec8(int m, int n, const float (&acc)[8]) const {
    float* p = y + (long long)m * ld + n;
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(acc[0]), "f"(acc[1]), "f"(acc[2]), "f"(acc[3])
                 : "memory");
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p + 4), "f"(acc[4]), "f"(acc[5]), "f"(acc[6]), "f"(acc[7])
                 : "memory");
  }
};

template <int BH>
struct FusedMlp {
  using G1 = mono_dev::GemmWg<64, BH, 128, 4, 2, BH == 128 ? 3 : 4>;  // H chunk, K = D (the menu's stages)
  using G2 = mono_dev::GemmWg<64, 128, BH, 4, 2, 2>;  // a 64 x 128 piece of the partial, K = BH (one k tile)
  static constexpr int kSmem = G1::kSmemBytes > G2::kSmemBytes ? G1::kSmemBytes : G2::kSmemBytes;
  static_assert(G1::kThreads == G2::kThreads, "one block runs both tiles");
};

// Item b: row tile b % row_tiles, hidden chunk b / row_tiles (the two row tiles of a chunk are
// neighbours: its weights are read from HBM once and from the L2 once).
template <int BH>
__global__ void __launch_bounds__(FusedMlp<BH>::G1::kThreads)
    fused_mlp(int M, int D, int Hd, mono_dev::TensorK<half_t> x, mono_dev::BulkTileK<half_t> w1, half_t* h,
              mono_dev::TensorK<half_t> hmap, mono_dev::BulkTileK<half_t> w2, float* y) {
  using F = FusedMlp<BH>;
  extern __shared__ __align__(1024) unsigned char dyn_smem[];
  const int row_tiles = (M + 63) / 64;
  const int m0 = (blockIdx.x % row_tiles) * 64, c = blockIdx.x / row_tiles;
  F::G1::tile(M, Hd, m0, c * BH, 0, D, x, w1, GeluStoreEpi{h, Hd}, dyn_smem, nullptr, nullptr, 1, 0);
  // H's chunk was written by this block's ordinary stores; the next tiles read it through the
  // copy engine: every thread's stores are ordered before thread 0's proxy fence by the block
  // barrier at the start of tile() (GemmWg issues the fence).
  for (int n0 = 0; n0 < D; n0 += 128)
    F::G2::tile(M, D, m0, n0, c * BH, (c + 1) * BH, hmap, w2, RedAddEpi{y, D}, dyn_smem, nullptr, nullptr, 1, 0);
}

double ref_gelu(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608 * (x + 0.044715 * x * x * x))); }

template <int BH>
void fused_mlp_case(int M, int D, int Hd) {
  using F = FusedMlp<BH>;
  auto X = rand_vec(size_t(M) * D), W1 = rand_vec(size_t(Hd) * D, -0.05f, 0.05f), W2 = rand_vec(size_t(D) * Hd, -0.05f, 0.05f);
  round_to_half(X), round_to_half(W1), round_to_half(W2);
  // The reference, with H rounded to fp16 as the item stores it.
  std::vector<float> H(size_t(M) * Hd);
  const std::vector<double> pre = ref_gemm(X, W1, M, Hd, D);
  for (size_t i = 0; i < H.size(); ++i) H[i] = f_of(h_of(float(ref_gelu(pre[i]))));
  const std::vector<double> ref = ref_gemm(H, W2, M, D, Hd);
  half_t* dX = to_dev<half_t>(X);
  const std::vector<float> W1p = tile_pack(W1, Hd, D, BH, 128, true), W2p = tile_pack(W2, D, Hd, 128, BH, true);
  // Cold weights: each launch reads its own copy of W1 and W2, enough copies to pass 128 MB.
  std::vector<half_t*> d1, d2;
  const size_t bytes = (W1p.size() + W2p.size()) * 2;
  do {
    d1.push_back(to_dev<half_t>(W1p));
    d2.push_back(to_dev<half_t>(W2p));
  } while (d1.size() * bytes < (size_t(128) << 20));
  half_t* dH;
  float* dY;
  CK(cudaMalloc(&dH, sizeof(half_t) * M * Hd));
  CK(cudaMalloc(&dY, sizeof(float) * M * D));
  CK(cudaMemset(dY, 0, sizeof(float) * M * D));
  std::string err;
  mono_dev::TensorMap* xmap = dev_tensor_map(dX, M, D, D, 64, &err);
  mono_dev::TensorMap* hmap = xmap ? dev_tensor_map(dH, M, Hd, Hd, 64, &err) : nullptr;
  const std::string name = "fused MLP GemmWg<64," + std::to_string(BH) + ",128,4,2," + std::to_string(BH == 128 ? 3 : 4) + "> + GemmWg<64,128," + std::to_string(BH) +
                           "> M=" + std::to_string(M) + " D=" + std::to_string(D) + " H=" + std::to_string(Hd);
  if (!xmap || !hmap) {
    report(name, INFINITY, 1e-2, "tensor map: " + err);
    return;
  }
  auto kern = fused_mlp<BH>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, F::kSmem));
  const int items = ((M + 63) / 64) * (Hd / BH);
  auto launch = [&](cudaStream_t s, int i) {
    const size_t j = size_t(i) % d1.size();
    kern<<<items, F::G1::kThreads, F::kSmem, s>>>(M, D, Hd, mono_dev::TensorK<half_t>{xmap}, mono_dev::BulkTileK<half_t>{d1[j], D / 128},
                                                  dH, mono_dev::TensorK<half_t>{hmap}, mono_dev::BulkTileK<half_t>{d2[j], Hd / BH}, dY);
  };
  launch(0, 0);
  CK(cudaDeviceSynchronize());
  report(name + " (one launch)", rel_err(from_dev(dY, size_t(M) * D), ref), 1e-2);
  const double us = time_launches(launch);
  std::printf("fusion probe: %s, %d items, weights cold (%zu copies): %.2f us a launch\n", name.c_str(), items, d1.size(), us);
  for (half_t* p : d1) CK(cudaFree(p));
  for (half_t* p : d2) CK(cudaFree(p));
  CK(cudaFree(dX));
  CK(cudaFree(dH));
  CK(cudaFree(dY));
  CK(cudaFree(xmap));
  CK(cudaFree(hmap));
}


// ---- 3. attention with the out-projection in its items ----------------------------------------

// GPT-2's attention (12 causal heads of 64, 128 rows; items of 16 query rows, as the planner runs
// it: FlashAttention<64, 1, 8, causal>). Today O goes to memory ([S][768], head h at columns
// 64h) and the out-projection is a stage of its own. Fused, the item multiplies its O (16 x 64,
// fp16 in shared memory) by its head's 64 rows of W_o ([768][768], K x N as ONNX stores it; the
// slice is copied whole while the attention runs) and adds the 16 x 768 partial into an fp32 Y
// with red.v4: the 12 heads of a row meet in the L2.
using ProbeFA = mono_dev::FlashAttention<64, 1, 8, true>;
constexpr int kWoLd = 768 + 8;  // halves: 1552-byte rows, conflict-free for ldmatrix
constexpr int kOhOff = ProbeFA::kSmemBytes, kWoOff = kOhOff + 16 * 72 * 2, kBarOff = kWoOff + 64 * kWoLd * 2;
constexpr int kAttnSmem = kBarOff + 16;

struct ScaleFn {
  __device__ float operator()(int, int, float x) const { return x * 0.125f; }
};
struct KeepFn {
  __device__ float operator()(int, int, float x) const { return x; }
};
struct StoreO {  // today: O [S][768] in fp16
  half_t* o;
  int h;
  __device__ void operator()(int r, int c, float v) const { o[(long long)r * 768 + h * 64 + c] = mono_dev::from_float<half_t>(v); }
};
struct StoreOShared {  // fused: the item's O in shared memory, [16][72] halves
  half_t* so;
  int q0;
  __device__ void operator()(int r, int c, float v) const { so[(r - q0) * 72 + c] = mono_dev::from_float<half_t>(v); }
};

template <bool FUSED>
__global__ void __launch_bounds__(256) attn_probe(const half_t* Q, const half_t* K, const half_t* V, int S, half_t* O,
                                                  const half_t* Wo, float* Y) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const int h = blockIdx.x % 12, q0 = (blockIdx.x / 12) * 16, nq = S - q0 < 16 ? S - q0 : 16;
  const unsigned int bar = mono_dev::smem_u32(smem) + kBarOff, sW = mono_dev::smem_u32(smem) + kWoOff;
  if (FUSED && threadIdx.x == 0) {  // the head's 64 rows of W_o, copied while the attention runs
    mono_dev::mbar_init(bar, 1);
    mono_dev::mbar_fence_init();
    mono_dev::mbar_expect_tx(bar, 64 * 768 * 2);
    for (int j = 0; j < 64; ++j) mono_dev::bulk_copy_g2s(sW + j * kWoLd * 2, Wo + (long long)(h * 64 + j) * 768, 768 * 2, bar);
  }
  const long long head = (long long)h * S * 64;
  if constexpr (!FUSED) {
    ProbeFA::item(Q + head, K + head, V + head, q0, nq, S, ScaleFn{}, KeepFn{}, StoreO{O, h}, smem);
    return;
  } else {
    half_t* so = reinterpret_cast<half_t*>(smem + kOhOff);
    ProbeFA::item(Q + head, K + head, V + head, q0, nq, S, ScaleFn{}, KeepFn{}, StoreOShared{so, q0}, smem);
    mono_dev::mbar_wait(bar, 0);
    // Warp w: columns 96w .. 96w + 95 of the partial, 12 n8 blocks, 4 k steps of 16.
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    unsigned int qa[4][4];
    mono_dev::load_q_fragments<64>(qa, mono_dev::smem_u32(so), 0);
    float acc[12][4];
#pragma unroll
    for (int j = 0; j < 12; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[j][e] = 0.f;
#pragma unroll
    for (int ks = 0; ks < 4; ++ks)
#pragma unroll
      for (int np = 0; np < 6; ++np) {
        unsigned int vb[4];
        mono_dev::ldmatrix_x4_trans(
            vb, sW + (unsigned int)((((lane & 7) + ((lane >> 3) & 1) * 8 + ks * 16) * kWoLd + w * 96 + np * 16 + (lane >> 4) * 8) * 2));
        mono_dev::mma_16816(acc[2 * np], qa[ks], vb[0], vb[1]);
        mono_dev::mma_16816(acc[2 * np + 1], qa[ks], vb[2], vb[3]);
      }
    // Four consecutive columns a lane: even lanes take row g (their pair and their neighbour's),
    // odd lanes row g + 8; one red.v4 each per n8 block.
    const bool odd = t & 1;
#pragma unroll
    for (int j = 0; j < 12; ++j) {
      const float x0 = __shfl_xor_sync(0xffffffffu, odd ? acc[j][0] : acc[j][2], 1);
      const float x1 = __shfl_xor_sync(0xffffffffu, odd ? acc[j][1] : acc[j][3], 1);
      const int row = q0 + g + (odd ? 8 : 0), col = w * 96 + j * 8 + 2 * (t & ~1);
      if (row < S) {
        float* p = Y + (long long)row * 768 + col;
        const float v0 = odd ? x0 : acc[j][0], v1 = odd ? x1 : acc[j][1], v2 = odd ? acc[j][2] : x0, v3 = odd ? acc[j][3] : x1;
        asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v0), "f"(v1), "f"(v2), "f"(v3) : "memory");
      }
    }
    if (threadIdx.x == 0) mono_dev::mbar_inval(bar);
  }
}

void attention_projection_case(int S) {
  auto q = rand_vec(size_t(12) * S * 64), k = rand_vec(size_t(12) * S * 64), v = rand_vec(size_t(12) * S * 64),
       wo = rand_vec(size_t(768) * 768, -0.05f, 0.05f);
  round_to_half(q), round_to_half(k), round_to_half(v), round_to_half(wo);
  // Reference: causal softmax(Q K^T / 8) V per head (a head a batch), O rounded to fp16, then O W_o.
  const std::vector<double> heads = ref_attention(q, k, v, 12, S, S, 64, /*causal=*/true);
  std::vector<double> o(size_t(S) * 768), ref(size_t(S) * 768, 0.0);
  for (int h = 0; h < 12; ++h)
    for (int r = 0; r < S; ++r)
      for (int d = 0; d < 64; ++d) o[size_t(r) * 768 + h * 64 + d] = f_of(h_of(float(heads[(size_t(h) * S + r) * 64 + d])));
  for (int r = 0; r < S; ++r)
    for (int kk = 0; kk < 768; ++kk) {
      const double a = o[size_t(r) * 768 + kk];
      for (int n = 0; n < 768; ++n) ref[size_t(r) * 768 + n] += a * wo[size_t(kk) * 768 + n];
    }
  half_t *dq = to_dev<half_t>(q), *dk = to_dev<half_t>(k), *dv = to_dev<half_t>(v), *dO;
  // Cold weights for the fused form: a copy of W_o a launch, enough to pass 128 MB.
  std::vector<half_t*> dw;
  do dw.push_back(to_dev<half_t>(wo));
  while (dw.size() * wo.size() * 2 < (size_t(128) << 20));
  float* dY;
  CK(cudaMalloc(&dO, sizeof(half_t) * S * 768));
  CK(cudaMalloc(&dY, sizeof(float) * S * 768));
  CK(cudaMemset(dY, 0, sizeof(float) * S * 768));
  auto fused = attn_probe<true>;
  auto alone = attn_probe<false>;
  CK(cudaFuncSetAttribute(fused, cudaFuncAttributeMaxDynamicSharedMemorySize, kAttnSmem));
  CK(cudaFuncSetAttribute(alone, cudaFuncAttributeMaxDynamicSharedMemorySize, ProbeFA::kSmemBytes));
  const int items = 12 * ((S + 15) / 16);
  fused<<<items, 256, kAttnSmem>>>(dq, dk, dv, S, dO, dw[0], dY);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const std::string name = "attention + out-projection (FlashAttention<64,1,8,causal>, W_o slice, red.v4) S=" + std::to_string(S);
  report(name + " (one launch)", rel_err(from_dev(dY, size_t(S) * 768), ref), 1e-2);
  const double us_alone = time_launches([&](cudaStream_t s, int) { alone<<<items, 256, ProbeFA::kSmemBytes, s>>>(dq, dk, dv, S, dO, dw[0], dY); });
  const double us_fused = time_launches([&](cudaStream_t s, int i) {
    fused<<<items, 256, kAttnSmem, s>>>(dq, dk, dv, S, dO, dw[size_t(i) % dw.size()], dY);
  });
  std::printf("fusion probe: %s, %d items: attention alone %.2f us, with the projection (W_o cold, %zu copies) %.2f us a launch\n",
              name.c_str(), items, us_alone, dw.size(), us_fused);
  for (half_t* p : dw) CK(cudaFree(p));
  for (void* p : {(void*)dq, (void*)dk, (void*)dv, (void*)dO, (void*)dY}) CK(cudaFree(p));
}

}  // namespace

void fusion_probe() {
  reduction_patterns();
  fused_mlp_case<64>(128, 768, 3072);
  fused_mlp_case<128>(128, 768, 3072);
  fused_mlp_case<64>(197, 768, 3072);  // ViT's rows
  attention_projection_case(128);
}
