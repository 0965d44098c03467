// What the client tools share: the model argument, the flags for loading a model and for code
// generation, and printing what loading reported. Flag reading and the error convention are
// compiler/support/flags.h (shared with the service daemons); the work itself is the
// compiler's (compiler/driver/, compiler/backend/).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "compiler/backend/verify.h"
#include "compiler/codegen/plan.h"
#include "compiler/driver/model.h"
#include "compiler/support/flags.h"

namespace mono::cli {

// The model flags (--shape, --no-simplify, --stats, --dump-passes, --no-calibrate).
struct ModelFlags {
  ModelOptions model;      // --dump-passes prints to stderr
  bool stats = false;      // print the pass table to stderr
  bool calibrate = true;   // fp16: keep tensors whose calibrated range does not fit in fp32
};

// A flag no parser took: an unknown option is an error; otherwise it is the model path
// (only one allowed).
void take_model_argument(const std::string& flag, std::string* model);
// Fails unless a model was given.
void require_model(const std::string& model);

// Handles --shape, --no-simplify, --stats, --dump-passes, --no-calibrate; true if `flag` was
// one of them.
bool parse_model_flag(const std::string& flag, Flags& args, ModelFlags* flags);

// Handles --dtype fp32|fp16, --profile and --set NAME=VALUE (codegen/settings.h); true if
// `flag` was one of them.
bool parse_codegen_flag(const std::string& flag, Flags& args, PlanOptions* options);

// Loads and (unless disabled) simplifies (compiler/driver/model.h), printing the front end's
// notes and the requested stats to stderr.
std::unique_ptr<Graph> load_model(const std::string& path, const ModelFlags& flags);

// Verification (compiler/backend/verify.h) of a kernel compiled from `path`: `gm` runs on
// this machine's GPU and the CPU reference runs the model as imported (shapes bound, not
// simplified, so a simplification bug shows too), both on the synthetic inputs
// (compiler/reference/inputs.h). Prints one line per output and the verdict to `out`.
Verification verify_model(const std::string& path, const ModelFlags& flags, GpuModel& gm, std::FILE* out);
// What describes those inputs in the manifest's record.
extern const char kVerificationAgainst[];

// fp16 with fp32 fallback: calibrates on `inputs` (compiler/driver/model.h) and prints how
// many tensors stay fp32.
void calibrate(const Graph& g, const std::vector<Tensor>& inputs, PlanOptions* plan);

}  // namespace mono::cli
