// Transpose: permutes axes; `perm` defaults to reversing them.
#include "compiler/ops/transpose.h"

#include <cstring>

#include "compiler/ops/op.h"

namespace mono {

static std::vector<int64_t> permutation(const AttrReader& ctx, int64_t rank) {
  std::vector<int64_t> perm = ctx.attr_ints("perm");
  if (!ctx.has_attr("perm")) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  return perm;
}

static void infer_transpose(InferContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm = permutation(ctx, rank);
  if (static_cast<int64_t>(perm.size()) != rank)
    ctx.fail(str_cat("perm has ", perm.size(), " entries for an input of rank ", rank));
  std::vector<bool> seen(rank, false);
  Shape out(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]])
      ctx.fail("perm is not a permutation of the input's axes");
    seen[perm[i]] = true;
    out[i] = in[perm[i]];
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
}

Shape permute_shape(const Shape& s, const std::vector<int64_t>& perm) {
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = s[perm[i]];
  return out;
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& perm) {
  const Shape& in = x.shape();
  const int64_t rank = x.rank();
  MONO_CHECK(static_cast<int64_t>(perm.size()) == rank, "permute: ", perm.size(), " axes for rank ", rank);
  const Shape out_shape = permute_shape(in, perm);
  Tensor y(x.dtype(), out_shape);
  // Stride in the input of each output axis.
  std::vector<int64_t> in_stride(rank, 1), stride(rank);
  for (int64_t i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * in[i + 1];
  for (int64_t i = 0; i < rank; ++i) stride[i] = in_stride[perm[i]];
  const size_t es = dtype_size(x.dtype());
  const uint8_t* src = static_cast<const uint8_t*>(x.raw());
  uint8_t* dst = static_cast<uint8_t*>(y.mutable_raw());
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0, n = y.numel(); i < n; ++i) {
    std::memcpy(dst + i * es, src + offset * es, es);
    for (int64_t ax = rank - 1; ax >= 0; --ax) {
      offset += stride[ax];
      if (++idx[ax] < out_shape[ax]) break;
      offset -= stride[ax] * out_shape[ax];
      idx[ax] = 0;
    }
  }
  return y;
}

static void compute_transpose(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor y = permute(x, permutation(ctx, x.rank()));
  Tensor& out = ctx.output(0);
  if (y.nbytes() > 0) std::memcpy(out.mutable_raw(), y.raw(), y.nbytes());
}

std::vector<int64_t> transpose_perm(const Node& node) {
  return permutation(node_attrs(node), node.inputs[0]->type.rank());
}

const OpDef& op_def_Transpose() {
  static const OpDef def{"Transpose", 1, 1, 1, 1, {attr_ints("perm")}, infer_transpose,
                         compute_transpose};
  return def;
}

}  // namespace mono
