// MatMul: numpy matmul. A 1-D first operand is a row vector, a 1-D second operand a column
// vector (the added axis is dropped from the result); leading batch axes broadcast.
#include <algorithm>

#include "compiler/ops/elementwise.h"
#include "compiler/ops/linalg.h"

namespace mono {

namespace {

// The operands' shapes as matrices with batch axes, and the result's shape.
struct MatMulShapes {
  Shape a, b;   // rank >= 2 each (1-D operands promoted)
  Shape batch;  // broadcast batch shape
  int64_t M = 0, K = 0, N = 0;
  Shape out;
};

bool matmul_shapes(const Shape& a_in, const Shape& b_in, MatMulShapes* s, std::string* err) {
  if (a_in.empty() || b_in.empty()) {
    *err = "MatMul operands must have rank >= 1";
    return false;
  }
  s->a = a_in;
  s->b = b_in;
  if (s->a.size() == 1) s->a.insert(s->a.begin(), 1);
  if (s->b.size() == 1) s->b.push_back(1);
  const size_t ra = s->a.size(), rb = s->b.size();
  s->M = s->a[ra - 2];
  s->K = s->a[ra - 1];
  s->N = s->b[rb - 1];
  if (s->b[rb - 2] != s->K) {
    *err = str_cat("inner dimensions differ: A is ", shape_str(a_in), " and B is ", shape_str(b_in),
                   " (", s->K, " vs ", s->b[rb - 2], ")");
    return false;
  }
  Shape ba(s->a.begin(), s->a.end() - 2), bb(s->b.begin(), s->b.end() - 2);
  if (!broadcast_shapes({&ba, &bb}, &s->batch)) {
    *err = str_cat("batch dimensions do not broadcast: A is ", shape_str(a_in), " and B is ",
                   shape_str(b_in));
    return false;
  }
  s->out = s->batch;
  if (a_in.size() > 1) s->out.push_back(s->M);
  if (b_in.size() > 1) s->out.push_back(s->N);
  return true;
}

void infer_mat_mul(InferContext& ctx) {
  ctx.expect_dtype(0, {DType::kF32, DType::kF16, DType::kI64, DType::kI32});
  ctx.expect_same_dtype(0, 1);
  MatMulShapes s;
  std::string err;
  if (!matmul_shapes(ctx.input_shape(0), ctx.input_shape(1), &s, &err)) ctx.fail(err);
  ctx.set_output(0, ctx.input_dtype(0), s.out);
}

// Calls f(batch_index, a_matrix_index, b_matrix_index) for every batch of the result.
template <typename F>
void for_each_batch(const MatMulShapes& s, F&& f) {
  const Shape ba(s.a.begin(), s.a.end() - 2), bb(s.b.begin(), s.b.end() - 2);
  for_each_broadcast<2>(s.batch, {&ba, &bb},
                        [&](int64_t i, const std::array<int64_t, 2>& o) { f(i, o[0], o[1]); });
}

void compute_mat_mul(ComputeContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.output(0);
  MatMulShapes s;
  std::string err;
  if (!matmul_shapes(a.shape(), b.shape(), &s, &err)) ctx.fail(err);
  const int64_t M = s.M, K = s.K, N = s.N;
  if (y.numel() == 0) return;
  const DType dt = a.dtype();
  if (dt == DType::kI64 || dt == DType::kI32) {
    visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>) {
        const T* pa = a.data<T>();
        const T* pb = b.data<T>();
        T* py = y.mutable_data<T>();
        std::vector<int64_t> acc(static_cast<size_t>(N));
        for_each_batch(s, [&](int64_t bi, int64_t ai, int64_t bj) {
          const T* am = pa + ai * M * K;
          const T* bm = pb + bj * K * N;
          for (int64_t i = 0; i < M; ++i) {
            std::fill(acc.begin(), acc.end(), 0);
            for (int64_t k = 0; k < K; ++k) {
              const int64_t av = am[i * K + k];
              for (int64_t j = 0; j < N; ++j) acc[j] += av * static_cast<int64_t>(bm[k * N + j]);
            }
            for (int64_t j = 0; j < N; ++j) py[(bi * M + i) * N + j] = static_cast<T>(acc[j]);
          }
        });
      }
    });
    return;
  }
  FloatView av(a), bv(b);
  FloatOut out(y);
  const int64_t b_batches = shape_numel(Shape(s.b.begin(), s.b.end() - 2));
  const int64_t a_batches = shape_numel(Shape(s.a.begin(), s.a.end() - 2));
  if (b_batches == 1) {
    // One B for every batch: the batches of A stack into one tall matrix.
    gemm_f32(false, false, a_batches * M, N, K, 1.0f, av.data(), K, bv.data(), N, 0.0f, out.data(),
             N);
  } else {
    for_each_batch(s, [&](int64_t bi, int64_t ai, int64_t bj) {
      gemm_f32(false, false, M, N, K, 1.0f, av.data() + ai * M * K, K, bv.data() + bj * K * N, N,
               0.0f, out.data() + bi * M * N, N);
    });
  }
  out.finish();
}

}  // namespace

const OpDef& op_def_MatMul() {
  static const OpDef def{"MatMul", 2, 2, 1, 1, {}, infer_mat_mul, compute_mat_mul};
  return def;
}

}  // namespace mono
