// Rows groups: LayerNormalization and Softmax over contiguous rows, one warp per row, or one
// block per row where rows are longer than a warp caches (rows.cuh).
// The row function reads through an input functor and stores through an output functor that
// applies the group's epilogue steps.
#include <set>

#include "compiler/codegen/emit/epilogue.h"
#include "compiler/codegen/emit/module.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/codegen/support.h"
#include "compiler/ops/op.h"
#include "compiler/support/error.h"

namespace mono::emit {

Call rows_call(Module& m, const Group& g, RowMode mode) {
  const Node& n = *g.anchor;
  ParamList params(m);
  Expressions ex(m.plan, params);
  const int64_t len = row_length(n);
  const int64_t rows = n.inputs[0]->type.numel() / len;
  const std::string T = ctype(m.plan.dtype_of(n.inputs[0]));
  const std::string tag = T == "float" ? "f" : "h";
  const std::string x = params.ref(n.inputs[0], {}, "x");
  // The input functor, shared by every row function of a dtype.
  m.type("RowIn_" + tag, str_cat("struct RowIn_", tag, " {\n  const ", T,
                                 "* x; long long len;\n  __device__ float operator()(int row, int i) const { return "
                                 "to_float(x[(long long)row * len + i]); }\n};\n"));
  // The output functor: the epilogue steps, then the store.
  std::string epi = "    const long long i = (long long)row * " + std::to_string(len) + "LL + col;\n";
  const EpilogueSteps steps = epilogue_steps(ex, m.plan, g, "i");
  epi += steps.code;
  epi += str_cat("    ", params.ref(g.output, {}, "out"), "[", steps.store_index, "] = ", ex.store(m.plan.dtype_of(g.output), "v"), ";\n");
  const bool block = mode == RowMode::kBlock;
  std::string body = str_cat(mode == RowMode::kWarps ? "  const int row = item * (MONO_THREADS / 32) + threadIdx.x / 32;\n"
                                                     : "  const int row = item;\n",
                             "  if (row >= ", rows, ") return;\n",
                             block ? "  extern __shared__ __align__(1024) unsigned char smem[];\n"
                                     "  float* scratch = reinterpret_cast<float*>(smem);  // block_sum's 33 floats\n"
                                   : "",
                             "  const RowIn_", tag, " in{", x, ", ", len, "};\n",
                             "  const auto store = [&](int row, int col, float v) {\n", epi, "  };\n");
  std::set<const Value*> written = {m.plan.root(g.output)};
  if (n.op == OpKind::kLayerNormalization) {
    // Scale and B broadcast to the normalised shape; the row function reads them by position.
    for (int i : {1, 2})
      if (n.input(i) && n.inputs[i]->type.numel() != len)
        user_error(n.describe(), ": a ", i == 1 ? "Scale" : "B", " of shape ", shape_str(n.inputs[i]->type.shape),
                   " broadcast within the normalized axes is not compiled to CUDA yet");
    const std::string gamma = params.ref(n.inputs[1], {}, "gamma");
    const std::string beta = n.input(2) ? params.ref(n.inputs[2], {}, "beta") : str_cat("(const ", T, "*)nullptr");
    std::string stats;  // the optional Mean and InvStdDev outputs: one value per row
    for (int k : {1, 2}) {
      const Value* out = n.outputs.size() > static_cast<size_t>(k) ? n.outputs[k] : nullptr;
      if (!out) continue;
      const std::string p = params.ref(out, {}, k == 1 ? "mean_out" : "inv_std_dev_out");
      stats += str_cat("    ", p, "[row] = ", ex.store(m.plan.dtype_of(out), k == 1 ? "mean" : "rstd"), ";\n");
      written.insert(m.plan.root(out));
    }
    if (!stats.empty())
      body += str_cat("  const auto stats = [&](int row, float mean, float rstd) {\n    if (",
                      block ? "threadIdx.x" : "(threadIdx.x & 31)", " != 0) return;\n", stats, "  };\n");
    body += str_cat("  layer_norm_row", block ? "_block" : "", "_f(in, row, ", len, ", ", gamma, ", ", beta, ", ",
                    literal(node_attrs(n).attr_float("epsilon")), block ? ", scratch" : "", ", store",
                    stats.empty() ? "" : ", stats", ");\n");
  } else {
    body += str_cat("  softmax_row", block ? "_block" : "", "_f(in, row, ", len, block ? ", scratch" : "", ", store);\n");
  }
  const std::string name = m.function(g, "int item" + params.declarations(written), body);
  return {name, params.arguments()};
}

GroupWork emit_rows(Module& m, const Group& g) {
  const Call call = rows_call(m, g, block_per_row(*g.anchor) ? RowMode::kBlock : RowMode::kWarps);
  return {g.items, [call](const std::string& item) { return call.str(item); }};
}

}  // namespace mono::emit
