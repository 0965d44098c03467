#include "compiler/backend/build.h"

#include "compiler/codegen/cuda_emitter.h"
#include "compiler/support/error.h"

namespace mono {

static Manifest make_manifest(const Graph& g, const KernelPlan& plan, const std::string& model) {
  Manifest m;
  m.model = model;
  m.precision = plan.settings.precision == Precision::kF16 ? "fp16" : "fp32";
  m.sm_arch = plan.ctx.sm_arch;
  m.kernel = kKernelName;
  m.threads = plan.ctx.threads;
  m.blocks_per_sm = plan.ctx.blocks_per_sm;
  m.smem_bytes = plan.ctx.smem_bytes;
  m.arena_bytes = plan.arena_bytes;
  m.sync_words = plan.sync_words;
  m.weights_bytes = plan.weights_bytes;
  m.stages = static_cast<int>(plan.stages.size());
  m.groups = static_cast<int>(plan.groups.size());
  m.profile = plan.settings.profile;
  for (const Value* v : g.inputs) m.inputs.push_back({v->name, plan.dtype_of(v), v->type.dtype, v->type.shape});
  for (const Value* v : g.outputs) m.outputs.push_back({v->name, plan.dtype_of(v), v->type.dtype, v->type.shape});
  return m;
}

BuiltKernel build_kernel(const Graph& graph, const PlanOptions& plan_options, const std::string& model_name,
                         const NvrtcOptions& nvrtc, bool compile, const CompiledKernel* offered) {
  if (graph.inputs.size() > static_cast<size_t>(kMaxKernelIo) || graph.outputs.size() > static_cast<size_t>(kMaxKernelIo))
    user_error("the CUDA backend takes at most ", kMaxKernelIo, " inputs and outputs");
  BuiltKernel b;
  b.plan = plan_kernel(graph, plan_options);
  std::vector<TensorMapSpec> tensor_maps;
  b.source = emit_cuda(graph, b.plan, model_name, &tensor_maps);
  b.weights = pack_weights(b.plan);
  if (compile && offered && !offered->cubin.empty() && offered->key == compile_key(b.source, nvrtc)) {
    b.compiled = *offered;
    b.compiled.offered = true;
    b.compiled.usage = parse_ptxas_usage(b.compiled.log, kKernelName);
  } else if (compile) {
    b.compiled = compile_cuda(b.source, kKernelName, nvrtc);
  }
  b.manifest = make_manifest(graph, b.plan, model_name);
  b.manifest.usage = b.compiled.usage;
  b.manifest.tensor_maps = std::move(tensor_maps);
  return b;
}

}  // namespace mono
