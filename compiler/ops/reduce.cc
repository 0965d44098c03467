#include "compiler/ops/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/ops/elementwise.h"

namespace mono {

bool is_reduce_op(OpKind op) {
  switch (op) {
    case OpKind::kReduceL1: case OpKind::kReduceL2: case OpKind::kReduceLogSum: case OpKind::kReduceLogSumExp:
    case OpKind::kReduceMax: case OpKind::kReduceMean: case OpKind::kReduceMin: case OpKind::kReduceProd:
    case OpKind::kReduceSum: case OpKind::kReduceSumSquare:
      return true;
    default:
      return false;
  }
}

ReduceSpec reduce_spec(const AttrReader& ctx, const Shape& in, const Tensor* axes_input) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (axes_input) {
    if (ctx.has_attr("axes")) ctx.fail("axes are given both as an attribute and as input 1");
    if (axes_input->dtype() != DType::kI64 && axes_input->dtype() != DType::kI32)
      ctx.fail(str_cat("axes (input 1) must be i64, got ", dtype_name(axes_input->dtype())));
    if (axes_input->rank() > 1)
      ctx.fail(str_cat("axes (input 1) must be 1-D, got shape ", shape_str(axes_input->shape())));
    axes = axes_input->to_int_vector();
  } else if (ctx.has_attr("axes")) {
    axes = ctx.attr_ints("axes");
  }
  ReduceSpec spec;
  spec.reduced.assign(rank, axes.empty());
  if (axes.empty() && ctx.attr_int("noop_with_empty_axes") != 0) {
    spec.noop = true;
    spec.reduced.assign(rank, false);
    spec.out_shape = in;
    return spec;
  }
  for (int64_t a : axes) {
    int64_t n;
    if (!normalize_axis(a, rank, &n))
      ctx.fail(str_cat("axis ", a, " is out of range for an input of rank ", rank));
    if (spec.reduced[n]) ctx.fail(str_cat("axis ", a, " is listed twice"));
    spec.reduced[n] = true;
  }
  const bool keepdims = ctx.attr_int("keepdims") != 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (spec.reduced[i]) {
      spec.count *= in[i];
      if (keepdims) spec.out_shape.push_back(1);
    } else {
      spec.out_shape.push_back(in[i]);
    }
  }
  return spec;
}

void infer_reduce(InferContext& ctx, std::initializer_list<DType> allowed) {
  ctx.expect_dtype(0, allowed);
  const Tensor* axes = ctx.has_input(1) ? &ctx.require_known(1, "axes") : nullptr;
  ReduceSpec spec = reduce_spec(ctx, ctx.input_shape(0), axes);
  ctx.set_output(0, ctx.input_dtype(0), spec.out_shape);
}

void split_at_axis(const Shape& shape, int64_t axis, int64_t* outer, int64_t* n, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t i = 0; i < axis; ++i) *outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) *inner *= shape[i];
  *n = shape[axis];
}

namespace {

// Adjacent axes with the same role merged, size-1 axes dropped.
struct Coalesced {
  std::vector<int64_t> extent;
  std::vector<bool> reduced;
};

Coalesced coalesce(const Shape& in, const std::vector<bool>& reduced) {
  Coalesced c;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == 1) continue;
    if (!c.extent.empty() && c.reduced.back() == reduced[i]) {
      c.extent.back() *= in[i];
    } else {
      c.extent.push_back(in[i]);
      c.reduced.push_back(reduced[i]);
    }
  }
  if (c.extent.empty()) {
    c.extent.push_back(1);
    c.reduced.push_back(false);
  }
  return c;
}

// acc[out] = combine(acc[out], x, out) over every input element, `out` its output position.
template <typename T, typename A, typename F>
void accumulate_indexed(const T* in, const Coalesced& c, A* acc, F combine) {
  const size_t r = c.extent.size();
  std::vector<int64_t> out_stride(r, 0);
  int64_t stride = 1;
  for (size_t i = r; i-- > 0;) {
    if (!c.reduced[i]) {
      out_stride[i] = stride;
      stride *= c.extent[i];
    }
  }
  int64_t total = 1;
  for (int64_t e : c.extent) total *= e;
  if (total == 0) return;
  const int64_t inner = c.extent[r - 1];
  const bool inner_reduced = c.reduced[r - 1];
  std::vector<int64_t> idx(r, 0);
  int64_t out_off = 0;
  for (int64_t i = 0; i < total; i += inner) {
    const T* src = in + i;
    if (inner_reduced) {
      A a = acc[out_off];
      for (int64_t j = 0; j < inner; ++j) a = combine(a, load(src[j]), out_off);
      acc[out_off] = a;
    } else {
      A* dst = acc + out_off;
      for (int64_t j = 0; j < inner; ++j) dst[j] = combine(dst[j], load(src[j]), out_off + j);
    }
    for (size_t d = r - 1; d-- > 0;) {
      out_off += out_stride[d];
      if (++idx[d] < c.extent[d]) break;
      out_off -= out_stride[d] * c.extent[d];
      idx[d] = 0;
    }
  }
}

// acc[out] = combine(acc[out], x) over every input element.
template <typename T, typename A, typename F>
void accumulate(const T* in, const Coalesced& c, A* acc, F combine) {
  accumulate_indexed(in, c, acc, [&](A a, A v, int64_t) { return combine(a, v); });
}

}  // namespace

void compute_reduce(ComputeContext& ctx, ReduceKind kind) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const ReduceSpec spec = reduce_spec(ctx, x.shape(), ctx.has_input(1) ? &ctx.input(1) : nullptr);
  if (spec.noop) {
    std::copy_n(static_cast<const uint8_t*>(x.raw()), x.nbytes(),
                static_cast<uint8_t*>(y.mutable_raw()));
    return;
  }
  const Coalesced c = coalesce(x.shape(), spec.reduced);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, uint8_t>) {
      ctx.fail("Reduce ops do not take bool inputs");
    } else {
      using A = compute_t<T>;  // float or int64_t
      constexpr bool kFloat = std::is_floating_point_v<A>;
      std::vector<A> acc(static_cast<size_t>(y.numel()));
      const bool extremum = kind == ReduceKind::kMax || kind == ReduceKind::kMin;
      if (extremum) {
        // NaN wins; an empty reduction gives the identity (the lowest or highest value).
        const bool is_max = kind == ReduceKind::kMax;
        A init;
        if constexpr (kFloat) init = (is_max ? -1 : 1) * std::numeric_limits<A>::infinity();
        else init = static_cast<A>(is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max());
        std::fill(acc.begin(), acc.end(), init);
        accumulate(x.data<T>(), c, acc.data(), [is_max](A a, A v) {
          if constexpr (kFloat) {
            if (std::isnan(v) || std::isnan(a)) return std::isnan(a) ? a : v;
          }
          return (is_max ? v > a : v < a) ? v : a;
        });
      } else if (kind == ReduceKind::kProd) {
        std::fill(acc.begin(), acc.end(), A{1});
        accumulate(x.data<T>(), c, acc.data(), [](A a, A v) {
          if constexpr (kFloat) return a * v;
          else return wrap_mul(a, v);
        });
      } else if (kind == ReduceKind::kLogSumExp) {
        // log(sum(e^x)) = m + log(sum(e^(x - m))) with m the maximum, which cannot overflow.
        if constexpr (kFloat) {
          std::vector<A> mx(acc.size(), -std::numeric_limits<A>::infinity());
          accumulate(x.data<T>(), c, mx.data(), [](A a, A v) { return v > a ? v : a; });
          // The second pass needs each element's maximum: accumulate over e^(x - m) by
          // walking the same order, which `accumulate` does with the output index.
          accumulate_indexed(x.data<T>(), c, acc.data(), [&](A a, A v, int64_t o) {
            return std::isinf(mx[o]) ? a + std::exp(v) : a + std::exp(v - mx[o]);
          });
          for (size_t o = 0; o < acc.size(); ++o)
            acc[o] = std::isinf(mx[o]) ? std::log(acc[o]) : mx[o] + std::log(acc[o]);
        } else {
          ctx.fail("ReduceLogSumExp takes float inputs");
        }
      } else {
        // Sums of a function of the elements.
        accumulate(x.data<T>(), c, acc.data(), [kind](A a, A v) {
          switch (kind) {
            case ReduceKind::kL1: return a + (v < 0 ? A{0} - v : v);
            case ReduceKind::kL2: case ReduceKind::kSumSquare: return a + v * v;
            default: return a + v;
          }
        });
      }
      if constexpr (kFloat) {
        for (A& a : acc) {
          if (kind == ReduceKind::kMean) a /= static_cast<A>(spec.count);  // 0 / 0: NaN
          else if (kind == ReduceKind::kL2) a = std::sqrt(a);
          else if (kind == ReduceKind::kLogSum) a = std::log(a);
        }
      } else {
        if (kind == ReduceKind::kMean) {
          if (spec.count == 0) ctx.fail("ReduceMean of integers over an empty set of values");
          for (A& a : acc) a /= spec.count;
        } else if (kind == ReduceKind::kL2 || kind == ReduceKind::kLogSum) {
          ctx.fail(str_cat(ctx.node().describe(), " takes float inputs"));
        }
      }
      T* out = y.mutable_data<T>();
      for (int64_t i = 0, n = y.numel(); i < n; ++i) out[i] = store<T>(acc[i]);
    }
  });
}

}  // namespace mono
