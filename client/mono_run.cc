// mono-run MODEL.onnx|ARTIFACT [--cpu | --gpu [--verify]] [--dtype fp32|fp16] [--test-data DIR] [--bench]
// Runs a model with the CPU reference or as one compiled kernel on the GPU, compares its
// outputs with test data and times it.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <sys/stat.h>

#include "client/cli.h"
#include "compiler/backend/build.h"
#include "compiler/driver/test_data.h"
#include "compiler/reference/compare.h"
#include "compiler/reference/inputs.h"
#include "compiler/reference/interpreter.h"
#include "compiler/runtime/cuda_model.h"
#include "compiler/support/error.h"

namespace mono {

static const char kUsage[] =
    "usage: mono-run MODEL.onnx|ARTIFACT_DIR [--cpu | --gpu [--verify]] [--dtype fp32|fp16] [--test-data DIR]\n"
    "                [--bench [N]] [--tolerance X] [--shape NAME=DIMS]... [--set NAME=VALUE]...\n"
    "  --cpu              run the CPU reference (the default for a model)\n"
    "  --gpu              compile the model into one kernel and run it on the GPU (an artifact\n"
    "                     folder from mono-compile --out always runs on the GPU)\n"
    "  --dtype fp16       float16 storage (GPU: tensor cores, float32 accumulation; CPU: the\n"
    "                     float16 reference, one rounding per op)\n"
    "  --profile          with --gpu: a profiling build; prints the time of every stage and barrier\n"
    "  --set NAME=VALUE   with --gpu: a kernel setting (below)\n"
    "  --verify           with --gpu: also compare the kernel with the CPU reference (the model as\n"
    "                     imported) on synthetic inputs; says PASS or FAIL with the worst error,\n"
    "                     exit 1 on FAIL. Needs no test data\n"
    "  --test-data DIR    compare with DIR/output_N.pb given DIR/input_N.pb; exit 1 on mismatch\n"
    "  --tolerance X      relative error allowed (default 1e-4 for f32 outputs, 1e-2 for f16)\n"
    "  --bench [N]        time it: on the CPU N runs (default 10); on the GPU the median of 7\n"
    "                     repetitions of the mean of 200 back-to-back launches (CUDA events)\n"
    "  --no-calibrate     fp16: store every float tensor in fp16\n"
    "  --no-simplify, --skip-pass, --stats, --dump-passes  as for mono-compile\n"
    "settings (--set):\n";

// Compares outputs with test data; prints one line per output and the worst error.
static int check_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& outputs,
                         const TestCase& tc, double tolerance, const std::string& precision) {
  const Verification v = compare_outputs(names, outputs, tc.outputs, precision, tolerance);
  print_verification(stdout, v);
  return v.ok ? kExitOk : kExitMismatch;
}

static int run_gpu(const std::string& model, bool artifact, const cli::ModelFlags& options, const PlanOptions& plan,
                   const std::string& test_data, double tolerance, int bench, bool profile, bool verify) {
  std::string why;
  if (!gpu_available(&why)) user_error("--gpu: ", why);
  NvrtcOptions nvrtc;
  nvrtc.cache_dir = default_cache_dir();
  std::unique_ptr<GpuModel> gm;
  std::unique_ptr<Graph> g;  // outlives plan_used, whose groups point at its nodes
  KernelPlan plan_used;
  TestCase tc;
  if (!test_data.empty()) tc = read_test_case(test_data);
  if (artifact) {
    gm = GpuModel::load(model, nvrtc);
    const std::string& record = gm->manifest().verification;
    std::fprintf(stderr, "artifact %s: %s\n", model.c_str(), record.empty() ? "no verification record" : record.c_str());
  } else {
    g = cli::load_model(model, options);
    GpuInfo info = gpu_info(0);
    PlanOptions po = plan;
    if (options.calibrate) cli::calibrate(*g, test_data.empty() ? synthetic_inputs(*g) : match_inputs(*g, tc), &po);
    po.settings.sms = info.sms;
    po.settings.profile = profile;
    nvrtc.sm_arch = info.sm_arch >= 90 ? 90 : 80;
    BuiltKernel built = build_kernel(*g, po, model_label(model), nvrtc, true);
    built.manifest.sm_arch = nvrtc.sm_arch;
    std::fprintf(stderr, "compiled %s: %d groups in %d stages; %s%s\n", model_label(model).c_str(),
                 built.manifest.groups, built.manifest.stages, built.compiled.usage.str().c_str(),
                 built.compiled.from_cache ? " (cached)" : "");
    gm = GpuModel::create(built.manifest, built.compiled.cubin, built.weights);
    plan_used = std::move(built.plan);
  }
  const Manifest& m = gm->manifest();
  std::vector<Tensor> inputs;
  if (!test_data.empty()) {
    if (tc.inputs.size() != m.inputs.size() || tc.outputs.size() != m.outputs.size())
      user_error("the test data has ", tc.inputs.size(), " inputs and ", tc.outputs.size(), " outputs; the model takes ",
                 m.inputs.size(), " and gives ", m.outputs.size());
    inputs = tc.inputs;
  } else {
    // The same inputs as for the graph the artifact was built from.
    std::vector<TensorType> types;
    for (const ArtifactIo& io : m.inputs) types.push_back(TensorType{io.model_dtype, io.shape});
    inputs = synthetic_inputs(types);
  }
  std::vector<Tensor> outputs = gm->run_host(inputs);
  std::printf("ran %s on %s as one kernel (%s, grid %d x %d threads, %d stages)\n", model.c_str(), gm->info().name.c_str(),
              m.precision.c_str(), gm->grid(), m.threads, m.stages);
  int status = kExitOk;
  if (!test_data.empty()) {
    std::vector<std::string> names;
    for (const ArtifactIo& io : m.outputs) names.push_back(io.name);
    status = check_outputs(names, outputs, tc, tolerance, m.precision);
  }
  if (verify && !cli::verify_model(model, options, *gm, stdout).ok) status = kExitMismatch;
  if (profile || m.profile) {
    gm->run_host(inputs);  // a second, warm run to profile
    std::vector<StageTime> st = gm->stage_times();
    double work = 0, barriers = 0, spread = 0;
    std::printf("%-6s %9s %11s %9s %7s %9s  %s\n", "stage", "work us", "barrier us", "median us", "slowest", "spread us",
                "groups");
    for (const StageTime& s : st) {
      std::string groups;
      if (s.stage < static_cast<int>(plan_used.stages.size()))
        for (int gid : plan_used.stages[s.stage].groups) {
          const Group& grp = plan_used.groups[gid];
          groups += str_cat(groups.empty() ? "" : "; ", grp.anchor->name, " (", op_name(grp.anchor->op), ")",
                            grp.epilogue.empty() ? "" : str_cat(" +", grp.epilogue.size()));
        }
      std::printf("%-6d %9.2f %11.2f %9.2f %7d %9.2f  %s\n", s.stage, s.work_us, s.barrier_us, s.median_us,
                  s.slowest_block, s.release_spread_us, groups.c_str());
      work += s.work_us;
      barriers += s.barrier_us;
      spread += s.release_spread_us;
    }
    std::printf("total: work %.1f us, barriers %.1f us, release spread %.1f us (inside work; profiling build; "
                "%%globaltimer resolution)\n",
                work, barriers, spread);
  }
  if (bench > 0) {
    Timing t = gm->bench();
    std::printf("bench: %s %s: median %.1f us per inference (min %.1f, max %.1f over 7 x 200 launches)\n",
                model_label(model).c_str(), m.precision.c_str(), t.median_us, t.min_us, t.max_us);
  }
  return status;
}

static int mono_run_main(int argc, char** argv) {
  Flags args(argc, argv);
  cli::ModelFlags options;
  PlanOptions plan;
  std::string model, test_data;
  double tolerance = -1;
  int bench = 0;
  bool gpu = false, verify = false;
  std::string flag;
  while (args.next(&flag)) {
    if (cli::parse_model_flag(flag, args, &options)) continue;
    if (cli::parse_codegen_flag(flag, args, &plan)) continue;
    if (flag == "--cpu") {
      gpu = false;
    } else if (flag == "--gpu") {
      gpu = true;
    } else if (flag == "--verify") {
      verify = true;
    } else if (flag == "--test-data") {
      test_data = args.value(flag);
    } else if (flag == "--tolerance") {
      std::string v = args.value(flag);
      char* end = nullptr;
      tolerance = std::strtod(v.c_str(), &end);
      if (*end || !(tolerance >= 0)) user_error("--tolerance '", v, "' is not a non-negative number");
    } else if (flag == "--bench") {
      bench = 10;
    } else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::fputs(settings_help().c_str(), stdout);
      return kExitOk;
    } else if (bench == 10 && !flag.empty() && std::all_of(flag.begin(), flag.end(), ::isdigit)) {
      bench = std::max(1, std::atoi(flag.c_str()));
    } else {
      cli::take_model_argument(flag, &model);
    }
  }
  cli::require_model(model);
  struct stat st;
  const bool artifact = stat(model.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  const bool profile = plan.settings.profile;
  if (artifact && verify)
    user_error("--verify needs the model for the CPU reference: mono-run MODEL.onnx --gpu --verify (an artifact's "
               "manifest records the verification mono-compile made)");
  if (artifact || gpu) return run_gpu(model, artifact, options, plan, test_data, tolerance, bench, profile, verify);
  if (verify) user_error("--verify needs --gpu (it compares the GPU kernel with the CPU reference)");
  if (profile) user_error("--profile needs --gpu");

  std::unique_ptr<Graph> g = cli::load_model(model, options);
  const bool fp16 = plan.settings.precision == Precision::kF16;
  std::vector<DType> model_output_dtypes;
  for (const Value* v : g->outputs) model_output_dtypes.push_back(v->type.dtype);
  std::vector<DType> model_input_dtypes;
  for (const Value* v : g->inputs) model_input_dtypes.push_back(v->type.dtype);
  if (fp16) convert_float_precision(*g, DType::kF16);  // the float16 reference
  TestCase tc;
  std::vector<Tensor> inputs;
  if (!test_data.empty()) {
    tc = read_test_case(test_data);
    if (fp16) {
      // Test data is float32: match it against the model as declared, then convert.
      for (size_t i = 0; i < tc.inputs.size(); ++i)
        if (tc.inputs[i].dtype() == DType::kF32) tc.inputs[i] = tc.inputs[i].cast(DType::kF16);
    }
    inputs = match_inputs(*g, tc);
    if (tc.outputs.size() != g->outputs.size())
      user_error("the test data has ", tc.outputs.size(), " outputs; the model has ", g->outputs.size());
  } else {
    inputs = synthetic_inputs(*g);
  }
  RunStats stats;
  std::vector<Tensor> outputs = run_reference(*g, inputs, &stats);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].dtype() != model_output_dtypes[i]) outputs[i] = outputs[i].cast(model_output_dtypes[i]);
  std::printf("ran %s on the CPU reference%s in %.1f ms (%zu nodes)\n", model.c_str(), fp16 ? " (float16 storage)" : "",
              stats.seconds * 1e3, g->num_nodes());

  int status = kExitOk;
  if (!test_data.empty()) {
    std::vector<std::string> names;
    for (const Value* v : g->outputs) names.push_back(v->name);
    status = check_outputs(names, outputs, tc, tolerance, fp16 ? "fp16" : "fp32");
  }
  if (bench > 0) {
    std::vector<double> times;
    for (int i = 0; i < bench; ++i) {
      RunStats s;
      run_reference(*g, inputs, &s);
      times.push_back(s.seconds * 1e3);
    }
    std::sort(times.begin(), times.end());
    std::printf("bench: %d runs on the CPU reference: min %.2f ms, median %.2f ms\n", bench, times.front(),
                times[times.size() / 2]);
  }
  return status;
}

}  // namespace mono

int main(int argc, char** argv) {
  return mono::run_main("mono-run", [&] { return mono::mono_run_main(argc, argv); });
}
