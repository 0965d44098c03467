// libFuzzer: bytes as an artifact's manifest.json -> read_manifest. Only UserError may come out.
#include "compiler/runtime/artifact.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = mono::fuzz::scratch("manifest.json", data, size);
  const std::string dir = path.substr(0, path.rfind('/'));
  mono::fuzz::expect_clean([&] { (void)mono::read_manifest(dir); });
  return 0;
}
