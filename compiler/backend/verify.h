// Verification: a compiled kernel's outputs against expected ones (the CPU reference on the
// same inputs, or test data), output by output, within the tolerance of the kernel's
// precision. What mono-run --verify, mono-compile --verify, the GPU conformance runner and
// the random differential tester share.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/ir/graph.h"
#include "compiler/reference/compare.h"
#include "compiler/runtime/cuda_model.h"

namespace mono {

// The default relative tolerance (max |got - want| / max |want|) of a kernel's outputs:
// 1e-4 for fp32 kernels, 1e-2 for fp16 ones (DESIGN §6).
double default_tolerance(const std::string& precision);

struct OutputCheck {
  std::string name;
  std::string got_type, want_type;  // "f32[1,1000]"
  Comparison comparison;
  double tolerance = 0;
  bool ok = false;
};

struct Verification {
  bool ok = false;
  double worst = 0;                 // the worst relative error (infinite for a type mismatch)
  std::vector<OutputCheck> outputs;
  std::string summary() const;      // "PASS, worst relative error 1.2e-05 (output 'y')"
};

// Compares `got` with `want` output by output (`tolerance` < 0: default_tolerance(precision);
// an fp16 expected output always gets at least 1e-2).
Verification compare_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& got,
                             const std::vector<Tensor>& want, const std::string& precision, double tolerance = -1);

// Runs `model` (a kernel built from `graph`) and the CPU reference of `graph` on the same
// inputs (in the graph's input dtypes) and compares them.
Verification verify(const Graph& graph, GpuModel& model, const std::vector<Tensor>& inputs, double tolerance = -1);

// Prints one line per output (type, errors, tolerance, ok/FAIL) and the verdict.
void print_verification(std::FILE* out, const Verification& v);

// The manifest's "verification" record (compiler/runtime/artifact.h reads it back): what the
// kernel was compared with, on which GPU, and the result --
//   {"verified": true, "ok": true, "worst_relative_error": 3e-06, "tolerance": 0.0001,
//    "against": "...", "gpu": "NVIDIA H100 80GB HBM3"}
// -- or, when none was made, why: {"verified": false, "reason": "..."}.
nlohmann::json verification_record(const Verification& v, const std::string& against, const std::string& gpu);
nlohmann::json unverified_record(const std::string& reason);

}  // namespace mono
