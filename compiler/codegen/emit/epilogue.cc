#include "compiler/codegen/emit/epilogue.h"

#include <map>
#include <vector>

#include "compiler/codegen/emit/index_math.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/codegen/support.h"
#include "compiler/ops/transpose.h"
#include "compiler/support/error.h"

namespace mono::emit {
namespace {

// The shape of the running value as `e` reads it (views may reshape it between steps).
const Shape& running_input_shape(const KernelPlan& plan, const Group& g, const Node* e) {
  const Value* r = plan.root(running_value(g, e));
  for (const Value* in : e->inputs)
    if (in && plan.root(in) == r) return in->type.shape;
  return r->type.shape;
}

}  // namespace

EpilogueSteps epilogue_steps(Expressions& ex, const KernelPlan& plan, const Group& g, const std::string& flat) {
  EpilogueSteps out;
  std::string& s = out.code;
  Shape cur = g.anchor->outputs[0]->type.shape;
  std::string cur_flat = flat;
  std::vector<std::string> idx;  // index variables over `cur`, when decomposed
  int decompositions = 0;
  std::map<std::string, int64_t> flat_stride;  // index variable -> its stride in the anchor's output
  std::map<std::string, int64_t> flat_extent;  // index variable -> its extent
  auto ensure_index = [&](const Shape& shape) {
    if (!idx.empty() && shape == cur) return;
    cur = shape;  // a view between steps: the same elements in the same order, another shape
    const std::string prefix = str_cat("e", decompositions++, "_");
    if (cur_flat == flat) {  // not yet permuted: strides relative to the anchor's output
      int64_t stride = 1;
      for (int64_t d = static_cast<int64_t>(cur.size()) - 1; d >= 0; --d) {
        flat_stride[str_cat(prefix, d)] = stride;
        flat_extent[str_cat(prefix, d)] = cur[d];
        stride *= cur[d];
      }
    }
    const std::string dec = decompose(cur_flat, cur, prefix);
    s += dec;
    out.index_code += dec;
    idx.clear();
    for (size_t d = 0; d < cur.size(); ++d) idx.push_back(str_cat(prefix, d));
  };
  for (size_t step = 0; step < g.epilogue.size(); ++step) {
    const Node* e = g.epilogue[step];
    if (e->op == OpKind::kIsNaN) continue;  // fused with the Where that follows
    if (e == g.causal_mask) continue;       // applied by index (FlashAttention's causal mode)
    if (e == g.gate) continue;              // applied plane by plane (emit_gemv)
    // Parameters read by step j (1-based; the anchor is 0) are named after it: "add2_in1".
    const std::string role = str_cat(snake_case(op_name(e->op)), step + 1, "_");
    const Shape& in_shape = running_input_shape(plan, g, e);
    if (in_shape != cur) {
      cur = in_shape;
      idx.clear();
    }
    if (e->op == OpKind::kTranspose) {
      ensure_index(cur);
      const std::vector<int64_t> perm = transpose_perm(*e);
      std::vector<std::string> next(perm.size());
      for (size_t d = 0; d < perm.size(); ++d) next[d] = idx[perm[d]];
      idx = next;
      cur = e->outputs[0]->type.shape;
      cur_flat = linear(idx, cur);
      s += str_cat("    // ", comment_text(e->name), ": stored transposed\n");
      continue;
    }
    const Value* running = plan.root(running_value(g, e));
    if (e->op == OpKind::kWhere) {
      // Where(IsNaN(v), c, v) or Where(IsNaN(v), v, c).
      const bool v_in_x = plan.root(e->inputs[2]) == running;
      const std::string c = ex.load(v_in_x ? e->inputs[1] : e->inputs[2], "0", role + "c");
      s += str_cat("    v = isnan(v) ? ", v_in_x ? c : "v", " : ", v_in_x ? "v" : c, ";  // ", comment_text(e->name),
                   " (NaN guard)\n");
      continue;
    }
    int running_input = -1;
    for (int i = 0; i < e->num_inputs(); ++i)
      if (e->inputs[i] && plan.root(e->inputs[i]) == running) running_input = i;
    const Shape& shape = e->outputs[0]->type.shape;
    bool needs_index = false;
    for (int i = 0; i < e->num_inputs(); ++i)
      if (i != running_input && e->inputs[i] && !(plan.root(e->inputs[i])->is_constant() && e->inputs[i]->type.numel() == 1))
        needs_index = true;
    // The other operands are read at the step's output index: the current index variables,
    // permuted by any Transpose before this step.
    if (needs_index) ensure_index(shape);
    cur = shape;
    const std::vector<std::string> a =
        ex.operands(*e, running_input, needs_index ? idx : index_vars("o", static_cast<int64_t>(shape.size())), role);
    s += str_cat("    v = ", ex.elementwise(*e, a, DType::kF32), ";  // ", comment_text(e->name), "\n");
  }
  if (plan.swapped_last2.count(plan.root(g.output))) {
    // Stored with the last two axes swapped (KernelPlan::swapped_last2).
    ensure_index(cur);
    MONO_CHECK(idx.size() >= 2, "swapped store of rank < 2");
    std::swap(idx[idx.size() - 1], idx[idx.size() - 2]);
    Shape swapped = cur;
    std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
    cur_flat = linear(idx, swapped);
    s += "    // stored [.., b, a] (its readers load it as [N][K])\n";
  }
  out.store_index = cur_flat;
  if (cur_flat == flat) {
    out.vec8 = true;
  } else if (!idx.empty()) {
    auto it = flat_stride.find(idx.back());
    out.vec8 = it != flat_stride.end() && it->second == 1 && flat_extent.at(idx.back()) % 8 == 0;
  }
  return out;
}

}  // namespace mono::emit
