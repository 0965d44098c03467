// The ONNX node conformance tests as compiled kernels (issue 18): every case the CPU reference
// passes is simplified, planned, emitted and compiled with NVRTC into one kernel, then (with a
// GPU) run on each test data set and compared with the expected outputs, in fp32 (numpy's
// allclose, as ONNX's backends are checked) and in fp16 (relative error <= 1e-2).
//
//   gpu_conformance [--compile-only] [--dtype fp32|fp16|both] [--jobs N] [--only NAME,...] [--list]
//
// The cases come from node_tests_dir() ($MONO_ONNX_NODE_TESTS for the GPU machine's copy);
// --list prints the selected ones (what that copy needs).
// --compile-only (CI, no GPU) stops after NVRTC. One line per case and precision: PASS, FAIL
// (what differs), REFUSED (the backend's one-line error), ERROR (a compile error) or, in
// fp16, NOT-FP16 (the float16 CPU reference misses the expected outputs too: the case's values
// are beyond what fp16 storage carries, e.g. Softmax of 10000 + [0, 1, 2]); then the counts. Exit 0 when nothing failed, was refused or did not compile.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "compiler/backend/build.h"
#include "compiler/backend/verify.h"
#include "compiler/driver/model.h"
#include "compiler/passes/passes.h"
#include "compiler/reference/interpreter.h"
#include "compiler/runtime/cuda_model.h"
#include "compiler/support/error.h"
#include "compiler/support/flags.h"
#include "tests/lib/gpu_tool.h"
#include "tests/conformance/node_tests.h"

namespace mono::conformance {
namespace {

struct Options {
  bool compile_only = false, list = false;
  std::vector<Precision> precisions = {Precision::kF32, Precision::kF16};
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> only;
};

enum class Outcome { kPass, kFail, kRefused, kError, kBeyondFp16 };
const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "PASS";
    case Outcome::kFail: return "FAIL";
    case Outcome::kRefused: return "REFUSED";
    case Outcome::kError: return "ERROR";
    case Outcome::kBeyondFp16: return "NOT-FP16";
  }
  return "?";
}

struct Result {
  std::string name;
  Precision precision;
  Outcome outcome = Outcome::kPass;
  std::string detail;
};

// Cases the CPU reference passes on every test data set (the others are the CPU conformance
// test's failures, not this runner's).
bool cpu_passes(const std::string& name) {
  try {
    for (const std::string& set : list_dirs(node_tests_dir() + "/" + name)) {
      LoadedCase c = load_case(name, set);
      simplify(*c.graph);
      c.inputs = match_inputs(*c.graph, c.data);
      if (!allclose(run_reference(*c.graph, c.inputs), c.data.outputs).empty()) return false;
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Why an fp16 kernel cannot be held to a test data set: the float16 CPU reference (every
// float tensor stored in fp16, each op's result rounded once) misses its expected outputs
// beyond fp16's tolerance too (inputs like 10000 + [0, 1, 2] that fp16 cannot tell apart). ""
// when it passes.
std::string beyond_fp16(const std::string& name, const std::string& set) {
  LoadedCase c = load_case(name, set);
  simplify(*c.graph);
  std::vector<Tensor> inputs = match_inputs(*c.graph, c.data);
  convert_float_precision(*c.graph, DType::kF16);
  for (Tensor& t : inputs)
    if (t.dtype() == DType::kF32) t = t.cast(DType::kF16);
  const std::vector<Tensor> out = run_reference(*c.graph, inputs);
  std::vector<Tensor> got;
  std::vector<std::string> names;
  for (size_t i = 0; i < out.size() && i < c.data.outputs.size(); ++i) {
    got.push_back(out[i].dtype() == DType::kF16 && c.data.outputs[i].dtype() != DType::kF16
                      ? out[i].cast(c.data.outputs[i].dtype()) : out[i]);
    names.push_back(c.graph->outputs[i]->name);
  }
  if (got.size() != c.data.outputs.size()) return "";
  const Verification v = compare_outputs(names, got, c.data.outputs, "fp16");
  return v.ok ? "" : "the float16 CPU reference misses it too: " + v.summary();
}

// Builds (and with a GPU runs) one case in one precision, on every test data set.
Result run_case(const std::string& name, Precision precision, const Options& opt, std::mutex& gpu) {
  Result r{name, precision, Outcome::kPass, ""};
  try {
    for (const std::string& set : list_dirs(node_tests_dir() + "/" + name)) {
      LoadedCase c = load_case(name, set);
      simplify(*c.graph);
      c.inputs = match_inputs(*c.graph, c.data);
      PlanOptions po;
      po.settings.precision = precision;
      calibrate(*c.graph, c.inputs, &po);
      NvrtcOptions nvrtc;
      nvrtc.cache_dir = default_cache_dir();
      BuiltKernel built;
      try {
        built = build_kernel(*c.graph, po, name, nvrtc, /*compile=*/true);
      } catch (const UserError& e) {
        const std::string what = e.what();
        const bool compile_error = what.find("NVRTC") != std::string::npos || what.find("nvrtc") != std::string::npos;
        r.outcome = compile_error ? Outcome::kError : Outcome::kRefused;
        r.detail = what.substr(0, what.find('\n'));
        return r;
      }
      if (precision == Precision::kF16) {
        const std::string why = beyond_fp16(name, set);
        if (!why.empty()) {
          r.outcome = Outcome::kBeyondFp16;
          r.detail = set + ": " + why;
          return r;
        }
      }
      if (opt.compile_only) continue;
      std::lock_guard<std::mutex> lock(gpu);
      auto model = GpuModel::create(built.manifest, built.compiled.cubin, built.weights);
      const std::vector<Tensor> got = model->run_host(c.inputs);
      std::string error;
      if (precision == Precision::kF32) {
        error = allclose(got, c.data.outputs);
      } else {
        std::vector<std::string> names(got.size(), "");
        for (size_t i = 0; i < names.size() && i < c.graph->outputs.size(); ++i) names[i] = c.graph->outputs[i]->name;
        if (got.size() != c.data.outputs.size()) {
          error = str_cat(got.size(), " outputs, expected ", c.data.outputs.size());
        } else {
          const Verification v = compare_outputs(names, got, c.data.outputs, "fp16");
          if (!v.ok) error = v.summary();
        }
      }
      if (!error.empty()) {
        r.outcome = Outcome::kFail;
        r.detail = set + ": " + error;
        return r;
      }
    }
  } catch (const std::exception& e) {
    r.outcome = Outcome::kError;
    r.detail = e.what();
  }
  return r;
}

int main_body(int argc, char** argv) {
  Options opt;
  Flags flags(argc, argv);
  std::string flag;
  while (flags.next(&flag)) {
    if (flag == "--compile-only") {
      opt.compile_only = true;
    } else if (flag == "--dtype") {
      opt.precisions = test::precisions_flag(flags.value(flag));
    } else if (flag == "--list") {
      opt.list = true;
    } else if (flag == "--jobs") {
      opt.jobs = std::max(1, flags.int_value(flag));
    } else if (flag == "--only") {
      std::stringstream ss(flags.value(flag));
      for (std::string n; std::getline(ss, n, ',');) opt.only.push_back(n);
    } else {
      Flags::unknown(flag);
    }
  }
  std::string why;
  if (!opt.compile_only && !opt.list && !gpu_available(&why)) user_error("no GPU (", why, "): use --compile-only");
  std::vector<std::string> cases;
  int not_selected = 0, cpu_failures = 0;
  for (const std::string& name : opt.only.empty() ? list_cases() : opt.only) {
    if (!selection_reason(name).empty()) ++not_selected;
    else if (excluded().count(name)) ++not_selected;
    else if (!cpu_passes(name)) ++cpu_failures;
    else cases.push_back(name);
  }
  if (cases.empty()) user_error("no node tests found under ", node_tests_dir(), " (install libonnx-testdata)");
  if (opt.list) {
    for (const std::string& c : cases) std::printf("%s\n", c.c_str());
    return kExitOk;
  }
  std::vector<std::pair<std::string, Precision>> work;
  for (const std::string& c : cases)
    for (Precision p : opt.precisions) work.emplace_back(c, p);
  std::vector<Result> results(work.size());
  std::mutex gpu;
  test::run_parallel(work.size(), opt.jobs, [&](size_t i) { results[i] = run_case(work[i].first, work[i].second, opt, gpu); });
  std::map<std::pair<Precision, Outcome>, int> counts;
  for (const Result& r : results) {
    ++counts[{r.precision, r.outcome}];
    std::printf("%-7s %-4s %s%s%s\n", outcome_name(r.outcome), test::precision_name(r.precision),
                r.name.c_str(), r.detail.empty() ? "" : ": ", r.detail.c_str());
  }
  int bad = 0;
  for (Precision p : opt.precisions) {
    const char* pn = test::precision_name(p);
    std::printf("gpu conformance %s%s: %zu cases, %d %s, %d failed, %d refused, %d compile errors, %d beyond fp16\n",
                pn, opt.compile_only ? " (compile only)" : "", cases.size(), counts[{p, Outcome::kPass}],
                opt.compile_only ? "compiled" : "passed", counts[{p, Outcome::kFail}], counts[{p, Outcome::kRefused}],
                counts[{p, Outcome::kError}], counts[{p, Outcome::kBeyondFp16}]);
    bad += counts[{p, Outcome::kFail}] + counts[{p, Outcome::kRefused}] + counts[{p, Outcome::kError}];
  }
  std::printf("(%d cases not selected: ops, dtypes or training mode outside Mono; %d failing on the CPU reference)\n",
              not_selected, cpu_failures);
  return bad ? kExitMismatch : kExitOk;
}

}  // namespace
}  // namespace mono::conformance

int main(int argc, char** argv) {
  return mono::run_main("gpu_conformance", [&] { return mono::conformance::main_body(argc, argv); });
}
