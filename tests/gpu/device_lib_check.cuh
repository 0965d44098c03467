// What the files of the device-library check share (device_lib_check.cu holds main(); the
// cases are in gemm_checks.cu, row_barrier_checks.cu and gemm_bench.cu): the device headers in
// their include order, CUDA error checks, PASS/FAIL reporting, random data, fp16 conversions,
// copies between host and device, and the check groups main() runs.
#pragma once

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
// gemm_f16.cuh) for one launch and prints where a tile's time goes. The probe's buffers are static:
// each file has its own (no relocatable device code); gemm_bench.cu switches its own on and reads it.
#ifdef MONO_PROBE_BUILD
static __device__ unsigned long long g_probe[2048 * 64];
static __device__ int g_probe_on;
#define MONO_GEMM_PROBE(slot)                                                                   \
  do {                                                                                          \
    if (g_probe_on && threadIdx.x == 0)                                                         \
      g_probe[(blockIdx.y * gridDim.x + blockIdx.x) * 64 + (slot)] = clock64();                 \
  } while (0)
#endif

#include "compiler/codegen/device/common.cuh"
#include "compiler/codegen/device/barrier.cuh"
#include "compiler/codegen/device/ptx.cuh"
#include "compiler/codegen/device/epilogue.cuh"
#include "compiler/codegen/device/split_k.cuh"
#include "compiler/codegen/device/loaders.cuh"
#include "compiler/codegen/device/iterators.cuh"
#include "compiler/codegen/device/gemm_f16.cuh"
#include "compiler/codegen/device/gemm_wg.cuh"
#include "compiler/codegen/device/gemm_f32.cuh"
#include "compiler/codegen/device/rows.cuh"

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

extern int g_failures;   // checks failed so far
extern std::mt19937 g_rng;  // one seeded stream for every file: the data do not depend on the split

// One line per check: the max relative error against `tol`, or PASS/FAIL.
void report(const std::string& name, double err, double tol, const std::string& extra = "");
void report_bool(const std::string& name, bool ok, const std::string& extra = "");

inline std::vector<float> rand_vec(size_t n, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g_rng);
  return v;
}
inline half_t h_of(float f) {
  __half h = __float2half_rn(f);
  half_t r;
  std::memcpy(&r, &h, 2);
  return r;
}
inline float f_of(half_t h) {
  __half x;
  std::memcpy(&x, &h, 2);
  return __half2float(x);
}
inline void round_to_half(std::vector<float>& v) {
  for (auto& x : v) x = f_of(h_of(x));
}

template <class T>
T* to_dev(const std::vector<float>& v, size_t pad = 0) {
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

inline double rel_err(const std::vector<float>& got, const std::vector<double>& ref) {
  double md = 0, mr = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs((double)got[i] - ref[i]);
    if (!(d == d)) return INFINITY;
    md = std::max(md, d);
    mr = std::max(mr, std::fabs(ref[i]));
  }
  return mr > 0 ? md / mr : md;
}

template <class T>
std::vector<float> from_dev(const T* d, size_t n) {
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

// Microseconds a launch: `launch(stream, i)` issues launch i on `stream`; 10 warm-up launches
// (i = 0, the default stream), then CUDA graphs of 50 launches (i = 0..49) replayed 4 times. The
// graph leaves out the CPU's launch overhead; each launch still pays the ~0.6-1 us gap between
// consecutive grids (gemm_bench.cu, fusion_probe.cu).
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

// GEMM helpers that gemm_bench.cu shares (gemm_checks.cu).
// C = A B^T in double from the (already rounded) inputs: A [M][K], B [N][K], both K contiguous
// (gemm_checks.cu; fusion_probe.cu's MLP reference too).
std::vector<double> ref_gemm(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K);
// softmax(Q K^T / sqrt(D)) V in double, per batch: q [batch][rows][D], k and v [batch][keys][D];
// causal: key j is masked for row r when j > r + keys - rows; the first `lead` keys of odd rows
// score `masked` instead (attention_checks.cu; fusion_probe.cu's causal heads too).
std::vector<double> ref_attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                                  int batch, int rows, int keys, int D, bool causal, int lead = 0,
                                  float masked = -INFINITY);
// X [rows][K] packed tile by tile for BulkTileK (tile_pack.h: stage layout, zero padding;
// swizzled: GemmWg's layout).
std::vector<float> tile_pack(const std::vector<float>& X, int rows, int K, int tile_rows, int bk, bool swizzled = false);
// Whether GEMM tile G reads packed B swizzled (GemmWg) or padded (GemmF16).
template <class G, class = void>
struct SwizzledB : std::false_type {};
template <class G>
struct SwizzledB<G, std::void_t<typename G::Base>> : std::true_type {};
// The tensor map of an fp16 [rows][ld] matrix at `a` with a box of box_rows rows (loaders.cuh
// TensorK), in device global memory (cudaFree it); null with `err` set if it cannot be encoded.
mono_dev::TensorMap* dev_tensor_map(const half_t* a, int rows, int cols, int ld, int box_rows, std::string* err);

// The check groups: one line per check, failures counted in g_failures.
void common_checks();      // row_barrier_checks.cu: common.cuh helpers
void barrier_checks();     //   the grid barrier
void row_checks();         //   LayerNorm and Softmax rows, fp32 and fp16
void gemm_checks();        // gemm_checks.cu: GemmF16 and GemmF32, every operand kind, split-K
void gemm_small_checks();  //   small shapes only (for racecheck)
void attention_checks();   // attention_checks.cu: FlashAttention, with and without the causal mode
void bench();              // gemm_bench.cu: GemmF16 timings on BERT-base shapes (informational)
void bench_one_cfg(int cfg, int M, int N, int K, int splits);  // one of them (--bench-one)
void fusion_probe();       // fusion_probe.cu: a fused MLP stage's reductions and items, timed (--fusion-probe)
