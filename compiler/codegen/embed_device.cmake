# Writes OUT (a .cc) holding every device header of DIR as a string: the generated kernels
# #include "mono_dev/<name>" and NVRTC receives these texts as named headers.
file(GLOB headers RELATIVE "${DIR}" "${DIR}/*.cuh")
list(SORT headers)
set(body "// Generated from compiler/codegen/device/*.cuh by embed_device.cmake. Do not edit.\n#include \"compiler/codegen/cuda_emitter.h\"\n\nnamespace mono {\n\nconst std::vector<DeviceHeader>& device_headers() {\n  static const std::vector<DeviceHeader> headers = {\n")
foreach(h ${headers})
  file(READ "${DIR}/${h}" text)
  string(APPEND body "      {\"mono_dev/${h}\", R\"MONO_DEV_TEXT(${text})MONO_DEV_TEXT\"},\n")
endforeach()
string(APPEND body "  };\n  return headers;\n}\n\n}  // namespace mono\n")
file(WRITE "${OUT}.tmp" "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
