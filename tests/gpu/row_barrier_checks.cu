// Cases of the device-library check (device_lib_check.cu) for common.cuh (conversions,
// reductions, activation math), barrier.cuh (the grid barrier across co-resident blocks) and
// rows.cuh (LayerNorm and Softmax rows, fp32 and fp16), against CPU references.
#include <type_traits>

#include "tests/gpu/device_lib_check.cuh"

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

void common_checks() {
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
// Grid barrier
// ------------------------------------------------------------------------------------------------

// The barriers under test: 0 = grid_barrier (what generated code calls); 1 = the earlier form
// (__threadfence, a relaxed atomicAdd, polls with nanosleep, __threadfence), timed against it.
// (Measured and dropped, bench/RESULTS.md 2026-11-26: a two-level barrier over sub-counters of
// 12 blocks, 1.70 us; relaxed polls with one fence after them, 1.29 us.)
namespace cand {
__device__ __forceinline__ void fenced(unsigned int* state) {
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long* count = reinterpret_cast<unsigned long long*>(state);
    const unsigned long long n = gridDim.x;
    __threadfence();
    const unsigned long long arrived = atomicAdd(count, 1ull);
    const unsigned long long target = arrived - arrived % n + n;
    while (arrived + 1 != target && mono_dev::ld_acquire_gpu_u64(count) < target) asm volatile("nanosleep.u32 20;" ::: "memory");
    __threadfence();
  }
  __syncthreads();
}
}  // namespace cand

template <int V>
__device__ __forceinline__ void barrier_variant(unsigned int* state) {
  if constexpr (V == 0) mono_dev::grid_barrier(state);
  else cand::fenced(state);
}
const char* const kBarrierNames[] = {"grid_barrier", "earlier fenced barrier"};
constexpr int kBarrierStateWords = 2;

// Each phase p: every thread t of block b writes buf[p&1][b][t] = f(p, b, t); barrier; every
// thread reads entries written by OTHER threads of OTHER blocks in this phase (L1 must not serve
// stale lines: the same addresses were read two phases earlier) and counts mismatches.
template <int V>
__global__ void barrier_kernel(unsigned int* state, int* data, int iters, unsigned int* errors) {
  const int nb = gridDim.x, b = blockIdx.x, t = threadIdx.x, nt = blockDim.x;
  unsigned int bad = 0;
  for (int p = 0; p < iters; ++p) {
    int* buf = data + (size_t)(p & 1) * nb * nt;
    buf[b * nt + t] = p * 1000003 + b * 1024 + t;
    barrier_variant<V>(state);
    const int ob1 = (b + 1 + p) % nb, ot1 = (t * 7 + 3) % nt;
    const int ob2 = (b * 13 + p * 5 + 1) % nb, ot2 = nt - 1 - t;
    if (buf[ob1 * nt + ot1] != p * 1000003 + ob1 * 1024 + ot1) ++bad;
    if (buf[ob2 * nt + ot2] != p * 1000003 + ob2 * 1024 + ot2) ++bad;
    // no second barrier needed: buffer p&1 is rewritten only in phase p+2, after barrier p+1
  }
  if (bad) atomicAdd(errors, bad);
}

// Barriers alone, back to back: the barrier's own latency (the micro-benchmark of issue 19).
template <int V>
__global__ void barrier_only_kernel(unsigned int* state, int iters) {
  for (int p = 0; p < iters; ++p) barrier_variant<V>(state);
}

// Checks barrier V with `per_sm` blocks per multiprocessor (two launches of `iters` phases:
// no errors, the count as expected), and times it with and without the data phases.
template <int V>
void barrier_check(int sms, int per_sm) {
  const int threads = 256;
  int fits = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fits, barrier_kernel<V>, threads, 0));
  const int nb = per_sm * sms;
  if (fits < per_sm) {
    report_bool(std::string(kBarrierNames[V]) + ": " + std::to_string(per_sm) + " blocks/SM not co-resident", false);
    return;
  }
  unsigned int *state, *errors;
  int* data;
  CK(cudaMalloc(&state, kBarrierStateWords * sizeof(unsigned)));
  CK(cudaMemset(state, 0, kBarrierStateWords * sizeof(unsigned)));
  CK(cudaMalloc(&errors, sizeof(unsigned)));
  CK(cudaMemset(errors, 0, sizeof(unsigned)));
  CK(cudaMalloc(&data, sizeof(int) * 2 * nb * threads));
  CK(cudaMemset(data, 0xff, sizeof(int) * 2 * nb * threads));
  int iters = 1000;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float ms = 0, ms_only = 0;
  for (int launch = 0; launch < 2; ++launch) {
    void* args[] = {&state, &data, &iters, &errors};
    CK(cudaEventRecord(e0));
    CK(cudaLaunchCooperativeKernel((void*)barrier_kernel<V>, dim3(nb), dim3(threads), args, 0, 0));
    CK(cudaEventRecord(e1));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaEventElapsedTime(&ms, e0, e1));
  }
  unsigned long long count;
  unsigned err;
  CK(cudaMemcpy(&count, state, sizeof count, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&err, errors, sizeof err, cudaMemcpyDeviceToHost));
  for (int launch = 0; launch < 2; ++launch) {
    void* args[] = {&state, &iters};
    CK(cudaEventRecord(e0));
    CK(cudaLaunchCooperativeKernel((void*)barrier_only_kernel<V>, dim3(nb), dim3(threads), args, 0, 0));
    CK(cudaEventRecord(e1));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaEventElapsedTime(&ms_only, e0, e1));
  }
  const unsigned long long expect = 2ull * iters * nb;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "errors=%u arrivals=%llu (expect 0, %llu); %.2f us/barrier with the data phases, %.2f alone (2nd launch)",
                err, count, expect, 1000.0 * ms / iters, 1000.0 * ms_only / iters);
  std::string name = std::string(kBarrierNames[V]) + " " + std::to_string(nb) + " blocks x " + std::to_string(threads) +
                     " threads, 2 launches x " + std::to_string(iters);
  report_bool(name, err == 0 && count == expect, buf);
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(state));
  CK(cudaFree(errors));
  CK(cudaFree(data));
}

void barrier_checks() {
  int dev, sms;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  for (int per_sm = 1; per_sm <= 2; ++per_sm) {
    barrier_check<0>(sms, per_sm);
    barrier_check<1>(sms, per_sm);
  }
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
// layer_norm_row_v8: fp16 rows, 8 values a lane per 16-byte access, stored 8 at a time.
template <class P>
__global__ void layer_norm_v8_kernel(const mono_dev::half_t* x, const P* g, const P* b, mono_dev::half_t* y, int rows,
                                     int len, float eps) {
  const int r = mono_dev::warp_row(blockIdx.x);
  if (r < rows)
    mono_dev::layer_norm_row_v8(x, r, len, g, b, eps, [&](int row, int col, const float (&v)[8]) {
      mono_dev::store8(y + (long long)row * len + col, v);
    });
}
template <class T>
__global__ void softmax_kernel(const T* x, T* y, int rows, int len) {
  const int r = mono_dev::warp_row(blockIdx.x);
  if (r < rows) mono_dev::softmax_row<T>(RowIn<T>{x, len}, r, len, y);
}
// The block-per-row variants (rows longer than a warp caches): one block per row.
template <class T, class P>
__global__ void layer_norm_block_kernel(const T* x, const P* g, const P* b, T* y, int len, float eps) {
  __shared__ float scratch[33];
  mono_dev::layer_norm_row_block_f(RowIn<T>{x, len}, blockIdx.x, len, g, b, eps, scratch,
                                   mono_dev::detail::RowStore<T>{y, len});
}
template <class T>
__global__ void softmax_block_kernel(const T* x, T* y, int len) {
  __shared__ float scratch[33];
  mono_dev::softmax_row_block_f(RowIn<T>{x, len}, blockIdx.x, len, scratch, mono_dev::detail::RowStore<T>{y, len});
}

template <class T>
static void row_checks_for(const char* tname, double tol) {
  const int rows = 37;
  const int lens[] = {31, 256, 768, 1000, 1024, 1025, 1500, 3000, 4096};
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
      CK(cudaMemset(dy, 0, sizeof(T) * rows * len));
      layer_norm_block_kernel<T, T><<<rows, 256>>>(dx, dg, with_beta ? db : nullptr, dy, len, 1e-5f);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      std::snprintf(buf, sizeof buf, "layer_norm_row_block<%s> rows=%d len=%d beta=%s", tname, rows, len,
                    with_beta ? "yes" : "null");
      report(buf, rel_err(from_dev(dy, size_t(rows) * len), ref), tol);
      if constexpr (sizeof(T) == 2) {
        if (len % 256 == 0 && len <= 1024) {  // the 16-byte form, gamma and beta fp16 then fp32
          auto v8 = [&](auto* g, auto* b, const char* what) {
            using P = std::remove_pointer_t<decltype(g)>;
            CK(cudaMemset(dy, 0, sizeof(T) * rows * len));
            layer_norm_v8_kernel<P><<<blocks, 256>>>(dx, g, with_beta ? b : nullptr, dy, rows, len, 1e-5f);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            std::snprintf(buf, sizeof buf, "layer_norm_row_v8<%s%s> rows=%d len=%d beta=%s", tname, what, rows, len,
                          with_beta ? "yes" : "null");
            report(buf, rel_err(from_dev(dy, size_t(rows) * len), ref), tol);
          };
          float *fg = to_dev<float>(G), *fb = to_dev<float>(B);
          v8(dg, db, "");
          v8(fg, fb, ", fp32 gamma");
          CK(cudaFree(fg));
          CK(cudaFree(fb));
        }
      }
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
      CK(cudaMemset(dy, 0, sizeof(T) * rows * len));
      softmax_block_kernel<T><<<rows, 256>>>(dx, dy, len);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      std::snprintf(buf, sizeof buf, "softmax_row_block<%s> rows=%d len=%d", tname, rows, len);
      report(buf, rel_err(from_dev(dy, size_t(rows) * len), ref), tol);
      CK(cudaFree(dx));
      CK(cudaFree(dy));
    }
  }
}

// Both precisions, fp32 first.
void row_checks() {
  row_checks_for<float>("float", 1e-5);
  row_checks_for<half_t>("half", 2e-3);
}
