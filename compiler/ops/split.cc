// Split: cuts the input along `axis` into one part per output. The sizes come from `split`
// (attribute before opset 13, optional input 1 from opset 13); without it the parts are
// equal, and from opset 18 (attribute num_outputs) the last part may be smaller: every part
// has ceil(dim / n) elements but the last, which takes the rest.
#include "compiler/ops/shape_util.h"

namespace mono {

static std::vector<int64_t> part_sizes(const AttrReader& ctx, int64_t dim, int n_outputs,
                                       bool have_split, const std::vector<int64_t>& split) {
  if (have_split && !split.empty()) {
    if (static_cast<int64_t>(split.size()) != n_outputs)
      ctx.fail(str_cat("split has ", split.size(), " entries for ", n_outputs, " outputs"));
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) ctx.fail(str_cat("split ", shape_str(split), " has a negative size"));
      if (s > dim) ctx.fail(str_cat("split ", shape_str(split), " exceeds the axis size ", dim));
      sum += s;
    }
    if (sum != dim)
      ctx.fail(str_cat("split sizes ", shape_str(split), " sum to ", sum,
                       " but the axis has size ", dim));
    return split;
  }
  int64_t n = n_outputs;
  if (ctx.has_attr("num_outputs")) {
    n = ctx.attr_int("num_outputs");
    if (n != n_outputs)
      ctx.fail(str_cat("num_outputs is ", n, " but the node has ", n_outputs, " outputs"));
  }
  if (dim % n == 0) return std::vector<int64_t>(n, dim / n);
  if (ctx.opset() < 18)
    ctx.fail(str_cat("axis of size ", dim, " cannot be split into ", n, " equal parts"));
  const int64_t chunk = (dim + n - 1) / n;
  const int64_t last = dim - chunk * (n - 1);
  if (last < 0)
    ctx.fail(str_cat("axis of size ", dim, " cannot be split into ", n, " parts of ", chunk));
  std::vector<int64_t> sizes(n, chunk);
  sizes.back() = last;
  return sizes;
}

static void infer_split(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const int64_t axis = ctx.axis(ctx.attr_int("axis"), in.rank());
  bool have_split = false;
  std::vector<int64_t> split;
  if (ctx.opset() >= 13) {
    if (ctx.has_input(1)) {
      have_split = true;
      split = known_ints(ctx, 1, "split");
      if (ctx.opset() >= 18 && !split.empty() && ctx.has_attr("num_outputs"))
        ctx.fail("input split and attribute num_outputs are both set");
    }
  } else if (ctx.has_attr("split")) {
    have_split = true;
    split = ctx.attr_ints("split");
  }
  std::vector<int64_t> sizes = part_sizes(ctx, in.shape[axis], ctx.num_outputs(), have_split, split);
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    Shape s = in.shape;
    s[axis] = sizes[i];
    ctx.set_output(i, in.dtype, s);
  }
}

static void compute_split(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = ctx.attr_int("axis");
  if (axis < 0) axis += rank;
  bool have_split = false;
  std::vector<int64_t> split;
  if (ctx.opset() >= 13) {
    if (ctx.has_input(1)) {
      have_split = true;
      split = int_values(ctx, ctx.input(1), "split");
    }
  } else if (ctx.has_attr("split")) {
    have_split = true;
    split = ctx.attr_ints("split");
  }
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> sizes = part_sizes(ctx, dim, ctx.num_outputs(), have_split, split);
  const size_t es = dtype_size(x.dtype());
  const int64_t outer = dims_product(x.shape(), 0, axis);
  const int64_t inner = dims_product(x.shape(), axis + 1, rank);
  const size_t in_row = static_cast<size_t>(dim * inner) * es;
  const uint8_t* src = bytes_of(x);
  size_t col = 0;
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    const size_t row = static_cast<size_t>(sizes[k] * inner) * es;
    if (ctx.has_output(k) && row > 0) {
      uint8_t* dst = mutable_bytes_of(ctx.output(k));
      for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * row, src + o * in_row + col, row);
    }
    col += row;
  }
}

const OpDef& op_def_Split() {
  static const OpDef def{"Split", 1, 2, 1, 1024,
                         {attr("axis", int64_t{0}), attr_ints("split"),
                          attr_optional("num_outputs", AttrType::kInt)},
                         infer_split, compute_split};
  return def;
}

}  // namespace mono
