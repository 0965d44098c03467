#include "gpu_worker/gpu_health.h"

#include <dlfcn.h>

namespace mono::worker {

// The few NVML entry points used, declared from NVML's documented C API (nvml.h is not part
// of the toolkit image this builds on). Every function returns 0 (NVML_SUCCESS) on success.
namespace {
using Device = void*;  // nvmlDevice_t
struct Memory {
  unsigned long long total, free, used;
};
constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;

template <typename F>
F sym(void* lib, const char* name) {
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}
}  // namespace

Nvml::Nvml() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    why_ = "NVML (libnvidia-ml.so.1) not found: no NVIDIA driver on this machine";
    return;
  }
  auto init = sym<int (*)()>(lib_, "nvmlInit_v2");
  if (!init || init() != 0) {
    why_ = "NVML did not initialise (is the NVIDIA driver loaded?)";
    return;
  }
  ok_ = true;
}

Nvml::~Nvml() {
  if (ok_)
    if (auto shutdown = sym<int (*)()>(lib_, "nvmlShutdown")) shutdown();
  if (lib_) dlclose(lib_);
}

std::vector<GpuStatic> Nvml::gpus() {
  std::vector<GpuStatic> out;
  if (!ok_) return out;
  auto count = sym<int (*)(unsigned*)>(lib_, "nvmlDeviceGetCount_v2");
  auto handle = sym<int (*)(unsigned, Device*)>(lib_, "nvmlDeviceGetHandleByIndex_v2");
  auto name = sym<int (*)(Device, char*, unsigned)>(lib_, "nvmlDeviceGetName");
  auto cc = sym<int (*)(Device, int*, int*)>(lib_, "nvmlDeviceGetCudaComputeCapability");
  auto mem = sym<int (*)(Device, Memory*)>(lib_, "nvmlDeviceGetMemoryInfo");
  unsigned n = 0;
  if (!count || !handle || count(&n) != 0) return out;
  for (unsigned i = 0; i < n; ++i) {
    Device d = nullptr;
    if (handle(i, &d) != 0) continue;
    GpuStatic g;
    g.index = static_cast<int>(i);
    char buf[128] = {};
    if (name && name(d, buf, sizeof buf) == 0) g.name = buf;
    int major = 0, minor = 0;
    if (cc && cc(d, &major, &minor) == 0) g.sm_arch = major * 10 + minor;
    Memory m{};
    if (mem && mem(d, &m) == 0) g.memory_bytes = m.total;
    out.push_back(g);
  }
  return out;
}

GpuReading Nvml::read(int index) {
  GpuReading r;
  if (!ok_) return r;
  auto handle = sym<int (*)(unsigned, Device*)>(lib_, "nvmlDeviceGetHandleByIndex_v2");
  auto clock = sym<int (*)(Device, int, unsigned*)>(lib_, "nvmlDeviceGetClockInfo");
  auto temp = sym<int (*)(Device, int, unsigned*)>(lib_, "nvmlDeviceGetTemperature");
  Device d = nullptr;
  if (!handle || handle(static_cast<unsigned>(index), &d) != 0) return r;
  unsigned v = 0;
  if (clock && clock(d, kClockSm, &v) == 0) r.sm_clock_mhz = static_cast<int>(v);
  if (clock && clock(d, kClockMem, &v) == 0) r.mem_clock_mhz = static_cast<int>(v);
  if (temp && temp(d, kTemperatureGpu, &v) == 0) r.temperature_c = static_cast<int>(v);
  return r;
}

std::string Nvml::driver_version() {
  auto f = sym<int (*)(char*, unsigned)>(lib_, "nvmlSystemGetDriverVersion");
  char buf[96] = {};
  return f && ok_ && f(buf, sizeof buf) == 0 ? std::string(buf) : std::string();
}

std::string Nvml::cuda_version() {
  auto f = sym<int (*)(int*)>(lib_, "nvmlSystemGetCudaDriverVersion_v2");
  int v = 0;
  if (!f || !ok_ || f(&v) != 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace mono::worker
