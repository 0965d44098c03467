// Attention as one group (plan.h Group::fused): work item = (batch entry, BM query rows). The
// block computes those rows of S = QK^T (all key tiles), their softmax (a warp per row), then the
// same rows of O = PV, with a block barrier between the phases: S and P go through the arena,
// written and read back by this block only.
#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/emit/module.h"
#include "compiler/codegen/support.h"
#include "compiler/support/error.h"

namespace mono::emit {

GroupWork emit_attention(Module& m, const Group& qk) {
  const Group& sm = m.plan.groups[qk.fused[0]];
  const Group& pv = m.plan.groups[qk.fused[1]];
  const GemmProblem a = gemm_problem(qk), b = gemm_problem(pv);
  const int64_t tm = ceil_div(a.m, qk.gemm.bm), tn1 = ceil_div(a.n, qk.gemm.bn), tn3 = ceil_div(b.n, pv.gemm.bn);
  const Call s = gemm_call(m, qk);
  const Call p = rows_call(m, sm, /*row_item=*/true);
  const Call o = gemm_call(m, pv);
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
