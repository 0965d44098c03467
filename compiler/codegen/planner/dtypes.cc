// Device dtypes: fp16 storage where the calibrated range allows it, fp32 elsewhere, and the
// GEMMs' precision that follows from their operands'.
#include "compiler/codegen/planner/steps.h"

namespace mono::planner {

void assign_dtypes(const Graph& graph, const PlanOptions& options, KernelPlan* plan) {
  for (const auto& v : graph.values()) {
    DType d = v->type.dtype;
    if (options.settings.precision == Precision::kF16 && d == DType::kF32) {
      auto r = options.ranges.find(v.get());
      const bool fits = !options.keep_fp32.count(v.get()) &&
                        (r == options.ranges.end() || r->second == 0.0f ||
                         (r->second >= kMinFp16Range && r->second <= kMaxFp16Range));
      if (fits) d = DType::kF16;
      else ++plan->fp32_fallbacks;
    }
    plan->device_dtype[v.get()] = d;
  }
}

void assign_gemm_precision(KernelPlan* plan) {
  auto operands = [&](const Group& g) {
    return std::vector<const Value*>{plan->root(g.anchor->inputs[0]), plan->root(g.anchor->inputs[1])};
  };
  // To the fixpoint: operands can be shared between GEMMs.
  for (bool changed = true; changed;) {
    changed = false;
    for (Group& g : plan->groups) {
      if (g.kind != GroupKind::kGemm && g.kind != GroupKind::kConvGemm) continue;
      bool any_f32 = false;
      for (const Value* v : operands(g)) any_f32 |= plan->device_dtype[v] == DType::kF32;
      g.f16 = !any_f32;
      if (!any_f32) continue;
      for (const Value* v : operands(g)) {
        if (plan->device_dtype[v] == DType::kF16) {
          plan->device_dtype[v] = DType::kF32;
          ++plan->fp32_fallbacks;
          changed = true;
        }
      }
    }
  }
}

}  // namespace mono::planner
