// Shared kernels of the compute ops: a cache-blocked float32 GEMM (MatMul, Gemm, Conv via
// im2col) and float views of f32/f16 tensors (f16 computes in float, rounded once at the end).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/tensor.h"

namespace mono {

// C = alpha * op(A) * op(B) + beta * C, row-major. op(A) is M x K (A is K x M when trans_a),
// op(B) is K x N (B is N x K when trans_b); lda/ldb/ldc are row strides in elements.
// beta == 0 overwrites C without reading it (NaNs in C do not propagate).
void gemm_f32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
              int64_t ldc);

// The micro-kernel gemm_f32 runs on this CPU: "avx512", "avx2" or "generic".
const char* gemm_kernel_name();
// Tests only: makes gemm_f32 use the named micro-kernel (null: the default again). Returns
// false, and picks the best one below it, if this CPU cannot run it.
bool force_gemm_kernel_for_testing(const char* name);

// The float values of a float tensor (f32 or f16): the tensor's own data for f32, a
// converted copy for f16.
class FloatView {
 public:
  explicit FloatView(const Tensor& t);
  const float* data() const { return ptr_; }
  float operator[](int64_t i) const { return ptr_[i]; }

 private:
  std::vector<float> copy_;
  const float* ptr_ = nullptr;
};

// Where a float op writes its result: the output's own data when it is f32, a scratch
// buffer for f16 that finish() rounds into the output.
class FloatOut {
 public:
  explicit FloatOut(Tensor& t);
  float* data() { return ptr_; }
  void finish();  // stores the buffer into an f16 output; no-op for f32

 private:
  Tensor& t_;
  std::vector<float> buf_;
  float* ptr_ = nullptr;
};

}  // namespace mono
