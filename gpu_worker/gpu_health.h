// What a worker knows about its GPUs without touching CUDA (no context is created in the
// daemon): names, architecture, memory, versions, clocks and temperature, read through NVML
// (libnvidia-ml, loaded at run time: the worker builds and runs without it, compile-only).
#pragma once

#include <string>
#include <vector>

namespace mono::worker {

struct GpuStatic {
  int index = 0;  // NVML index (PCI bus order; runners set CUDA_DEVICE_ORDER=PCI_BUS_ID to match)
  std::string name;
  int sm_arch = 0;
  unsigned long long memory_bytes = 0;
};

struct GpuReading {
  int sm_clock_mhz = 0;
  int mem_clock_mhz = 0;
  int temperature_c = 0;
};

class Nvml {
 public:
  // Loads libnvidia-ml.so.1 and initialises it; ok() is false (with why()) when it is absent.
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  std::vector<GpuStatic> gpus();
  GpuReading read(int index);
  std::string driver_version();
  std::string cuda_version();  // "13.0"

 private:
  void* lib_ = nullptr;
  bool ok_ = false;
  std::string why_;
};

}  // namespace mono::worker
