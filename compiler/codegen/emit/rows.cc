// Rows groups: LayerNormalization and Softmax over contiguous rows, one warp per row, or one
// block per row where rows are longer than a warp caches (rows.cuh).
// The row function reads through an input functor and stores through an output functor that
// applies the group's epilogue steps; a LayerNorm of fp16 rows a multiple of 256 long in Mono's
// own buffers reads its row 16 bytes at a time and stores 8 values at once (layer_norm_v8).
#include <set>

#include "compiler/codegen/emit/epilogue.h"
#include "compiler/codegen/emit/module.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/codegen/support.h"
#include "compiler/ops/op.h"
#include "compiler/support/error.h"

namespace mono::emit {

namespace {

// Whether a LayerNorm group's rows take layer_norm_row_v8 (16-byte loads and stores, 8 values a
// lane): fp16 x, rows a multiple of 256 long that a warp caches, epilogue steps whose store runs
// 8 consecutive addresses for 8 consecutive columns (EpilogueSteps::vec8), and x, gamma, beta
// and the output in Mono's own buffers (16-byte aligned; the caller's need not be). H100, same
// call against the element loop (bench/RESULTS.md session 22, run195): bert-base 417.6 -> 410.2
// us, gpt2 419.1 -> 408.4, vit-base 568.3 -> 557.8.
bool layer_norm_v8(const KernelPlan& plan, const Group& g, const EpilogueSteps& steps) {
  const Node& n = *g.anchor;
  const int64_t len = row_length(n);
  if (plan.dtype_of(n.inputs[0]) != DType::kF16 || len % 256 != 0 || len > kWarpRowValues || !steps.vec8) return false;
  const DType out = plan.dtype_of(g.output);
  if ((out != DType::kF16 && out != DType::kF32) || !plan.own_buffer(g.output) || !plan.own_buffer(n.inputs[0]))
    return false;
  for (int i : {1, 2}) {
    if (!n.input(i)) continue;
    const DType d = plan.dtype_of(n.inputs[i]);
    if ((d != DType::kF16 && d != DType::kF32) || !plan.own_buffer(n.inputs[i])) return false;
  }
  return true;
}

}  // namespace

Call rows_call(Module& m, const Group& g, RowMode mode) {
  const Node& n = *g.anchor;
  ParamList params(m);
  Expressions ex(m.plan, params);
  const int64_t len = row_length(n);
  const int64_t rows = n.inputs[0]->type.numel() / len;
  const std::string T = ctype(m.plan.dtype_of(n.inputs[0]));
  const std::string tag = T == "float" ? "f" : "h";
  const std::string x = params.ref(n.inputs[0], {}, "x");
  // The output functor: the epilogue steps, then the store.
  std::string epi = "    const long long i = (long long)row * " + std::to_string(len) + "LL + col;\n";
  const EpilogueSteps steps = epilogue_steps(ex, m.plan, g, "i");
  epi += steps.code;
  epi += str_cat("    ", params.ref(g.output, {}, "out"), "[", steps.store_index, "] = ", ex.store(m.plan.dtype_of(g.output), "v"), ";\n");
  bool stats_out = false;  // LayerNormalization's optional Mean and InvStdDev outputs
  for (size_t k = 1; k < n.outputs.size(); ++k) stats_out = stats_out || n.outputs[k];
  const bool v8 = n.op == OpKind::kLayerNormalization && mode == RowMode::kWarps && !stats_out &&
                  layer_norm_v8(m.plan, g, steps);
  // The input functor, shared by every row function of a dtype.
  if (!v8)
    m.type("RowIn_" + tag, str_cat("struct RowIn_", tag, " {\n  const ", T,
                                 "* x; long long len;\n  __device__ float operator()(int row, int i) const { return "
                                 "to_float(x[(long long)row * len + i]); }\n};\n"));
  const bool block = mode == RowMode::kBlock;
  std::string body = str_cat(mode == RowMode::kWarps ? "  const int row = item * (MONO_THREADS / 32) + threadIdx.x / 32;\n"
                                                     : "  const int row = item;\n",
                             "  if (row >= ", rows, ") return;\n",
                             block ? "  extern __shared__ __align__(1024) unsigned char smem[];\n"
                                     "  float* scratch = reinterpret_cast<float*>(smem);  // block_sum's 33 floats\n"
                                   : "",
                             v8 ? std::string() : str_cat("  const RowIn_", tag, " in{", x, ", ", len, "};\n",
                                                          "  const auto store = [&](int row, int col, float v) {\n", epi,
                                                          "  };\n"));
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
    const std::string eps = literal(node_attrs(n).attr_float("epsilon"));
    if (v8) {
      // The epilogue steps element by element, then one 8-wide store (like a GEMM epilogue's vec8).
      body += str_cat("  const auto out8 = [&](int row, int col, const float (&y)[8]) {\n    float r[8];\n",
                      "#pragma unroll\n    for (int j = 0; j < 8; ++j) {\n      float v = y[j];\n    {\n",
                      "    const long long i = (long long)row * ", len, "LL + col + j;\n", steps.code,
                      "    }\n      r[j] = v;\n    }\n    const long long i = (long long)row * ", len, "LL + col;\n",
                      steps.index_code, "    store8(", params.ref(g.output, {}, "out"), " + (", steps.store_index,
                      "), r);\n  };\n", "  layer_norm_row_v8(", x, ", row, ", len, ", ", gamma, ", ", beta, ", ",
                      eps, ", out8);\n");
    } else {
      body += str_cat("  layer_norm_row", block ? "_block" : "", "_f(in, row, ", len, ", ", gamma, ", ", beta, ", ",
                      eps, block ? ", scratch" : "", ", store", stats.empty() ? "" : ", stats", ");\n");
    }
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
