// The float32 GEMM: BLIS-style blocking. B is packed into KC x NR column panels, A into
// MC x KC row panels of MR rows (alpha folded in), and a register-blocked MR x NR micro-kernel
// runs over them. On x86-64 the micro-kernel is picked at run time: AVX-512 (12 x 32), else
// AVX2 + FMA (6 x 16); elsewhere a portable loop (6 x 16) does the same work.
#include "compiler/ops/linalg.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "compiler/support/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MONO_GEMM_X86 1
#endif

namespace mono {

namespace {

// The micro-tile is MR x NR; packed panels follow the chosen kernel's tile.
constexpr int kMaxMR = 12;
constexpr int kMaxNR = 32;
constexpr int64_t kKC = 256;   // depth of a packed block
constexpr int64_t kMC = 144;   // rows of a packed A block (multiple of every MR)
constexpr int64_t kNC = 3072;  // columns of a packed B block (multiple of every NR)

// A block rows [i0, i0+mc) x depth [k0, k0+kc) into panels of mr rows, each stored k-major
// (kc x mr), scaled by alpha, zero-padded to whole panels.
void pack_a(bool trans, const float* A, int64_t lda, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
            float alpha, int mr, float* dst) {
  for (int64_t p = 0; p < mc; p += mr) {
    const int rows = static_cast<int>(std::min<int64_t>(mr, mc - p));
    if (!trans) {
      for (int r = 0; r < rows; ++r) {
        const float* src = A + (i0 + p + r) * lda + k0;
        for (int64_t k = 0; k < kc; ++k) dst[k * mr + r] = alpha * src[k];
      }
      for (int r = rows; r < mr; ++r)
        for (int64_t k = 0; k < kc; ++k) dst[k * mr + r] = 0.0f;
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = A + (k0 + k) * lda + i0 + p;
        float* d = dst + k * mr;
        for (int r = 0; r < rows; ++r) d[r] = alpha * src[r];
        for (int r = rows; r < mr; ++r) d[r] = 0.0f;
      }
    }
    dst += kc * mr;
  }
}

// B block depth [k0, k0+kc) x columns [j0, j0+nc) into panels of nr columns, each stored
// k-major (kc x nr), zero-padded to whole panels.
void pack_b(bool trans, const float* B, int64_t ldb, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
            int nr, float* dst) {
  for (int64_t q = 0; q < nc; q += nr) {
    const int cols = static_cast<int>(std::min<int64_t>(nr, nc - q));
    if (!trans) {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = B + (k0 + k) * ldb + j0 + q;
        float* d = dst + k * nr;
        std::memcpy(d, src, sizeof(float) * cols);
        for (int c = cols; c < nr; ++c) d[c] = 0.0f;
      }
    } else {
      if (cols < nr) std::fill(dst, dst + kc * nr, 0.0f);
      for (int c = 0; c < cols; ++c) {
        const float* src = B + (j0 + q + c) * ldb + k0;
        for (int64_t k = 0; k < kc; ++k) dst[k * nr + c] = src[k];
      }
    }
    dst += kc * nr;
  }
}

// Writes (or adds, when `accumulate`) an m x n corner of a tile with row stride `nr` into C.
inline void store_tile(const float* tile, int nr, float* c, int64_t ldc, int m, int n,
                       bool accumulate) {
  for (int r = 0; r < m; ++r) {
    float* row = c + r * ldc;
    const float* t = tile + r * nr;
    if (accumulate) {
      for (int j = 0; j < n; ++j) row[j] += t[j];
    } else {
      for (int j = 0; j < n; ++j) row[j] = t[j];
    }
  }
}

// C[0:m, 0:n] (+)= the product of a packed A panel (kc x MR) and B panel (kc x NR).
using MicroKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                             int m, int n, bool accumulate);

struct Kernel {
  MicroKernel fn;
  int mr, nr;
  const char* name;
};

constexpr int kGenericMR = 6, kGenericNR = 16;

void kernel_generic(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m, int n,
                    bool accumulate) {
  float acc[kGenericMR * kGenericNR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int r = 0; r < kGenericMR; ++r) {
      const float av = a[r];
      float* row = acc + r * kGenericNR;
      for (int j = 0; j < kGenericNR; ++j) row[j] += av * b[j];
    }
    a += kGenericMR;
    b += kGenericNR;
  }
  store_tile(acc, kGenericNR, c, ldc, m, n, accumulate);
}

#ifdef MONO_GEMM_X86
// 6 x 16 with AVX2 + FMA: 12 accumulators of 8 floats.
__attribute__((target("avx2,fma"))) void kernel_avx2(int64_t kc, const float* a, const float* b,
                                                     float* c, int64_t ldc, int m, int n,
                                                     bool accumulate) {
  constexpr int MR = 6, NR = 16;
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
    a += MR;
    b += NR;
  }
  if (m == MR && n == NR) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      float* row = c + r * ldc;
      if (accumulate) {
        acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_loadu_ps(row));
        acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_loadu_ps(row + 8));
      }
      _mm256_storeu_ps(row, acc[r][0]);
      _mm256_storeu_ps(row + 8, acc[r][1]);
    }
    return;
  }
  alignas(32) float tile[MR * NR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    _mm256_store_ps(tile + r * NR, acc[r][0]);
    _mm256_store_ps(tile + r * NR + 8, acc[r][1]);
  }
  store_tile(tile, NR, c, ldc, m, n, accumulate);
}

// 12 x 32 with AVX-512: 24 accumulators of 16 floats.
__attribute__((target("avx512f"))) void kernel_avx512(int64_t kc, const float* a, const float* b,
                                                      float* c, int64_t ldc, int m, int n,
                                                      bool accumulate) {
  constexpr int MR = 12, NR = 32;
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
    a += MR;
    b += NR;
  }
  if (m == MR && n == NR) {
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      float* row = c + r * ldc;
      if (accumulate) {
        acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_loadu_ps(row));
        acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_loadu_ps(row + 16));
      }
      _mm512_storeu_ps(row, acc[r][0]);
      _mm512_storeu_ps(row + 16, acc[r][1]);
    }
    return;
  }
  alignas(64) float tile[MR * NR];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    _mm512_store_ps(tile + r * NR, acc[r][0]);
    _mm512_store_ps(tile + r * NR + 16, acc[r][1]);
  }
  store_tile(tile, NR, c, ldc, m, n, accumulate);
}
#endif

#ifdef MONO_GEMM_X86
const Kernel kAvx512{kernel_avx512, 12, 32, "avx512"};
const Kernel kAvx2{kernel_avx2, 6, 16, "avx2"};
#endif
const Kernel kGeneric{kernel_generic, kGenericMR, kGenericNR, "generic"};

// The fastest kernel this CPU runs that is at most `limit` ("avx512", "avx2", "generic").
const Kernel* pick_kernel(const std::string& limit) {
#ifdef MONO_GEMM_X86
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (limit == "avx512" && avx512) return &kAvx512;
  if ((limit == "avx512" || limit == "avx2") && avx2) return &kAvx2;
#endif
  return &kGeneric;
}

std::atomic<const Kernel*>& kernel_slot() {
  static std::atomic<const Kernel*> slot{pick_kernel("avx512")};
  return slot;
}

const Kernel& kernel() { return *kernel_slot().load(std::memory_order_relaxed); }

void scale_c(int64_t M, int64_t N, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    float* row = C + i * ldc;
    if (beta == 0.0f) {
      std::fill(row, row + N, 0.0f);
    } else {
      for (int64_t j = 0; j < N; ++j) row[j] *= beta;
    }
  }
}

// Scratch for packed blocks, kept per thread across calls.
float* scratch(std::vector<float>& buf, int64_t n) {
  if (static_cast<int64_t>(buf.size()) < n) buf.resize(static_cast<size_t>(n));
  return buf.data();
}

}  // namespace

const char* gemm_kernel_name() { return kernel().name; }

bool force_gemm_kernel_for_testing(const char* name) {
  const Kernel* k = pick_kernel(name ? name : "avx512");
  kernel_slot().store(k);
  return name == nullptr || std::string(name) == k->name;
}

void gemm_f32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
              int64_t ldc) {
  MONO_CHECK(M >= 0 && N >= 0 && K >= 0, "gemm_f32 sizes ", M, "x", N, "x", K);
  if (M == 0 || N == 0) return;
  if (K == 0 || alpha == 0.0f) {
    if (beta != 1.0f) scale_c(M, N, beta, C, ldc);
    return;
  }
  if (beta != 0.0f && beta != 1.0f) scale_c(M, N, beta, C, ldc);
  const Kernel& kern = kernel();
  const int mr = kern.mr, nr = kern.nr;
  thread_local std::vector<float> a_buf, b_buf;
  const int64_t kc_max = std::min(K, kKC);
  float* bpack = scratch(b_buf, kc_max * ((std::min(N, kNC) + nr - 1) / nr) * nr);
  float* apack = scratch(a_buf, kc_max * ((std::min(M, kMC) + mr - 1) / mr) * mr);
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = std::min(kNC, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      const bool accumulate = beta != 0.0f || pc > 0;
      pack_b(trans_b, B, ldb, pc, kc, jc, nc, nr, bpack);
      for (int64_t ic = 0; ic < M; ic += kMC) {
        const int64_t mc = std::min(kMC, M - ic);
        pack_a(trans_a, A, lda, ic, mc, pc, kc, alpha, mr, apack);
        for (int64_t jr = 0; jr < nc; jr += nr) {
          const int n = static_cast<int>(std::min<int64_t>(nr, nc - jr));
          const float* bp = bpack + jr * kc;
          for (int64_t ir = 0; ir < mc; ir += mr) {
            const int m = static_cast<int>(std::min<int64_t>(mr, mc - ir));
            kern.fn(kc, apack + ir * kc, bp, C + (ic + ir) * ldc + jc + jr, ldc, m, n, accumulate);
          }
        }
      }
    }
  }
}

// ---- float views ------------------------------------------------------------------------

FloatView::FloatView(const Tensor& t) {
  if (t.dtype() == DType::kF32) {
    ptr_ = t.data<float>();
    return;
  }
  MONO_CHECK(t.dtype() == DType::kF16, "FloatView of ", dtype_name(t.dtype()));
  copy_.resize(static_cast<size_t>(t.numel()));
  const Half* h = t.data<Half>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) copy_[i] = half_to_float(h[i]);
  ptr_ = copy_.data();
}

FloatOut::FloatOut(Tensor& t) : t_(t) {
  if (t.dtype() == DType::kF32) {
    ptr_ = t.mutable_data<float>();
    return;
  }
  MONO_CHECK(t.dtype() == DType::kF16, "FloatOut of ", dtype_name(t.dtype()));
  buf_.assign(static_cast<size_t>(t.numel()), 0.0f);
  ptr_ = buf_.data();
}

void FloatOut::finish() {
  if (t_.dtype() != DType::kF16) return;
  Half* h = t_.mutable_data<Half>();
  for (int64_t i = 0, n = t_.numel(); i < n; ++i) h[i] = float_to_half(buf_[i]);
}

}  // namespace mono
