// Attention as one group (plan.h Group::fused): work item = (batch entry, BM query rows). A
// flash head (Group::flash) runs the item as FlashAttention (or FlashStream over many keys;
// attention.cuh), everything in registers and shared memory. Otherwise the block computes those
// rows of S = QK^T (all key tiles), their softmax (a warp per row), then the same rows of O = PV,
// with a block barrier between the phases: S and P go through the arena, written and read back
// by this block only.
#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/emit/epilogue.h"
#include "compiler/codegen/emit/index_math.h"
#include "compiler/codegen/emit/module.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/codegen/support.h"
#include "compiler/support/error.h"

namespace mono::emit {

namespace {

// A flash attention item (Group::flash, attention.cuh): the three parts' epilogues as the
// functors FlashAttention calls per score, probability and output element, at the flat index
// of the tensor the part's anchor writes.
GroupWork emit_flash(Module& m, const Group& qk, const Group& sm, const Group& pv) {
  const KernelPlan& plan = m.plan;
  ParamList params(m);
  Expressions ex(plan, params);
  const GemmProblem a = gemm_problem(qk);
  const int64_t rows = a.m, keys = a.n, d = a.k;
  const int rb = qk.gemm.bm / 16;
  const int64_t tm = ceil_div(rows, qk.gemm.bm);
  const Node& qn = *qk.anchor;
  const Node& vn = *pv.anchor;
  const std::string q = params.ref(qn.inputs[0], {}, "q"), k = params.ref(qn.inputs[1], {}, "k"),
                    v = params.ref(vn.inputs[1], {}, "v");
  // Batch entry b of the output's batch dimensions; Q, K and V broadcast over theirs.
  const Shape& ys = qn.outputs[0]->type.shape;
  const Shape batch_shape(ys.begin(), ys.end() - 2);
  const std::vector<std::string> bidx = index_vars("bb", static_cast<int64_t>(batch_shape.size()));
  auto offset = [&](const Value* x, int64_t mat) { return batch_matrix_offset(x->type.shape, bidx, mat); };
  // 128-row streamed items of 64-wide heads run on the warpgroup MMA (FlashWg).
  const bool wg = qk.flash_chunk == FlashWgShape::kChunk && qk.gemm.bm == FlashWgShape::kRows && d == FlashWgShape::kHead;
  const std::string fa = wg ? str_cat("FlashWg<", d)
                            : str_cat(qk.flash_chunk ? "FlashStream<" : "FlashAttention<", d, ", ", rb, ", ",
                                      qk.flash_chunk ? qk.flash_chunk / 16 : ceil_div(keys, 16));
  std::string body = str_cat("  extern __shared__ __align__(1024) unsigned char smem[];\n",
                             "  using FA = ", fa, qk.causal_mask ? ", true" : "", ">;",
                             qk.causal_mask ? str_cat("  // ", comment_text(qk.causal_mask->name), ": causal mask by index") : "",
                             "\n",
                             "  static_assert(FA::kSmemBytes <= MONO_SMEM_BYTES, \"attention item does not fit the context\");\n",
                             "  const long long b = item / ", tm, ";\n",
                             "  const int q0 = (int)(item % ", tm, ") * ", qk.gemm.bm, ", nq = min(", qk.gemm.bm, ", ", rows, " - q0);\n",
                             batch_shape.empty() ? "" : decompose("b", batch_shape, "bb"));
  // The parts' epilogues at the flat index i of S / P (b, row, key) and O (b, row, d).
  const EpilogueSteps es = epilogue_steps(ex, plan, qk, "i");
  const EpilogueSteps eo = epilogue_steps(ex, plan, pv, "i");
  const std::string out = params.ref(pv.output, {}, "out");
  // S and P: [b][row][key]; the functor returns the element after its part's epilogue. A
  // streamed head has no probabilities' epilogue (choose_flash) and so no p_fn.
  const auto score_fn = [&](const char* fn, const std::string& steps) {
    body += str_cat("  const auto ", fn, " = [&](int r, int c, float v) {\n    const long long i = b * ", rows * keys,
                    "LL + (long long)r * ", keys, " + c;\n", steps, "    return v;\n  };\n");
  };
  score_fn("s_fn", es.code);
  if (!qk.flash_chunk) score_fn("p_fn", epilogue_steps(ex, plan, sm, "i").code);
  body += str_cat("  const auto o_fn = [&](int r, int c, float v) {\n    const long long i = b * ", rows * d,
                  "LL + (long long)r * ", d, " + c;\n", eo.code, "    ", out, "[", eo.store_index,
                  "] = ", ex.store(plan.dtype_of(pv.output), "v"), ";\n  };\n");
  body += str_cat("  FA::item(", q, " + ", offset(qn.inputs[0], rows * d), ", ", k, " + ", offset(qn.inputs[1], keys * d), ", ",
                  v, " + ", offset(vn.inputs[1], keys * d), ", q0, nq, ", keys, qk.flash_chunk ? ", s_fn, o_fn, smem" : ", s_fn, p_fn, o_fn, smem",
                  qk.causal_mask ? str_cat(", ", keys - rows) : "", ");\n");  // the mask's diagonal offset
  const std::string name = m.function(qk, "int item" + params.declarations({plan.root(pv.output)}), body);
  const Call call{name, params.arguments()};
  return {qk.items, [call](const std::string& item) { return call.str(item); }};
}

}  // namespace

GroupWork emit_attention(Module& m, const Group& qk) {
  const Group& sm = m.plan.groups[qk.fused[0]];
  const Group& pv = m.plan.groups[qk.fused[1]];
  if (qk.flash) return emit_flash(m, qk, sm, pv);
  const GemmProblem a = gemm_problem(qk), b = gemm_problem(pv);
  const int64_t tm = ceil_div(a.m, qk.gemm.bm), tn1 = ceil_div(a.n, qk.gemm.bn), tn3 = ceil_div(b.n, pv.gemm.bn);
  const Call s = gemm_call(m, qk, /*m_fastest=*/false);  // items ai * tn1 + t below
  const Call p = rows_call(m, sm, RowMode::kWarpItem);
  const Call o = gemm_call(m, pv, /*m_fastest=*/false);
  const int bm = qk.gemm.bm;
  const int64_t rows = a.m;
  return {qk.items, [=](const std::string& item) {
            return str_cat("do {  // attention\n",
                           "      const long long ai = ", item, ";\n",
                           "      const int q0 = (int)(ai % ", tm, ") * ", bm, ", nq = min(", bm, ", ", rows, " - q0);\n",
                           "      for (int t = 0; t < ", tn1, "; ++t) ", s.str(str_cat("(int)(ai * ", tn1, " + t)")),
                           ";  // S rows q0.. (all keys)\n",
                           "      __syncthreads();\n",
                           "      for (int r = threadIdx.x / 32; r < nq; r += MONO_THREADS / 32) ",
                           p.str(str_cat("(int)(ai / ", tm, ") * ", rows, " + q0 + r")), ";  // P = softmax(S)\n",
                           "      __syncthreads();\n",
                           "      for (int t = 0; t < ", tn3, "; ++t) ", o.str(str_cat("(int)(ai * ", tn3, " + t)")),
                           ";  // O rows q0..\n",
                           "    } while (0)");
          }};
}

}  // namespace mono::emit
