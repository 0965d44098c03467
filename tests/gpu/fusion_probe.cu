// Measure-first probe for fusing a transformer's MLP (FFN1, GELU, FFN2) into one stage
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
//      (device_lib_check --bench-one 815 ... with MONO_BENCH_COLD=1, run beside it).
// Measured on the H200 (bench/RESULTS.md, session 30, run243): the MLP's reductions alone take
// 5.3-8.5 us (the L2 takes ~2.2 TB/s of red.v4 or of stores), about FFN2's whole stage, and the
// fused item set 28 us against 12.1 for the two stages: the MLP stays two stages. The attention +
// out-projection pattern's reductions take ~2.2 us.
#include "tests/gpu/device_lib_check.cuh"

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

// Microseconds a launch, over CUDA graphs of 50 launches (4 replays), after 10 warm-up launches.
template <class Launch>
double time_launches(Launch launch) {
  for (int i = 0; i < 10; ++i) launch(cudaStream_t(0), 0);
  CK(cudaDeviceSynchronize());
  const int per_graph = 50, replays = 4;
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < per_graph; ++i) launch(st, i);
  CK(cudaStreamEndCapture(st, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, st));
  CK(cudaStreamSynchronize(st));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0, st));
  for (int i = 0; i < replays; ++i) CK(cudaGraphLaunch(exec, st));
  CK(cudaEventRecord(e1, st));
  CK(cudaEventSynchronize(e1));
  CK(cudaGetLastError());
  float ms;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(st));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return 1000.0 * ms / (per_graph * replays);
}

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
  std::vector<double> Hr(size_t(M) * Hd), ref(size_t(M) * D, 0.0);
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < Hd; ++j) {
      double s = 0;
      for (int k = 0; k < D; ++k) s += double(X[size_t(m) * D + k]) * W1[size_t(j) * D + k];
      Hr[size_t(m) * Hd + j] = f_of(h_of(float(ref_gelu(s))));
    }
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < D; ++n) {
      double s = 0;
      for (int j = 0; j < Hd; ++j) s += Hr[size_t(m) * Hd + j] * W2[size_t(n) * Hd + j];
      ref[size_t(m) * D + n] = s;
    }
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

}  // namespace

void fusion_probe() {
  reduction_patterns();
  fused_mlp_case<64>(128, 768, 3072);
  fused_mlp_case<128>(128, 768, 3072);
  fused_mlp_case<64>(197, 768, 3072);  // ViT's rows
}
