// Pointwise anchors whose output element reads its input at a rewritten index: Trilu (a
// triangle mask), Tile (the index modulo the input's shape), Pad (the padded index mapped back,
// or the fill value), ArgMax / ArgMin (a scan along one axis).
#include "compiler/codegen/emit/index_math.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/codegen/emit/pointwise_ops.h"
#include "compiler/ops/pad.h"
#include "compiler/ops/scatter_nd.h"
#include "compiler/ops/shape_util.h"
#include "compiler/ops/trilu.h"
#include "compiler/support/error.h"

namespace mono::emit {

std::string trilu_code(Expressions& ex, const Node& n, const std::string& ct) {
  const Shape& xs = n.inputs[0]->type.shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const AttrReader attrs = node_attrs(n);
  const int64_t k = trilu_k(attrs, const_input(ex.plan(), n, 1));
  const bool upper = attrs.attr_int("upper") != 0;
  return str_cat("    const bool keep = o", r - 1, " - o", r - 2, upper ? " >= " : " <= ", k, "LL;\n    ", ct,
                 " v = keep ? ", ex.load(n.inputs[0], linear(index_vars("o", r), xs), "x"), " : (", ct, ")0;\n");
}

std::string tile_code(Expressions& ex, const Node& n, const std::string& ct) {
  const Shape& xs = n.inputs[0]->type.shape;
  std::vector<std::string> idx = index_vars("o", static_cast<int64_t>(xs.size()));
  for (size_t d = 0; d < xs.size(); ++d)
    if (n.outputs[0]->type.shape[d] != xs[d]) idx[d] = str_cat("(", idx[d], " % ", xs[d], "LL)");
  return str_cat("    ", ct, " v = ", ex.load(n.inputs[0], linear(idx, xs), "x"), ";\n");
}

std::string pad_code(Expressions& ex, const Node& n, const std::string& ct) {
  const Shape& xs = n.inputs[0]->type.shape;
  const KernelPlan& plan = ex.plan();
  const PadSpec spec = pad_spec(node_attrs(n), xs, const_input(plan, n, 1), nullptr, const_input(plan, n, 3));
  // Per axis: the input index i_d, and (constant mode) whether it is inside.
  std::string s, inside;
  std::vector<std::string> idx;
  for (size_t d = 0; d < xs.size(); ++d) {
    const int64_t nd = xs[d], b = spec.begin[d];
    const std::string o = str_cat("o", d), i = str_cat("i", d);
    switch (spec.mode) {
      case PadMode::kConstant:
        s += str_cat("    const long long ", i, " = ", o, " - ", b, "LL;\n");
        if (b > 0 || spec.end[d] > 0) inside += str_cat(inside.empty() ? "" : " && ", i, " >= 0 && ", i, " < ", nd, "LL");
        break;
      case PadMode::kEdge:
        s += str_cat("    const long long ", i, " = min(max(", o, " - ", b, "LL, 0LL), ", nd - 1, "LL);\n");
        break;
      case PadMode::kWrap:
        s += str_cat("    const long long ", i, " = ((", o, " - ", b, "LL) % ", nd, "LL + ", nd, "LL) % ", nd, "LL;\n");
        break;
      case PadMode::kReflect:
        if (nd == 1) {
          s += str_cat("    const long long ", i, " = 0;\n");
        } else {  // mirrored about both edges, without repeating them: period 2 (n - 1)
          const int64_t period = 2 * (nd - 1);
          s += str_cat("    const long long ", i, "m = ((", o, " - ", b, "LL) % ", period, "LL + ", period, "LL) % ", period,
                       "LL;\n    const long long ", i, " = ", i, "m < ", nd, "LL ? ", i, "m : ", period, "LL - ", i, "m;\n");
        }
        break;
    }
    idx.push_back(i);
  }
  const std::string load = ex.load(n.inputs[0], linear(idx, xs), "x");
  if (spec.mode != PadMode::kConstant || inside.empty()) return s + str_cat("    ", ct, " v = ", load, ";\n");
  std::string fill = ct == "float" ? literal(spec.value) : str_cat("(", ct, ")", static_cast<long long>(spec.value));
  if (n.input(2)) fill = ex.load(n.inputs[2], "0", "value");  // the scalar fill, from memory unless constant
  return s + str_cat("    ", ct, " v = (", inside, ") ? ", load, " : ", fill, ";\n");
}

std::string arg_extremum_code(Expressions& ex, const Node& n) {
  const Shape& xs = n.inputs[0]->type.shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const AttrReader attrs = node_attrs(n);
  const int64_t axis = checked_axis(attrs, attrs.attr_int("axis"), r, "axis");
  const bool keep = attrs.attr_int("keepdims") != 0, last = attrs.attr_int("select_last_index") != 0;
  const bool is_max = n.op == OpKind::kArgMax;
  const bool f = is_float(ex.plan().dtype_of(n.inputs[0]));
  // Output index -> input index: the axis becomes the scan variable a.
  std::vector<std::string> idx(r);
  for (int64_t d = 0, od = 0; d < r; ++d) {
    if (d == axis) {
      idx[d] = "a";
      if (keep) ++od;
    } else {
      idx[d] = str_cat("o", od++);
    }
  }
  const std::string ct = f ? "float" : "long long";
  const std::string val = ex.load(n.inputs[0], linear(idx, xs), "x");
  // NaN is the extreme (numpy): a NaN beats a number, and equals another NaN.
  const std::string better = str_cat("xv ", is_max ? ">" : "<", " bv", f ? " || (xv != xv && bv == bv)" : "");
  const std::string equal = f ? "xv == bv || (xv != xv && bv != bv)" : "xv == bv";
  return str_cat("    long long v = 0;\n    ", ct, " bv = 0;\n    for (long long a = 0; a < ", xs[axis],
                 "LL; ++a) {\n      const ", ct, " xv = ", val, ";\n      if (a == 0 || ", better,
                 last ? " || " + equal : "", ") {\n        v = a;\n        bv = xv;\n      }\n    }\n");
}

std::string scatter_nd_code(Expressions& ex, const Node& n, const std::string& ct) {
  const Shape& ds = n.inputs[0]->type.shape;
  const AttrReader attrs = node_attrs(n);
  const ScatterNdShape s = scatter_nd_shape(attrs, ds, n.inputs[1]->type.shape, n.inputs[2]->type.shape);
  const std::string flat = linear(index_vars("o", static_cast<int64_t>(ds.size())), ds);
  // Each element scans the index rows, in order, for those naming its slice (indices may be
  // computed at run time; an out-of-range one names no slice).
  std::string row;  // the row's slice position `at`, and whether every index is in range
  for (int64_t k = 0; k < s.q; ++k)
    row += str_cat("      {\n        const long long ik = wrap_index(",
                   ex.load(n.inputs[1], str_cat("u * ", s.q, "LL + ", k), "indices"), ", ", ds[k],
                   "LL);\n        ok = ok && ik >= 0;\n        at = at * ", ds[k], "LL + ik;\n      }\n");
  const std::string b = ex.load(n.inputs[2], str_cat("u * ", s.slice, "LL + inner"), "updates");
  std::string step;
  switch (s.reduction) {
    case ScatterReduction::kNone: step = b; break;
    case ScatterReduction::kAdd: step = "v + " + b; break;
    case ScatterReduction::kMul: step = "v * " + b; break;
    case ScatterReduction::kMax: step = str_cat("max(v, (", ct, ")", b, ")"); break;
    case ScatterReduction::kMin: step = str_cat("min(v, (", ct, ")", b, ")"); break;
  }
  return str_cat("    const long long flat = ", flat, ", outer = flat / ", s.slice, "LL, inner = flat % ", s.slice, "LL;\n    ",
                 ct, " v = ", ex.load(n.inputs[0], "flat", "data"), ";\n    for (long long u = 0; u < ", s.rows,
                 "LL; ++u) {\n      long long at = 0;\n      bool ok = true;\n", row, "      if (ok && at == outer) v = ", step,
                 ";\n    }\n");
}

}  // namespace mono::emit
