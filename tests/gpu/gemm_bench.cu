// The micro-benchmark of the device-library check (device_lib_check.cu --bench, --bench-one CFG M
// N K SPLITS; the probe build adds per-phase cycle counts). Informational, never fails: GemmF16 on
// BERT-base shapes, one launch = tiles x splits blocks, each block computes one tile with the
// pipelined tile() and a fp16 store epilogue. Timed through CUDA graphs (no CPU launch overhead;
// ~1 us grid-to-grid gap remains).
#include "tests/gpu/device_lib_check.cuh"

struct HalfStoreEpi {
  half_t* c;
  int N;
  __device__ void operator()(int m, int n, float acc) const {
    c[(long long)m * N + n] = mono_dev::from_float<half_t>(acc);
  }
};
// The same with one 16-byte store per 8 elements (the chunked epilogue, epilogue.cuh vec8_stores).
struct HalfStoreEpi8 : HalfStoreEpi {
  static constexpr bool vec8_stores = true;
  __device__ void vec8(int m, int n, const float (&acc)[8]) const {
    uint4 u;
    u.x = mono_dev::detail::pack2<half_t>(mono_dev::from_float<half_t>(acc[0]), mono_dev::from_float<half_t>(acc[1]));
    u.y = mono_dev::detail::pack2<half_t>(mono_dev::from_float<half_t>(acc[2]), mono_dev::from_float<half_t>(acc[3]));
    u.z = mono_dev::detail::pack2<half_t>(mono_dev::from_float<half_t>(acc[4]), mono_dev::from_float<half_t>(acc[5]));
    u.w = mono_dev::detail::pack2<half_t>(mono_dev::from_float<half_t>(acc[6]), mono_dev::from_float<half_t>(acc[7]));
    *reinterpret_cast<uint4*>(c + (long long)m * N + n) = u;
  }
};
template <class G, class AL, class BL, class Epi>
__device__ __forceinline__ void bench_tile(int M, int N, int K, const AL& a, const BL& b, const Epi& epi, float* ws,
                                           unsigned int* counters, int splits) {
  extern __shared__ __align__(1024) unsigned char dyn_smem[];
  const int tiles_n = (N + G::kBN - 1) / G::kBN;
  const int tile = blockIdx.x;
  int kb, ke;
  mono_dev::split_k_range(K, G::kBK, splits, blockIdx.y, kb, ke);
  G::tile(M, N, (tile / tiles_n) * G::kBM, (tile % tiles_n) * G::kBN, kb, ke, a, b, epi, dyn_smem,
          splits > 1 ? ws + (long long)tile * splits * G::kBM * G::kBN : nullptr,
          splits > 1 ? counters + tile : nullptr, splits, blockIdx.y);
}
template <class G, class AL, class BL, class Epi>
__global__ void __launch_bounds__(G::kThreads) bench_kernel(int M, int N, int K, AL a, BL b,
                                                            Epi epi,
                                                            float* ws, unsigned int* counters, int splits) {
  bench_tile<G>(M, N, K, a, b, epi, ws, counters, splits);
}
// The same tile called as a generated kernel with out-of-line group functions calls it (ABI
// call): ptxas then serializes its wgmmas (C7510, "wgmma pipeline crossing function boundary").
// MONO_BENCH_NOINLINE=1 times this form.
template <class G, class AL, class BL, class Epi>
static __device__ __noinline__ void bench_tile_call(int M, int N, int K, AL a, BL b, Epi epi, float* ws,
                                                    unsigned int* counters, int splits) {
  bench_tile<G>(M, N, K, a, b, epi, ws, counters, splits);
}
template <class G, class AL, class BL, class Epi>
__global__ void __launch_bounds__(G::kThreads) bench_kernel_call(int M, int N, int K, AL a, BL b, Epi epi, float* ws,
                                                                 unsigned int* counters, int splits) {
  bench_tile_call<G>(M, N, K, a, b, epi, ws, counters, splits);
}

#ifdef MONO_PROBE_BUILD
// One launch with the probe on; per block: fill = entry -> first k tile ready, per-k-tile cadence,
// drain = last k tile -> main loop end, epilogue. Median and max over blocks, in cycles.
template <class Launch>
static void probe_report(int blocks, int ktiles, Launch launch) {
  const int one = 1, zero = 0;
  std::vector<unsigned long long> t(size_t(blocks) * 64);
  CK(cudaMemcpyToSymbol(g_probe_on, &one, sizeof(int)));
  launch();
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpyToSymbol(g_probe_on, &zero, sizeof(int)));
  CK(cudaMemcpyFromSymbol(t.data(), g_probe, t.size() * 8));
  const int last = 2 + std::min(ktiles - 1, 59);
  std::vector<double> pro, fill, per, drain, epi, total;
  for (int b = 0; b < blocks; ++b) {
    const unsigned long long* p = &t[size_t(b) * 64];
    pro.push_back(double(p[1] - p[0]));
    fill.push_back(double(p[2] - p[0]));
    per.push_back(ktiles > 1 ? double(p[last] - p[2]) / (last - 2) : 0.0);
    drain.push_back(double(p[62] - p[last]));
    epi.push_back(double(p[63] - p[62]));
    total.push_back(double(p[63] - p[0]));
  }
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  auto mx = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  std::printf("  probe cycles (median/max over %d blocks, %d k tiles): issue-prologue %.0f/%.0f  "
              "fill %.0f/%.0f  per-k-tile %.0f/%.0f  drain %.0f/%.0f  epilogue %.0f/%.0f  "
              "tile %.0f/%.0f\n",
              blocks, ktiles, med(pro), mx(pro), med(fill), mx(fill), med(per), mx(per), med(drain),
              mx(drain), med(epi), mx(epi), med(total), mx(total));
  const unsigned long long* p = &t[0];
  std::printf("  block 0 k-tile stamps (cycles from entry):");
  for (int k = 2; k <= last; ++k) std::printf(" %llu", p[k] - p[0]);
  std::printf(" | end %llu epi %llu\n", p[62] - p[0], p[63] - p[0]);
}
#endif

// im2col of a KSxKS convolution (stride 1, pad KS/2) over x [C][H][W] as the code generator
// emits it (shapes compile-time constants, rows = output pixels fastest): B (n = pixel, k = (c,
// kh, kw)) of the conv GEMM whose A is the weights [O][C*KS*KS].
template <int C, int H, int W, int KS>
struct BenchIm2col {
  static constexpr bool rows_fastest = true;
  const half_t* x;
  __device__ half_t operator()(int r, int k) const {
    if (r >= H * W || k >= C * KS * KS) return mono_dev::from_float<half_t>(0.0f);
    const int ci = k / (KS * KS), kk = k % (KS * KS), kh = kk / KS, kw = kk % KS;
    const int ih = r / W - KS / 2 + kh, iw = r % W - KS / 2 + kw;
    if (ih < 0 || ih >= H || iw < 0 || iw >= W) return mono_dev::from_float<half_t>(0.0f);
    return x[((long long)ci * H + ih) * W + iw];
  }
};
template <class BL>
static BL bench_b(half_t* p, int N, int K, int bk) {
  if constexpr (std::is_same<BL, mono_dev::BulkTileK<half_t>>::value) return BL{p, (K + bk - 1) / bk};
  else
  if constexpr (std::is_same<BL, mono_dev::DenseN<half_t>>::value) return BL{p, N, K, N};
  else if constexpr (std::is_same<BL, mono_dev::DenseK<half_t>>::value)
    return BL{p, N, K, K};
  else return BL{{p}};  // Gather<half_t, BenchIm2col<...>>
}

// BL = DenseK: B stored [N][K]; BL = DenseN: B stored [K][N] (the ONNX MatMul weight layout);
// BL = Gather<BenchIm2col>: a convolution's im2col.
// A_MODE 1: A packed tile by tile too (BulkTileK), as if its producer wrote that layout;
// A_MODE 2: A through a tensor map (TensorK), as generated code reads activations.
template <class G, class BL, int A_MODE = 0, class Epi = HalfStoreEpi>
static void bench_one_t(const char* gname, int M, int N, int K, int splits) {
  auto A = rand_vec(size_t(M) * K), B = rand_vec(size_t(N) * K);
  constexpr bool tiled = std::is_same<BL, mono_dev::BulkTileK<half_t>>::value;
  constexpr bool A_TILED = A_MODE == 1;
  half_t* dA = to_dev<half_t>(A_TILED ? tile_pack(A, M, K, G::kBM, G::kBK) : A);
  const std::vector<float> Bh = tiled ? tile_pack(B, N, K, G::kBN, G::kBK, SwizzledB<G>::value) : B;
  half_t* dB = to_dev<half_t>(Bh);
  // MONO_BENCH_COLD=1: every launch reads its own copy of B, copies enough to pass 128 MB, so
  // the weights come from HBM as in a whole model (past the L2's 50 MB); else one copy, in the L2.
  const bool cold = std::getenv("MONO_BENCH_COLD") != nullptr;
  const size_t b_bytes = Bh.size() * sizeof(half_t);
  std::vector<half_t*> dBs = {dB};
  while (cold && dBs.size() * b_bytes < (size_t(128) << 20)) dBs.push_back(to_dev<half_t>(Bh));
  half_t* dC;
  float* ws;
  unsigned* cnt;
  const int tiles = ((M + G::kBM - 1) / G::kBM) * ((N + G::kBN - 1) / G::kBN);
  CK(cudaMalloc(&dC, sizeof(half_t) * M * N));
  CK(cudaMalloc(&ws, sizeof(float) * std::max(1, tiles * splits * G::kBM * G::kBN)));
  CK(cudaMalloc(&cnt, sizeof(unsigned) * tiles));
  CK(cudaMemset(cnt, 0, sizeof(unsigned) * tiles));
  using AL = typename std::conditional<
      A_MODE == 2, mono_dev::TensorK<half_t>,
      typename std::conditional<A_TILED, mono_dev::BulkTileK<half_t>, mono_dev::DenseK<half_t>>::type>::type;
  mono_dev::TensorMap* dmap = nullptr;
  const bool call = std::getenv("MONO_BENCH_NOINLINE") != nullptr;
  auto kern = call ? bench_kernel_call<G, AL, BL, Epi> : bench_kernel<G, AL, BL, Epi>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  constexpr bool kn = std::is_same<BL, mono_dev::DenseN<half_t>>::value;
  AL a;
  if constexpr (A_MODE == 2) {
    std::string err;
    dmap = dev_tensor_map(dA, M, K, K, G::kBM, &err);
    if (!dmap) {
      std::printf("bench: tensor map: %s\n", err.c_str());
      return;
    }
    a = AL{dmap};
  } else if constexpr (A_TILED) {
    a = AL{dA, (K + G::kBK - 1) / G::kBK};
  } else {
    a = AL{dA, M, K, K};
  }
  Epi epi_v;
  epi_v.c = dC;
  epi_v.N = N;
  // Launch i reads copy i % copies of B (cold: many; else the one).
  auto launch = [&](cudaStream_t st, int i) {
    kern<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes, st>>>(
        M, N, K, a, bench_b<BL>(dBs[size_t(i) % dBs.size()], N, K, G::kBK), epi_v, ws, cnt, splits);
  };
  const double us = time_launches(launch);
  if (cold) std::printf("(cold: B from HBM, %zu copies) ", dBs.size());
  if (call) std::printf("(tile called out of line) ");
  std::printf("bench %-26s B=%s M=%-4d N=%-5d K=%-5d splits=%-2d blocks=%-4d %8.2f us  %7.1f TFLOP/s\n",
              gname, kn ? "[K][N]" : tiled ? (A_MODE == 2 ? "tiles+tmapA" : A_TILED ? "tiles+A" : std::is_same<Epi, HalfStoreEpi>::value ? "tiles" : "tiles,v8") :
              !std::is_same<Epi, HalfStoreEpi>::value ? "[N][K],v8" : std::is_same<BL, mono_dev::DenseK<half_t>>::value ? "[N][K]" : "im2col",
              M, N, K, splits, tiles * splits, us,
              2.0 * M * N * K / (us * 1e-6) / 1e12);
#ifdef MONO_PROBE_BUILD
  probe_report(tiles * splits, (K / splits + G::kBK - 1) / G::kBK, [&] { launch(cudaStream_t(0), 0); });
#endif
  CK(cudaFree(dA));
  for (half_t* p : dBs) CK(cudaFree(p));
  CK(cudaFree(dC));
  CK(cudaFree(ws));
  CK(cudaFree(cnt));
  if (dmap) CK(cudaFree(dmap));
}

template <class G>
static void bench_one_f16(const char* gname, int M, int N, int K, int splits, int b_kind) {
  // Convolutions (resnet50's shapes): N and K must be the functor's (else it reads out of bounds).
  if (b_kind == 3 && N == 56 * 56 && K == 64 * 9)
    return bench_one_t<G, mono_dev::Gather<half_t, BenchIm2col<64, 56, 56, 3>>>(gname, M, N, K, splits);
  if (b_kind == 3 && N == 14 * 14 && K == 256 * 9)
    return bench_one_t<G, mono_dev::Gather<half_t, BenchIm2col<256, 14, 14, 3>>>(gname, M, N, K, splits);
  if (b_kind == 3 && N == 56 * 56 && K == 64)
    return bench_one_t<G, mono_dev::Gather<half_t, BenchIm2col<64, 56, 56, 1>>>(gname, M, N, K, splits);
  if (b_kind == 3) {
    std::printf("bench: no im2col shape N=%d K=%d (3136x576, 196x2304, 3136x64)\n", N, K);
    return;
  }
  if (b_kind == 8) {
    if constexpr (G::kBK % 64 == 0) bench_one_t<G, mono_dev::BulkTileK<half_t>, 2, HalfStoreEpi8>(gname, M, N, K, splits);
  } else if (b_kind == 7)
    bench_one_t<G, mono_dev::BulkTileK<half_t>, 0, HalfStoreEpi8>(gname, M, N, K, splits);
  else if (b_kind == 6)
    bench_one_t<G, mono_dev::DenseK<half_t>, 0, HalfStoreEpi8>(gname, M, N, K, splits);
  else if (b_kind == 5)
    bench_one_t<G, mono_dev::BulkTileK<half_t>, 1>(gname, M, N, K, splits);
  else if (b_kind == 4)
    bench_one_t<G, mono_dev::BulkTileK<half_t>>(gname, M, N, K, splits);
  else if (b_kind == 1)
    bench_one_t<G, mono_dev::DenseN<half_t>>(gname, M, N, K, splits);
  else
    bench_one_t<G, mono_dev::DenseK<half_t>>(gname, M, N, K, splits);
}

template <class G>
static void bench_one(const char* gname, int M, int N, int K, int splits, int b_kind) {
  if constexpr (SwizzledB<G>::value) {  // GemmWg: A through a tensor map, B packed (swizzled)
    if (b_kind == 8) bench_one_t<G, mono_dev::BulkTileK<half_t>, 2, HalfStoreEpi8>(gname, M, N, K, splits);
    else std::printf("bench: %s runs only as CFG + 800 (A through a tensor map, B packed)\n", gname);
  } else {
    bench_one_f16<G>(gname, M, N, K, splits, b_kind);
  }
}

using BenchH1 = mono_dev::GemmF16<64, 128, 32, 2, 4, 3>;
using BenchH2 = mono_dev::GemmF16<64, 64, 32, 2, 4, 3>;
using BenchH3 = mono_dev::GemmF16<128, 128, 32, 2, 4, 3>;
using BenchH4 = mono_dev::GemmF16<32, 64, 64, 2, 4, 2>;
using BenchH5 = mono_dev::GemmF16<64, 64, 64, 2, 4, 4>;
using BenchH6 = mono_dev::GemmF16<32, 64, 64, 2, 4, 4>;
using BenchH7 = mono_dev::GemmF16<64, 128, 64, 2, 4, 4>;
using BenchH8 = mono_dev::GemmF16<32, 128, 64, 2, 4, 4>;
using BenchH9 = mono_dev::GemmF16<64, 64, 64, 2, 2, 4>;    // 4 warps of 32x32
using BenchH10 = mono_dev::GemmF16<128, 64, 64, 4, 2, 4>;  // whole M = 128, 8 warps of 32x32
using BenchH11 = mono_dev::GemmF16<128, 32, 64, 4, 2, 4>;  // whole M, 8 warps of 32x16
using BenchH12 = mono_dev::GemmF16<64, 64, 128, 2, 4, 3>;  // BK 128
using BenchH13 = mono_dev::GemmF16<64, 64, 64, 2, 4, 8>;   // 8 stages
using BenchH14 = mono_dev::GemmF16<64, 64, 128, 2, 4, 4>;  // BK 128, 4 stages
using BenchW15 = mono_dev::GemmWg<64, 64, 128, 4, 2, 4>;   // wgmma m64n32 x 2 warpgroups
using BenchW16 = mono_dev::GemmWg<128, 64, 128, 8, 1, 4>;  // wgmma m64n64, whole M = 128
using BenchW17 = mono_dev::GemmWg<64, 128, 128, 4, 2, 3>;  // wgmma m64n64
using BenchW18 = mono_dev::GemmWg<64, 64, 64, 4, 2, 6>;    // BK 64, 6 stages
using BenchW19 = mono_dev::GemmWg<128, 128, 64, 8, 1, 4>;  // wgmma m64n128
using BenchW20 = mono_dev::GemmWg<64, 32, 128, 4, 2, 4>;   // wgmma m64n16
// Deeper pipelines: more bytes in flight per SM (a stage of 64x64x128 is 32 KB; 4 stages keep
// 3 k tiles, 96 KB, in flight; 6 keep 160 KB). K = 768 is 6 k tiles: 6 stages issue them all at once.
using BenchW21 = mono_dev::GemmWg<64, 64, 128, 4, 2, 6>;
using BenchW22 = mono_dev::GemmWg<64, 32, 128, 4, 2, 6>;
using BenchW23 = mono_dev::GemmWg<64, 64, 128, 4, 2, 5>;
// One warpgroup over the whole tile width (128 threads): A is read from shared memory once per k
// step instead of once per warpgroup (a 64x64x128 k tile: 32 KB of operand reads against 48 KB).
using BenchW24 = mono_dev::GemmWg<64, 64, 128, 4, 1, 4>;
using BenchW25 = mono_dev::GemmWg<64, 128, 128, 4, 1, 3>;
using BenchW26 = mono_dev::GemmWg<64, 64, 128, 4, 1, 6>;
// Two k groups: each warpgroup one half of every k tile over the whole width (gemm_wg.cuh).
using BenchW27 = mono_dev::GemmWg<64, 64, 128, 4, 1, 4, 2>;
using BenchW28 = mono_dev::GemmWg<64, 32, 128, 4, 1, 4, 2>;
using BenchW29 = mono_dev::GemmWg<64, 64, 64, 4, 1, 6, 2>;
// The planner's 96-wide tile: two warpgroups of m64n48 (cost_model.h wide_wgmma_tiles).
using BenchW30 = mono_dev::GemmWg<64, 96, 128, 4, 2, 4>;
// The planner's tile for GPT-2's and BERT's out-projection (128 x 768 x 768: 96 items).
using BenchH31 = mono_dev::GemmF16<32, 32, 128, 2, 4, 4>;

void bench_one_cfg(int cfg, int M, int N, int K, int splits) {  // b_kind: 0 DenseK, 1 DenseN
  // CFG + 100: B stored [K][N], loaded with DenseN; CFG + 200: B [N][K] with DenseK (bulk copies
  // per tile row were removed: slower than tile packing);
  // CFG + 300: B = im2col of a convolution (see bench_one); CFG + 400: B packed tile by tile,
  // one bulk copy per stage (BulkTileK); CFG + 500: A and B both packed so; CFG + 600: the
  // epilogue with 16-byte stores (HalfStoreEpi8); CFG + 700: B packed and 16-byte stores;
  // CFG + 800: that with A through a tensor map (TensorK), as generated code runs it
  const int kn = cfg > 800 ? 8 : cfg > 700 ? 7 : cfg > 600 ? 6 : cfg > 500 ? 5 : cfg > 400 ? 4 : cfg > 300 ? 3 : cfg > 200 ? 2 : cfg > 100 ? 1 : 0;
  cfg -= 100 * kn;
  switch (cfg) {
    case 1: bench_one<BenchH1>("GemmF16<64,128,32,2,4,3>", M, N, K, splits, kn); break;
    case 2: bench_one<BenchH2>("GemmF16<64,64,32,2,4,3>", M, N, K, splits, kn); break;
    case 3: bench_one<BenchH3>("GemmF16<128,128,32,2,4,3>", M, N, K, splits, kn); break;
    case 4: bench_one<BenchH4>("GemmF16<32,64,64,2,4,2>", M, N, K, splits, kn); break;
    case 5: bench_one<BenchH5>("GemmF16<64,64,64,2,4,4>", M, N, K, splits, kn); break;
    case 6: bench_one<BenchH6>("GemmF16<32,64,64,2,4,4>", M, N, K, splits, kn); break;
    case 7: bench_one<BenchH7>("GemmF16<64,128,64,2,4,4>", M, N, K, splits, kn); break;
    case 9: bench_one<BenchH9>("GemmF16<64,64,64,2,2,4>", M, N, K, splits, kn); break;
    case 10: bench_one<BenchH10>("GemmF16<128,64,64,4,2,4>", M, N, K, splits, kn); break;
    case 11: bench_one<BenchH11>("GemmF16<128,32,64,4,2,4>", M, N, K, splits, kn); break;
    case 12: bench_one<BenchH12>("GemmF16<64,64,128,2,4,3>", M, N, K, splits, kn); break;
    case 13: bench_one<BenchH13>("GemmF16<64,64,64,2,4,8>", M, N, K, splits, kn); break;
    case 14: bench_one<BenchH14>("GemmF16<64,64,128,2,4,4>", M, N, K, splits, kn); break;
    case 15: bench_one<BenchW15>("GemmWg<64,64,128,4,2,4>", M, N, K, splits, kn); break;
    case 16: bench_one<BenchW16>("GemmWg<128,64,128,8,1,4>", M, N, K, splits, kn); break;
    case 17: bench_one<BenchW17>("GemmWg<64,128,128,4,2,3>", M, N, K, splits, kn); break;
    case 18: bench_one<BenchW18>("GemmWg<64,64,64,4,2,6>", M, N, K, splits, kn); break;
    case 19: bench_one<BenchW19>("GemmWg<128,128,64,8,1,4>", M, N, K, splits, kn); break;
    case 20: bench_one<BenchW20>("GemmWg<64,32,128,4,2,4>", M, N, K, splits, kn); break;
    case 21: bench_one<BenchW21>("GemmWg<64,64,128,4,2,6>", M, N, K, splits, kn); break;
    case 22: bench_one<BenchW22>("GemmWg<64,32,128,4,2,6>", M, N, K, splits, kn); break;
    case 23: bench_one<BenchW23>("GemmWg<64,64,128,4,2,5>", M, N, K, splits, kn); break;
    case 24: bench_one<BenchW24>("GemmWg<64,64,128,4,1,4>", M, N, K, splits, kn); break;
    case 25: bench_one<BenchW25>("GemmWg<64,128,128,4,1,3>", M, N, K, splits, kn); break;
    case 26: bench_one<BenchW26>("GemmWg<64,64,128,4,1,6>", M, N, K, splits, kn); break;
    case 27: bench_one<BenchW27>("GemmWg<64,64,128,4,1,4,2>", M, N, K, splits, kn); break;
    case 28: bench_one<BenchW28>("GemmWg<64,32,128,4,1,4,2>", M, N, K, splits, kn); break;
    case 29: bench_one<BenchW29>("GemmWg<64,64,64,4,1,6,2>", M, N, K, splits, kn); break;
    case 30: bench_one<BenchW30>("GemmWg<64,96,128,4,2,4>", M, N, K, splits, kn); break;
    case 31: bench_one<BenchH31>("GemmF16<32,32,128,2,4,4>", M, N, K, splits, kn); break;
    default: bench_one<BenchH8>("GemmF16<32,128,64,2,4,4>", M, N, K, splits, kn); break;
  }
}

void bench() {
  const int shapes[][3] = {{128, 768, 768}, {128, 2304, 768}, {128, 3072, 768}, {128, 768, 3072}};
  for (auto& s : shapes)
    for (int cfg = 1; cfg <= 8; ++cfg)
      for (int sp : {1, 2, 4}) bench_one_cfg(cfg, s[0], s[1], s[2], sp);
  for (auto& s : shapes)  // ONNX MatMul weight layout [K][N] through DenseN
    for (int cfg : {105, 106})
      for (int sp : {1, 4}) bench_one_cfg(cfg, s[0], s[1], s[2], sp);
}
