// GEMM cases of the device-library check (device_lib_check.cu): GemmF16 and GemmF32 tiles with
// every operand kind (DenseK, DenseN, Gather, BulkTileK, TensorK), split-K and every epilogue form,
// against a double-precision reference; each checks exactly-once epilogue calls and, split-K,
// reset counters and bitwise equal runs.
#include "tests/gpu/device_lib_check.cuh"

#include "compiler/codegen/tile_pack.h"
#include "compiler/runtime/tensor_map.h"

struct StoreEpi {
  float* c;
  unsigned int* hits;
  int N;
  __device__ void operator()(int m, int n, float acc) const {
    c[(long long)m * N + n] = acc;
    atomicAdd(hits + (long long)m * N + n, 1u);
  }
};

// Same stores, declared 8-wide (epilogue.cuh vec8_stores): GemmF16 then hands each thread chunks of 8
// consecutive n and calls vec8 for whole chunks, the per-element form for chunks cut by N (the
// last run of every run_gemm_case uses it).
struct StoreEpiV8 : StoreEpi {
  static constexpr bool vec8_stores = true;
  __device__ void vec8(int m, int n, const float (&acc)[8]) const {
    for (int j = 0; j < 8; ++j) (*this)(m, n + j, acc[j]);
  }
};

// The two-phase epilogue form (epilogue.cuh): reads r[m][n] in load(), stores acc + r in the second
// phase. r is a fixed pattern, so the reference is ref + r.
struct ResidualEpi {
  float* c;
  unsigned int* hits;
  int N;
  const float* r;
  struct In {
    float x;
  };
  __device__ void load(int m, int n, In& in) const { in.x = r[(long long)m * N + n]; }
  __device__ void operator()(int m, int n, float acc, const In& in) const {
    c[(long long)m * N + n] = acc + in.x;
    atomicAdd(hits + (long long)m * N + n, 1u);
  }
};
struct ResidualEpiV8 : ResidualEpi {
  static constexpr bool vec8_stores = true;
  __device__ void vec8(int m, int n, const float (&acc)[8]) const {
    In in[8];
    for (int j = 0; j < 8; ++j) load(m, n + j, in[j]);
    for (int j = 0; j < 8; ++j) (*this)(m, n + j, acc[j], in[j]);
  }
};
static float residual_pattern(size_t i) { return 0.25f * (float)(int)(i % 7) - 0.75f; }
// The same with the splits of a tile finishing it together (split_k.cuh), as generated code
// declares where its stage's items fit the grid (1: any grid; the harness runs these only where
// every block of the launch is resident at once).
struct StoreEpiV8Together : StoreEpiV8 {
  static constexpr int split_together_items = 1;
};
struct ResidualEpiV8Together : ResidualEpiV8 {
  static constexpr int split_together_items = 1;
};

template <class G, class AL, class BL, class Epi>
__global__ void __launch_bounds__(G::kThreads) gemm_kernel(int M, int N, int K, AL a, BL b,
                                                           Epi epi, float* ws,
                                                           unsigned int* counters, int splits) {
  extern __shared__ __align__(1024) unsigned char dyn_smem[];  // TensorK: 1024-byte aligned stages
  const int tiles_n = (N + G::kBN - 1) / G::kBN;
  const int tile = blockIdx.x;
  const int m0 = (tile / tiles_n) * G::kBM, n0 = (tile % tiles_n) * G::kBN;
  int kb, ke;
  mono_dev::split_k_range(K, G::kBK, splits, blockIdx.y, kb, ke);
  float* tile_ws = splits > 1 ? ws + (long long)tile * splits * G::kBM * G::kBN : nullptr;
  unsigned int* tile_counter = splits > 1 ? counters + tile : nullptr;
  G::tile(M, N, m0, n0, kb, ke, a, b, epi, dyn_smem, tile_ws, tile_counter, splits, blockIdx.y);
}

// Runs one GEMM `runs` times; checks the result after each run, exactly-once epilogue calls, and
// (split-K) that the counters are back to zero and that every run gives the same bits (no float
// atomics). residual: the two-phase epilogue.
template <class G, class AL, class BL>
static void run_gemm_case(const std::string& name, int M, int N, int K, const AL& a, const BL& b,
                          std::vector<double> ref, double tol, int splits, int runs,
                          bool residual = false) {
  const int tiles = ((M + G::kBM - 1) / G::kBM) * ((N + G::kBN - 1) / G::kBN);
  float* c;
  unsigned int* hits;
  float* ws = nullptr;
  unsigned int* counters = nullptr;
  CK(cudaMalloc(&c, sizeof(float) * M * N));
  CK(cudaMalloc(&hits, sizeof(unsigned) * M * N));
  if (splits > 1) {
    const size_t slots = size_t(tiles) * splits * G::kBM * G::kBN;  // partial tiles (split_k.cuh)
    CK(cudaMalloc(&ws, sizeof(float) * slots));
    CK(cudaMemset(ws, 0xff, sizeof(float) * slots));  // NaN: a partial read before it is written shows
    CK(cudaMalloc(&counters, sizeof(unsigned) * tiles));
    CK(cudaMemset(counters, 0, sizeof(unsigned) * tiles));
  }
  float* res = nullptr;
  if (residual) {
    std::vector<float> rv(size_t(M) * N);
    for (size_t i = 0; i < rv.size(); ++i) rv[i] = residual_pattern(i), ref[i] += rv[i];
    res = to_dev<float>(rv);
  }
  auto kern = gemm_kernel<G, AL, BL, StoreEpi>;
  auto kern_res = gemm_kernel<G, AL, BL, ResidualEpi>;
  auto kern_v8 = gemm_kernel<G, AL, BL, StoreEpiV8>;
  auto kern_res_v8 = gemm_kernel<G, AL, BL, ResidualEpiV8>;
  auto kern_tog = gemm_kernel<G, AL, BL, StoreEpiV8Together>;
  auto kern_res_tog = gemm_kernel<G, AL, BL, ResidualEpiV8Together>;
  CK(cudaFuncSetAttribute(kern_tog, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  CK(cudaFuncSetAttribute(kern_res_tog, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  // Split-K: one more run with the splits finishing their tiles together, where every block of
  // the launch is resident at once (they wait for one another).
  int together = 0;
  if (splits > 1) {
    int per_sm = 0, sms = 0;
    if (residual)
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern_res_tog, G::kThreads, G::kSmemBytes));
    else
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern_tog, G::kThreads, G::kSmemBytes));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    together = tiles * splits <= per_sm * sms ? 1 : 0;
  }
  CK(cudaFuncSetAttribute(kern_v8, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  CK(cudaFuncSetAttribute(kern_res_v8, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  CK(cudaFuncSetAttribute(kern_res, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  std::vector<float> first;  // split-K: the first run's result
  // The extra runs: 8-wide stores (StoreEpiV8 / ResidualEpiV8), then (split-K) the same together.
  for (int r = 0; r <= runs + together; ++r) {
    const bool v8 = r >= runs, tog = r == runs + 1;
    CK(cudaMemset(c, 0xff, sizeof(float) * M * N));  // NaN: unwritten outputs fail
    CK(cudaMemset(hits, 0, sizeof(unsigned) * M * N));
    // The together run reads every slot, the earlier runs' values among them: NaN again, so a
    // slot read before this run writes it shows.
    if (tog) CK(cudaMemset(ws, 0xff, sizeof(float) * size_t(tiles) * splits * G::kBM * G::kBN));
    if (tog && residual)
      kern_res_tog<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(
          M, N, K, a, b, ResidualEpiV8Together{{{c, hits, N, res}}}, ws, counters, splits);
    else if (tog)
      kern_tog<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(M, N, K, a, b, StoreEpiV8Together{{{c, hits, N}}},
                                                                     ws, counters, splits);
    else if (v8 && residual)
      kern_res_v8<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(
          M, N, K, a, b, ResidualEpiV8{{c, hits, N, res}}, ws, counters, splits);
    else if (v8)
      kern_v8<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(M, N, K, a, b, StoreEpiV8{{c, hits, N}},
                                                                    ws, counters, splits);
    else if (residual)
      kern_res<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(
          M, N, K, a, b, ResidualEpi{c, hits, N, res}, ws, counters, splits);
    else
      kern<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(M, N, K, a, b, StoreEpi{c, hits, N},
                                                                 ws, counters, splits);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> got(size_t(M) * N);
    std::vector<unsigned> h(size_t(M) * N);
    CK(cudaMemcpy(got.data(), c, sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h.data(), hits, sizeof(unsigned) * h.size(), cudaMemcpyDeviceToHost));
    size_t bad_hits = 0;
    for (unsigned x : h) bad_hits += x != 1;
    std::string extra;
    if (bad_hits) extra = "epilogue not called exactly once for " + std::to_string(bad_hits) + " elements";
    if (splits > 1) {
      std::vector<unsigned> cn(tiles);
      CK(cudaMemcpy(cn.data(), counters, sizeof(unsigned) * tiles, cudaMemcpyDeviceToHost));
      size_t nz = 0;
      for (unsigned x : cn) nz += x != 0u;
      if (nz) extra += " counters not reset (" + std::to_string(nz) + " nonzero)";
      // Every run (either epilogue walk) sums the same values in the same order: the same bits.
      if (first.empty()) {
        first = got;
      } else if (std::memcmp(first.data(), got.data(), sizeof(float) * got.size()) != 0) {
        extra += " result differs from an earlier run (split-K must be deterministic)";
      }
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, " M=%d N=%d K=%d splits=%d run %d%s", M, N, K, splits, r + 1,
                  tog ? " vec8, splits together (where the view allows)" : v8 ? " vec8" : !residual && r % 2 == 1 ? " m-fastest" : "");
    const double err = rel_err(got, ref);
    report(name + buf, extra.empty() ? err : INFINITY, tol, extra);
  }
  CK(cudaFree(c));
  CK(cudaFree(hits));
  if (res) CK(cudaFree(res));
  if (ws) CK(cudaFree(ws));
  if (counters) CK(cudaFree(counters));
}

// The shared GEMM reference (device_lib_check.cuh).
std::vector<double> ref_gemm(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K) {
  std::vector<double> r(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      const float* a = &A[size_t(m) * K];
      const float* b = &B[size_t(n) * K];
      for (int k = 0; k < K; ++k) s += (double)a[k] * (double)b[k];
      r[size_t(m) * N + n] = s;
    }
  return r;
}
static std::vector<float> transpose(const std::vector<float>& X, int R, int C, int ldt) {
  // X [R][C] -> [C][ldt] (ldt >= R, padding zero)
  std::vector<float> t(size_t(C) * ldt, 0.f);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) t[size_t(c) * ldt + r] = X[size_t(r) * C + c];
  return t;
}

// Dense K-contiguous operands; `offset` elements of misalignment on the A pointer.
template <class G, class T>
static void gemm_densek(const char* gname, int M, int N, int K, int splits, int runs, double tol,
                        int a_offset = 0) {
  auto A = rand_vec(size_t(M) * K), B = rand_vec(size_t(N) * K);
  if (sizeof(T) == 2) round_to_half(A), round_to_half(B);
  auto ref = ref_gemm(A, B, M, N, K);
  std::vector<float> Ap(a_offset, 0.f);
  Ap.insert(Ap.end(), A.begin(), A.end());
  T* dA = to_dev<T>(Ap);
  T* dB = to_dev<T>(B);
  mono_dev::DenseK<T> a{dA + a_offset, M, K, K}, b{dB, N, K, K};
  std::string name = std::string(gname) + " DenseK/DenseK" + (a_offset ? " (A misaligned)" : "");
  run_gemm_case<G>(name, M, N, K, a, b, ref, tol, splits, runs);
  CK(cudaFree(dA));
  CK(cudaFree(dB));
}

// The code generator's form: DenseK<T, true> (alignment promised, no scalar fallback compiled)
// and the two-phase residual epilogue.
template <class G, class T>
static void gemm_densek_aligned_residual(const char* gname, int M, int N, int K, int splits, int runs,
                                         double tol) {
  auto A = rand_vec(size_t(M) * K), B = rand_vec(size_t(N) * K);
  if (sizeof(T) == 2) round_to_half(A), round_to_half(B);
  auto ref = ref_gemm(A, B, M, N, K);
  T* dA = to_dev<T>(A);
  T* dB = to_dev<T>(B);
  mono_dev::DenseK<T, true> a{dA, M, K, K}, b{dB, N, K, K};
  run_gemm_case<G>(std::string(gname) + " DenseK<aligned>/DenseK<aligned> + residual", M, N, K, a, b,
                   ref, tol, splits, runs, true);
  CK(cudaFree(dA));
  CK(cudaFree(dB));
}

// X [rows][K] packed tile by tile for BulkTileK (tile_pack.h: stage layout, zero padding).
std::vector<float> tile_pack(const std::vector<float>& X, int rows, int K, int tile_rows, int bk, bool swizzled) {
  std::vector<float> p(size_t(mono::tile_packed_elems(rows, K, tile_rows, bk, swizzled)), 0.f);
  mono::for_each_tile_packed(
      rows, K, tile_rows, bk, [&](size_t i, int64_t r, int64_t k) { p[i] = X[size_t(r) * K + size_t(k)]; }, swizzled);
  return p;
}

// B (and, a_tiled, also A) packed tile by tile and read with one bulk copy per stage
// (BulkTileK): partial row and k tiles (zero padding packed), split-K, both epilogue walks,
// the two-phase residual epilogue, and a second run over the same shared memory.
template <class G>
static void gemm_bulk_tile(const char* gname, int M, int N, int K, int splits, int runs, double tol,
                           bool residual, bool a_tiled) {
  auto A = rand_vec(size_t(M) * K), B = rand_vec(size_t(N) * K);
  round_to_half(A), round_to_half(B);
  auto ref = ref_gemm(A, B, M, N, K);
  const int kt = (K + G::kBK - 1) / G::kBK;
  half_t* dB = to_dev<half_t>(tile_pack(B, N, K, G::kBN, G::kBK));
  mono_dev::BulkTileK<half_t> b{dB, kt};
  const std::string name = std::string(gname) + (a_tiled ? " BulkTileK/BulkTileK" : " DenseK/BulkTileK") +
                           (residual ? " + residual" : "");
  half_t* dA;
  if (a_tiled) {
    dA = to_dev<half_t>(tile_pack(A, M, K, G::kBM, G::kBK));
    mono_dev::BulkTileK<half_t> a{dA, kt};
    run_gemm_case<G>(name, M, N, K, a, b, ref, tol, splits, runs, residual);
  } else {
    dA = to_dev<half_t>(A);
    mono_dev::DenseK<half_t, true> a{dA, M, K, K};
    run_gemm_case<G>(name, M, N, K, a, b, ref, tol, splits, runs, residual);
  }
  CK(cudaFree(dA));
  CK(cudaFree(dB));
}

// The tensor map of an fp16 [rows][ld] matrix at `a` with a box of box_rows rows (loaders.cuh
// TensorK), in device global memory (cudaFree it); null with `err` set if it cannot be encoded.
mono_dev::TensorMap* dev_tensor_map(const half_t* a, int rows, int cols, int ld, int box_rows, std::string* err) {
  mono::TensorMapSpec spec;
  spec.rows = rows, spec.cols = cols, spec.row_stride = int64_t(ld) * 2, spec.box_rows = box_rows;
  CUtensorMap map;
  *err = mono::encode_tensor_map(spec, a, &map);
  if (!err->empty()) return nullptr;
  mono_dev::TensorMap* d;
  CK(cudaMalloc(&d, sizeof(mono_dev::TensorMap)));
  CK(cudaMemcpy(d, &map, sizeof map, cudaMemcpyHostToDevice));
  return d;
}

// A [M][lda] read through a tensor map (TensorK: 128-byte swizzled stages, zero fill by the copy
// engine for rows beyond M and k beyond K), B packed tile by tile (BulkTileK, as generated code
// pairs them) or [N][K] through cp.async (DenseK): partial tiles, a padded row stride, split-K,
// BK = 128 (two copies a stage), the residual epilogue. The map lives in global memory here;
// generated kernels keep theirs in a __constant__ table.
template <class G>
static void gemm_tensor_a(const char* gname, int M, int N, int K, int lda, int splits, int runs, double tol,
                          bool residual, bool b_tiled) {
  auto A = rand_vec(size_t(M) * K), B = rand_vec(size_t(N) * K);
  round_to_half(A), round_to_half(B);
  auto ref = ref_gemm(A, B, M, N, K);
  std::vector<float> Ap(size_t(M) * lda, 0.f);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) Ap[size_t(m) * lda + k] = A[size_t(m) * K + k];
  half_t* dA = to_dev<half_t>(Ap);
  std::string err;
  mono_dev::TensorMap* dmap = dev_tensor_map(dA, M, K, lda, G::kBM, &err);
  const std::string name = std::string(gname) + (b_tiled ? " TensorK/BulkTileK" : " TensorK/DenseK") +
                           (residual ? " + residual" : "") + " lda=" + std::to_string(lda);
  if (!dmap) {
    report(name, INFINITY, tol, "tensor map: " + err);
    CK(cudaFree(dA));
    return;
  }
  const mono_dev::TensorK<half_t> a{dmap};
  half_t* dB = nullptr;
  if (b_tiled) {
    dB = to_dev<half_t>(tile_pack(B, N, K, G::kBN, G::kBK, SwizzledB<G>::value));
    run_gemm_case<G>(name, M, N, K, a, mono_dev::BulkTileK<half_t>{dB, (K + G::kBK - 1) / G::kBK}, ref, tol, splits, runs,
                     residual);
  } else if constexpr (!SwizzledB<G>::value) {
    dB = to_dev<half_t>(B);
    run_gemm_case<G>(name, M, N, K, a, mono_dev::DenseK<half_t, true>{dB, N, K, K}, ref, tol, splits, runs, residual);
  }
  CK(cudaFree(dA));
  CK(cudaFree(dB));
  CK(cudaFree(dmap));
}

// A [K][M] via DenseN (lda = ldA), B [K][N] via DenseN (ldb).
template <class G, class T>
static void gemm_densen(const char* gname, int M, int N, int K, int lda, int ldb, int splits,
                        double tol) {
  auto A = rand_vec(size_t(M) * K), B = rand_vec(size_t(N) * K);
  if (sizeof(T) == 2) round_to_half(A), round_to_half(B);
  auto ref = ref_gemm(A, B, M, N, K);
  T* dA = to_dev<T>(transpose(A, M, K, lda));
  T* dB = to_dev<T>(transpose(B, N, K, ldb));
  mono_dev::DenseN<T> a{dA, M, K, lda}, b{dB, N, K, ldb};
  char buf[96];
  std::snprintf(buf, sizeof buf, " DenseN/DenseN lda=%d ldb=%d", lda, ldb);
  run_gemm_case<G>(std::string(gname) + buf, M, N, K, a, b, ref, tol, splits, 1);
  CK(cudaFree(dA));
  CK(cudaFree(dB));
}

// Convolution through im2col: x [C][H][W], weights [O][C*KH*KW], 3x3, pad 1, stride 1.
// GEMM: rows m = output pixel (oh*W + ow), n = output channel, k = (c, kh, kw).
template <class T>
struct Im2Col {
  const T* x;
  int C, H, W;
  __device__ T operator()(int r, int k) const {
    if (r >= H * W || k >= C * 9) return T{};
    const int c = k / 9, kh = (k % 9) / 3, kw = k % 3;
    const int ih = r / W + kh - 1, iw = r % W + kw - 1;
    if (ih < 0 || ih >= H || iw < 0 || iw >= W) return T{};
    return x[(c * H + ih) * W + iw];
  }
};

template <class G, class T>
static void gemm_conv(const char* gname, int C, int H, int W, int O, int splits, double tol) {
  const int M = H * W, N = O, K = C * 9;
  auto X = rand_vec(size_t(C) * H * W), Wt = rand_vec(size_t(O) * K);
  if (sizeof(T) == 2) round_to_half(X), round_to_half(Wt);
  std::vector<float> A(size_t(M) * K, 0.f);  // host im2col for the reference
  for (int r = 0; r < M; ++r)
    for (int k = 0; k < K; ++k) {
      const int c = k / 9, kh = (k % 9) / 3, kw = k % 3;
      const int ih = r / W + kh - 1, iw = r % W + kw - 1;
      if (ih >= 0 && ih < H && iw >= 0 && iw < W) A[size_t(r) * K + k] = X[(size_t(c) * H + ih) * W + iw];
    }
  auto ref = ref_gemm(A, Wt, M, N, K);
  T* dX = to_dev<T>(X);
  T* dW = to_dev<T>(Wt);
  mono_dev::Gather<T, Im2Col<T>> a{Im2Col<T>{dX, C, H, W}};
  mono_dev::DenseK<T> b{dW, N, K, K};
  char buf[96];
  std::snprintf(buf, sizeof buf, " Gather(im2col C=%d %dx%d)/DenseK", C, H, W);
  run_gemm_case<G>(std::string(gname) + buf, M, N, K, a, b, ref, tol, splits, 1);
  CK(cudaFree(dX));
  CK(cudaFree(dW));
}

// A channels-last convolution through Im2colK: x [N][H][W][C], weights [O][KH*KW*C] (k = (kh, kw, c)),
// rows m = output pixels of all images. Geometry as a type, as the code generator emits it.
template <int N_, int H_, int W_, int C_, int KH_, int KW_, int S_, int P_, int D_>
struct ConvGeo {
  static constexpr int H = H_, W = W_, C = C_, KW = KW_, SH = S_, SW = S_, PH = P_, PW = P_, DH = D_, DW = D_;
  static constexpr int OH = (H + 2 * P_ - D_ * (KH_ - 1) - 1) / S_ + 1, OW = (W + 2 * P_ - D_ * (KW_ - 1) - 1) / S_ + 1;
  static constexpr int P = N_ * OH * OW, K = KH_ * KW_ * C;
  static constexpr int N = N_, KH = KH_;
};

template <class G, class T, class Geo>
static void gemm_conv_nhwc(const char* gname, int O, int splits, double tol, bool w_tiled) {
  const int M = Geo::P, N = O, K = Geo::K;
  auto X = rand_vec(size_t(Geo::N) * Geo::H * Geo::W * Geo::C), Wt = rand_vec(size_t(O) * K);
  if (sizeof(T) == 2) round_to_half(X), round_to_half(Wt);
  std::vector<float> A(size_t(M) * K, 0.f);  // host im2col for the reference
  for (int r = 0; r < M; ++r) {
    const int n = r / (Geo::OH * Geo::OW), oh = r / Geo::OW % Geo::OH, ow = r % Geo::OW;
    for (int k = 0; k < K; ++k) {
      const int c = k % Geo::C, kh = k / Geo::C / Geo::KW, kw = k / Geo::C % Geo::KW;
      const int ih = oh * Geo::SH - Geo::PH + kh * Geo::DH, iw = ow * Geo::SW - Geo::PW + kw * Geo::DW;
      if (ih >= 0 && ih < Geo::H && iw >= 0 && iw < Geo::W)
        A[size_t(r) * K + k] = X[((size_t(n) * Geo::H + ih) * Geo::W + iw) * Geo::C + c];
    }
  }
  auto ref = ref_gemm(A, Wt, M, N, K);
  T* dX = to_dev<T>(X);
  T* dW = nullptr;
  const mono_dev::Im2colK<T, Geo> a{dX};
  char buf[128];
  std::snprintf(buf, sizeof buf, " Im2colK(%dx%dx%dx%d k%dx%d s%d p%d d%d)/%s", Geo::N, Geo::H, Geo::W, Geo::C, Geo::KH,
                Geo::KW, Geo::SH, Geo::PH, Geo::DH, w_tiled ? "BulkTileK" : "DenseK");
  if constexpr (sizeof(T) == 2) {
    if (w_tiled) {
      dW = to_dev<half_t>(tile_pack(Wt, N, K, G::kBN, G::kBK, false));
      run_gemm_case<G>(std::string(gname) + buf, M, N, K, a, mono_dev::BulkTileK<half_t>{dW, (K + G::kBK - 1) / G::kBK}, ref,
                       tol, splits, 1, true);
    }
  }
  if (!w_tiled) {
    dW = to_dev<T>(Wt);
    run_gemm_case<G>(std::string(gname) + buf, M, N, K, a, mono_dev::DenseK<T, true>{dW, N, K, K}, ref, tol, splits, 1);
  }
  CK(cudaFree(dX));
  CK(cudaFree(dW));
}

void gemm_checks() {
  using H1 = mono_dev::GemmF16<64, 128, 32, 2, 4, 3>;
  using H2 = mono_dev::GemmF16<64, 64, 32, 2, 4, 3>;
  using H3 = mono_dev::GemmF16<128, 128, 32, 2, 4, 3>;
  using H4 = mono_dev::GemmF16<32, 64, 64, 2, 4, 2>;
  using F1 = mono_dev::GemmF32<64, 64, 16, 2, 4>;
  using F2 = mono_dev::GemmF32<32, 64, 16, 2, 4>;
  const double th = 2e-3, tf = 1e-5;

  gemm_densek<H1, half_t>("GemmF16<64,128,32,2,4,3>", 77, 130, 200, 1, 1, th);
  gemm_densek<H1, half_t>("GemmF16<64,128,32,2,4,3>", 77, 130, 200, 3, 2, th);
  gemm_densek<H1, half_t>("GemmF16<64,128,32,2,4,3>", 128, 768, 768, 1, 1, th);
  gemm_densek<H1, half_t>("GemmF16<64,128,32,2,4,3>", 128, 768, 3072, 8, 2, th);
  gemm_densek<H2, half_t>("GemmF16<64,64,32,2,4,3>", 200, 96, 77, 1, 1, th);   // K%8 != 0: scalar
  gemm_densek<H2, half_t>("GemmF16<64,64,32,2,4,3>", 77, 130, 200, 1, 1, th, 3);  // misaligned
  gemm_densek<H2, half_t>("GemmF16<64,64,32,2,4,3>", 1, 50, 1000, 5, 2, th);
  gemm_densek<H3, half_t>("GemmF16<128,128,32,2,4,3>", 128, 768, 768, 1, 1, th);
  gemm_densek<H3, half_t>("GemmF16<128,128,32,2,4,3>", 300, 260, 136, 3, 2, th);
  gemm_densek<H4, half_t>("GemmF16<32,64,64,2,4,2>", 128, 3072, 768, 1, 1, th);
  gemm_densek<H4, half_t>("GemmF16<32,64,64,2,4,2>", 77, 130, 200, 3, 2, th);
  using H5 = mono_dev::GemmF16<64, 64, 64, 2, 4, 4>;
  gemm_bulk_tile<H5>("GemmF16<64,64,64,2,4,4>", 77, 130, 200, 1, 2, th, false, false);  // partial tiles
  gemm_bulk_tile<H5>("GemmF16<64,64,64,2,4,4>", 128, 768, 768, 3, 2, th, false, false);
  gemm_bulk_tile<H5>("GemmF16<64,64,64,2,4,4>", 100, 72, 192, 2, 1, th, true, false);
  gemm_bulk_tile<H4>("GemmF16<32,64,64,2,4,2>", 33, 96, 640, 5, 2, th, false, false);
  gemm_bulk_tile<H1>("GemmF16<64,128,32,2,4,3>", 64, 300, 264, 1, 2, th, false, false);  // last k tile partial
  gemm_bulk_tile<H5>("GemmF16<64,64,64,2,4,4>", 77, 130, 200, 3, 2, th, false, true);
  gemm_bulk_tile<H4>("GemmF16<32,64,64,2,4,2>", 128, 768, 768, 1, 1, th, true, true);
  {  // TensorK (A through a tensor map)
    using H5 = mono_dev::GemmF16<64, 64, 64, 2, 4, 4>;
    using H14 = mono_dev::GemmF16<64, 64, 128, 2, 4, 4>;
    gemm_tensor_a<H5>("GemmF16<64,64,64,2,4,4>", 77, 130, 200, 200, 1, 2, th, false, true);  // partial tiles
    gemm_tensor_a<H5>("GemmF16<64,64,64,2,4,4>", 128, 768, 768, 776, 3, 2, th, false, true);  // padded rows, split 3
    gemm_tensor_a<H5>("GemmF16<64,64,64,2,4,4>", 100, 72, 192, 192, 2, 1, th, true, true);
    gemm_tensor_a<H4>("GemmF16<32,64,64,2,4,2>", 33, 96, 640, 640, 5, 2, th, false, true);
    gemm_tensor_a<H4>("GemmF16<32,64,64,2,4,2>", 77, 130, 200, 208, 1, 2, th, true, false);
    gemm_tensor_a<H14>("GemmF16<64,64,128,2,4,4>", 197, 200, 840, 840, 3, 2, th, false, true);  // two copies a stage
    gemm_tensor_a<H14>("GemmF16<64,64,128,2,4,4>", 64, 256, 3072, 3072, 4, 1, th, true, false);
  }
  {  // GemmWg (wgmma): A through a tensor map, B packed swizzled, as generated code pairs them
    using W1 = mono_dev::GemmWg<64, 64, 128, 4, 2, 4>;   // two warpgroups along n: m64n32
    using W2 = mono_dev::GemmWg<128, 64, 128, 8, 1, 4>;  // two along m: m64n64
    using W3 = mono_dev::GemmWg<64, 128, 64, 4, 2, 3>;   // m64n64, BK 64
    using W4 = mono_dev::GemmWg<64, 32, 128, 4, 2, 4>;   // m64n16
    using W5 = mono_dev::GemmWg<128, 128, 64, 8, 1, 4>;  // m64n128
    using W6 = mono_dev::GemmWg<64, 64, 128, 4, 2, 6>;   // 6 stages: every k tile of K = 768 at once
    using W7 = mono_dev::GemmWg<64, 96, 128, 4, 2, 4>;   // m64n48 (the planner's 96-wide tile)
    using W8 = mono_dev::GemmWg<128, 128, 128, 8, 1, 3>; // m64n128, the planner's 128x128 tile at BK 128
    using W9 = mono_dev::GemmWg<128, 128, 64, 8, 1, 3>;  // ... and at BK 64
    gemm_tensor_a<W1>("GemmWg<64,64,128,4,2,4>", 128, 768, 768, 768, 1, 1, th, false, true);
    gemm_tensor_a<W1>("GemmWg<64,64,128,4,2,4>", 77, 130, 200, 200, 1, 2, th, false, true);  // partial tiles
    gemm_tensor_a<W1>("GemmWg<64,64,128,4,2,4>", 128, 768, 3072, 3080, 4, 2, th, true, true);  // padded rows, split 4
    gemm_tensor_a<W1>("GemmWg<64,64,128,4,2,4>", 197, 200, 840, 840, 3, 2, th, false, true);
    gemm_tensor_a<W2>("GemmWg<128,64,128,8,1,4>", 128, 2304, 768, 768, 1, 1, th, false, true);
    gemm_tensor_a<W2>("GemmWg<128,64,128,8,1,4>", 197, 130, 392, 392, 2, 2, th, true, true);
    gemm_tensor_a<W3>("GemmWg<64,128,64,4,2,3>", 100, 300, 264, 264, 1, 2, th, false, true);  // last k tile partial
    gemm_tensor_a<W3>("GemmWg<64,128,64,4,2,3>", 16, 64, 64, 64, 1, 1, th, true, true);  // M < 64 (tiny models)
    gemm_tensor_a<W4>("GemmWg<64,32,128,4,2,4>", 77, 130, 200, 200, 3, 2, th, false, true);
    gemm_tensor_a<W5>("GemmWg<128,128,64,8,1,4>", 128, 768, 768, 768, 2, 2, th, true, true);
    gemm_tensor_a<W6>("GemmWg<64,64,128,4,2,6>", 128, 3072, 768, 768, 1, 2, th, false, true);
    gemm_tensor_a<W6>("GemmWg<64,64,128,4,2,6>", 128, 768, 3072, 3080, 4, 2, th, true, true);  // split 4
    gemm_tensor_a<W6>("GemmWg<64,64,128,4,2,6>", 77, 130, 1800, 1800, 1, 2, th, false, true);  // 15 k tiles, partial
    gemm_tensor_a<W7>("GemmWg<64,96,128,4,2,4>", 197, 3072, 768, 768, 1, 1, th, false, true);  // vit-base's FFN1
    gemm_tensor_a<W7>("GemmWg<64,96,128,4,2,4>", 197, 768, 3072, 3080, 4, 2, th, true, true);  // padded rows, split 4
    gemm_tensor_a<W7>("GemmWg<64,96,128,4,2,4>", 77, 130, 200, 200, 1, 2, th, false, true);  // partial tiles
    gemm_tensor_a<W7>("GemmWg<64,96,128,4,2,4>", 16, 100, 64, 64, 1, 1, th, true, true);  // M < 64, one partial column tile
    gemm_tensor_a<W8>("GemmWg<128,128,128,8,1,3>", 128, 512, 4096, 4096, 4, 2, th, true, true);  // albert's K (4096), split-K 4
    gemm_tensor_a<W8>("GemmWg<128,128,128,8,1,3>", 128, 768, 768, 768, 1, 1, th, false, true);
    gemm_tensor_a<W8>("GemmWg<128,128,128,8,1,3>", 197, 300, 520, 520, 2, 2, th, true, true);  // partial tiles, split 2
    gemm_tensor_a<W8>("GemmWg<128,128,128,8,1,3>", 16, 100, 64, 64, 1, 1, th, false, true);  // M < 64, half a k tile
    gemm_tensor_a<W9>("GemmWg<128,128,64,8,1,3>", 300, 384, 96, 96, 1, 2, th, true, true);  // swin-t's MLP shape, partial k tile
    gemm_tensor_a<W9>("GemmWg<128,128,64,8,1,3>", 77, 130, 1800, 1800, 3, 2, th, false, true);
    // Two k groups (KGROUPS 2): each warpgroup takes half of every k tile over the whole width,
    // summed in shared memory before the epilogue.
    using K1 = mono_dev::GemmWg<64, 64, 128, 4, 1, 4, 2>;  // m64n64, 4 k steps a group
    using K2 = mono_dev::GemmWg<64, 32, 128, 4, 1, 4, 2>;  // m64n32
    using K3 = mono_dev::GemmWg<64, 64, 64, 4, 1, 6, 2>;   // BK 64: 2 k steps a group, inside one 64-k block
    gemm_tensor_a<K1>("GemmWg<64,64,128,4,1,4,2>", 128, 768, 768, 768, 1, 1, th, false, true);
    gemm_tensor_a<K1>("GemmWg<64,64,128,4,1,4,2>", 77, 130, 200, 200, 1, 2, th, true, true);  // partial tiles
    gemm_tensor_a<K1>("GemmWg<64,64,128,4,1,4,2>", 128, 768, 3072, 3080, 4, 2, th, true, true);  // padded rows, split 4
    gemm_tensor_a<K1>("GemmWg<64,64,128,4,1,4,2>", 197, 200, 840, 840, 3, 2, th, false, true);
    gemm_tensor_a<K1>("GemmWg<64,64,128,4,1,4,2>", 16, 64, 64, 64, 1, 1, th, true, true);  // M < 64, one half-empty k tile
    gemm_tensor_a<K2>("GemmWg<64,32,128,4,1,4,2>", 77, 130, 200, 200, 3, 2, th, true, true);
    gemm_tensor_a<K2>("GemmWg<64,32,128,4,1,4,2>", 128, 2304, 768, 768, 1, 1, th, false, true);
    gemm_tensor_a<K3>("GemmWg<64,64,64,4,1,6,2>", 197, 136, 392, 392, 2, 2, th, true, true);
    gemm_tensor_a<K3>("GemmWg<64,64,64,4,1,6,2>", 77, 130, 1800, 1800, 1, 2, th, false, true);
  }
  gemm_densek_aligned_residual<H4, half_t>("GemmF16<32,64,64,2,4,2>", 128, 768, 768, 1, 1, th);
  gemm_densek_aligned_residual<H4, half_t>("GemmF16<32,64,64,2,4,2>", 77, 136, 200, 3, 2, th);  // K tail
  gemm_densen<H1, half_t>("GemmF16<64,128,32,2,4,3>", 77, 130, 200, 77, 130, 1, th);   // scalar
  gemm_densen<H1, half_t>("GemmF16<64,128,32,2,4,3>", 77, 132, 200, 80, 136, 1, th);   // vector
  gemm_densen<H4, half_t>("GemmF16<32,64,64,2,4,2>", 128, 768, 768, 128, 768, 3, th);  // vector
  gemm_conv<H1, half_t>("GemmF16<64,128,32,2,4,3>", 5, 9, 11, 13, 1, th);
  gemm_conv<H2, half_t>("GemmF16<64,64,32,2,4,3>", 16, 14, 14, 70, 2, th);
  {  // channels-last convolutions (Im2colK): padding, strides, dilation, two images, partial tiles
    using H14 = mono_dev::GemmF16<64, 64, 128, 2, 4, 4>;
    gemm_conv_nhwc<H5, half_t, ConvGeo<1, 14, 14, 64, 3, 3, 1, 1, 1>>("GemmF16<64,64,64,2,4,4>", 96, 1, th, true);
    gemm_conv_nhwc<H14, half_t, ConvGeo<2, 9, 11, 24, 3, 3, 2, 1, 1>>("GemmF16<64,64,128,2,4,4>", 40, 2, th, true);
    gemm_conv_nhwc<H4, half_t, ConvGeo<1, 7, 7, 32, 3, 3, 1, 2, 2>>("GemmF16<32,64,64,2,4,2>", 72, 3, th, true);
    gemm_conv_nhwc<H2, half_t, ConvGeo<1, 15, 15, 16, 1, 1, 2, 0, 1>>("GemmF16<64,64,32,2,4,3>", 64, 1, th, false);
  }

  gemm_densek<F1, float>("GemmF32<64,64,16,2,4>", 77, 130, 200, 1, 1, tf);
  gemm_densek<F1, float>("GemmF32<64,64,16,2,4>", 77, 130, 200, 3, 2, tf);
  gemm_densek<F1, float>("GemmF32<64,64,16,2,4>", 33, 50, 77, 1, 1, tf);        // K%4 != 0: scalar
  gemm_densek<F1, float>("GemmF32<64,64,16,2,4>", 77, 130, 200, 1, 1, tf, 1);   // misaligned
  gemm_densek<F2, float>("GemmF32<32,64,16,2,4>", 128, 768, 768, 1, 1, tf);
  gemm_densek<F2, float>("GemmF32<32,64,16,2,4>", 128, 768, 768, 4, 2, tf);
  gemm_densek_aligned_residual<F2, float>("GemmF32<32,64,16,2,4>", 77, 132, 200, 3, 2, tf);
  gemm_densen<F1, float>("GemmF32<64,64,16,2,4>", 77, 130, 200, 77, 130, 1, tf);  // scalar
  gemm_densen<F2, float>("GemmF32<32,64,16,2,4>", 77, 130, 200, 80, 132, 3, tf);  // vector
  gemm_conv<F1, float>("GemmF32<64,64,16,2,4>", 5, 9, 11, 13, 1, tf);
  gemm_conv<F2, float>("GemmF32<32,64,16,2,4>", 16, 14, 14, 70, 2, tf);
  gemm_conv_nhwc<F1, float, ConvGeo<2, 9, 11, 8, 3, 3, 2, 1, 1>>("GemmF32<64,64,16,2,4>", 24, 1, tf, false);
  gemm_conv_nhwc<F2, float, ConvGeo<1, 7, 7, 16, 3, 3, 1, 1, 1>>("GemmF32<32,64,16,2,4>", 40, 2, tf, false);
}

// Small shapes only: quick enough for compute-sanitizer --tool racecheck.
void gemm_small_checks() {
  using H1 = mono_dev::GemmF16<64, 128, 32, 2, 4, 3>;
  using H4 = mono_dev::GemmF16<32, 64, 64, 2, 4, 2>;
  using F1 = mono_dev::GemmF32<64, 64, 16, 2, 4>;
  gemm_densek<H1, half_t>("GemmF16<64,128,32,2,4,3>", 77, 130, 200, 3, 1, 2e-3);
  gemm_densek<H4, half_t>("GemmF16<32,64,64,2,4,2>", 77, 130, 200, 1, 1, 2e-3, 3);
  gemm_densen<H1, half_t>("GemmF16<64,128,32,2,4,3>", 77, 132, 200, 80, 136, 1, 2e-3);
  gemm_conv<H4, half_t>("GemmF16<32,64,64,2,4,2>", 5, 9, 11, 13, 1, 2e-3);
  gemm_densek<F1, float>("GemmF32<64,64,16,2,4>", 77, 130, 200, 3, 1, 1e-5);
  gemm_densen<F1, float>("GemmF32<64,64,16,2,4>", 77, 130, 200, 80, 132, 1, 1e-5);
}
