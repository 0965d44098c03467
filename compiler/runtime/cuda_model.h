// Runs a compiled model on the GPU: one kernel launch per inference. The small C++ API that
// programs use to load an artifact and call it on device buffers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/tensor.h"
#include "compiler/runtime/artifact.h"

namespace mono {

// True if a CUDA GPU can be used; otherwise `why` says why (no driver, no device...).
bool gpu_available(std::string* why);

struct GpuInfo {
  std::string name;
  int sm_arch = 0;  // e.g. 90
  int sms = 0;
  size_t memory_bytes = 0;
  int driver_version = 0, runtime_version = 0;
};
GpuInfo gpu_info(int device);

// One stage of a profiling build's last run: from the barrier that released it (first block
// out) to the last block finishing its work, then the barrier (last arrival to first release).
struct StageTime {
  int stage = 0;
  double work_us = 0;
  double barrier_us = 0;
  double median_us = 0;   // the median block's work (release to its work done)
  int slowest_block = 0;  // the block that finished last
  // How far apart the blocks left the barrier before this stage (the kernel's start for stage
  // 0): the last block's release minus the first's. The stage's work counts from the first.
  double release_spread_us = 0;
};

// The stage times of a profiling build's stamps (%globaltimer, ns): `stamps` holds
// [stage][2][block] (0: the block's work done, 1: it left the barrier after the stage), then
// [block] (the kernel's start), for `stages` stages and `grid` blocks. GpuModel::stage_times
// reads them from the device; this is the arithmetic.
std::vector<StageTime> stage_times_from_stamps(const std::vector<unsigned long long>& stamps, int stages, int grid);

struct Timing {
  double median_us = 0, min_us = 0, max_us = 0;
  int launches = 0;
};

class GpuModel {
 public:
  // Loads a kernel: checks the device's architecture and that the whole persistent grid can
  // be resident (else a clear error: a non-resident grid would deadlock at its first barrier).
  static std::unique_ptr<GpuModel> create(const Manifest& manifest, const std::vector<char>& cubin,
                                          const std::vector<unsigned char>& weights, int device = 0);
  // Loads an artifact folder (compiling model.cu with NVRTC when there is no cubin).
  static std::unique_ptr<GpuModel> load(const std::string& dir, const NvrtcOptions& nvrtc, int device = 0);
  ~GpuModel();

  const Manifest& manifest() const { return manifest_; }
  int grid() const { return grid_; }
  const GpuInfo& info() const { return info_; }

  // One inference on device buffers (inputs/outputs in the manifest's device dtypes), on a
  // CUDA stream (null: the default stream). Asynchronous.
  void run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs, void* stream = nullptr);

  // Host tensors in (model dtypes: converted as needed), host tensors out (model dtypes).
  std::vector<Tensor> run_host(const std::vector<Tensor>& inputs);

  // Times back-to-back inferences on the inputs last given to run_host: `reps` repetitions of
  // the mean over `iters` launches, timed with CUDA events after `warmup` launches.
  Timing bench(int warmup = 20, int iters = 200, int reps = 7);

  // The tuning recipe (DESIGN §6): `warmup` launches, then `samples` single launches, each
  // timed with CUDA events right after a write over twice the L2 size (so no launch finds
  // the previous one's data in L2). Microseconds, in launch order.
  std::vector<double> sample_flushed(int warmup, int samples);
  // Per-stage times of the last run (profiling builds only; empty otherwise).
  std::vector<StageTime> stage_times();

 private:
  GpuModel() = default;
  // `launches` inferences on the last inputs, then waits for them (bench, sample_flushed).
  void warm_up(int launches);
  Manifest manifest_;
  GpuInfo info_;
  int device_ = 0;
  int grid_ = 0;
  void* library_ = nullptr;  // cudaLibrary_t
  void* kernel_ = nullptr;   // cudaKernel_t
  void* weights_ = nullptr;
  void* arena_ = nullptr;
  void* sync_ = nullptr;
  void* profile_ = nullptr;
  std::vector<void*> in_bufs_, out_bufs_;
  void* flush_ = nullptr;  // L2 flush buffer (sample_flushed)
  size_t flush_bytes_ = 0;
};

}  // namespace mono
