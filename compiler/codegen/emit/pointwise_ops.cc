#include "compiler/codegen/emit/pointwise_ops.h"

#include <algorithm>
#include <vector>

#include "compiler/codegen/emit/index_math.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/ops/op.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/reduce.h"
#include "compiler/ops/softmax.h"
#include "compiler/support/error.h"

namespace mono::emit {

const Tensor* const_input(const KernelPlan& plan, const Node& n, int i) {
  const Value* v = n.input(i) ? plan.root(n.input(i)) : nullptr;
  if (!v) return nullptr;
  if (!v->is_constant()) user_error(n.describe(), ": input ", i, " must be a constant for the CUDA backend");
  return v->constant.get();
}

namespace {


std::vector<int64_t> const_ints(const KernelPlan& plan, const Node& n, int i) {
  const Tensor* t = const_input(plan, n, i);
  return t ? t->to_int_vector() : std::vector<int64_t>{};
}

int64_t axis_of(const Node& n, int64_t rank) {
  int64_t axis = node_attrs(n).attr_int("axis");
  return axis < 0 ? axis + rank : axis;
}

}  // namespace

std::string slice_code(Expressions& ex, const Node& n, const std::string& ct) {
  const KernelPlan& plan = ex.plan();
  const Shape& xs = n.inputs[0]->type.shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    const AttrReader attrs = node_attrs(n);
    starts = attrs.attr_ints("starts");
    ends = attrs.attr_ints("ends");
    axes = attrs.attr_ints("axes");
  } else {
    starts = const_ints(plan, n, 1);
    ends = const_ints(plan, n, 2);
    axes = const_ints(plan, n, 3);
    steps = const_ints(plan, n, 4);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  std::vector<int64_t> start(rank, 0), step(rank, 1);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    const int64_t dim = xs[a];
    int64_t s = starts[k];
    if (s < 0) s += dim;
    s = steps[k] > 0 ? std::min(std::max<int64_t>(s, 0), dim) : std::min(std::max<int64_t>(s, 0), dim - 1);
    start[a] = s;
    step[a] = steps[k];
  }
  std::vector<std::string> idx(rank);
  for (int64_t d = 0; d < rank; ++d) idx[d] = str_cat(start[d], "LL + o", d, " * ", step[d], "LL");
  return str_cat("    ", ct, " v = ", ex.load(n.inputs[0], linear(idx, xs), "x"), ";\n");
}

std::string concat_choice(const Node& n, const std::function<std::string(int, const std::string&)>& take) {
  const int64_t rank = n.outputs[0]->type.rank();
  const int64_t axis = axis_of(n, rank);
  std::string s;
  int64_t base = 0;
  bool first = true;
  for (int i = 0; i < n.num_inputs(); ++i) {
    const Shape& xs = n.inputs[i]->type.shape;
    if (xs[axis] == 0) continue;
    std::vector<std::string> idx(rank);
    for (int64_t d = 0; d < rank; ++d) idx[d] = d == axis ? str_cat("(o", d, " - ", base, "LL)") : str_cat("o", d);
    s += str_cat("    ", first ? "" : "else ", "if (o", axis, " < ", base + xs[axis], "LL) ", take(i, linear(idx, xs)));
    base += xs[axis];
    first = false;
  }
  return s;
}

std::string concat_code(Expressions& ex, const Node& n, const std::string& ct) {
  return str_cat("    ", ct, " v;\n", concat_choice(n, [&](int i, const std::string& off) {
                   return str_cat("v = ", ex.load(n.inputs[i], off, str_cat("in", i)), ";\n");
                 }));
}

std::string gather_code(Expressions& ex, const Node& n, const std::string& ct) {
  const Shape& xs = n.inputs[0]->type.shape;
  const Shape& is = n.inputs[1]->type.shape;
  const int64_t r = static_cast<int64_t>(xs.size()), q = static_cast<int64_t>(is.size());
  const int64_t axis = axis_of(n, r);
  // Output index: data[:axis] + indices + data[axis+1:].
  std::vector<std::string> iidx(q);
  for (int64_t d = 0; d < q; ++d) iidx[d] = str_cat("o", axis + d);
  std::string s = str_cat("    long long g = ", ex.load(n.inputs[1], linear(iidx, is), "indices"), ";\n");
  s += str_cat("    if (g < 0) g += ", xs[axis], "LL;\n");
  s += str_cat("    g = g < 0 ? 0 : (g >= ", xs[axis], "LL ? ", xs[axis] - 1, "LL : g);  // clamp: never read outside\n");
  std::vector<std::string> didx(r);
  for (int64_t d = 0; d < r; ++d) didx[d] = d < axis ? str_cat("o", d) : d == axis ? "g" : str_cat("o", d - 1 + q);
  s += str_cat("    ", ct, " v = ", ex.load(n.inputs[0], linear(didx, xs), "x"), ";\n");
  return s;
}

std::string gather_elements_code(Expressions& ex, const Node& n, const std::string& ct) {
  const Shape& xs = n.inputs[0]->type.shape;
  const Shape& is = n.inputs[1]->type.shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const int64_t axis = axis_of(n, r);
  std::vector<std::string> oidx(r);
  for (int64_t d = 0; d < r; ++d) oidx[d] = str_cat("o", d);
  std::string s = str_cat("    long long g = ", ex.load(n.inputs[1], linear(oidx, is), "indices"), ";\n");
  s += str_cat("    if (g < 0) g += ", xs[axis], "LL;\n");
  s += str_cat("    g = g < 0 ? 0 : (g >= ", xs[axis], "LL ? ", xs[axis] - 1, "LL : g);\n");
  oidx[axis] = "g";
  s += str_cat("    ", ct, " v = ", ex.load(n.inputs[0], linear(oidx, xs), "x"), ";\n");
  return s;
}

// A channels-last MaxPool (N H W C, the channels_last pass's): output (o0, o1, o2, o3) reads
// x[o0][x0][x1][o3] over its window; consecutive threads take consecutive channels. Every load
// of the window is issued first, unconditionally (a position in the padding reads element 0
// and is not used), then the maximum is taken: with each load between the NaN tests' branches
// they went one at a time, and resnet50's pool took 14.3 us (H100, run111).
std::string nhwc_window_loops(const WindowGeometry& geo, const Shape& xs, const std::string& w) {
  return str_cat("#pragma unroll\n    for (int k0 = 0; k0 < ", geo.kernel[0], "; ++k0) {\n    const int x0 = o1 * ", geo.strides[0], " - ",
                 geo.pad_begin[0], " + k0 * ", geo.dilations[0], ";\n",
                 "#pragma unroll\n    for (int k1 = 0; k1 < ", geo.kernel[1], "; ++k1) {\n    const int x1 = o2 * ", geo.strides[1], " - ",
                 geo.pad_begin[1], " + k1 * ", geo.dilations[1], ";\n",
                 "    const int ", w, " = k0 * ", geo.kernel[1], " + k1;\n",
                 "    in[", w, "] = x0 >= 0 && x0 < ", xs[1], " && x1 >= 0 && x1 < ", xs[2], ";\n");
}

std::string nhwc_window_offset(const Shape& xs, const std::string& w) {
  return str_cat("in[", w, "] ? ((o0 * ", xs[1], "LL + x0) * ", xs[2], "LL + x1) * ", xs[3], "LL + o3 : 0LL");
}

// The window of output (o0, o1, o2, o3) of a channels-last MaxPool or depthwise Conv over x
// [N][H][W][C], one element a thread: t[j], position j's value (every load issued first), and
// in[j], whether it is inside.
std::string nhwc_window_values(Expressions& ex, const Node& n, const WindowGeometry& geo) {
  const Shape& xs = n.inputs[0]->type.shape;
  const int64_t window = geo.kernel[0] * geo.kernel[1];
  std::string s = str_cat("    float t[", window, "];\n    bool in[", window, "];\n");
  s += nhwc_window_loops(geo, xs, "j");
  s += str_cat("    t[j] = ", ex.load(n.inputs[0], nhwc_window_offset(xs, "j"), "x"), ";\n    }\n    }\n");
  return s;
}

std::string channels_last_pool_code(Expressions& ex, const Node& n) {
  const WindowGeometry geo = pool_geometry(n);
  const int64_t window = geo.kernel[0] * geo.kernel[1];
  std::string s = nhwc_window_values(ex, n, geo);
  s += str_cat("    float v = -__int_as_float(0x7f800000);\n#pragma unroll\n    for (int j = 0; j < ", window,
               "; ++j)\n      if (in[j]) v = fmax_nan(v, t[j]);\n");
  return s;
}

std::string depthwise_weight(Expressions& ex, const Node& n, const std::string& w, const std::string& channel) {
  const KernelPlan& plan = ex.plan();
  const int64_t c = n.inputs[0]->type.shape[3];
  return str_cat("to_float(", ex.params().ref(n.inputs[1], plan.packing(n, 1), "weight"), "[", w, " * ", c, "LL + ", channel, "])");
}

// A channels-last depthwise Conv (support.h channels_last_depthwise) one output a thread, the
// fallback of emit_channel_vectors' eight: output (o0, o1, o2, o3) is the sum over its window of
// x[o0][x0][x1][o3] times W[position][o3] (W packed [KH*KW][C]), every load issued first.
std::string channels_last_depthwise_code(Expressions& ex, const Node& n) {
  const WindowGeometry geo = conv_geometry(n);
  const int64_t window = geo.kernel[0] * geo.kernel[1];
  std::string s = nhwc_window_values(ex, n, geo);
  s += str_cat("    float v = 0.0f;\n#pragma unroll\n    for (int j = 0; j < ", window, "; ++j)\n      if (in[j]) v += t[j] * ",
               depthwise_weight(ex, n, "j", "o3"), ";\n");
  if (n.input(2)) s += str_cat("    v += ", ex.load(n.inputs[2], "o3", "bias"), ";\n");
  return s;
}

// Max/average pooling over the spatial axes of N C D1..Dk, with pads and dilations.
std::string pool_code(Expressions& ex, const Node& n) {
  if (channels_last_layout(n)) return channels_last_pool_code(ex, n);
  const Shape& xs = n.inputs[0]->type.shape;
  const int64_t k = static_cast<int64_t>(xs.size()) - 2;
  const WindowGeometry geo = pool_geometry(n);
  const bool is_max = n.op == OpKind::kMaxPool;
  const bool include_pad = !is_max && node_attrs(n).attr_int("count_include_pad") != 0;
  std::string s = is_max ? "    float v = -__int_as_float(0x7f800000);\n" : "    float v = 0.0f; int cnt = 0;\n";
  const std::string inner_idx = "(o0 * " + std::to_string(xs[1]) + "LL + o1)";
  for (int64_t d = 0; d < k; ++d) {
    s += str_cat("    for (int k", d, " = 0; k", d, " < ", geo.kernel[d], "; ++k", d, ") {\n");
    s += str_cat("    const long long x", d, " = o", d + 2, " * ", geo.strides[d], "LL - ", geo.pad_begin[d], "LL + k", d,
                 " * ", geo.dilations[d], "LL;\n");
    // count_include_pad counts positions inside the padded input (not past the end pads).
    if (include_pad) s += str_cat("    if (x", d, " >= ", xs[d + 2] + geo.pad_end[d], "LL) continue;\n");
  }
  std::string inside;
  for (int64_t d = 0; d < k; ++d) inside += str_cat(d ? " && " : "", "x", d, " >= 0 && x", d, " < ", xs[d + 2], "LL");
  std::string off = inner_idx;
  for (int64_t d = 0; d < k; ++d) off = str_cat("(", off, ") * ", xs[d + 2], "LL + x", d);
  const std::string val = ex.load(n.inputs[0], off, "x");
  const bool indices = is_max && n.outputs.size() > 1 && n.outputs[1];
  if (indices) {
    // Indices: the flat index into X of the first maximum (NaN wins, as fmax_nan), its spatial
    // part row-major (storage_order 0) or column-major (1); an empty window reports 0.
    const bool col_major = node_attrs(n).attr_int("storage_order") == 1;
    std::string spatial = col_major ? str_cat("x", k - 1) : "x0";
    for (int64_t j = 1; j < k; ++j) {
      const int64_t d = col_major ? k - 1 - j : j;
      spatial = str_cat("(", spatial, ") * ", xs[d + 2], "LL + x", d);
    }
    s = "    long long am = -1;\n" + s;
    s += str_cat("    if (", inside, ") { const float t = ", val, "; if (am < 0 || t > v || (t != t && v == v)) { v = t; am = ",
                 inner_idx, " * ", shape_numel(Shape(xs.begin() + 2, xs.end())), "LL + ", spatial, "; } }\n");
  } else if (is_max) {
    s += str_cat("    if (", inside, ") v = fmax_nan(v, ", val, ");\n");
  } else if (include_pad) {
    s += str_cat("    ++cnt; if (", inside, ") v += ", val, ";\n");
  } else {
    s += str_cat("    if (", inside, ") { v += ", val, "; ++cnt; }\n");
  }
  for (int64_t d = 0; d < k; ++d) s += "    }\n";
  if (indices) s += str_cat("    if (am < 0) am = ", inner_idx, " * ", shape_numel(Shape(xs.begin() + 2, xs.end())), "LL;\n");
  if (!is_max) s += "    v = cnt ? v / (float)cnt : 0.0f;\n";
  return s;
}

// Grouped or depthwise convolution, one output element per thread. The kernel window is
// unrolled and its loads issued unconditionally (a position in the padding reads element 0 and
// adds nothing), so that a thread's loads of one input channel are in flight together: with
// each load behind its bounds test they went one at a time (the channels-last MaxPool measured
// that, bench/RESULTS.md session 9).
std::string direct_conv_code(Expressions& ex, const Node& n) {
  if (channels_last_layout(n)) return channels_last_depthwise_code(ex, n);
  const Shape& xs = n.inputs[0]->type.shape;
  const Shape& ws = n.inputs[1]->type.shape;
  const size_t spatial = xs.size() - 2;  // 1-D (Conv1d), 2-D or 3-D
  const WindowGeometry geo = conv_geometry(n);
  const int64_t groups = node_attrs(n).attr_int("group");
  const int64_t cin_g = ws[1], cout_g = ws[0] / groups;
  std::string s = "    float v = 0.0f;\n";
  s += str_cat("    const long long g = o1 / ", cout_g, "LL;\n");
  s += str_cat("    for (long long c = 0; c < ", cin_g, "LL; ++c) {\n");
  // One loop per spatial axis d: input position i_d = o_{d+2} * stride - pad + k_d * dilation.
  std::string xoff = str_cat("o0 * ", xs[1], "LL + g * ", cin_g, "LL + c"), woff = str_cat("o1 * ", cin_g, "LL + c");
  for (size_t d = 0; d < spatial; ++d) {
    s += str_cat("#pragma unroll\n    for (int k", d, " = 0; k", d, " < ", ws[d + 2], "; ++k", d, ") {\n",
                 "      const long long i", d, " = o", d + 2, " * ", geo.strides[d], "LL - ", geo.pad_begin[d], "LL + k", d,
                 " * ", geo.dilations[d], "LL;\n", "      const bool in", d, " = ", d ? str_cat("in", d - 1, " && ") : "",
                 "i", d, " >= 0 && i", d, " < ", xs[d + 2], "LL;\n");
    xoff = str_cat("(", xoff, ") * ", xs[d + 2], "LL + i", d);
    woff = str_cat("(", woff, ") * ", ws[d + 2], "LL + k", d);
  }
  const std::string in = str_cat("in", spatial - 1);
  s += str_cat("        const float xv = ", ex.load(n.inputs[0], str_cat(in, " ? ", xoff, " : 0LL"), "x"), ";\n",
               "        const float wv = ", ex.load(n.inputs[1], woff, "w"), ";\n", "        v += ", in, " ? xv * wv : 0.0f;\n");
  for (size_t d = 0; d <= spatial; ++d) s += "    }\n";
  if (n.input(2)) s += str_cat("    v += ", ex.load(n.inputs[2], "o1", "bias"), ";\n");
  return s;
}

std::string reduce_code(Expressions& ex, const Node& n, const std::string& ct) {
  const Shape& xs = n.inputs[0]->type.shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const AttrReader attrs = node_attrs(n);
  const ReduceSpec spec = reduce_spec(attrs, xs, const_input(ex.plan(), n, 1));  // axes: input 1 or the attribute
  if (spec.noop) return str_cat("    ", ct, " v = ", ex.load(n.inputs[0], broadcast_offset(xs, index_vars("o", r)), "x"), ";\n");
  const bool keep = attrs.attr_int("keepdims") != 0;
  // Output index -> input index for kept axes; loops over reduced ones.
  std::vector<std::string> idx(r);
  int64_t od = 0, count = 1;
  std::string loops;
  for (int64_t d = 0; d < r; ++d) {
    if (spec.reduced[d]) {
      idx[d] = str_cat("r", d);
      loops += str_cat("    for (long long r", d, " = 0; r", d, " < ", xs[d], "LL; ++r", d, ")\n");
      count *= xs[d];
      if (keep) ++od;
    } else {
      idx[d] = str_cat("o", od++);
    }
  }
  const bool f = ct == "float";
  const std::string val = ex.load(n.inputs[0], linear(idx, xs), "x");
  const std::string inf = "__int_as_float(0x7f800000)";
  std::string init = "0", step = "v + " + val;
  switch (n.op) {
    case OpKind::kReduceMax:
      init = f ? "-" + inf : "(-9223372036854775807LL - 1)";
      step = str_cat(f ? "fmax_nan" : "max", "(v, ", val, ")");
      break;
    case OpKind::kReduceMin:
      init = f ? inf : "9223372036854775807LL";
      step = str_cat(f ? "fmin_nan" : "min", "(v, ", val, ")");
      break;
    case OpKind::kReduceProd: init = "1"; step = "v * " + val; break;
    case OpKind::kReduceL1: step = str_cat("v + ", f ? "fabsf(" : "llabs(", val, ")"); break;
    case OpKind::kReduceL2: case OpKind::kReduceSumSquare: step = str_cat("v + sq(", val, ")"); break;
    case OpKind::kReduceLogSumExp: step = str_cat("v + (isinf(m) ? expf(", val, ") : expf(", val, " - m))"); break;
    default: break;  // Sum, Mean, LogSum: the plain sum
  }
  std::string s;
  if (n.op == OpKind::kReduceLogSumExp)  // the maximum first, so that no exponential overflows
    s += str_cat("    float m = -", inf, ";\n", loops, "      m = fmax_nan(m, ", val, ");\n");
  s += str_cat("    ", ct, " v = ", init, ";\n", loops, "      v = ", step, ";\n");
  switch (n.op) {
    case OpKind::kReduceMean: s += str_cat("    v = v / (", ct, ")", count, ";\n"); break;
    case OpKind::kReduceL2: s += "    v = sqrtf(v);\n"; break;
    case OpKind::kReduceLogSum: s += "    v = logf(v);\n"; break;
    case OpKind::kReduceLogSumExp: s += "    v = isinf(m) ? logf(v) : m + logf(v);\n"; break;
    default: break;
  }
  return s;
}

// Softmax along a non-last axis: each thread recomputes its axis' max and sum.
std::string softmax_axis_code(Expressions& ex, const Node& n) {
  if (n.opset < 13) user_error(n.describe(), ": Softmax before opset 13 on a non-last axis is not compiled to CUDA yet");
  const Shape& xs = n.inputs[0]->type.shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const int64_t axis = softmax_axis(n);
  std::vector<std::string> idx(r);
  for (int64_t d = 0; d < r; ++d) idx[d] = d == axis ? "a" : str_cat("o", d);
  const std::string val = ex.load(n.inputs[0], linear(idx, xs), "x");
  idx[axis] = str_cat("o", axis);
  const std::string self = ex.load(n.inputs[0], linear(idx, xs), "x");
  return str_cat("    float mx = -__int_as_float(0x7f800000), sum = 0.0f;\n",
                 "    for (long long a = 0; a < ", xs[axis], "LL; ++a) mx = fmaxf(mx, ", val, ");\n",
                 "    for (long long a = 0; a < ", xs[axis], "LL; ++a) sum += expf(", val, " - mx);\n",
                 "    float v = expf(", self, " - mx) / sum;\n");
}

std::string cum_sum_code(Expressions& ex, const Node& n, const std::string& ct) {
  const Shape& xs = n.inputs[0]->type.shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const Tensor* axis_t = const_input(ex.plan(), n, 1);
  int64_t axis = axis_t ? axis_t->as_int(0) : 0;
  if (axis < 0) axis += r;
  const AttrReader attrs = node_attrs(n);
  const bool exclusive = attrs.attr_int("exclusive") != 0, reverse = attrs.attr_int("reverse") != 0;
  std::vector<std::string> idx = index_vars("o", r);
  idx[axis] = "j";
  const std::string o = str_cat("o", axis);
  const std::string from = reverse ? (exclusive ? o + " + 1" : o) : "0";
  const std::string to = reverse ? str_cat(xs[axis], "LL") : (exclusive ? o : o + " + 1");
  // Integers wrap as the CPU reference's do: the sum in unsigned arithmetic.
  const bool integer = ct == "long long";
  return str_cat("    ", integer ? "unsigned long long" : ct, " v = 0;\n    for (long long j = ", from, "; j < ", to,
                 "; ++j) v += ", integer ? "(unsigned long long)" : "", ex.load(n.inputs[0], linear(idx, xs), "x"), ";\n");
}

std::string batch_norm_code(Expressions& ex, const Node& n) {
  const Shape& xs = n.inputs[0]->type.shape;
  return str_cat("    const float sc = ", ex.load(n.inputs[1], "o1", "scale"), ", bi = ", ex.load(n.inputs[2], "o1", "bias"),
                 ", mu = ", ex.load(n.inputs[3], "o1", "mean"), ", va = ", ex.load(n.inputs[4], "o1", "var"), ";\n",
                 "    float v = (", ex.load(n.inputs[0], broadcast_offset(xs, index_vars("o", xs.size())), "x"), " - mu) * rsqrtf(va + ",
                 literal(node_attrs(n).attr_float("epsilon")), ") * sc + bi;\n");
}

}  // namespace mono::emit
