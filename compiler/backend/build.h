// The back end: from a simplified graph to its one kernel — plan, emit, pack the weights and
// (optionally) compile with NVRTC — and the manifest that describes it. What mono-compile,
// mono-run --gpu, the tuner server and the worker's candidate builds share.
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/plan.h"
#include "compiler/runtime/artifact.h"
#include "compiler/runtime/nvrtc_compiler.h"

namespace mono {

struct BuiltKernel {
  KernelPlan plan;
  std::string source;
  std::vector<unsigned char> weights;
  CompiledKernel compiled;  // empty cubin when not compiled
  Manifest manifest;
};

// Plans, emits and (when `compile`) compiles the kernel of a simplified graph. An `offered`
// kernel (a worker's compile of the same configuration) is taken instead of compiling when its
// key is the emitted source's compile_key; otherwise it is ignored.
BuiltKernel build_kernel(const Graph& graph, const PlanOptions& plan_options, const std::string& model_name,
                         const NvrtcOptions& nvrtc, bool compile, const CompiledKernel* offered = nullptr);

}  // namespace mono
