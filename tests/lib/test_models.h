// The tiny exported models of tests/data/models (every folder holding a model.onnx), sorted:
// one list for every test that runs them, derived from the folder, so that a new model is
// tested everywhere as soon as it is checked in.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace mono::test {

inline std::string models_dir() { return std::string(MONO_SOURCE_DIR) + "/tests/data/models"; }

inline std::vector<std::string> tiny_models() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(models_dir()))
    if (std::filesystem::exists(e.path() / "model.onnx")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace mono::test
