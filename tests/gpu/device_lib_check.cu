// Standalone GPU check of the Mono device library (compiler/codegen/device/*.cuh) against CPU
// references on random data.
//
//   nvcc -arch=sm_90 -O2 -I. tests/gpu/device_lib_check.cu -o device_lib_check && ./device_lib_check
//   ./device_lib_check --bench     # also times GemmF16 tiles on BERT-base shapes (informational)
//   ./device_lib_check --gemm-small                  # small GEMM checks only (for racecheck)
//   ./device_lib_check --bench-one CFG M N K SPLITS  # one benchmark (for ncu), CFG 1..8
//                                                    # (CFG+100: B stored [K][N], DenseN)
//
// One line per check: name, max relative error (max|diff| / max|ref|), tolerance, PASS/FAIL.
// Exit status is non-zero if any check fails.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

// Probe build (-DMONO_PROBE_BUILD, bench/build_gpu_bundle.sh builds it as device_lib_probe):
// --bench-one also records clock64() at the GemmF16 tile's phases (see MONO_GEMM_PROBE in
// gemm.cuh) for one launch and prints where a tile's time goes.
#ifdef MONO_PROBE_BUILD
__device__ unsigned long long g_probe[2048 * 64];
__device__ int g_probe_on;
#define MONO_GEMM_PROBE(slot)                                                                   \
  do {                                                                                          \
    if (g_probe_on && threadIdx.x == 0)                                                         \
      g_probe[(blockIdx.y * gridDim.x + blockIdx.x) * 64 + (slot)] = clock64();                 \
  } while (0)
#endif

#include "compiler/codegen/device/common.cuh"
#include "compiler/codegen/device/barrier.cuh"
#include "compiler/codegen/device/gemm.cuh"
#include "compiler/codegen/device/rows.cuh"
#include "compiler/codegen/tile_pack.h"
#include "compiler/runtime/tensor_map.h"

using mono_dev::half_t;

#define CK(x)                                                                                    \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__,     \
                   __LINE__, #x);                                                                \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

static int g_failures = 0;
static std::mt19937 g_rng(12345);

static void report(const std::string& name, double err, double tol, const std::string& extra = "") {
  const bool ok = std::isfinite(err) && err < tol;
  std::printf("%-72s max_rel_err=%.3e tol=%.0e %s%s%s\n", name.c_str(), err, tol, ok ? "PASS" : "FAIL",
              extra.empty() ? "" : "  ", extra.c_str());
  if (!ok) ++g_failures;
}
static void report_bool(const std::string& name, bool ok, const std::string& extra = "") {
  std::printf("%-72s %s%s%s\n", name.c_str(), ok ? "PASS" : "FAIL", extra.empty() ? "" : "  ",
              extra.c_str());
  if (!ok) ++g_failures;
}

static std::vector<float> rand_vec(size_t n, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g_rng);
  return v;
}
static half_t h_of(float f) {
  __half h = __float2half_rn(f);
  half_t r;
  std::memcpy(&r, &h, 2);
  return r;
}
static float f_of(half_t h) {
  __half x;
  std::memcpy(&x, &h, 2);
  return __half2float(x);
}
static void round_to_half(std::vector<float>& v) {
  for (auto& x : v) x = f_of(h_of(x));
}

template <class T>
static T* to_dev(const std::vector<float>& v, size_t pad = 0) {
  std::vector<T> h(v.size() + pad);
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (sizeof(T) == 2)
      h[i] = h_of(v[i]);
    else
      h[i] = v[i];
  }
  T* d;
  CK(cudaMalloc(&d, (h.size() ? h.size() : 1) * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

static double rel_err(const std::vector<float>& got, const std::vector<double>& ref) {
  double md = 0, mr = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs((double)got[i] - ref[i]);
    if (!(d == d)) return INFINITY;
    md = std::max(md, d);
    mr = std::max(mr, std::fabs(ref[i]));
  }
  return mr > 0 ? md / mr : md;
}

// ------------------------------------------------------------------------------------------------
// GEMM
// ------------------------------------------------------------------------------------------------

struct StoreEpi {
  float* c;
  unsigned int* hits;
  int N;
  __device__ void operator()(int m, int n, float acc) const {
    c[(long long)m * N + n] = acc;
    atomicAdd(hits + (long long)m * N + n, 1u);
  }
};

// Same stores, declared contiguous along m: GemmF16's staged epilogue then walks the tile
// column-major (odd runs of run_gemm_case use it).
struct StoreEpiMF : StoreEpi {
  static constexpr bool m_fastest = true;
};

// Same stores, declared 8-wide (gemm.cuh vec8_stores): GemmF16 then hands each thread chunks of 8
// consecutive n and calls vec8 for whole chunks, the per-element form for chunks cut by N (the
// last run of every run_gemm_case uses it).
struct StoreEpiV8 : StoreEpi {
  static constexpr bool vec8_stores = true;
  __device__ void vec8(int m, int n, const float (&acc)[8]) const {
    for (int j = 0; j < 8; ++j) (*this)(m, n + j, acc[j]);
  }
};

// The two-phase epilogue form (gemm.cuh): reads r[m][n] in load(), stores acc + r in the second
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

// PRE (GemmF16 only): the operand whose first k tiles GemmF16::preload issues before tile().
template <class G, class AL, class BL, class Epi, int PRE = mono_dev::kPreNone>
__global__ void __launch_bounds__(G::kThreads) gemm_kernel(int M, int N, int K, AL a, BL b,
                                                           Epi epi, float* ws,
                                                           unsigned int* counters, int splits) {
  extern __shared__ __align__(1024) unsigned char dyn_smem[];  // TensorK: 1024-byte aligned stages
  const int tiles_n = (N + G::kBN - 1) / G::kBN;
  const int tile = blockIdx.x;
  const int m0 = (tile / tiles_n) * G::kBM, n0 = (tile % tiles_n) * G::kBN;
  int kb, ke;
  mono_dev::split_k_range(K, G::kBK, splits, blockIdx.y, kb, ke);
  float* tile_ws = splits > 1 ? ws + (long long)tile * (splits - 1) * G::kBM * G::kBN : nullptr;
  unsigned int* tile_counter = splits > 1 ? counters + tile : nullptr;
  if constexpr (PRE == mono_dev::kPreNone) {
    G::tile(M, N, m0, n0, kb, ke, a, b, epi, dyn_smem, tile_ws, tile_counter, splits, blockIdx.y);
  } else {
    if constexpr (PRE == mono_dev::kPreA) G::template preload<PRE>(m0, kb, ke, a, dyn_smem);
    else G::template preload<PRE>(n0, kb, ke, b, dyn_smem);
    __syncthreads();  // as the grid barrier between a preload and its tile in generated code
    G::tile(M, N, m0, n0, kb, ke, a, b, epi, dyn_smem, tile_ws, tile_counter, splits, blockIdx.y, PRE);
  }
}

// Runs one GEMM `runs` times; checks the result after each run, exactly-once epilogue calls, and
// (split-K) that the counters are back to zero and that every run gives the same bits (no float
// atomics). residual: the two-phase epilogue.
template <class G, class AL, class BL, int PRE = mono_dev::kPreNone>
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
    const size_t slots = size_t(tiles) * (splits - 1) * G::kBM * G::kBN;  // partial tiles (gemm.cuh)
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
  auto kern = gemm_kernel<G, AL, BL, StoreEpi, PRE>;
  auto kern_res = gemm_kernel<G, AL, BL, ResidualEpi, PRE>;
  auto kern_mf = gemm_kernel<G, AL, BL, StoreEpiMF, PRE>;
  auto kern_v8 = gemm_kernel<G, AL, BL, StoreEpiV8, PRE>;
  auto kern_res_v8 = gemm_kernel<G, AL, BL, ResidualEpiV8, PRE>;
  CK(cudaFuncSetAttribute(kern_v8, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  CK(cudaFuncSetAttribute(kern_res_v8, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  CK(cudaFuncSetAttribute(kern_mf, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  CK(cudaFuncSetAttribute(kern_res, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  std::vector<float> first;  // split-K: the first run's result
  for (int r = 0; r <= runs; ++r) {  // the extra last run: 8-wide stores (StoreEpiV8 / ResidualEpiV8)
    const bool v8 = r == runs;
    CK(cudaMemset(c, 0xff, sizeof(float) * M * N));  // NaN: unwritten outputs fail
    CK(cudaMemset(hits, 0, sizeof(unsigned) * M * N));
    if (v8 && residual)
      kern_res_v8<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(
          M, N, K, a, b, ResidualEpiV8{{c, hits, N, res}}, ws, counters, splits);
    else if (v8)
      kern_v8<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(M, N, K, a, b, StoreEpiV8{{c, hits, N}},
                                                                    ws, counters, splits);
    else if (residual)
      kern_res<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(
          M, N, K, a, b, ResidualEpi{c, hits, N, res}, ws, counters, splits);
    else if (r % 2 == 1)
      kern_mf<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(M, N, K, a, b, StoreEpiMF{{c, hits, N}},
                                                                    ws, counters, splits);
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
                  v8 ? " vec8" : !residual && r % 2 == 1 ? " m-fastest" : "");
    const double err = rel_err(got, ref);
    report(name + buf, extra.empty() ? err : INFINITY, tol, extra);
  }
  CK(cudaFree(c));
  CK(cudaFree(hits));
  if (res) CK(cudaFree(res));
  if (ws) CK(cudaFree(ws));
  if (counters) CK(cudaFree(counters));
}

// A [M][K] (K contiguous), B [N][K]; reference in double from the (already rounded) inputs.
static std::vector<double> ref_gemm(const std::vector<float>& A, const std::vector<float>& B, int M,
                                    int N, int K) {
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

// GemmF16::preload of one operand (PRE = kPreA: A, the conv weights' place; kPreB: B, the MatMul
// weights') before tile(), with the code generator's aligned loaders.
template <class G, int PRE>
static void gemm_preload(const char* gname, int M, int N, int K, int splits, double tol) {
  auto A = rand_vec(size_t(M) * K), B = rand_vec(size_t(N) * K);
  round_to_half(A), round_to_half(B);
  auto ref = ref_gemm(A, B, M, N, K);
  half_t* dA = to_dev<half_t>(A);
  half_t* dB = to_dev<half_t>(B);
  mono_dev::DenseK<half_t, true> a{dA, M, K, K}, b{dB, N, K, K};
  run_gemm_case<G, decltype(a), decltype(b), PRE>(
      std::string(gname) + (PRE == mono_dev::kPreA ? " preload A" : " preload B"), M, N, K, a, b, ref, tol, splits, 2);
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

// B through bulk copies (BulkK: K a multiple of BK per split, N not a multiple of BN: the
// uncopied rows of the last column tile must not reach stored outputs), both epilogue walks,
// split-K, and a second run over the same shared memory.
template <class G>
static void gemm_bulk(const char* gname, int M, int N, int K, int splits, int runs, double tol, bool residual) {
  auto A = rand_vec(size_t(M) * K), B = rand_vec(size_t(N) * K);
  round_to_half(A), round_to_half(B);
  auto ref = ref_gemm(A, B, M, N, K);
  half_t* dA = to_dev<half_t>(A);
  half_t* dB = to_dev<half_t>(B);
  mono_dev::DenseK<half_t, true> a{dA, M, K, K};
  mono_dev::BulkK<half_t> b{dB, N, K, K};
  run_gemm_case<G>(std::string(gname) + " DenseK/BulkK" + (residual ? " + residual" : ""), M, N, K, a, b, ref,
                   tol, splits, runs, residual);
  CK(cudaFree(dA));
  CK(cudaFree(dB));
}

// X [rows][K] packed tile by tile for BulkTileK (tile_pack.h: stage layout, zero padding).
static std::vector<float> tile_pack(const std::vector<float>& X, int rows, int K, int tile_rows, int bk) {
  std::vector<float> p(size_t(mono::tile_packed_elems(rows, K, tile_rows, bk)), 0.f);
  mono::for_each_tile_packed(rows, K, tile_rows, bk,
                             [&](size_t i, int64_t r, int64_t k) { p[i] = X[size_t(r) * K + size_t(k)]; });
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

// The tensor map of an fp16 [rows][ld] matrix at `a` with a box of box_rows rows (gemm.cuh
// TensorK), in device global memory (cudaFree it); null with `err` set if it cannot be encoded.
static mono_dev::TensorMap* dev_tensor_map(const half_t* a, int rows, int cols, int ld, int box_rows, std::string* err) {
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
  half_t* dB;
  if (b_tiled) {
    dB = to_dev<half_t>(tile_pack(B, N, K, G::kBN, G::kBK));
    run_gemm_case<G>(name, M, N, K, a, mono_dev::BulkTileK<half_t>{dB, (K + G::kBK - 1) / G::kBK}, ref, tol, splits, runs,
                     residual);
  } else {
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

static void gemm_checks() {
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
  gemm_bulk<H5>("GemmF16<64,64,64,2,4,4>", 77, 130, 512, 1, 2, th, false);
  gemm_bulk<H5>("GemmF16<64,64,64,2,4,4>", 128, 200, 768, 3, 2, th, false);
  gemm_bulk<H5>("GemmF16<64,64,64,2,4,4>", 100, 72, 192, 1, 1, th, true);
  gemm_bulk<H4>("GemmF16<32,64,64,2,4,2>", 33, 96, 640, 5, 2, th, false);
  gemm_bulk<H1>("GemmF16<64,128,32,2,4,3>", 64, 300, 256, 1, 2, th, false);
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
  gemm_densek_aligned_residual<H4, half_t>("GemmF16<32,64,64,2,4,2>", 128, 768, 768, 1, 1, th);
  gemm_densek_aligned_residual<H4, half_t>("GemmF16<32,64,64,2,4,2>", 77, 136, 200, 3, 2, th);  // K tail
  gemm_preload<H5, mono_dev::kPreB>("GemmF16<64,64,64,2,4,4>", 128, 768, 768, 1, th);
  gemm_preload<H5, mono_dev::kPreB>("GemmF16<64,64,64,2,4,4>", 77, 136, 200, 3, th);  // K tail, split-K
  gemm_preload<H5, mono_dev::kPreA>("GemmF16<64,64,64,2,4,4>", 100, 72, 72, 1, th);  // 2 k tiles, 3 preloaded stages
  gemm_preload<H4, mono_dev::kPreA>("GemmF16<32,64,64,2,4,2>", 64, 256, 1000, 2, th);
  gemm_densen<H1, half_t>("GemmF16<64,128,32,2,4,3>", 77, 130, 200, 77, 130, 1, th);   // scalar
  gemm_densen<H1, half_t>("GemmF16<64,128,32,2,4,3>", 77, 132, 200, 80, 136, 1, th);   // vector
  gemm_densen<H4, half_t>("GemmF16<32,64,64,2,4,2>", 128, 768, 768, 128, 768, 3, th);  // vector
  gemm_conv<H1, half_t>("GemmF16<64,128,32,2,4,3>", 5, 9, 11, 13, 1, th);
  gemm_conv<H2, half_t>("GemmF16<64,64,32,2,4,3>", 16, 14, 14, 70, 2, th);

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
}

// ------------------------------------------------------------------------------------------------
// Grid barrier
// ------------------------------------------------------------------------------------------------

// Each phase p: every thread t of block b writes buf[p&1][b][t] = f(p, b, t); barrier; every
// thread reads entries written by OTHER threads of OTHER blocks in this phase (L1 must not serve
// stale lines: the same addresses were read two phases earlier) and counts mismatches.
__global__ void barrier_kernel(unsigned int* state, int* data, int iters, unsigned int* errors) {
  const int nb = gridDim.x, b = blockIdx.x, t = threadIdx.x, nt = blockDim.x;
  unsigned int bad = 0;
  for (int p = 0; p < iters; ++p) {
    int* buf = data + (size_t)(p & 1) * nb * nt;
    buf[b * nt + t] = p * 1000003 + b * 1024 + t;
    mono_dev::grid_barrier(state);
    const int ob1 = (b + 1 + p) % nb, ot1 = (t * 7 + 3) % nt;
    const int ob2 = (b * 13 + p * 5 + 1) % nb, ot2 = nt - 1 - t;
    if (buf[ob1 * nt + ot1] != p * 1000003 + ob1 * 1024 + ot1) ++bad;
    if (buf[ob2 * nt + ot2] != p * 1000003 + ob2 * 1024 + ot2) ++bad;
    // no second barrier needed: buffer p&1 is rewritten only in phase p+2, after barrier p+1
  }
  if (bad) atomicAdd(errors, bad);
}

static void barrier_checks() {
  int dev, sms;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  int per_sm = 0;
  const int threads = 256;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, barrier_kernel, threads, 0));
  const int nb = 2 * sms;
  if (per_sm < 2) {
    report_bool("grid_barrier: 2 blocks/SM not co-resident", false);
    return;
  }
  unsigned int *state, *errors;
  int* data;
  CK(cudaMalloc(&state, 2 * sizeof(unsigned)));
  CK(cudaMemset(state, 0, 2 * sizeof(unsigned)));
  CK(cudaMalloc(&errors, sizeof(unsigned)));
  CK(cudaMemset(errors, 0, sizeof(unsigned)));
  CK(cudaMalloc(&data, sizeof(int) * 2 * nb * threads));
  CK(cudaMemset(data, 0xff, sizeof(int) * 2 * nb * threads));
  int iters = 1000;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float ms = 0;
  for (int launch = 0; launch < 2; ++launch) {
    void* args[] = {&state, &data, &iters, &errors};
    CK(cudaEventRecord(e0));
    CK(cudaLaunchCooperativeKernel((void*)barrier_kernel, dim3(nb), dim3(threads), args, 0, 0));
    CK(cudaEventRecord(e1));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaEventElapsedTime(&ms, e0, e1));
  }
  unsigned long long count;
  unsigned err;
  CK(cudaMemcpy(&count, state, sizeof count, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&err, errors, sizeof err, cudaMemcpyDeviceToHost));
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "errors=%u arrivals=%llu (expect 0, %llu); %.2f us/barrier (2nd launch)", err, count,
                2ull * iters * nb, 1000.0 * ms / iters);
  std::string name = "grid_barrier " + std::to_string(nb) + " blocks x " + std::to_string(threads) +
                     " threads, 2 launches x " + std::to_string(iters);
  report_bool(name, err == 0 && count == 2ull * iters * nb, buf);
  CK(cudaFree(state));
  CK(cudaFree(errors));
  CK(cudaFree(data));
}

// ------------------------------------------------------------------------------------------------
// Row ops
// ------------------------------------------------------------------------------------------------

template <class T>
struct RowIn {
  const T* x;
  int len;
  __device__ float operator()(int r, int i) const { return mono_dev::to_float(x[(long long)r * len + i]); }
};

template <class T, class P>
__global__ void layer_norm_kernel(const T* x, const P* g, const P* b, T* y, int rows, int len,
                                  float eps) {
  const int r = mono_dev::warp_row(blockIdx.x);
  if (r < rows) mono_dev::layer_norm_row<T>(RowIn<T>{x, len}, r, len, g, b, eps, y);
}
template <class T>
__global__ void softmax_kernel(const T* x, T* y, int rows, int len) {
  const int r = mono_dev::warp_row(blockIdx.x);
  if (r < rows) mono_dev::softmax_row<T>(RowIn<T>{x, len}, r, len, y);
}

template <class T>
static std::vector<float> from_dev(const T* d, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<float> r(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 2)
      r[i] = f_of(h[i]);
    else
      r[i] = h[i];
  }
  return r;
}

template <class T>
static void row_checks_for(const char* tname, double tol) {
  const int rows = 37;
  const int lens[] = {31, 768, 1000, 1024, 1025, 3000};
  for (int len : lens) {
    for (int with_beta = 0; with_beta < 2; ++with_beta) {
      auto X = rand_vec(size_t(rows) * len, 2.f, 4.f);  // non-zero mean: tests the two-pass variance
      auto G = rand_vec(len, 0.5f, 1.5f), B = rand_vec(len);
      if (sizeof(T) == 2) round_to_half(X), round_to_half(G), round_to_half(B);
      std::vector<double> ref(size_t(rows) * len);
      for (int r = 0; r < rows; ++r) {
        double s = 0, q = 0;
        for (int i = 0; i < len; ++i) s += X[size_t(r) * len + i];
        const double mean = s / len;
        for (int i = 0; i < len; ++i) q += std::pow(X[size_t(r) * len + i] - mean, 2);
        const double rstd = 1.0 / std::sqrt(q / len + 1e-5);
        for (int i = 0; i < len; ++i)
          ref[size_t(r) * len + i] =
              (X[size_t(r) * len + i] - mean) * rstd * G[i] + (with_beta ? B[i] : 0.0);
      }
      T *dx = to_dev<T>(X), *dg = to_dev<T>(G), *db = to_dev<T>(B), *dy;
      CK(cudaMalloc(&dy, sizeof(T) * rows * len));
      const int blocks = (rows + 7) / 8;
      layer_norm_kernel<T, T><<<blocks, 256>>>(dx, dg, with_beta ? db : nullptr, dy, rows, len, 1e-5f);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      char buf[96];
      std::snprintf(buf, sizeof buf, "layer_norm_row<%s> rows=%d len=%d beta=%s", tname, rows, len,
                    with_beta ? "yes" : "null");
      report(buf, rel_err(from_dev(dy, size_t(rows) * len), ref), tol);
      CK(cudaFree(dx));
      CK(cudaFree(dg));
      CK(cudaFree(db));
      CK(cudaFree(dy));
    }
    {
      auto X = rand_vec(size_t(rows) * len, -8.f, 8.f);
      if (sizeof(T) == 2) round_to_half(X);
      std::vector<double> ref(size_t(rows) * len);
      for (int r = 0; r < rows; ++r) {
        double mx = -1e300, s = 0;
        for (int i = 0; i < len; ++i) mx = std::max(mx, (double)X[size_t(r) * len + i]);
        for (int i = 0; i < len; ++i) s += std::exp(X[size_t(r) * len + i] - mx);
        for (int i = 0; i < len; ++i) ref[size_t(r) * len + i] = std::exp(X[size_t(r) * len + i] - mx) / s;
      }
      T *dx = to_dev<T>(X), *dy;
      CK(cudaMalloc(&dy, sizeof(T) * rows * len));
      softmax_kernel<T><<<(rows + 7) / 8, 256>>>(dx, dy, rows, len);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      char buf[96];
      std::snprintf(buf, sizeof buf, "softmax_row<%s> rows=%d len=%d", tname, rows, len);
      report(buf, rel_err(from_dev(dy, size_t(rows) * len), ref), tol);
      CK(cudaFree(dx));
      CK(cudaFree(dy));
    }
  }
}

// ------------------------------------------------------------------------------------------------
// common.cuh helpers
// ------------------------------------------------------------------------------------------------

__global__ void common_kernel(const float* x, float* out, int n) {
  __shared__ float scratch[33];
  const int t = threadIdx.x;
  const float v = t < n ? x[t] : 0.f;
  const float s = mono_dev::block_sum(t < n ? v + 5.f : 0.f, scratch);  // positive: well-conditioned
  const float m = mono_dev::block_max(t < n ? v : -1e30f, scratch);
  const float ws = mono_dev::warp_sum(v + 5.f), wm = mono_dev::warp_max(v);
  if (t < n) {
    out[0 * n + t] = mono_dev::gelu_erf(v);
    out[1 * n + t] = mono_dev::gelu_tanh(v);
    out[2 * n + t] = mono_dev::sigmoid(v);
    out[3 * n + t] = mono_dev::to_float(mono_dev::from_float<half_t>(v));
    out[4 * n + t] = s;
    out[5 * n + t] = m;
    out[6 * n + t] = ws;
    out[7 * n + t] = wm;
  }
}

static void common_checks() {
  const int n = 256;
  auto X = rand_vec(n, -4.f, 4.f);
  float* dx = to_dev<float>(X);
  float* dout;
  CK(cudaMalloc(&dout, sizeof(float) * 8 * n));
  common_kernel<<<1, n>>>(dx, dout, n);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  auto got = from_dev(dout, size_t(8) * n);
  const char* names[] = {"gelu_erf", "gelu_tanh", "sigmoid", "fp16 round trip", "block_sum",
                         "block_max", "warp_sum", "warp_max"};
  double tot = 0, mx = -1e300;
  for (float v : X) tot += v + 5.0, mx = std::max(mx, (double)v);
  for (int f = 0; f < 8; ++f) {
    std::vector<double> ref(n);
    std::vector<float> g(got.begin() + f * n, got.begin() + (f + 1) * n);
    for (int t = 0; t < n; ++t) {
      const double v = X[t];
      double w_s = 0, w_m = -1e300;
      for (int l = 0; l < 32; ++l) w_s += X[(t & ~31) + l] + 5.0, w_m = std::max(w_m, (double)X[(t & ~31) + l]);
      switch (f) {
        case 0: ref[t] = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); break;
        case 1: ref[t] = 0.5 * v * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v))); break;
        case 2: ref[t] = 1 / (1 + std::exp(-v)); break;
        case 3: ref[t] = f_of(h_of(X[t])); break;
        case 4: ref[t] = tot; break;
        case 5: ref[t] = mx; break;
        case 6: ref[t] = w_s; break;
        case 7: ref[t] = w_m; break;
      }
    }
    report(std::string("common: ") + names[f], rel_err(g, ref), 1e-5);
  }
  CK(cudaFree(dx));
  CK(cudaFree(dout));
}

// ------------------------------------------------------------------------------------------------
// Optional benchmark (informational, never fails): GemmF16 on BERT-base shapes, one launch =
// tiles x splits blocks, each block computes one tile with the pipelined tile() and a fp16 store
// epilogue. Timed through CUDA graphs (no CPU launch overhead; ~1 us grid-to-grid gap remains).
// ------------------------------------------------------------------------------------------------

struct HalfStoreEpi {
  half_t* c;
  int N;
  __device__ void operator()(int m, int n, float acc) const {
    c[(long long)m * N + n] = mono_dev::from_float<half_t>(acc);
  }
};
// The same with one 16-byte store per 8 elements (the chunked epilogue, gemm.cuh vec8_stores).
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
__global__ void __launch_bounds__(G::kThreads) bench_kernel(int M, int N, int K, AL a, BL b,
                                                            Epi epi,
                                                            float* ws, unsigned int* counters, int splits) {
  extern __shared__ __align__(1024) unsigned char dyn_smem[];
  const int tiles_n = (N + G::kBN - 1) / G::kBN;
  const int tile = blockIdx.x;
  int kb, ke;
  mono_dev::split_k_range(K, G::kBK, splits, blockIdx.y, kb, ke);
  G::tile(M, N, (tile / tiles_n) * G::kBM, (tile % tiles_n) * G::kBN, kb, ke, a, b, epi, dyn_smem,
          splits > 1 ? ws + (long long)tile * (splits - 1) * G::kBM * G::kBN : nullptr,
          splits > 1 ? counters + tile : nullptr, splits, blockIdx.y);
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
  else if constexpr (std::is_same<BL, mono_dev::DenseK<half_t>>::value || std::is_same<BL, mono_dev::BulkK<half_t>>::value)
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
  half_t* dB = to_dev<half_t>(tiled ? tile_pack(B, N, K, G::kBN, G::kBK) : B);
  half_t* dC;
  float* ws;
  unsigned* cnt;
  const int tiles = ((M + G::kBM - 1) / G::kBM) * ((N + G::kBN - 1) / G::kBN);
  CK(cudaMalloc(&dC, sizeof(half_t) * M * N));
  CK(cudaMalloc(&ws, sizeof(float) * std::max(1, tiles * (splits - 1) * G::kBM * G::kBN)));
  CK(cudaMalloc(&cnt, sizeof(unsigned) * tiles));
  CK(cudaMemset(cnt, 0, sizeof(unsigned) * tiles));
  using AL = typename std::conditional<
      A_MODE == 2, mono_dev::TensorK<half_t>,
      typename std::conditional<A_TILED, mono_dev::BulkTileK<half_t>, mono_dev::DenseK<half_t>>::type>::type;
  mono_dev::TensorMap* dmap = nullptr;
  auto kern = bench_kernel<G, AL, BL, Epi>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes));
  constexpr bool kn = std::is_same<BL, mono_dev::DenseN<half_t>>::value;
  constexpr bool bulk = std::is_same<BL, mono_dev::BulkK<half_t>>::value;
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
  const BL b = bench_b<BL>(dB, N, K, G::kBK);
  Epi epi_v;
  epi_v.c = dC;
  epi_v.N = N;
  auto launch = [&] {
    kern<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes>>>(M, N, K, a, b, epi_v, ws,
                                                               cnt, splits);
  };
  for (int i = 0; i < 10; ++i) launch();
  CK(cudaDeviceSynchronize());
  // Timed through a CUDA graph of `per_graph` launches: excludes CPU launch overhead (kernels
  // still pay the ~1 us gap between consecutive grids).
  const int per_graph = 50, replays = 4, reps = per_graph * replays;
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < per_graph; ++i)
    kern<<<dim3(tiles, splits), G::kThreads, G::kSmemBytes, st>>>(M, N, K, a, b, epi_v,
                                                                   ws, cnt, splits);
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
  const double us = 1000.0 * ms / reps;
  std::printf("bench %-26s B=%s M=%-4d N=%-5d K=%-5d splits=%-2d blocks=%-4d %8.2f us  %7.1f TFLOP/s\n",
              gname, kn ? "[K][N]" : bulk ? "[N][K]b" : tiled ? (A_MODE == 2 ? "tiles+tmapA" : A_TILED ? "tiles+A" : std::is_same<Epi, HalfStoreEpi>::value ? "tiles" : "tiles,v8") :
              !std::is_same<Epi, HalfStoreEpi>::value ? "[N][K],v8" : std::is_same<BL, mono_dev::DenseK<half_t>>::value ? "[N][K]" : "im2col",
              M, N, K, splits, tiles * splits, us,
              2.0 * M * N * K / (us * 1e-6) / 1e12);
#ifdef MONO_PROBE_BUILD
  probe_report(tiles * splits, (K / splits + G::kBK - 1) / G::kBK, [&] { launch(); });
#endif
  CK(cudaFree(dA));
  CK(cudaFree(dB));
  CK(cudaFree(dC));
  CK(cudaFree(ws));
  CK(cudaFree(cnt));
  if (dmap) CK(cudaFree(dmap));
}

template <class G>
static void bench_one(const char* gname, int M, int N, int K, int splits, int b_kind) {
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
  else if (b_kind == 2)
    bench_one_t<G, mono_dev::BulkK<half_t>>(gname, M, N, K, splits);
  else if (b_kind == 1)
    bench_one_t<G, mono_dev::DenseN<half_t>>(gname, M, N, K, splits);
  else
    bench_one_t<G, mono_dev::DenseK<half_t>>(gname, M, N, K, splits);
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

static void bench_one_cfg(int cfg, int M, int N, int K, int splits) {  // b_kind: 0 DenseK, 1 DenseN, 2 BulkK
  // CFG + 100: B stored [K][N], loaded with DenseN; CFG + 200: B [N][K] through bulk copies;
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
    default: bench_one<BenchH8>("GemmF16<32,128,64,2,4,4>", M, N, K, splits, kn); break;
  }
}

static void bench() {
  const int shapes[][3] = {{128, 768, 768}, {128, 2304, 768}, {128, 3072, 768}, {128, 768, 3072}};
  for (auto& s : shapes)
    for (int cfg = 1; cfg <= 8; ++cfg)
      for (int sp : {1, 2, 4}) bench_one_cfg(cfg, s[0], s[1], s[2], sp);
  for (auto& s : shapes)  // ONNX MatMul weight layout [K][N] through DenseN
    for (int cfg : {105, 106})
      for (int sp : {1, 4}) bench_one_cfg(cfg, s[0], s[1], s[2], sp);
}

// Small shapes only: quick enough for compute-sanitizer --tool racecheck.
static void gemm_small_checks() {
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

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--gemm-small") {
    gemm_small_checks();
    std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "ALL PASSED", g_failures);
    return g_failures ? 1 : 0;
  }
  if (argc == 7 && std::string(argv[1]) == "--bench-one") {  // --bench-one CFG(1-4) M N K SPLITS
    bench_one_cfg(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                  std::atoi(argv[6]));
    return 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  common_checks();
  gemm_checks();
  barrier_checks();
  row_checks_for<float>("float", 1e-5);
  row_checks_for<half_t>("half", 2e-3);
  if (argc > 1 && std::string(argv[1]) == "--bench") bench();
  std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "ALL PASSED", g_failures);
  return g_failures ? 1 : 0;
}
