#include "compiler/driver/test_data.h"

#include <sys/stat.h>

#include "compiler/frontend/onnx_loader.h"
#include "compiler/support/error.h"

namespace mono {

static bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TestCase read_test_case(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) user_error("test data folder '", dir, "' does not exist");
  TestCase tc;
  for (int i = 0;; ++i) {
    std::string path = str_cat(dir, "/input_", i, ".pb");
    if (!exists(path)) break;
    std::string name;
    tc.inputs.push_back(read_tensor_file(path, &name));
    tc.input_names.push_back(name);
  }
  for (int i = 0;; ++i) {
    std::string path = str_cat(dir, "/output_", i, ".pb");
    if (!exists(path)) break;
    tc.outputs.push_back(read_tensor_file(path));
  }
  if (tc.outputs.empty()) user_error("test data folder '", dir, "' has no output_0.pb");
  return tc;
}

std::vector<Tensor> match_inputs(const Graph& graph, const TestCase& tc) {
  const auto& ins = graph.inputs;
  std::vector<Tensor> ordered(ins.size());
  std::vector<bool> filled(ins.size(), false);
  bool by_name = !tc.input_names.empty();
  for (const std::string& n : tc.input_names) by_name &= !n.empty();
  for (size_t k = 0; k < tc.inputs.size(); ++k) {
    size_t slot = k;
    if (by_name) {
      slot = ins.size();
      for (size_t j = 0; j < ins.size(); ++j)
        if (ins[j]->name == tc.input_names[k]) slot = j;
      if (slot == ins.size()) {
        // Inputs the model folded away (fixed at compile time) are not needed.
        continue;
      }
    } else if (slot >= ins.size()) {
      user_error("the test data has ", tc.inputs.size(), " inputs; the model takes ", ins.size());
    }
    ordered[slot] = tc.inputs[k];
    filled[slot] = true;
  }
  for (size_t j = 0; j < ins.size(); ++j) {
    if (!filled[j]) user_error("the test data has no value for input '", ins[j]->name, "'");
    if (ordered[j].type() != ins[j]->type)
      user_error("test input for '", ins[j]->name, "' is ", ordered[j].type().str(), "; the model takes ",
                 ins[j]->type.str());
  }
  return ordered;
}

}  // namespace mono
