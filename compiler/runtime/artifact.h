// A compiled model on disk: model.cu (readable source) with mono_dev/*.cuh, kernel.cubin,
// weights.bin (packed constants) and manifest.json (inputs, outputs, shapes, dtypes, the
// context and the schedule used).
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/plan.h"
#include "compiler/codegen/tensor_map_spec.h"
#include "compiler/runtime/nvrtc_compiler.h"

namespace mono {

// 2: manifest.json may list tensor maps (a runtime that ignored them would launch with an empty
// table); format 1 artifacts have none and still load.
constexpr int kArtifactFormat = 2;

struct ArtifactIo {
  std::string name;
  DType device_dtype;  // what the kernel reads or writes
  DType model_dtype;   // what the ONNX model declares (f32 becomes f16 in fp16 mode)
  Shape shape;
};

struct Manifest {
  std::string model;
  std::string precision;  // "fp32" | "fp16"
  int sm_arch = 90;
  std::string kernel = "mono_main";
  int threads = 256;
  int blocks_per_sm = 1;
  int smem_bytes = 0;
  size_t arena_bytes = 0;
  size_t sync_words = 0;
  size_t weights_bytes = 0;
  int stages = 0;
  int groups = 0;
  bool profile = false;  // a profiling build (per-stage timestamps)
  std::vector<ArtifactIo> inputs, outputs;
  // The kernel's __constant__ mono_tmaps, in order: encoded over the arena at load time.
  std::vector<TensorMapSpec> tensor_maps;
  ResourceUsage usage;
};

struct BuiltKernel {
  KernelPlan plan;
  std::string source;
  std::vector<unsigned char> weights;
  CompiledKernel compiled;  // empty cubin when not compiled
  Manifest manifest;
};

// Plans, emits and (when `compile`) compiles the kernel of a simplified graph.
BuiltKernel build_kernel(const Graph& graph, const PlanOptions& plan_options, const std::string& model_name,
                         const NvrtcOptions& nvrtc, bool compile);

// Writes the artifact folder (created if needed). Throws UserError on I/O errors.
void write_artifact(const std::string& dir, const Graph& graph, const BuiltKernel& built);

// Reads manifest.json; weights and cubin through the paths it implies.
Manifest read_manifest(const std::string& dir);
std::vector<unsigned char> read_binary(const std::string& path);

}  // namespace mono
