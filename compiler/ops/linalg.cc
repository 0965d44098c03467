// The float32 GEMM: BLIS-style blocking. B is packed into KC x NR column panels, A into
// MC x KC row panels of MR rows (alpha folded in), and a register-blocked MR x NR micro-kernel
// runs over them. On x86-64 CPUs with AVX2 and FMA (checked at run time) the micro-kernel uses
// them; elsewhere a portable loop does the same work.
#include "compiler/ops/linalg.h"

#include <algorithm>
#include <cstring>

#include "compiler/support/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MONO_GEMM_X86 1
#endif

namespace mono {

namespace {

constexpr int kMR = 6;          // rows of the micro-tile
constexpr int kNR = 16;         // columns of the micro-tile (two 8-float vectors)
constexpr int64_t kKC = 256;    // depth of a packed block
constexpr int64_t kMC = 144;    // rows of a packed A block (multiple of kMR)
constexpr int64_t kNC = 3072;   // columns of a packed B block (multiple of kNR)

// A block rows [i0, i0+mc) x depth [k0, k0+kc) into panels of kMR rows, each stored k-major
// (kc x kMR), scaled by alpha, zero-padded to whole panels.
void pack_a(bool trans, const float* A, int64_t lda, int64_t i0, int64_t mc, int64_t k0,
            int64_t kc, float alpha, float* dst) {
  for (int64_t p = 0; p < mc; p += kMR) {
    const int rows = static_cast<int>(std::min<int64_t>(kMR, mc - p));
    if (!trans) {
      const float* src[kMR];
      for (int r = 0; r < kMR; ++r) src[r] = A + (i0 + p + std::min(r, rows - 1)) * lda + k0;
      for (int64_t k = 0; k < kc; ++k) {
        for (int r = 0; r < kMR; ++r) dst[k * kMR + r] = r < rows ? alpha * src[r][k] : 0.0f;
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = A + (k0 + k) * lda + i0 + p;
        for (int r = 0; r < kMR; ++r) dst[k * kMR + r] = r < rows ? alpha * src[r] : 0.0f;
      }
    }
    dst += kc * kMR;
  }
}

// B block depth [k0, k0+kc) x columns [j0, j0+nc) into panels of kNR columns, each stored
// k-major (kc x kNR), zero-padded to whole panels.
void pack_b(bool trans, const float* B, int64_t ldb, int64_t k0, int64_t kc, int64_t j0,
            int64_t nc, float* dst) {
  for (int64_t q = 0; q < nc; q += kNR) {
    const int cols = static_cast<int>(std::min<int64_t>(kNR, nc - q));
    if (!trans) {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = B + (k0 + k) * ldb + j0 + q;
        float* d = dst + k * kNR;
        if (cols == kNR) {
          std::memcpy(d, src, sizeof(float) * kNR);
        } else {
          for (int c = 0; c < kNR; ++c) d[c] = c < cols ? src[c] : 0.0f;
        }
      }
    } else {
      if (cols < kNR) std::fill(dst, dst + kc * kNR, 0.0f);
      for (int c = 0; c < cols; ++c) {
        const float* src = B + (j0 + q + c) * ldb + k0;
        for (int64_t k = 0; k < kc; ++k) dst[k * kNR + c] = src[k];
      }
    }
    dst += kc * kNR;
  }
}

// Writes (or adds, when `accumulate`) an m x n corner of a full kMR x kNR tile into C.
inline void store_tile(const float* tile, float* c, int64_t ldc, int m, int n, bool accumulate) {
  for (int r = 0; r < m; ++r) {
    float* row = c + r * ldc;
    const float* t = tile + r * kNR;
    if (accumulate) {
      for (int j = 0; j < n; ++j) row[j] += t[j];
    } else {
      for (int j = 0; j < n; ++j) row[j] = t[j];
    }
  }
}

using MicroKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                             int m, int n, bool accumulate);

void kernel_generic(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m,
                    int n, bool accumulate) {
  float acc[kMR * kNR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int r = 0; r < kMR; ++r) {
      const float av = a[r];
      float* row = acc + r * kNR;
      for (int j = 0; j < kNR; ++j) row[j] += av * b[j];
    }
    a += kMR;
    b += kNR;
  }
  store_tile(acc, c, ldc, m, n, accumulate);
}

#ifdef MONO_GEMM_X86
__attribute__((target("avx2,fma"))) void kernel_avx2(int64_t kc, const float* a,
                                                     const float* b, float* c, int64_t ldc,
                                                     int m, int n, bool accumulate) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
    __m256 av = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
    a += kMR;
    b += kNR;
  }
  if (m == kMR && n == kNR) {
#define MONO_STORE_ROW(r)                                                          \
  do {                                                                             \
    float* row = c + (r) * ldc;                                                    \
    if (accumulate) {                                                              \
      _mm256_storeu_ps(row, _mm256_add_ps(_mm256_loadu_ps(row), c##r##0));         \
      _mm256_storeu_ps(row + 8, _mm256_add_ps(_mm256_loadu_ps(row + 8), c##r##1)); \
    } else {                                                                       \
      _mm256_storeu_ps(row, c##r##0);                                              \
      _mm256_storeu_ps(row + 8, c##r##1);                                          \
    }                                                                              \
  } while (0)
    MONO_STORE_ROW(0);
    MONO_STORE_ROW(1);
    MONO_STORE_ROW(2);
    MONO_STORE_ROW(3);
    MONO_STORE_ROW(4);
    MONO_STORE_ROW(5);
#undef MONO_STORE_ROW
    return;
  }
  alignas(32) float tile[kMR * kNR];
  _mm256_store_ps(tile + 0 * kNR, c00);
  _mm256_store_ps(tile + 0 * kNR + 8, c01);
  _mm256_store_ps(tile + 1 * kNR, c10);
  _mm256_store_ps(tile + 1 * kNR + 8, c11);
  _mm256_store_ps(tile + 2 * kNR, c20);
  _mm256_store_ps(tile + 2 * kNR + 8, c21);
  _mm256_store_ps(tile + 3 * kNR, c30);
  _mm256_store_ps(tile + 3 * kNR + 8, c31);
  _mm256_store_ps(tile + 4 * kNR, c40);
  _mm256_store_ps(tile + 4 * kNR + 8, c41);
  _mm256_store_ps(tile + 5 * kNR, c50);
  _mm256_store_ps(tile + 5 * kNR + 8, c51);
  store_tile(tile, c, ldc, m, n, accumulate);
}
#endif

MicroKernel pick_kernel() {
#ifdef MONO_GEMM_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return kernel_avx2;
#endif
  return kernel_generic;
}

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
  static const MicroKernel kernel = pick_kernel();
  thread_local std::vector<float> a_buf, b_buf;
  const int64_t kc_max = std::min(K, kKC);
  float* bpack = scratch(b_buf, kc_max * ((std::min(N, kNC) + kNR - 1) / kNR) * kNR);
  float* apack = scratch(a_buf, kc_max * ((std::min(M, kMC) + kMR - 1) / kMR) * kMR);
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = std::min(kNC, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      const bool accumulate = beta != 0.0f || pc > 0;
      pack_b(trans_b, B, ldb, pc, kc, jc, nc, bpack);
      for (int64_t ic = 0; ic < M; ic += kMC) {
        const int64_t mc = std::min(kMC, M - ic);
        pack_a(trans_a, A, lda, ic, mc, pc, kc, alpha, apack);
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          const int n = static_cast<int>(std::min<int64_t>(kNR, nc - jr));
          const float* bp = bpack + jr * kc;
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            const int m = static_cast<int>(std::min<int64_t>(kMR, mc - ir));
            kernel(kc, apack + ir * kc, bp, C + (ic + ir) * ldc + jc + jr, ldc, m, n, accumulate);
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
