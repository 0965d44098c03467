// What the command-line tools share: argument reading, loading a model with the user's
// shape bindings, and turning errors into one line and an exit code.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/plan.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/passes/passes.h"

namespace mono::cli {

// Exit codes shared by the tools.
constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;  // ran, but outputs differ from the expected ones
constexpr int kExitError = 2;     // bad input, bad flags, or an internal error

// Runs `body`; a UserError prints "TOOL: error: MESSAGE", an internal error
// "TOOL: internal error: MESSAGE"; both return kExitError.
int run_main(const char* tool, const std::function<int()>& body);

// Reads argv as flags: next() walks them; value() takes the flag's argument.
class Args {
 public:
  Args(int argc, char** argv) : args_(argv + 1, argv + argc) {}
  bool next(std::string* flag);
  std::string value(const std::string& flag);  // UserError if missing

 private:
  std::vector<std::string> args_;
  size_t i_ = 0;
};

struct ModelOptions {
  LoadOptions load;
  bool simplify = true;
  bool stats = false;           // print the pass table to stderr
  bool dump_passes = false;     // print the IR after every pass that changed it (stderr)
  bool calibrate = true;        // fp16: keep tensors whose calibrated range does not fit in fp32
};

// A flag no parser took: an unknown option is an error; otherwise it is the model path
// (only one allowed).
void take_model_argument(const std::string& flag, std::string* model);
// Fails unless a model was given.
void require_model(const std::string& model);

// Handles --shape, --no-simplify, --stats, --dump-passes; true if `flag` was one of them.
bool parse_model_flag(const std::string& flag, Args& args, ModelOptions* options);

// Handles --dtype fp32|fp16, --sms N and --profile; true if `flag` was one of them.
bool parse_codegen_flag(const std::string& flag, Args& args, PlanOptions* options);

// Deterministic inputs: normal floats, zero integers, false bools (seed 0).
std::vector<Tensor> synthetic_inputs(const Graph& g);

// fp16 with fp32 fallback: calibrates float ranges with the CPU reference on `inputs` (unless
// --no-calibrate) and prints how many tensors stay fp32.
void calibrate(const Graph& g, const std::vector<Tensor>& inputs, PlanOptions* plan);

// A short name for a model path: "tiny-bert-opset20" for ".../tiny-bert-opset20/model.onnx".
std::string model_label(const std::string& path);

// Loads and (unless disabled) simplifies, printing notes and requested stats to stderr.
std::unique_ptr<Graph> load_model(const std::string& path, const ModelOptions& options);

}  // namespace mono::cli
