// Unit tests of the matrix products (MatMul, Gemm) and the CPU GEMM kernel they share:
// shape rules, values against a naive reference written here, every attribute form, f16
// paths and user errors. Convolutions and pooling: ops_compute_conv_pool_test.cc;
// normalizations, Softmax and Reduce*: ops_compute_norm_reduce_test.cc.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

#include "compiler/ops/linalg.h"
#include "compiler/ops/op.h"
#include "tests/unit/op_test_util.h"

namespace mono::testing {
namespace {

using Attrs = std::map<std::string, AttrValue>;
using Ints = std::vector<int64_t>;

// C (M x N) = op(A) op(B) in double.
std::vector<float> naive_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                              const std::vector<float>& A, const std::vector<float>& B) {
  std::vector<float> C(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(ta ? A[k * M + i] : A[i * K + k]) * (tb ? B[j * K + k] : B[k * N + j]);
      C[i * N + j] = static_cast<float>(s);
    }
  return C;
}

// ---- the GEMM kernel ------------------------------------------------------------------------

void check_gemm_shapes() {
  const int64_t sizes[][3] = {{1, 1, 1},     {1, 17, 5},    {6, 16, 3},
                              {7, 17, 9},    {13, 33, 300}, {150, 20, 40},
                              {37, 3100, 7}, {5, 2, 513},   {145, 50, 257}};
  uint32_t seed = 1;
  for (const auto& sz : sizes) {
    const int64_t M = sz[0], N = sz[1], K = sz[2];
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      std::vector<float> A = rand_floats(M * K, seed++), B = rand_floats(K * N, seed++);
      std::vector<float> want = naive_gemm(ta, tb, M, N, K, A, B);
      std::vector<float> C(static_cast<size_t>(M * N), NAN);  // beta 0: never read
      gemm_f32(ta, tb, M, N, K, 1.0f, A.data(), ta ? M : K, B.data(), tb ? K : N, 0.0f, C.data(),
               N);
      for (int64_t i = 0; i < M * N; ++i)
        ASSERT_NEAR(C[i], want[i], 1e-4 * (1 + std::fabs(want[i]) + std::sqrt(double(K))))
            << M << "x" << N << "x" << K << " ta=" << ta << " tb=" << tb << " at " << i;
    }
  }
}

TEST(Linalg, GemmMatchesNaiveAcrossShapesAndTransposes) {
  std::printf("default micro-kernel: %s\n", gemm_kernel_name());
  check_gemm_shapes();
  // Every micro-kernel this CPU can run.
  for (const char* name : {"generic", "avx2", "avx512"}) {
    if (force_gemm_kernel_for_testing(name)) {
      SCOPED_TRACE(name);
      check_gemm_shapes();
    }
  }
  force_gemm_kernel_for_testing(nullptr);
}

TEST(Linalg, GemmAlphaBetaAndLeadingDimensions) {
  const int64_t M = 9, N = 20, K = 11, ldc = 23;
  std::vector<float> A = rand_floats(M * K, 3), B = rand_floats(K * N, 4);
  std::vector<float> prod = naive_gemm(false, false, M, N, K, A, B);
  std::vector<float> C0 = rand_floats(M * ldc, 5);
  for (float beta : {0.0f, 1.0f, -0.5f}) {
    std::vector<float> C = C0;
    gemm_f32(false, false, M, N, K, 2.0f, A.data(), K, B.data(), N, beta, C.data(), ldc);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < ldc; ++j) {
        const float want =
            j < N ? 2.0f * prod[i * N + j] + beta * C0[i * ldc + j] : C0[i * ldc + j];
        ASSERT_NEAR(C[i * ldc + j], want, 1e-4) << "beta " << beta << " at " << i << "," << j;
      }
  }
  // K = 0: C = beta * C.
  std::vector<float> C = {1, 2, 3, 4};
  gemm_f32(false, false, 2, 2, 0, 1.0f, nullptr, 0, nullptr, 2, 0.5f, C.data(), 2);
  EXPECT_EQ(C, (std::vector<float>{0.5f, 1, 1.5f, 2}));
}

// ---- MatMul -----------------------------------------------------------------------------------

TEST(MatMul, TwoDimensional) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  auto y = run_op(OpKind::kMatMul, {a, b});
  EXPECT_TRUE(tensors_near(y[0], f32({2, 2}, {58, 64, 139, 154})));
}

TEST(MatMul, OneDimensionalOperands) {
  Tensor v = f32({3}, {1, 2, 3});
  Tensor m = f32({3, 2}, {1, 0, 0, 1, 1, 1});
  EXPECT_TRUE(tensors_near(run_op(OpKind::kMatMul, {v, m})[0], f32({2}, {4, 5})));
  Tensor m2 = f32({2, 3}, {1, 0, 1, 0, 1, 1});
  EXPECT_TRUE(tensors_near(run_op(OpKind::kMatMul, {m2, v})[0], f32({2}, {4, 5})));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kMatMul, {v, v})[0], f32({}, {14})));
  // 1-D with a batched operand: [3] x [2,3,4] -> [2,4].
  Tensor bb = rand_tensor({2, 3, 4}, 7);
  auto y = run_op(OpKind::kMatMul, {v, bb});
  ASSERT_EQ(y[0].shape(), (Shape{2, 4}));
  std::vector<float> bv = bb.to_float_vector();
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 4; ++j) {
      float want = 0;
      for (int k = 0; k < 3; ++k) want += (k + 1) * bv[(b * 3 + k) * 4 + j];
      EXPECT_NEAR(y[0].as_double(b * 4 + j), want, 1e-5);
    }
}

// Batched matmul against per-batch naive products, numpy broadcasting of batch axes.
void check_batched(const Shape& as, const Shape& bs, const Shape& want_shape, uint32_t seed) {
  Tensor a = rand_tensor(as, seed), b = rand_tensor(bs, seed + 1);
  auto y = run_op(OpKind::kMatMul, {a, b});
  ASSERT_EQ(y[0].shape(), want_shape);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  Shape batch(want_shape.begin(), want_shape.end() - 2);
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  std::vector<float> av = a.to_float_vector(), bv = b.to_float_vector();
  for (int64_t i = 0; i < shape_numel(batch); ++i) {
    std::vector<int64_t> idx = unravel(i, batch);
    auto offset = [&](const Shape& s) {
      int64_t off = 0, stride = 1;
      for (size_t d = s.size(); d-- > 0;) {
        const int64_t bi = idx[batch.size() - s.size() + d];
        off += (s[d] == 1 ? 0 : bi) * stride;
        stride *= s[d];
      }
      return off;
    };
    std::vector<float> am(av.begin() + offset(ab) * M * K, av.begin() + (offset(ab) + 1) * M * K);
    std::vector<float> bm(bv.begin() + offset(bb) * K * N, bv.begin() + (offset(bb) + 1) * K * N);
    std::vector<float> want = naive_gemm(false, false, M, N, K, am, bm);
    for (int64_t j = 0; j < M * N; ++j)
      ASSERT_NEAR(y[0].as_double(i * M * N + j), want[j], 1e-4) << "batch " << i;
  }
}

TEST(MatMul, BatchBroadcasting) {
  check_batched({2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}, 10);
  check_batched({3, 7, 8}, {8, 9}, {3, 7, 9}, 20);  // B shared: folded into one GEMM
  check_batched({7, 8}, {3, 8, 9}, {3, 7, 9}, 30);  // A shared
  check_batched({1, 4, 5}, {2, 1, 5, 3}, {2, 1, 4, 3}, 40);
}

TEST(MatMul, HalfAndIntegers) {
  Tensor a = rand_tensor({4, 19}, 50), b = rand_tensor({19, 6}, 51);
  Tensor ah = half(a), bh = half(b);
  std::vector<float> want =
      naive_gemm(false, false, 4, 6, 19, ah.to_float_vector(), bh.to_float_vector());
  auto y = run_op(OpKind::kMatMul, {ah, bh});
  EXPECT_TRUE(tensors_near(y[0], Tensor::from_floats({4, 6}, want, DType::kF16), 2e-3));
  auto yi = run_op(OpKind::kMatMul, {i64({2, 2}, {1, 2, 3, 4}), i64({2, 1}, {5, -6})});
  EXPECT_TRUE(yi[0].identical(i64({2, 1}, {-7, -9})));
}

TEST(MatMul, Errors) {
  EXPECT_USER_ERROR(run_op(OpKind::kMatMul, {rand_tensor({2, 3}, 1), rand_tensor({4, 5}, 2)}),
                    "A is 2x3 and B is 4x5");
  EXPECT_USER_ERROR(run_op(OpKind::kMatMul, {rand_tensor({2, 2, 3}, 1), rand_tensor({3, 3, 5}, 2)}),
                    "batch dimensions do not broadcast");
  EXPECT_USER_ERROR(run_op(OpKind::kMatMul, {rand_tensor({2, 3}, 1), i64({3}, {1, 2, 3})}),
                    "differ in type");
}

TEST(MatMul, BertSizedProduct) {
  // [1,128,768] x [768,768] against naive on sampled rows.
  Tensor a = rand_tensor({1, 128, 768}, 60), b = rand_tensor({768, 768}, 61);
  auto y = run_op(OpKind::kMatMul, {a, b});
  ASSERT_EQ(y[0].shape(), (Shape{1, 128, 768}));
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  for (int64_t i : {0, 5, 77, 127})
    for (int64_t j : {0, 1, 300, 767}) {
      double s = 0;
      for (int64_t k = 0; k < 768; ++k) s += double(pa[i * 768 + k]) * pb[k * 768 + j];
      EXPECT_NEAR(y[0].as_double(i * 768 + j), s, 1e-3);
    }
}

// ---- Gemm -------------------------------------------------------------------------------------

TEST(Gemm, AllAttributesAndBiasForms) {
  const int64_t M = 5, N = 7, K = 4;
  Tensor a = rand_tensor({M, K}, 70), at = rand_tensor({K, M}, 71);
  Tensor b = rand_tensor({K, N}, 72), bt = rand_tensor({N, K}, 73);
  struct BiasCase {
    Shape shape;
    std::function<int64_t(int64_t, int64_t)> index;
  };
  const std::vector<BiasCase> biases = {
      {{}, [](int64_t, int64_t) { return 0; }},
      {{N}, [](int64_t, int64_t j) { return j; }},
      {{1, N}, [](int64_t, int64_t j) { return j; }},
      {{M, 1}, [](int64_t i, int64_t) { return i; }},
      {{M, N}, [=](int64_t i, int64_t j) { return i * N + j; }},
  };
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    const Tensor& A = ta ? at : a;
    const Tensor& B = tb ? bt : b;
    std::vector<float> prod = naive_gemm(ta, tb, M, N, K, A.to_float_vector(), B.to_float_vector());
    for (const BiasCase& bc : biases) {
      Tensor c = rand_tensor(bc.shape, 74);
      Attrs attrs{{"alpha", F(0.5f)}, {"beta", F(-2.0f)}, {"transA", I(ta)}, {"transB", I(tb)}};
      auto y = run_op(OpKind::kGemm, {A, B, c}, attrs);
      std::vector<float> want(M * N);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          want[i * N + j] = 0.5f * prod[i * N + j] - 2.0f * c.as_double(bc.index(i, j));
      EXPECT_TRUE(tensors_near(y[0], f32({M, N}, want), 1e-5))
          << "t=" << t << " C " << shape_str(bc.shape);
    }
    // No C (opset 11+): defaults alpha = beta = 1.
    auto y = run_op(OpKind::kGemm, {A, B, std::nullopt}, {{"transA", I(ta)}, {"transB", I(tb)}});
    EXPECT_TRUE(tensors_near(y[0], f32({M, N}, prod), 1e-5));
  }
}

TEST(Gemm, HalfAndBetaZeroIgnoresC) {
  Tensor a = half(rand_tensor({3, 5}, 80)), b = half(rand_tensor({5, 2}, 81));
  std::vector<float> prod =
      naive_gemm(false, false, 3, 2, 5, a.to_float_vector(), b.to_float_vector());
  Tensor c = Tensor::from_floats({2}, {NAN, 1.0f}, DType::kF16);
  auto y = run_op(OpKind::kGemm, {a, b, c}, {{"beta", F(0.0f)}});
  EXPECT_TRUE(tensors_near(y[0], Tensor::from_floats({3, 2}, prod, DType::kF16), 2e-3));
}

TEST(Gemm, Errors) {
  EXPECT_USER_ERROR(run_op(OpKind::kGemm, {rand_tensor({2, 3}, 1), rand_tensor({2, 3}, 2)}),
                    "inner dimensions differ");
  EXPECT_USER_ERROR(
      run_op(OpKind::kGemm, {rand_tensor({2, 3}, 1), rand_tensor({3, 4}, 2), rand_tensor({3}, 3)}),
      "does not broadcast to 2x4");
  EXPECT_USER_ERROR(run_op(OpKind::kGemm, {rand_tensor({2, 3, 1}, 1), rand_tensor({3, 4}, 2)}),
                    "must have rank 2");
}

// ---- speed ---------------------------------------------------------------------------------

// Run with --gtest_also_run_disabled_tests to print the GEMM's speed (best of several runs).
TEST(Linalg, DISABLED_GemmSpeed) {
  for (const char* name : {"generic", "avx2", "avx512"})
    for (auto [M, N, K] : {std::array<int64_t, 3>{128, 768, 768},
                           {128, 3072, 768},
                           {128, 768, 3072},
                           {512, 512, 512},
                           {64, 3136, 576}}) {
      if (!force_gemm_kernel_for_testing(name)) continue;
      std::vector<float> A = rand_floats(M * K, 1), B = rand_floats(K * N, 2), C(M * N);
      double best = 1e9;
      for (int rep = 0; rep < 20; ++rep) {
        const auto start = std::chrono::steady_clock::now();
        gemm_f32(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C.data(), N);
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      std::printf("gemm %ldx%ldx%ld (%s): %.1f GFLOP/s\n", long(M), long(N), long(K),
                  gemm_kernel_name(), 2.0 * M * N * K / best * 1e-9);
    }
  force_gemm_kernel_for_testing(nullptr);
}

}  // namespace
}  // namespace mono::testing
