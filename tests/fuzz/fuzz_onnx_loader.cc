// libFuzzer: bytes as model.onnx -> load_onnx (checks, shape inference) -> the simplification
// pipeline. Only UserError may come out.
#include "compiler/frontend/onnx_loader.h"
#include "compiler/passes/passes.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = mono::fuzz::scratch("model.onnx", data, size);
  mono::fuzz::expect_clean([&] {
    mono::LoadResult r = mono::load_onnx(path);
    mono::simplify(*r.graph);
  });
  return 0;
}
