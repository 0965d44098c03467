// The fixed device headers (compiler/codegen/device/*.cuh), embedded at build time by
// embed_device.cmake into the library mono_device_headers: the generated kernels #include
// "mono_dev/<name>.cuh"; NVRTC (compiler/runtime/) receives the texts as named headers and
// the artifact writer (compiler/backend/) copies them next to model.cu. A library of its
// own so that the runtime needs them without the planner and the emitter.
#pragma once

#include <vector>

namespace mono {

struct DeviceHeader {
  const char* include_name;  // "mono_dev/gemm.cuh"
  const char* text;
};
const std::vector<DeviceHeader>& device_headers();

}  // namespace mono
