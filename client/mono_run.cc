// mono-run MODEL.onnx [--cpu | --gpu] [--test-data DIR] [--bench] [--shape NAME=DIMS]...
// Runs a model with the CPU reference, compares its outputs with test data and times it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "client/cli.h"
#include "client/compare.h"
#include "compiler/reference/interpreter.h"
#include "compiler/support/error.h"

namespace mono {

static const char kUsage[] =
    "usage: mono-run MODEL.onnx [--cpu | --gpu] [--test-data DIR] [--bench [N]]\n"
    "                [--tolerance X] [--shape NAME=DIMS]... [--no-simplify] [--stats]\n"
    "  --cpu              run the CPU reference (the default)\n"
    "  --test-data DIR    compare with DIR/output_N.pb given DIR/input_N.pb; exit 1 on mismatch\n"
    "  --tolerance X      relative error allowed (default 1e-4 for f32 outputs, 1e-2 for f16)\n"
    "  --bench [N]        time N runs (default 10) and print min and median\n";

// Deterministic inputs when no test data is given: normal floats, zero integers, false bools.
static std::vector<Tensor> synthetic_inputs(const Graph& g) {
  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  std::vector<Tensor> inputs;
  for (const Value* in : g.inputs) {
    Tensor t(in->type);
    if (is_float(in->type.dtype)) {
      std::vector<float> v(t.numel());
      for (float& x : v) x = normal(rng);
      t = Tensor::from_floats(in->type.shape, v, in->type.dtype);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

static int run_main(int argc, char** argv) {
  cli::Args args(argc, argv);
  cli::ModelOptions options;
  std::string model, test_data;
  double tolerance = -1;
  int bench = 0;
  std::string flag;
  while (args.next(&flag)) {
    if (cli::parse_model_flag(flag, args, &options)) continue;
    if (flag == "--cpu") {
    } else if (flag == "--gpu") {
      user_error("--gpu: this build has no CUDA backend yet; use --cpu");
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
    } else if (!flag.empty() && flag[0] == '-') {
      user_error("unknown flag '", flag, "'\n", kUsage);
    } else if (model.empty()) {
      model = flag;
    } else {
      user_error("more than one model given ('", model, "' and '", flag, "')");
    }
  }
  if (model.empty()) user_error("no model given\n", kUsage);

  std::unique_ptr<Graph> g = cli::load_model(model, options);
  TestCase tc;
  std::vector<Tensor> inputs;
  if (!test_data.empty()) {
    tc = read_test_case(test_data);
    inputs = match_inputs(*g, tc);
    if (tc.outputs.size() != g->outputs.size())
      user_error("the test data has ", tc.outputs.size(), " outputs; the model has ", g->outputs.size());
  } else {
    inputs = synthetic_inputs(*g);
  }
  RunStats stats;
  std::vector<Tensor> outputs = run_reference(*g, inputs, &stats);
  std::printf("ran %s on the CPU reference in %.1f ms (%zu nodes)\n", model.c_str(), stats.seconds * 1e3,
              g->num_nodes());

  int status = cli::kExitOk;
  if (!test_data.empty()) {
    double worst = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Tensor& want = tc.outputs[i];
      Comparison c = compare_tensors(outputs[i], want);
      double tol = tolerance >= 0 ? tolerance : want.dtype() == DType::kF16 ? 1e-2 : 1e-4;
      bool ok = c.ok(tol);
      if (!c.same_type) {
        std::printf("output %zu '%s': type %s, expected %s  FAIL\n", i, g->outputs[i]->name.c_str(),
                    outputs[i].type().str().c_str(), want.type().str().c_str());
      } else {
        std::printf("output %zu '%s' %s: max abs error %.3g, relative error %.3g (tolerance %.0e)%s  %s\n", i,
                    g->outputs[i]->name.c_str(), want.type().str().c_str(), c.max_abs, c.rel, tol,
                    c.nan_mismatch ? str_cat(", ", c.nan_mismatch, " NaN mismatches").c_str() : "",
                    ok ? "ok" : "FAIL");
      }
      worst = std::max(worst, c.same_type ? c.rel : INFINITY);
      if (!ok) status = cli::kExitMismatch;
    }
    std::printf("worst relative error: %.3g  %s\n", worst, status == cli::kExitOk ? "PASS" : "FAIL");
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
