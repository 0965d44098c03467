# Writes OUT (a .cc) holding every device header of DIR as a string: the generated kernels
# #include "mono_dev/<name>" and NVRTC receives these texts as named headers. The headers include
# nothing themselves, so a kernel includes them in the order below (device_include_order()):
# each needs only headers before it (its first paragraph names them). A header added to DIR must
# be added here too (Codegen.DeviceIncludeOrderListsEveryHeaderOnce checks).
set(order common.cuh barrier.cuh ptx.cuh epilogue.cuh split_k.cuh loaders.cuh iterators.cuh gemm_f16.cuh
    gemm_wg.cuh gemm_f32.cuh rows.cuh attention.cuh elementwise.cuh)
file(GLOB headers RELATIVE "${DIR}" "${DIR}/*.cuh")
list(SORT headers)
set(body "// Generated from compiler/codegen/device/*.cuh by embed_device.cmake. Do not edit.\n#include \"compiler/codegen/device_headers.h\"\n\nnamespace mono {\n\nconst std::vector<DeviceHeader>& device_headers() {\n  static const std::vector<DeviceHeader> headers = {\n")
foreach(h ${headers})
  file(READ "${DIR}/${h}" text)
  string(APPEND body "      {\"mono_dev/${h}\", R\"MONO_DEV_TEXT(${text})MONO_DEV_TEXT\"},\n")
endforeach()
string(APPEND body "  };\n  return headers;\n}\n\nconst std::vector<const char*>& device_include_order() {\n  static const std::vector<const char*> order = {\n")
foreach(h ${order})
  string(APPEND body "      \"mono_dev/${h}\",\n")
endforeach()
string(APPEND body "  };\n  return order;\n}\n\n}  // namespace mono\n")
file(WRITE "${OUT}.tmp" "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
