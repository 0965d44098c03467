// Shared machinery of the Reduce ops (and of ops that reduce along one axis, like Softmax and
// LayerNormalization): axes resolution, keepdims, noop_with_empty_axes, and the reduction loop.
#pragma once

#include <vector>

#include "compiler/ops/op.h"

namespace mono {

struct ReduceSpec {
  std::vector<bool> reduced;  // per input axis
  bool noop = false;          // empty axes with noop_with_empty_axes = 1: the identity
  Shape out_shape;            // keepdims applied
  int64_t count = 1;          // elements reduced into each output
};

// Resolves the axes (from `axes_input`, input 1 where the opset makes axes an input, else from
// the `axes` attribute; absent or empty: all axes unless noop_with_empty_axes) and keepdims
// against the input shape. Fails on out-of-range or repeated axes, or axes given twice.
ReduceSpec reduce_spec(const AttrReader& ctx, const Shape& in, const Tensor* axes_input);

// The shape rule of the Reduce ops: input 0 restricted to `allowed`; the output keeps its
// dtype. Reads input 1 (axes) with require_known when present.
void infer_reduce(InferContext& ctx, std::initializer_list<DType> allowed);

// True for the Reduce* ops (the ones whose axes are an attribute or input 1).
bool is_reduce_op(OpKind op);

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };
// Fills output 0 of a Reduce op. Floats accumulate in float, integers in int64. An empty
// reduction gives 0 (the sums), NaN (Mean of floats), 1 (Prod), -inf (LogSum, LogSumExp) or
// the identity of Max and Min (the lowest or highest value). LogSumExp subtracts the maximum
// before exponentiating. L2, LogSum and LogSumExp take float inputs only.
void compute_reduce(ComputeContext& ctx, ReduceKind kind);

// The definition of a Reduce op: input 1 (axes, optional), the attributes axes, keepdims
// (default 1) and noop_with_empty_axes (default 0), input 0 of any numeric type (float types
// only for L2, LogSum and LogSumExp). One line in each op's file.
template <ReduceKind kKind, bool kFloatsOnly>
OpDef reduce_op_def(const char* name) {
  return OpDef{name,
               1,
               2,
               1,
               1,
               {attr_ints("axes"), attr("keepdims", int64_t{1}), attr("noop_with_empty_axes", int64_t{0})},
               [](InferContext& ctx) {
                 if (kFloatsOnly) infer_reduce(ctx, {DType::kF32, DType::kF16});
                 else infer_reduce(ctx, {DType::kF32, DType::kF16, DType::kI64, DType::kI32});
               },
               [](ComputeContext& ctx) { compute_reduce(ctx, kKind); }};
}

// Splits `shape` around `axis` into outer (product of axes before), n (the axis) and inner
// (product of axes after), so element (o, i, j) is at (o * n + i) * inner + j.
void split_at_axis(const Shape& shape, int64_t axis, int64_t* outer, int64_t* n, int64_t* inner);

}  // namespace mono
