// PLACEHOLDER: being written. Replace this whole file.
#include "compiler/ops/op.h"

namespace mono {

static void todo_infer(InferContext& ctx) { ctx.fail("GlobalAveragePool is not implemented yet"); }
static void todo_compute(ComputeContext& ctx) { ctx.fail("GlobalAveragePool is not implemented yet"); }

const OpDef& op_def_GlobalAveragePool() {
  static const OpDef def{"GlobalAveragePool", 0, -1, 0, 8, {}, todo_infer, todo_compute};
  return def;
}

}  // namespace mono
