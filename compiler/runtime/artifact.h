// A compiled model on disk: model.cu (readable source) with mono_dev/*.cuh, kernel.cubin,
// weights.bin (packed constants) and manifest.json (inputs, outputs, shapes, dtypes, the
// context and the schedule used). The runtime's side: the format and its reader; the back end
// writes it (compiler/backend/artifact_writer.h).
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/tensor_map_spec.h"
#include "compiler/ir/tensor.h"
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
  // The "verification" record, in one line: what the kernel was compared with and the result,
  // or why it was not verified ("" in artifacts older than the record). An artifact whose
  // verification failed does not load.
  std::string verification;
  bool verification_failed = false;
};

// Reads manifest.json; weights and cubin through the paths it implies.
Manifest read_manifest(const std::string& dir);
std::vector<unsigned char> read_binary(const std::string& path);

}  // namespace mono
