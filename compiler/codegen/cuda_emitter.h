// Prints one CUDA C++ translation unit holding the whole model as ONE kernel (`mono_main`):
// a device function per group (deduplicated: repeated layers with the same shapes share
// one), and a kernel body that runs the stages in order with a grid barrier between them.
// Repeated layers (runs of stages whose code differs only in where their tensors live) run as
// a loop over the layers, their buffers' offsets and tensor-map indices from a table in
// constant memory (emit/stages.h).
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/device_headers.h"
#include "compiler/codegen/plan.h"
#include "compiler/codegen/tensor_map_spec.h"

namespace mono {

constexpr const char kKernelName[] = "mono_main";
constexpr int kMaxKernelIo = 16;  // inputs and outputs each (MonoParams arrays)

// The generated source; it #includes "mono_dev/*.cuh" (device_headers()). `tensor_maps` (if not
// null) receives the tensor maps the kernel's __constant__ table mono_tmaps needs, in index
// order: the runtime must encode them over the arena before the first launch.
std::string emit_cuda(const Graph& graph, const KernelPlan& plan, const std::string& model_name,
                      std::vector<TensorMapSpec>* tensor_maps = nullptr);

// The group-function calls in the kernel's text (a layer loop's stages counted once): what
// inlining the group functions multiplies (the planner's choice, plan.h kInlineCallLimit).
int kernel_calls(const Graph& graph, const KernelPlan& plan);

// The fixed device headers, embedded at build time from compiler/codegen/device/:
// compiler/codegen/device_headers.h (DeviceHeader, device_headers()).
// Their include names in the order a kernel includes them (they include nothing themselves; each
// needs only the ones before it): every device header exactly once. The list is kept in
// compiler/codegen/embed_device.cmake.
const std::vector<const char*>& device_include_order();

}  // namespace mono
