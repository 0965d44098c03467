// mono-run MODEL.onnx|ARTIFACT [--cpu | --gpu] [--dtype fp32|fp16] [--test-data DIR] [--bench]
// Runs a model with the CPU reference or as one compiled kernel on the GPU, compares its
// outputs with test data and times it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include <sys/stat.h>

#include "client/cli.h"
#include "client/compare.h"
#include "compiler/reference/interpreter.h"
#include "compiler/runtime/cuda_model.h"
#include "compiler/support/error.h"

namespace mono {

static const char kUsage[] =
    "usage: mono-run MODEL.onnx|ARTIFACT_DIR [--cpu | --gpu] [--dtype fp32|fp16] [--test-data DIR]\n"
    "                [--bench [N]] [--tolerance X] [--shape NAME=DIMS]... [--no-simplify] [--stats]\n"
    "  --cpu              run the CPU reference (the default for a model)\n"
    "  --gpu              compile the model into one kernel and run it on the GPU (an artifact\n"
    "                     folder from mono-compile --out always runs on the GPU)\n"
    "  --dtype fp16       float16 storage (GPU: tensor cores, float32 accumulation; CPU: the\n"
    "                     float16 reference, one rounding per op)\n"
    "  --profile          with --gpu: a profiling build; prints the time of every stage and barrier\n"
    "  --no-fuse-attention  with --gpu: attention as three groups in three stages (A/B timings)\n"
    "  --fold-layernorm   with --gpu: LayerNorms folded into their neighbouring GEMMs (A/B timings)\n"
    "  --no-swap-b        with --gpu: attention's K^T stored as computed (A/B timings)\n"
    "  --epi-chunk N      with --gpu: two-phase GEMM epilogue elements per round trip (A/B timings)\n"
    "  --gemm-stages N    with --gpu: cp.async depth of every default fp16 GEMM tile (A/B timings)\n"
    "  --prefetch, --prefetch-distance N  with --gpu: L2 prefetch of the weights N stages ahead\n"
    "  --staged-epilogue  with --gpu: GEMM epilogues staged through shared memory (A/B timings)\n"
    "  --bulk-weights     with --gpu: weights read with bulk copies (TMA unit)\n"
    "  --no-tile-weights  with --gpu: weights read row by row with cp.async (A/B timings)\n"
    "  --tile-conv-weights  with --gpu: convolution weights packed tile by tile too (A/B)\n"
    "  --no-vec-epilogue  with --gpu: GEMM epilogues store element by element (A/B timings)\n"
    "  --no-tensor-a      with --gpu: GEMM activations read with cp.async, not tensor maps (A/B)\n"
    "  --gemm-bk N        with --gpu: k tile of every default fp16 GEMM tile (A/B; 0: the menu's)\n"
    "  --early-weights    with --gpu: weight preload across grid barriers (A/B timings)\n"
    "  --test-data DIR    compare with DIR/output_N.pb given DIR/input_N.pb; exit 1 on mismatch\n"
    "  --tolerance X      relative error allowed (default 1e-4 for f32 outputs, 1e-2 for f16)\n"
    "  --bench [N]        time it: on the CPU N runs (default 10); on the GPU the median of 7\n"
    "                     repetitions of the mean of 200 back-to-back launches (CUDA events)\n";

// Compares outputs with test data; prints one line per output and the worst error.
static int check_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& outputs,
                         const TestCase& tc, double tolerance, double default_tolerance) {
  int status = cli::kExitOk;
  double worst = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& want = tc.outputs[i];
    Comparison c = compare_tensors(outputs[i], want);
    double tol = tolerance >= 0 ? tolerance : want.dtype() == DType::kF16 ? 1e-2 : default_tolerance;
    bool ok = c.ok(tol);
    if (!c.same_type) {
      std::printf("output %zu '%s': type %s, expected %s  FAIL\n", i, names[i].c_str(), outputs[i].type().str().c_str(),
                  want.type().str().c_str());
    } else {
      std::printf("output %zu '%s' %s: max abs error %.3g, relative error %.3g (tolerance %.0e)%s  %s\n", i,
                  names[i].c_str(), want.type().str().c_str(), c.max_abs, c.rel, tol,
                  c.nan_mismatch ? str_cat(", ", c.nan_mismatch, " NaN mismatches").c_str() : "", ok ? "ok" : "FAIL");
    }
    worst = std::max(worst, c.same_type ? c.rel : INFINITY);
    if (!ok) status = cli::kExitMismatch;
  }
  std::printf("worst relative error: %.3g  %s\n", worst, status == cli::kExitOk ? "PASS" : "FAIL");
  return status;
}

static int run_gpu(const std::string& model, bool artifact, const cli::ModelOptions& options, const PlanOptions& plan,
                   const std::string& test_data, double tolerance, int bench, bool profile) {
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
  } else {
    g = cli::load_model(model, options);
    GpuInfo info = gpu_info(0);
    PlanOptions po = plan;
    if (options.calibrate) cli::calibrate(*g, test_data.empty() ? cli::synthetic_inputs(*g) : match_inputs(*g, tc), &po);
    po.sms = info.sms;
    po.profile = profile;
    nvrtc.sm_arch = info.sm_arch >= 90 ? 90 : 80;
    BuiltKernel built = build_kernel(*g, po, cli::model_label(model), nvrtc, true);
    built.manifest.sm_arch = nvrtc.sm_arch;
    std::fprintf(stderr, "compiled %s: %d groups in %d stages; %s%s\n", cli::model_label(model).c_str(),
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
    std::mt19937 rng(0);
    std::normal_distribution<float> normal;
    for (const ArtifactIo& io : m.inputs) {
      Tensor t(TensorType{io.model_dtype, io.shape});
      if (is_float(io.model_dtype)) {
        std::vector<float> v(t.numel());
        for (float& x : v) x = normal(rng);
        t = Tensor::from_floats(io.shape, v, io.model_dtype);
      }
      inputs.push_back(t);
    }
  }
  std::vector<Tensor> outputs = gm->run_host(inputs);
  std::printf("ran %s on %s as one kernel (%s, grid %d x %d threads, %d stages)\n", model.c_str(), gm->info().name.c_str(),
              m.precision.c_str(), gm->grid(), m.threads, m.stages);
  int status = cli::kExitOk;
  if (!test_data.empty()) {
    std::vector<std::string> names;
    for (const ArtifactIo& io : m.outputs) names.push_back(io.name);
    status = check_outputs(names, outputs, tc, tolerance, m.precision == "fp16" ? 1e-2 : 1e-4);
  }
  if (profile || m.profile) {
    gm->run_host(inputs);  // a second, warm run to profile
    std::vector<StageTime> st = gm->stage_times();
    double work = 0, barriers = 0;
    std::printf("%-6s %9s %11s %9s %7s  %s\n", "stage", "work us", "barrier us", "median us", "slowest", "groups");
    for (const StageTime& s : st) {
      std::string groups;
      if (s.stage < static_cast<int>(plan_used.stages.size()))
        for (int gid : plan_used.stages[s.stage].groups) {
          const Group& grp = plan_used.groups[gid];
          groups += str_cat(groups.empty() ? "" : "; ", grp.anchor->name, " (", op_name(grp.anchor->op), ")",
                            grp.epilogue.empty() ? "" : str_cat(" +", grp.epilogue.size()));
        }
      std::printf("%-6d %9.2f %11.2f %9.2f %7d  %s\n", s.stage, s.work_us, s.barrier_us, s.median_us, s.slowest_block,
                  groups.c_str());
      work += s.work_us;
      barriers += s.barrier_us;
    }
    std::printf("total: work %.1f us, barriers %.1f us (profiling build; %%globaltimer resolution)\n", work, barriers);
  }
  if (bench > 0) {
    Timing t = gm->bench();
    std::printf("bench: %s %s: median %.1f us per inference (min %.1f, max %.1f over 7 x 200 launches)\n",
                cli::model_label(model).c_str(), m.precision.c_str(), t.median_us, t.min_us, t.max_us);
  }
  return status;
}

static int run_main(int argc, char** argv) {
  cli::Args args(argc, argv);
  cli::ModelOptions options;
  PlanOptions plan;
  std::string model, test_data;
  double tolerance = -1;
  int bench = 0;
  bool gpu = false;
  std::string flag;
  while (args.next(&flag)) {
    if (cli::parse_model_flag(flag, args, &options)) continue;
    if (cli::parse_codegen_flag(flag, args, &plan)) continue;
    if (flag == "--cpu") {
      gpu = false;
    } else if (flag == "--gpu") {
      gpu = true;

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
      return cli::kExitOk;
    } else if (bench == 10 && !flag.empty() && std::all_of(flag.begin(), flag.end(), ::isdigit)) {
      bench = std::max(1, std::atoi(flag.c_str()));
    } else {
      cli::take_model_argument(flag, &model);
    }
  }
  cli::require_model(model);
  struct stat st;
  const bool artifact = stat(model.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  const bool profile = plan.profile;
  if (artifact || gpu) return run_gpu(model, artifact, options, plan, test_data, tolerance, bench, profile);
  if (profile) user_error("--profile needs --gpu");

  std::unique_ptr<Graph> g = cli::load_model(model, options);
  const bool fp16 = plan.precision == Precision::kF16;
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
    inputs = cli::synthetic_inputs(*g);
  }
  RunStats stats;
  std::vector<Tensor> outputs = run_reference(*g, inputs, &stats);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].dtype() != model_output_dtypes[i]) outputs[i] = outputs[i].cast(model_output_dtypes[i]);
  std::printf("ran %s on the CPU reference%s in %.1f ms (%zu nodes)\n", model.c_str(), fp16 ? " (float16 storage)" : "",
              stats.seconds * 1e3, g->num_nodes());

  int status = cli::kExitOk;
  if (!test_data.empty()) {
    std::vector<std::string> names;
    for (const Value* v : g->outputs) names.push_back(v->name);
    status = check_outputs(names, outputs, tc, tolerance, fp16 ? 1e-2 : 1e-4);
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
  return mono::cli::run_main("mono-run", [&] { return mono::run_main(argc, argv); });
}
