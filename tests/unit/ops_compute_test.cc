// Unit tests of the compute-heavy ops (MatMul, Gemm, Conv, pooling, normalizations, Softmax,
// Reduce*) and their shared kernels: shape rules, values against naive references written
// here, every attribute form, f16 paths and user errors.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "compiler/ops/infer.h"
#include "compiler/ops/linalg.h"
#include "compiler/ops/op.h"
#include "tests/unit/op_test_util.h"

namespace mono {
namespace {

using testing::f32;
using testing::i64;
using testing::infer_op;
using testing::run_op;
using testing::tensors_near;
using Attrs = std::map<std::string, AttrValue>;
using Ints = std::vector<int64_t>;

AttrValue I(int64_t v) { return v; }
AttrValue F(float v) { return v; }
AttrValue S(const char* v) { return std::string(v); }
AttrValue Is(Ints v) { return v; }

// Deterministic values in [lo, hi).
std::vector<float> rand_floats(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

Tensor rand_tensor(const Shape& shape, uint32_t seed, DType dt = DType::kF32) {
  return Tensor::from_floats(shape, rand_floats(shape_numel(shape), seed), dt);
}

Tensor half(const Tensor& t) { return t.cast(DType::kF16); }

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  return idx;
}

// ---- naive references --------------------------------------------------------------------

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

struct ConvParams {
  Ints strides, dilations, pads;  // pads: begin..., end...
  int64_t group = 1;
};

// N-D convolution with explicit pads, output size floor((in + pads - dk) / s) + 1.
Tensor naive_conv(const Tensor& x, const Tensor& w, const Tensor* b, ConvParams p) {
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  const size_t r = xs.size() - 2;
  if (p.strides.empty()) p.strides.assign(r, 1);
  if (p.dilations.empty()) p.dilations.assign(r, 1);
  if (p.pads.empty()) p.pads.assign(2 * r, 0);
  const int64_t N = xs[0], C = xs[1], M = ws[0], Cg = C / p.group, Mg = M / p.group;
  Shape out{N, M}, in(xs.begin() + 2, xs.end()), ks(ws.begin() + 2, ws.end());
  for (size_t d = 0; d < r; ++d) {
    const int64_t dk = (ks[d] - 1) * p.dilations[d] + 1;
    out.push_back((in[d] + p.pads[d] + p.pads[r + d] - dk) / p.strides[d] + 1);
  }
  std::vector<float> xv = x.to_float_vector(), wv = w.to_float_vector();
  std::vector<float> bv = b ? b->to_float_vector() : std::vector<float>();
  Tensor y(DType::kF32, out);
  float* py = y.mutable_data<float>();
  const auto xst = strides_of(xs), wst = strides_of(ws);
  const int64_t kk = shape_numel(ks);
  std::vector<std::vector<int64_t>> kps;
  for (int64_t k = 0; k < kk; ++k) kps.push_back(unravel(k, ks));
  for (int64_t i = 0; i < y.numel(); ++i) {
    std::vector<int64_t> o = unravel(i, out);
    const int64_t n = o[0], m = o[1], g = m / Mg;
    double s = b ? bv[m] : 0.0;
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t k = 0; k < kk; ++k) {
        const std::vector<int64_t>& kp = kps[k];
        int64_t xoff = n * xst[0] + (g * Cg + c) * xst[1];
        bool ok = true;
        for (size_t d = 0; d < r; ++d) {
          int64_t idx = o[2 + d] * p.strides[d] - p.pads[d] + kp[d] * p.dilations[d];
          if (idx < 0 || idx >= in[d]) ok = false;
          xoff += idx * xst[2 + d];
        }
        if (!ok) continue;
        int64_t woff = m * wst[0] + c * wst[1];
        for (size_t d = 0; d < r; ++d) woff += kp[d] * wst[2 + d];
        s += double(xv[xoff]) * wv[woff];
      }
    py[i] = static_cast<float>(s);
  }
  return y;
}

struct PoolParams {
  Ints kernel, strides, dilations, pads;
  Ints out;  // expected output spatial extents
  bool include_pad = false;
};

// Max (or average) pooling with explicit pads over windows clipped to the input; the padded
// count covers positions inside [-pad_begin, in + pad_end).
Tensor naive_pool(const Tensor& x, PoolParams p, bool average, Tensor* indices = nullptr) {
  const Shape& xs = x.shape();
  const size_t r = xs.size() - 2;
  if (p.strides.empty()) p.strides.assign(r, 1);
  if (p.dilations.empty()) p.dilations.assign(r, 1);
  if (p.pads.empty()) p.pads.assign(2 * r, 0);
  Shape out{xs[0], xs[1]};
  out.insert(out.end(), p.out.begin(), p.out.end());
  Shape in(xs.begin() + 2, xs.end());
  std::vector<float> xv = x.to_float_vector();
  Tensor y(DType::kF32, out);
  if (indices) *indices = Tensor(DType::kI64, out);
  const auto xst = strides_of(xs);
  const int64_t kk = shape_numel(p.kernel), S = shape_numel(in);
  for (int64_t i = 0; i < y.numel(); ++i) {
    std::vector<int64_t> o = unravel(i, out);
    double sum = 0, best = -INFINITY;
    int64_t count = 0, padded = 0, best_idx = -1;
    for (int64_t k = 0; k < kk; ++k) {
      std::vector<int64_t> kp = unravel(k, p.kernel);
      bool ok = true, in_pad = true;
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) {
        int64_t idx = o[2 + d] * p.strides[d] - p.pads[d] + kp[d] * p.dilations[d];
        if (idx < 0 || idx >= in[d]) ok = false;
        if (idx < -p.pads[d] || idx >= in[d] + p.pads[r + d]) in_pad = false;
        off += idx * xst[2 + d];
      }
      if (in_pad) ++padded;
      if (!ok) continue;
      const float v = xv[o[0] * xst[0] + o[1] * xst[1] + off];
      ++count;
      sum += v;
      if (v > best) {
        best = v;
        best_idx = (o[0] * xs[1] + o[1]) * S + off;
      }
    }
    y.mutable_data<float>()[i] =
        static_cast<float>(average ? sum / (p.include_pad ? padded : count) : best);
    if (indices) indices->mutable_data<int64_t>()[i] = best_idx;
  }
  return y;
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

// ---- Conv -------------------------------------------------------------------------------------

TEST(Conv, BasicWithAndWithoutPadding) {
  // ONNX's test_basic_conv_with_padding / without_padding.
  std::vector<float> xv(25);
  for (int i = 0; i < 25; ++i) xv[i] = static_cast<float>(i);
  Tensor x = f32({1, 1, 5, 5}, xv);
  Tensor w = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto y =
      run_op(OpKind::kConv, {x, w}, {{"kernel_shape", Is({3, 3})}, {"pads", Is({1, 1, 1, 1})}});
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 5, 5}, {12, 21,  27,  33,  24,   //
                                                    33, 54,  63,  72,  51,   //
                                                    63, 99,  108, 117, 81,   //
                                                    93, 144, 153, 162, 111,  //
                                                    72, 111, 117, 123, 84})));
  y = run_op(OpKind::kConv, {x, w});
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162})));
}

struct ConvCase {
  const char* name;
  Shape x, w;
  ConvParams p;
  bool bias;
};

void check_conv(const ConvCase& c, DType dt = DType::kF32) {
  Tensor x = rand_tensor(c.x, 100, dt), w = rand_tensor(c.w, 101, dt);
  Tensor b = rand_tensor({c.w[0]}, 102, dt);
  Attrs attrs{{"group", I(c.p.group)}};
  if (!c.p.strides.empty()) attrs["strides"] = Is(c.p.strides);
  if (!c.p.dilations.empty()) attrs["dilations"] = Is(c.p.dilations);
  if (!c.p.pads.empty()) attrs["pads"] = Is(c.p.pads);
  std::vector<std::optional<Tensor>> inputs{x, w};
  if (c.bias) inputs.push_back(b);
  auto y = run_op(OpKind::kConv, inputs, attrs);
  Tensor want = naive_conv(x, w, c.bias ? &b : nullptr, c.p);
  if (dt == DType::kF16) want = want.cast(DType::kF16);
  // float accumulation error grows with the reduction length.
  const double depth = static_cast<double>(shape_numel(c.w) / c.w[0]);
  EXPECT_TRUE(tensors_near(y[0], want, dt == DType::kF16 ? 3e-3 : 2e-6 * std::sqrt(depth) + 1e-6))
      << c.name;
}

TEST(Conv, AgainstNaiveReference) {
  const ConvCase cases[] = {
      {"2d plain", {2, 3, 9, 8}, {4, 3, 3, 3}, {}, true},
      {"2d strided padded", {1, 3, 10, 11}, {5, 3, 3, 2}, {{2, 3}, {}, {1, 0, 2, 1}}, true},
      {"2d dilated", {1, 2, 12, 12}, {3, 2, 3, 3}, {{1, 1}, {2, 3}, {2, 1, 0, 3}}, false},
      {"2d strided dilated padded",
       {2, 4, 13, 9},
       {6, 4, 3, 2},
       {{2, 2}, {2, 2}, {1, 2, 3, 1}},
       true},
      {"grouped", {1, 6, 7, 7}, {9, 2, 3, 3}, {{1, 1}, {}, {1, 1, 1, 1}, 3}, true},
      {"grouped strided", {2, 8, 9, 10}, {4, 4, 3, 3}, {{2, 2}, {1, 2}, {0, 1, 1, 0}, 2}, true},
      {"depthwise", {1, 8, 10, 10}, {8, 1, 3, 3}, {{1, 1}, {}, {1, 1, 1, 1}, 8}, true},
      {"depthwise strided", {2, 5, 11, 9}, {5, 1, 5, 3}, {{2, 3}, {1, 2}, {2, 1, 0, 2}, 5}, false},
      {"depthwise multiplier 2", {1, 3, 8, 8}, {6, 1, 3, 3}, {{1, 2}, {}, {1, 1, 1, 1}, 3}, true},
      {"depthwise multiplier 8", {1, 2, 6, 6}, {16, 1, 3, 3}, {{}, {}, {1, 1, 1, 1}, 2}, true},
      {"pointwise", {2, 16, 5, 6}, {8, 16, 1, 1}, {}, true},
      {"pointwise strided", {1, 16, 7, 7}, {8, 16, 1, 1}, {{2, 2}, {}, {}}, true},
      {"pointwise padded", {1, 3, 4, 4}, {2, 3, 1, 1}, {{}, {}, {1, 0, 0, 1}}, true},
      {"single input channel", {1, 1, 9, 9}, {12, 1, 3, 3}, {{2, 2}, {}, {1, 1, 1, 1}}, true},
      {"kernel larger than stride span", {1, 2, 5, 5}, {3, 2, 5, 5}, {{}, {}, {4, 4, 4, 4}}, true},
      {"1d", {2, 3, 17}, {4, 3, 4}, {{2}, {2}, {3, 1}}, true},
      {"1d depthwise", {1, 4, 12}, {4, 1, 3}, {{1}, {1}, {1, 1}, 4}, true},
      {"3d", {1, 2, 5, 6, 7}, {3, 2, 2, 3, 2}, {{1, 2, 1}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}}, true},
      {"3d grouped",
       {1, 4, 4, 5, 5},
       {4, 2, 3, 3, 3},
       {{2, 1, 2}, {}, {1, 1, 1, 1, 1, 1}, 2},
       false},
      {"large channels", {1, 64, 16, 16}, {64, 64, 3, 3}, {{}, {}, {1, 1, 1, 1}}, true},
      // Kc x P beyond the im2col budget: built in bands of output rows.
      {"banded im2col", {1, 256, 40, 500}, {2, 256, 3, 3}, {{1, 1}, {}, {1, 0, 0, 1}}, true},
  };
  for (const ConvCase& c : cases) check_conv(c);
}

TEST(Conv, Half) {
  check_conv({"f16", {1, 4, 6, 6}, {5, 4, 3, 3}, {{1, 1}, {}, {1, 1, 1, 1}}, true}, DType::kF16);
  check_conv({"f16 depthwise", {1, 4, 6, 6}, {4, 1, 3, 3}, {{2, 2}, {}, {1, 1, 1, 1}, 4}, true},
             DType::kF16);
}

TEST(Conv, AutoPad) {
  Tensor x = rand_tensor({1, 2, 7, 8}, 110), w = rand_tensor({3, 2, 3, 4}, 111);
  // strides 2: out = ceil(7/2)=4, ceil(8/2)=4; total pads: (4-1)*2+3-7 = 2, (4-1)*2+4-8 = 2.
  auto y = run_op(OpKind::kConv, {x, w}, {{"auto_pad", S("SAME_UPPER")}, {"strides", Is({2, 2})}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{2, 2}, {}, {1, 1, 1, 1}}), 1e-5));
  // strides 1, kernel 4 wide: total 3 -> upper puts the extra pad at the end, lower at the start.
  y = run_op(OpKind::kConv, {x, w}, {{"auto_pad", S("SAME_UPPER")}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{}, {}, {1, 1, 1, 2}}), 1e-5));
  y = run_op(OpKind::kConv, {x, w}, {{"auto_pad", S("SAME_LOWER")}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{}, {}, {1, 2, 1, 1}}), 1e-5));
  // VALID ignores pads.
  y = run_op(OpKind::kConv, {x, w},
             {{"auto_pad", S("VALID")}, {"strides", Is({2, 3})}, {"pads", Is({1, 1, 1, 1})}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{2, 3}, {}, {}}), 1e-5));
  EXPECT_EQ(y[0].shape(), (Shape{1, 3, 3, 2}));
  // SAME with dilation: dilated kernel 5x7.
  y = run_op(OpKind::kConv, {x, w}, {{"auto_pad", S("SAME_LOWER")}, {"dilations", Is({2, 2})}});
  EXPECT_TRUE(tensors_near(y[0], naive_conv(x, w, nullptr, {{}, {2, 2}, {2, 3, 2, 3}}), 1e-5));
}

TEST(Conv, ShapeRuleAndErrors) {
  Tensor x = rand_tensor({1, 4, 6, 6}, 1), w = rand_tensor({6, 2, 3, 3}, 2);
  auto t = infer_op(OpKind::kConv, {x, w}, {{"group", I(2)}, {"strides", Is({2, 2})}});
  EXPECT_EQ(t[0], (TensorType{DType::kF32, {1, 6, 2, 2}}));
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w}), "X has 4 channels");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w}, {{"group", I(2)}, {"kernel_shape", Is({3, 2})}}),
                    "kernel_shape");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, rand_tensor({6, 4, 7, 7}, 3)}), "larger than");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w, rand_tensor({5}, 4)}, {{"group", I(2)}}), "bias");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w}, {{"group", I(2)}, {"pads", Is({1, 1})}}),
                    "pads has 2 entries");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, w}, {{"group", I(2)}, {"auto_pad", S("SAME")}}),
                    "auto_pad");
  EXPECT_USER_ERROR(run_op(OpKind::kConv, {x, rand_tensor({6, 4, 3}, 5)}), "ranks differ");
}

TEST(Conv, TinyModelSpeed) {
  // 50 convolutions of 32 channels at 32x32 (batch 1) must take well under a second.
  Tensor x = rand_tensor({1, 32, 32, 32}, 120), w = rand_tensor({32, 32, 3, 3}, 121);
  Tensor b = rand_tensor({32}, 122);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) {
    x = run_op(OpKind::kConv, {x, w, b}, {{"pads", Is({1, 1, 1, 1})}})[0];
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("50 convs 32x32x32 3x3: %.3f s\n", s);
  EXPECT_LT(s, 2.0);
}

// ---- MaxPool / AveragePool / GlobalAveragePool ----------------------------------------------

TEST(MaxPool, CeilModeExample) {
  // ONNX's test_maxpool_2d_ceil.
  std::vector<float> xv(16);
  for (int i = 0; i < 16; ++i) xv[i] = static_cast<float>(i + 1);
  auto y = run_op(OpKind::kMaxPool, {f32({1, 1, 4, 4}, xv)},
                  {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"ceil_mode", I(1)}});
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 2, 2}, {11, 12, 15, 16})));
}

TEST(MaxPool, CeilModeWindowMustStartInsideInput) {
  // in 5, kernel 2, stride 2, pads 1/1: ceil gives 4 windows, but the 4th would start at
  // 6 - 1 = 5, in the right padding: it is dropped.
  Tensor x = rand_tensor({1, 1, 5}, 130);
  auto t = infer_op(
      OpKind::kMaxPool, {x},
      {{"kernel_shape", Is({2})}, {"strides", Is({2})}, {"pads", Is({1, 1})}, {"ceil_mode", I(1)}});
  EXPECT_EQ(t[0].shape, (Shape{1, 1, 3}));
  // in 6, kernel 3, stride 2, no pads: floor 2, ceil 3 (the third window starts at 4, inside).
  t = infer_op(OpKind::kAveragePool, {rand_tensor({1, 1, 6, 6}, 131)},
               {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"ceil_mode", I(1)}});
  EXPECT_EQ(t[0].shape, (Shape{1, 1, 3, 3}));
}

struct PoolCase {
  const char* name;
  Shape x;
  PoolParams p;
  Attrs extra;  // auto_pad / ceil_mode instead of the explicit pads given to the reference
};

void check_pool(OpKind op, const PoolCase& c, DType dt = DType::kF32) {
  Tensor x = rand_tensor(c.x, 140, dt);
  Attrs attrs = c.extra;
  attrs["kernel_shape"] = Is(c.p.kernel);
  if (!c.p.strides.empty()) attrs["strides"] = Is(c.p.strides);
  if (!c.p.dilations.empty()) attrs["dilations"] = Is(c.p.dilations);
  if (!c.p.pads.empty() && !attrs.count("auto_pad")) attrs["pads"] = Is(c.p.pads);
  const bool avg = op == OpKind::kAveragePool;
  if (avg) attrs["count_include_pad"] = I(c.p.include_pad);
  Tensor want_idx;
  Tensor want = naive_pool(x, c.p, avg, &want_idx);
  if (dt == DType::kF16) want = want.cast(DType::kF16);
  auto y = run_op(op, {x}, attrs, avg ? 1 : 2);
  EXPECT_TRUE(tensors_near(y[0], want, dt == DType::kF16 ? 2e-3 : 1e-6)) << c.name;
  if (!avg) {
    EXPECT_TRUE(y[1].identical(want_idx)) << c.name << " indices";
  }
}

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      {"2d", {2, 3, 8, 8}, {{2, 2}, {2, 2}, {}, {}, {4, 4}}, {}},
      {"2d overlapping", {1, 2, 7, 9}, {{3, 3}, {1, 1}, {}, {}, {5, 7}}, {}},
      {"2d padded", {1, 2, 6, 7}, {{3, 3}, {2, 2}, {}, {1, 1, 1, 1}, {3, 4}}, {}},
      {"2d asymmetric pads", {1, 1, 6, 6}, {{3, 2}, {1, 2}, {}, {2, 0, 0, 1}, {6, 3}}, {}},
      {"2d dilated", {1, 2, 9, 9}, {{2, 3}, {2, 1}, {2, 2}, {1, 0, 1, 1}, {5, 6}}, {}},
      {"2d ceil", {1, 2, 8, 8}, {{3, 3}, {2, 2}, {}, {}, {4, 4}}, {{"ceil_mode", I(1)}}},
      {"2d ceil padded",
       {1, 1, 7, 5},
       {{2, 2}, {2, 2}, {}, {1, 1, 0, 1}, {4, 3}},
       {{"ceil_mode", I(1)}}},
      {"2d same upper",
       {1, 2, 7, 8},
       {{3, 2}, {2, 2}, {}, {1, 0, 1, 0}, {4, 4}},
       {{"auto_pad", S("SAME_UPPER")}}},
      {"2d same lower",
       {1, 2, 6, 6},
       {{2, 2}, {1, 1}, {}, {1, 1, 0, 0}, {6, 6}},
       {{"auto_pad", S("SAME_LOWER")}}},
      {"2d valid", {1, 2, 7, 8}, {{3, 2}, {2, 3}, {}, {}, {3, 3}}, {{"auto_pad", S("VALID")}}},
      // ceil_mode applies to VALID: H gains a window, W's extra one would start past the end.
      {"2d valid ceil",
       {1, 2, 8, 9},
       {{3, 2}, {2, 3}, {}, {}, {4, 3}},
       {{"auto_pad", S("VALID")}, {"ceil_mode", I(1)}}},
      {"1d", {2, 3, 11}, {{3}, {2}, {}, {1, 1}, {6}}, {}},
      {"3d", {1, 2, 5, 6, 4}, {{2, 3, 2}, {1, 2, 2}, {}, {0, 1, 1, 1, 0, 0}, {5, 3, 2}}, {}},
  };
  return cases;
}

TEST(MaxPool, AgainstNaiveReference) {
  for (const PoolCase& c : pool_cases()) check_pool(OpKind::kMaxPool, c);
}

TEST(MaxPool, ColumnMajorIndices) {
  // ONNX's test_maxpool_with_argmax_2d_precomputed_strides semantics: storage_order 1.
  std::vector<float> xv(25);
  for (int i = 0; i < 25; ++i) xv[i] = static_cast<float>(i + 1);
  auto y =
      run_op(OpKind::kMaxPool, {f32({1, 1, 5, 5}, xv)},
             {{"kernel_shape", Is({2, 2})}, {"strides", Is({2, 2})}, {"storage_order", I(1)}}, 2);
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 2, 2}, {7, 9, 17, 19})));
  EXPECT_TRUE(y[1].identical(i64({1, 1, 2, 2}, {6, 16, 8, 18})));
  // Second plane: the offset of the plane is added.
  auto y2 = run_op(OpKind::kMaxPool, {f32({1, 2, 1, 2}, {1, 2, 4, 3})},
                   {{"kernel_shape", Is({1, 2})}, {"storage_order", I(1)}}, 2);
  EXPECT_TRUE(y2[1].identical(i64({1, 2, 1, 1}, {1, 2})));
}

TEST(MaxPool, HalfAndOnlyFirstOutput) {
  check_pool(OpKind::kMaxPool, pool_cases()[2], DType::kF16);
  auto y = run_op(OpKind::kMaxPool, {rand_tensor({1, 1, 4, 4}, 1)}, {{"kernel_shape", Is({2, 2})}});
  EXPECT_EQ(y.size(), 1u);
}

TEST(MaxPool, Errors) {
  Tensor x = rand_tensor({1, 1, 4, 4}, 1);
  EXPECT_USER_ERROR(run_op(OpKind::kMaxPool, {x}, {}), "kernel_shape");
  EXPECT_USER_ERROR(run_op(OpKind::kMaxPool, {x}, {{"kernel_shape", Is({2})}}),
                    "kernel_shape has 1");
  EXPECT_USER_ERROR(run_op(OpKind::kMaxPool, {x}, {{"kernel_shape", Is({5, 5})}}), "larger than");
  EXPECT_USER_ERROR(
      run_op(OpKind::kMaxPool, {x}, {{"kernel_shape", Is({2, 2})}, {"strides", Is({0, 1})}}),
      "strides must be >= 1");
  EXPECT_USER_ERROR(
      run_op(OpKind::kMaxPool, {rand_tensor({4, 4}, 1)}, {{"kernel_shape", Is({2, 2})}}),
      "N x C x spatial");
}

TEST(AveragePool, AgainstNaiveReference) {
  for (bool include : {false, true}) {
    for (PoolCase c : pool_cases()) {
      c.p.include_pad = include;
      check_pool(OpKind::kAveragePool, c);
    }
  }
}

TEST(AveragePool, OnnxExamples) {
  std::vector<float> xv(16);
  for (int i = 0; i < 16; ++i) xv[i] = static_cast<float>(i + 1);
  Tensor x = f32({1, 1, 4, 4}, xv);
  // test_averagepool_2d_ceil.
  auto y = run_op(OpKind::kAveragePool, {x},
                  {{"kernel_shape", Is({3, 3})}, {"strides", Is({2, 2})}, {"ceil_mode", I(1)}});
  EXPECT_TRUE(tensors_near(y[0], f32({1, 1, 2, 2}, {6, 7.5, 12, 13.5})));
  // Padding counted or not.
  y = run_op(OpKind::kAveragePool, {x}, {{"kernel_shape", Is({2, 2})}, {"pads", Is({1, 1, 0, 0})}});
  EXPECT_NEAR(y[0].as_double(0), 1.0, 1e-6);
  y = run_op(
      OpKind::kAveragePool, {x},
      {{"kernel_shape", Is({2, 2})}, {"pads", Is({1, 1, 0, 0})}, {"count_include_pad", I(1)}});
  EXPECT_NEAR(y[0].as_double(0), 0.25, 1e-6);
  EXPECT_NEAR(y[0].as_double(1), 0.75, 1e-6);  // (1 + 2) / 4
}

TEST(AveragePool, Half) {
  PoolCase c = pool_cases()[3];
  c.p.include_pad = true;
  check_pool(OpKind::kAveragePool, c, DType::kF16);
}

TEST(GlobalAveragePool, MeansOverSpatialAxes) {
  Tensor x = rand_tensor({2, 3, 4, 5}, 150);
  auto y = run_op(OpKind::kGlobalAveragePool, {x});
  ASSERT_EQ(y[0].shape(), (Shape{2, 3, 1, 1}));
  for (int p = 0; p < 6; ++p) {
    double s = 0;
    for (int i = 0; i < 20; ++i) s += x.as_double(p * 20 + i);
    EXPECT_NEAR(y[0].as_double(p), s / 20, 1e-6);
  }
  auto y1 = run_op(OpKind::kGlobalAveragePool, {f32({1, 2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(tensors_near(y1[0], f32({1, 2, 1}, {2, 5})));
  auto yh = run_op(OpKind::kGlobalAveragePool, {half(f32({1, 1, 2, 2}, {1, 2, 3, 4.5}))});
  EXPECT_TRUE(tensors_near(yh[0], half(f32({1, 1, 1, 1}, {2.625}))));
}

// ---- BatchNormalization -------------------------------------------------------------------

TEST(BatchNormalization, Inference) {
  Tensor x = rand_tensor({2, 3, 4, 5}, 160);
  Tensor scale = f32({3}, {1.0f, 1.5f, -0.5f}), b = f32({3}, {0, 1, 2});
  Tensor mean = f32({3}, {0.1f, -0.2f, 0.3f}), var = f32({3}, {1.0f, 0.5f, 2.0f});
  for (int opset : {7, 9, 15}) {
    Attrs attrs{{"epsilon", F(1e-2f)}};
    if (opset == 7) attrs["spatial"] = I(1);
    auto y = run_op(OpKind::kBatchNormalization, {x, scale, b, mean, var}, attrs, 1, opset);
    std::vector<float> want(x.numel());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = (i / 20) % 3;
      want[i] = static_cast<float>(scale.as_double(c) * (x.as_double(i) - mean.as_double(c)) /
                                       std::sqrt(var.as_double(c) + 1e-2) +
                                   b.as_double(c));
    }
    EXPECT_TRUE(tensors_near(y[0], f32({2, 3, 4, 5}, want), 1e-5)) << "opset " << opset;
  }
  // f16 X with f32 statistics (opset 15 allows differing types).
  auto yh =
      run_op(OpKind::kBatchNormalization, {half(f32({1, 2}, {1, 2})), f32({2}, {2, 3}),
                                           f32({2}, {1, 1}), f32({2}, {0, 1}), f32({2}, {1, 4})});
  EXPECT_TRUE(tensors_near(yh[0], half(f32({1, 2}, {3, 2.5f})), 2e-3));
  // Rank 2 and spatial = 0 (opset 7): per-element statistics.
  auto y0 =
      run_op(OpKind::kBatchNormalization,
             {f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({2, 2}, {1, 1, 1, 2}),
              f32({2, 2}, {0, 0, 0, 1}), f32({2, 2}, {0, 1, 2, 3}), f32({2, 2}, {1, 1, 1, 1})},
             {{"spatial", I(0)}, {"epsilon", F(0.0f)}}, 1, 7);
  EXPECT_TRUE(tensors_near(y0[0], f32({2, 2, 2}, {1, 1, 1, 3, 5, 5, 5, 11})));
}

TEST(BatchNormalization, Errors) {
  Tensor x = rand_tensor({1, 2, 3}, 1), p = f32({2}, {1, 1});
  EXPECT_USER_ERROR(run_op(OpKind::kBatchNormalization, {x, p, p, p, p}, {{"training_mode", I(1)}}),
                    "training_mode");
  EXPECT_USER_ERROR(run_op(OpKind::kBatchNormalization, {x, p, p, p, p}, {}, 3), "output 1");
  EXPECT_USER_ERROR(run_op(OpKind::kBatchNormalization, {x, f32({3}, {1, 1, 1}), p, p, p}),
                    "scale of shape 3");
}

// ---- LayerNormalization ------------------------------------------------------------------

std::vector<float> naive_layer_norm(const Tensor& x, int64_t axis, const std::vector<float>& scale,
                                    const std::vector<float>& bias, float eps,
                                    std::vector<float>* mean, std::vector<float>* inv) {
  const int64_t inner = shape_numel(Shape(x.shape().begin() + axis, x.shape().end()));
  const int64_t outer = x.numel() / inner;
  std::vector<float> y(x.numel());
  for (int64_t o = 0; o < outer; ++o) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < inner; ++i) m += x.as_double(o * inner + i);
    m /= inner;
    for (int64_t i = 0; i < inner; ++i) v += std::pow(x.as_double(o * inner + i) - m, 2);
    const double is = 1 / std::sqrt(v / inner + eps);
    for (int64_t i = 0; i < inner; ++i)
      y[o * inner + i] = static_cast<float>((x.as_double(o * inner + i) - m) * is * scale[i] +
                                            (bias.empty() ? 0 : bias[i]));
    mean->push_back(static_cast<float>(m));
    inv->push_back(static_cast<float>(is));
  }
  return y;
}

TEST(LayerNormalization, AxesBiasAndStatistics) {
  Tensor x = rand_tensor({2, 3, 8}, 170);
  for (int64_t axis : {-1, 1, 0}) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    Shape norm(x.shape().begin() + a, x.shape().end());
    Tensor scale = rand_tensor(norm, 171), bias = rand_tensor(norm, 172);
    std::vector<float> mean, inv;
    std::vector<float> want =
        naive_layer_norm(x, a, scale.to_float_vector(), bias.to_float_vector(), 1e-3f, &mean, &inv);
    auto y = run_op(OpKind::kLayerNormalization, {x, scale, bias},
                    {{"axis", I(axis)}, {"epsilon", F(1e-3f)}}, 3, 17);
    Shape stat = x.shape();
    for (int64_t i = a; i < 3; ++i) stat[i] = 1;
    EXPECT_TRUE(tensors_near(y[0], f32(x.shape(), want), 1e-5)) << axis;
    EXPECT_TRUE(tensors_near(y[1], f32(stat, mean), 1e-5)) << axis;
    EXPECT_TRUE(tensors_near(y[2], f32(stat, inv), 1e-5)) << axis;
  }
  // No bias, default axis and epsilon, any opset (Mono creates it from patterns).
  Tensor scale = rand_tensor({8}, 173);
  std::vector<float> mean, inv;
  std::vector<float> want = naive_layer_norm(x, 2, scale.to_float_vector(), {}, 1e-5f, &mean, &inv);
  auto y = run_op(OpKind::kLayerNormalization, {x, scale}, {}, 1, 11);
  EXPECT_TRUE(tensors_near(y[0], f32(x.shape(), want), 1e-5));
}

TEST(LayerNormalization, HalfAndBroadcastScale) {
  Tensor x = half(rand_tensor({4, 6}, 180));
  Tensor scale = half(f32({1}, {2.0f}));
  std::vector<float> mean, inv;
  std::vector<float> want =
      naive_layer_norm(x, 1, std::vector<float>(6, 2.0f), {}, 1e-5f, &mean, &inv);
  auto types = infer_op(OpKind::kLayerNormalization, {x, scale}, {}, 3);
  EXPECT_EQ(types[0], (TensorType{DType::kF16, {4, 6}}));
  EXPECT_EQ(types[1], (TensorType{DType::kF32, {4, 1}}));
  auto y = run_op(OpKind::kLayerNormalization, {x, scale}, {}, 3);
  EXPECT_TRUE(tensors_near(y[0], Tensor::from_floats({4, 6}, want, DType::kF16), 2e-3));
  EXPECT_TRUE(tensors_near(y[1], f32({4, 1}, mean), 1e-5));
  EXPECT_USER_ERROR(run_op(OpKind::kLayerNormalization, {x, half(f32({4}, {1, 1, 1, 1}))}),
                    "does not broadcast to the normalized shape");
  EXPECT_USER_ERROR(run_op(OpKind::kLayerNormalization, {x, scale}, {{"axis", I(2)}}),
                    "out of range");
  // stash_type FLOAT16 (10) keeps f16 statistics for f16 X; other stash types are refused.
  types = infer_op(OpKind::kLayerNormalization, {x, scale}, {{"stash_type", I(10)}}, 3);
  EXPECT_EQ(types[2], (TensorType{DType::kF16, {4, 1}}));
  EXPECT_USER_ERROR(infer_op(OpKind::kLayerNormalization, {x, scale}, {{"stash_type", I(11)}}, 3),
                    "stash_type");
}

// ---- Softmax ---------------------------------------------------------------------------------

// Softmax over blocks: element (o, i, j) at (o * n + i) * inner + j, normalized over i.
std::vector<float> naive_softmax(const std::vector<float>& x, int64_t outer, int64_t n,
                                 int64_t inner) {
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double m = -INFINITY, s = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max<double>(m, x[(o * n + i) * inner + j]);
      for (int64_t i = 0; i < n; ++i) s += std::exp(x[(o * n + i) * inner + j] - m);
      for (int64_t i = 0; i < n; ++i)
        y[(o * n + i) * inner + j] =
            static_cast<float>(std::exp(x[(o * n + i) * inner + j] - m) / s);
    }
  return y;
}

TEST(Softmax, AxisForms) {
  Tensor x = rand_tensor({2, 3, 4}, 190);
  std::vector<float> xv = x.to_float_vector();
  // Opset 13: default -1; explicit axes 0, 1.
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {}, 1, 13)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 6, 4, 1))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {{"axis", I(1)}}, 1, 13)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 2, 3, 4))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {{"axis", I(0)}}, 1, 13)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 1, 2, 12))));
  // Opset 12: default axis 1 coerces to [2, 12] and normalizes over all 12.
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {}, 1, 12)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 2, 12, 1))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {{"axis", I(0)}}, 1, 11)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 1, 24, 1))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kSoftmax, {x}, {{"axis", I(-1)}}, 1, 11)[0],
                           f32({2, 3, 4}, naive_softmax(xv, 6, 4, 1))));
  EXPECT_USER_ERROR(run_op(OpKind::kSoftmax, {x}, {{"axis", I(3)}}, 1, 13), "out of range");
}

TEST(Softmax, LargeNumbersAndHalf) {
  auto y = run_op(OpKind::kSoftmax, {f32({2, 4}, {1, 2, 3, 4, 10000, 10001, 10002, 10003})});
  EXPECT_TRUE(tensors_near(y[0],
                           f32({2, 4}, {0.0320586f, 0.08714432f, 0.23688284f, 0.64391428f,
                                        0.0320586f, 0.08714432f, 0.23688284f, 0.64391428f}),
                           1e-5));
  Tensor xh = half(rand_tensor({3, 5}, 191));
  auto yh = run_op(OpKind::kSoftmax, {xh});
  EXPECT_TRUE(tensors_near(
      yh[0], Tensor::from_floats({3, 5}, naive_softmax(xh.to_float_vector(), 3, 5, 1), DType::kF16),
      2e-3));
}

// ---- ReduceMax / ReduceMean / ReduceSum ------------------------------------------------------

// Reduction of a [2,3,4] tensor over `axes` (sorted) in double, keepdims shape.
std::vector<double> naive_reduce(const Tensor& x, const std::vector<bool>& red, OpKind op) {
  const Shape& s = x.shape();
  Shape out;
  for (size_t d = 0; d < s.size(); ++d) out.push_back(red[d] ? 1 : s[d]);
  std::vector<double> acc(shape_numel(out), op == OpKind::kReduceMax ? -INFINITY : 0.0);
  std::vector<int64_t> cnt(acc.size(), 0);
  const auto ost = strides_of(out);
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    int64_t o = 0;
    for (size_t d = 0; d < s.size(); ++d) o += (red[d] ? 0 : idx[d]) * ost[d];
    const double v = x.as_double(i);
    acc[o] = op == OpKind::kReduceMax ? std::max(acc[o], v) : acc[o] + v;
    ++cnt[o];
  }
  if (op == OpKind::kReduceMean)
    for (size_t i = 0; i < acc.size(); ++i) acc[i] /= cnt[i];
  return acc;
}

TEST(Reduce, AxesFormsAndKeepdims) {
  Tensor x = rand_tensor({2, 3, 4}, 200);
  const std::vector<std::pair<Ints, std::vector<bool>>> axes_cases = {
      {{1}, {false, true, false}},   {{-1}, {false, false, true}}, {{0, 2}, {true, false, true}},
      {{2, 0}, {true, false, true}}, {{}, {true, true, true}},     {{0, 1, 2}, {true, true, true}},
  };
  for (OpKind op : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax}) {
    const int input_opset = op == OpKind::kReduceSum ? 13 : 18;
    for (const auto& [axes, red] : axes_cases) {
      std::vector<double> want = naive_reduce(x, red, op);
      Shape keep, drop;
      for (int d = 0; d < 3; ++d) {
        keep.push_back(red[d] ? 1 : x.shape()[d]);
        if (!red[d]) drop.push_back(x.shape()[d]);
      }
      std::vector<float> wf(want.begin(), want.end());
      for (int64_t keepdims : {1, 0}) {
        const Tensor expect = f32(keepdims ? keep : drop, wf);
        // Axes as an attribute (older opsets).
        Attrs attrs{{"keepdims", I(keepdims)}};
        if (!axes.empty()) attrs["axes"] = Is(axes);
        auto y = run_op(op, {x}, attrs, 1, input_opset - 2);
        EXPECT_TRUE(tensors_near(y[0], expect, 1e-5)) << op_name(op) << " attr " << axes.size();
        // Axes as input 1.
        std::optional<Tensor> ax;
        if (!axes.empty()) ax = i64({static_cast<int64_t>(axes.size())}, axes);
        y = run_op(op, {x, ax}, {{"keepdims", I(keepdims)}}, 1, input_opset);
        EXPECT_TRUE(tensors_near(y[0], expect, 1e-5)) << op_name(op) << " input " << axes.size();
      }
    }
  }
}

TEST(Reduce, NoopWithEmptyAxes) {
  Tensor x = rand_tensor({2, 3}, 210);
  for (OpKind op : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax}) {
    auto y =
        run_op(op, {x, i64({0}, {})}, {{"noop_with_empty_axes", I(1)}, {"keepdims", I(0)}}, 1, 18);
    EXPECT_TRUE(y[0].identical(x)) << op_name(op);
    y = run_op(op, {x, std::nullopt}, {{"noop_with_empty_axes", I(1)}}, 1, 18);
    EXPECT_TRUE(y[0].identical(x)) << op_name(op);
    // Without noop, empty axes reduce everything.
    y = run_op(op, {x, i64({0}, {})}, {{"keepdims", I(0)}}, 1, 18);
    EXPECT_EQ(y[0].shape(), Shape{});
  }
}

TEST(Reduce, IntegersHalfAndEmptyReductions) {
  Tensor xi = i64({2, 3}, {1, -5, 3, 7, 2, -9});
  EXPECT_TRUE(
      run_op(OpKind::kReduceSum, {xi, i64({1}, {1})}, {})[0].identical(i64({2, 1}, {-1, 0})));
  EXPECT_TRUE(run_op(OpKind::kReduceMax, {xi, i64({1}, {0})}, {{"keepdims", I(0)}})[0].identical(
      i64({3}, {7, 2, 3})));
  Tensor x32 = xi.cast(DType::kI32);
  EXPECT_TRUE(run_op(OpKind::kReduceMax, {x32}, {})[0].identical(
      Tensor::from_ints({1, 1}, {7}, DType::kI32)));
  EXPECT_TRUE(run_op(OpKind::kReduceMean, {xi}, {{"axes", Is({1})}}, 1, 17)[0].identical(
      i64({2, 1}, {0, 0})));
  Tensor xh = half(f32({2, 2}, {1, 2, 3, 4.5f}));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kReduceMean, {xh}, {{"axes", Is({0})}}, 1, 13)[0],
                           half(f32({1, 2}, {2, 3.25f}))));
  EXPECT_TRUE(tensors_near(run_op(OpKind::kReduceSum, {xh}, {})[0], half(f32({1, 1}, {10.5f}))));
  // Empty reductions: Sum 0, Max the lowest value (-inf), Mean NaN.
  Tensor e = f32({2, 0}, {});
  EXPECT_TRUE(tensors_near(run_op(OpKind::kReduceSum, {e, i64({1}, {1})})[0], f32({2, 1}, {0, 0})));
  Tensor m = run_op(OpKind::kReduceMax, {e, i64({1}, {1})})[0];
  EXPECT_EQ(m.shape(), (Shape{2, 1}));
  EXPECT_EQ(m.as_double(1), -INFINITY);
  EXPECT_TRUE(std::isnan(run_op(OpKind::kReduceMean, {e, i64({1}, {1})})[0].as_double(0)));
  EXPECT_EQ(run_op(OpKind::kReduceMax, {i64({0}, {}), i64({1}, {0})})[0].as_int(0),
            std::numeric_limits<int64_t>::lowest());
  // Reduce a scalar over no axes.
  EXPECT_TRUE(tensors_near(run_op(OpKind::kReduceSum, {f32({}, {3})})[0], f32({}, {3})));
}

TEST(Reduce, AxesInputMustBeKnown) {
  Graph g;
  Value* x = g.add_constant("x", rand_tensor({2, 3}, 1));
  Value* axes = g.add_value("axes", TensorType{DType::kI64, {1}});  // a graph input
  g.inputs.push_back(axes);
  Node* n = g.add_node(OpKind::kReduceSum, "r", {x, axes}, {"y"}, 13);
  EXPECT_THROW(infer_node(*n, {x->constant.get(), nullptr}), NotKnownError);
  EXPECT_USER_ERROR(infer_node(*n, {x->constant.get(), nullptr}), "input 1 (axes) must be known");
}

TEST(Reduce, Errors) {
  Tensor x = rand_tensor({2, 3}, 1);
  EXPECT_USER_ERROR(run_op(OpKind::kReduceSum, {x, i64({1}, {2})}), "out of range");
  EXPECT_USER_ERROR(run_op(OpKind::kReduceSum, {x, i64({2}, {1, -1})}), "listed twice");
  EXPECT_USER_ERROR(run_op(OpKind::kReduceMean, {x, i64({1}, {1})}, {{"axes", Is({0})}}), "both");
  EXPECT_USER_ERROR(run_op(OpKind::kReduceMax, {Tensor(DType::kBool, {2})}), "expected one of");
  EXPECT_USER_ERROR(run_op(OpKind::kReduceMax, {x, f32({1}, {1})}), "axes (input 1) must be i64");
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
}  // namespace mono
