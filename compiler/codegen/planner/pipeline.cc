// plan_kernel: the planner's steps, listed once, in order (steps.h says what each reads and
// writes).
#include <algorithm>

#include "compiler/codegen/cuda_emitter.h"
#include "compiler/codegen/planner/steps.h"
#include "compiler/support/error.h"

namespace mono {
namespace planner {

int Uses::of(const Value* v) const {
  auto it = count.find(v);
  return it == count.end() ? 0 : it->second;
}

bool Uses::is_private(const Value* v) const { return of(v) == 1 && !graph_outputs.count(v); }

KernelContext make_context(const KernelSettings& s) {
  if (s.threads < 32 || s.threads > 1024 || s.threads % 32)
    user_error("a block of ", s.threads, " threads is not a multiple of 32 in 32..1024");
  if (s.blocks_per_sm < 1 || s.threads * s.blocks_per_sm > 2048)
    user_error(s.blocks_per_sm, " blocks of ", s.threads, " threads per SM do not fit an SM (2048 threads)");
  KernelContext ctx;
  ctx.threads = s.threads;
  ctx.blocks_per_sm = s.blocks_per_sm;
  ctx.sms = s.sms;
  ctx.smem_limit = KernelContext::smem_budget(s.blocks_per_sm);
  if (s.smem_limit > 0) ctx.smem_limit = std::min(ctx.smem_limit, s.smem_limit);
  return ctx;
}

}  // namespace planner

KernelPlan plan_kernel(const Graph& graph, const PlanOptions& options) {
  using namespace planner;
  if (!options.schedules.empty()) MONO_CHECK(options.signature, "tuned schedules given without a signature function");
  KernelPlan plan;
  plan.settings = options.settings;
  plan.ctx = make_context(options.settings);
  auto step = [&](const char* name) {
    if (options.after_step) options.after_step(name, plan);
  };
  assign_dtypes(graph, options, &plan);
  step("assign_dtypes");
  find_views(graph, &plan);
  step("find_views");

  Uses uses = count_uses(graph, plan);
  step("count_uses");
  // Arena inputs: not one that a graph output is (or views), which is copied out after the stages.
  for (const Value* v : graph.inputs)
    if (options.arena_inputs.count(v) && !uses.graph_outputs.count(v)) plan.arena_inputs.insert(v);
  form_groups(graph, &plan, &uses);
  step("form_groups");
  assign_gemm_precision(&plan);
  step("assign_gemm_precision");
  fuse_attention(uses, &plan);
  step("fuse_attention");
  fuse_squeezes(uses, &plan);
  step("fuse_squeezes");
  swap_b_operands(uses, &plan);
  step("swap_b_operands");
  compute_at_read(uses, &plan);
  step("compute_at_read");
  assign_stages(uses, &plan);
  step("assign_stages");
  choose_schedules(uses, options, &plan);
  step("choose_schedules");
  tile_weights(&plan);
  step("tile_weights");
  place_tensors(graph, &plan);
  step("place_tensors");
  const int inline_groups = options.settings.inline_groups;
  plan.kernel_calls = kernel_calls(graph, plan);
  plan.inline_groups = inline_groups < 0 ? plan.kernel_calls <= kInlineCallLimit : inline_groups > 0;
  return plan;
}

}  // namespace mono
