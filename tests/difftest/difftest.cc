// The random differential tester (issue 18): random graphs (generator.h) compiled into one
// kernel and compared with the CPU reference, the oracle, on seeded random inputs.
//
//   difftest [--count N] [--seed S] [--dtype fp32|fp16|both] [--compile-only] [--jobs N]
//            [--save DIR] [--regressions DIR] [--print SEED] [--plan|--cuda SEED|FILE]
//
// Graph k of a run is generated from seed S + k. The CPU reference runs the graph as
// generated; the kernel is built as the tools build it (simplified, calibrated in fp16) and,
// with a GPU, run: fp32 outputs must match within 1e-4 (relative to the largest reference
// value), fp16 within 1e-2 or four times the error of the float16 CPU reference, whichever is
// larger (an output that fp16 cannot carry, e.g. a comparison decided near its threshold, is
// checked by the fp32 run of the same graph); either may also differ by four times the
// reference's own movement when its inputs move by a few ulps (an output that is rounding
// noise, like a LayerNorm of a row of equal values). --compile-only (CI: no GPU) stops after NVRTC. A failing graph
// prints its seed and is shrunk to a smallest graph that still fails the same way (nodes
// bypassed, outputs dropped); --save DIR writes it there as a regression test (DIR/*.mono,
// its seed in a comment), which --regressions DIR runs. --print SEED prints a graph, --plan
// and --cuda its kernel plan and CUDA source (a seed's graph or a saved one; in the --dtype
// given before).
// Exit 0 when nothing failed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <cmath>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include <dirent.h>

#include "compiler/backend/build.h"
#include "compiler/backend/verify.h"
#include "compiler/driver/model.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
#include "compiler/reference/interpreter.h"
#include "compiler/runtime/cuda_model.h"
#include "compiler/support/error.h"
#include "compiler/support/flags.h"
#include "tests/lib/gpu_tool.h"
#include "tests/difftest/generator.h"

namespace mono::difftest {
namespace {

enum class Outcome { kPass, kMismatch, kRefused, kCompileError, kInvalid };
const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "PASS";
    case Outcome::kMismatch: return "MISMATCH";
    case Outcome::kRefused: return "REFUSED";
    case Outcome::kCompileError: return "COMPILE-ERROR";
    case Outcome::kInvalid: return "INVALID";
  }
  return "?";
}

struct Check {
  Outcome outcome = Outcome::kPass;
  std::string detail;
};

struct Options {
  int count = 100;
  uint64_t seed = 1;
  std::vector<Precision> precisions = {Precision::kF32};
  bool compile_only = false;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string save, regressions;
};

std::unique_ptr<Graph> parse(const std::string& text, uint64_t seed) {
  ParseOptions po;
  po.fill_elided = true;
  po.seed = seed;
  auto g = parse_graph(text, po);
  infer_shapes(*g);
  verify_graph(*g, /*internal=*/false);
  return g;
}

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + 1);
  std::normal_distribution<float> normal;
  std::vector<Tensor> out;
  for (const Value* v : g.inputs) {
    std::vector<float> x(static_cast<size_t>(v->type.numel()));
    for (float& e : x) e = normal(rng);
    out.push_back(Tensor::from_floats(v->type.shape, x, v->type.dtype));
  }
  return out;
}

// The kernel of a graph as the tools build it: simplified, calibrated in fp16 on `inputs`.
// The plan points into the graph: `graph` (when given) keeps it.
BuiltKernel build(const std::string& text, uint64_t seed, Precision precision, const std::vector<Tensor>& inputs,
                  bool compile, std::unique_ptr<Graph>* graph = nullptr) {
  std::unique_ptr<Graph> g = parse(text, seed);
  simplify(*g);
  PlanOptions po;
  po.settings.precision = precision;
  calibrate(*g, inputs, &po);
  NvrtcOptions nvrtc;
  nvrtc.cache_dir = default_cache_dir();
  BuiltKernel built = build_kernel(*g, po, "difftest", nvrtc, compile);
  if (graph) *graph = std::move(g);
  return built;
}

// The reference outputs of a graph, and how far an honest fp16 computation of it is from them:
// the float16 CPU reference (every op's result rounded to fp16) compared output by output.
// Outputs that cancel (a mean near zero of unit inputs), normalise rows of nearly equal values
// or decide a comparison or a float-to-integer Cast near its threshold lose most of their
// precision in fp16 whatever computes them; the fp16 kernel is allowed four times that error.
// Outputs that normalise rows of equal values (LayerNorm after a Max that a large sum
// dominates) are rounding noise even in fp32: the reference itself moves by far more than
// 1e-4 when its inputs move by a few ulps. The kernel is allowed four times that movement
// (`fp32_noise`: the reference on inputs scaled by 1 +- 2^-20, against the reference).
struct Reference {
  std::vector<Tensor> outputs;
  std::vector<double> fp16_error;  // per output: the fp16 reference's relative error
  std::vector<double> fp32_noise;  // per output: the reference's own movement, relative
};

Reference reference(const std::string& text, uint64_t seed, const std::vector<Tensor>& inputs, Precision precision) {
  Reference r;
  const std::unique_ptr<Graph> g = parse(text, seed);
  r.outputs = run_reference(*g, inputs);
  // How far `got` is from the reference's output i, relative; infinite when they disagree in
  // type or in where the NaNs are.
  auto error = [&](const Tensor& got, size_t i) {
    const Comparison c = compare_tensors(got, r.outputs[i]);
    return c.same_type && !c.nan_mismatch ? c.rel : std::numeric_limits<double>::infinity();
  };
  std::vector<Tensor> nudged;
  for (const Tensor& t : inputs) {
    if (!is_float(t.dtype())) {
      nudged.push_back(t);
      continue;
    }
    std::vector<float> v = t.to_float_vector();
    for (size_t i = 0; i < v.size(); ++i) v[i] *= 1.0f + (i % 2 ? 1.0f : -1.0f) * 0x1p-20f;
    nudged.push_back(Tensor::from_floats(t.shape(), v, t.dtype()));
  }
  const std::vector<Tensor> moved = run_reference(*g, nudged);
  for (size_t i = 0; i < moved.size(); ++i) r.fp32_noise.push_back(error(moved[i], i));
  r.fp16_error.assign(r.outputs.size(), 0.0);
  if (precision != Precision::kF16) return r;
  std::unique_ptr<Graph> g16 = parse(text, seed);
  convert_float_precision(*g16, DType::kF16);
  std::vector<Tensor> in16;
  for (const Tensor& t : inputs) in16.push_back(t.dtype() == DType::kF32 ? t.cast(DType::kF16) : t);
  const std::vector<Tensor> out16 = run_reference(*g16, in16);
  for (size_t i = 0; i < out16.size(); ++i) {
    r.fp16_error[i] = error(out16[i].dtype() == DType::kF16 ? out16[i].cast(r.outputs[i].dtype()) : out16[i], i);
  }
  return r;
}

// True when every reference output is finite and of a size the generator means (|x| <= 1e6):
// a shrunk graph that divides by a value no longer kept away from zero is not a smaller
// version of the failure.
bool well_scaled(const std::vector<Tensor>& outputs) {
  for (const Tensor& t : outputs) {
    if (!is_float(t.dtype())) continue;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double x = t.as_double(i);
      if (!std::isfinite(x) || std::fabs(x) > 1e6) return false;
    }
  }
  return true;
}

// The values that depend on a step function of float data: a comparison's result or a Cast
// of floats to an integer type, and everything computed from them.
std::set<const Value*> past_a_step(const Graph& g) {
  std::set<const Value*> out;
  for (const auto& n : g.nodes()) {
    bool step = n->op == OpKind::kGreater || n->op == OpKind::kLess || n->op == OpKind::kEqual ||
                n->op == OpKind::kGreaterOrEqual || n->op == OpKind::kLessOrEqual ||
                (n->op == OpKind::kCast && is_float(n->inputs[0]->type.dtype) && !is_float(n->outputs[0]->type.dtype));
    for (const Value* in : n->inputs) step = step || (in && out.count(in));
    if (step)
      for (const Value* o : n->outputs) out.insert(o);
  }
  return out;
}

// One graph in one precision: the reference, the kernel, and (unless compile-only) the GPU.
Check check(const std::string& text, uint64_t seed, Precision precision, bool compile_only, std::mutex& gpu,
            bool shrinking = false) {
  std::unique_ptr<Graph> ref;
  std::vector<Tensor> inputs;
  Reference want;
  try {
    ref = parse(text, seed);
    inputs = random_inputs(*ref, seed);
    want = reference(text, seed, inputs, precision);
  } catch (const std::exception& e) {
    return {Outcome::kInvalid, e.what()};
  }
  if (shrinking && !well_scaled(want.outputs)) return {Outcome::kInvalid, "outputs not finite or beyond 1e6"};
  try {
    BuiltKernel built;
    try {
      built = build(text, seed, precision, inputs, /*compile=*/true);
    } catch (const UserError& e) {
      const std::string what = e.what();
      const bool compile = what.find("NVRTC") != std::string::npos;
      return {compile ? Outcome::kCompileError : Outcome::kRefused, what.substr(0, what.find('\n'))};
    }
    if (compile_only) return {};
    std::lock_guard<std::mutex> lock(gpu);
    auto model = GpuModel::create(built.manifest, built.compiled.cubin, built.weights);
    std::vector<std::string> names;
    for (const Value* v : ref->outputs) names.push_back(v->name);
    const std::vector<Tensor> got = model->run_host(inputs);
    Verification v = compare_outputs(names, got, want.outputs, built.manifest.precision);
    // Outputs the reference itself cannot pin down (fp32: its movement under a few-ulp nudge of
    // the inputs; fp16: the float16 reference's error) are compared again with four times that
    // allowance. Outputs past a step (a comparison, a float-to-integer Cast) get no allowance in
    // fp32 (a nudge may cross the step) and are left to the fp32 run in fp16.
    const std::set<const Value*> stepped = past_a_step(*ref);
    v.ok = true;
    for (size_t i = 0; i < v.outputs.size(); ++i) {
      OutputCheck& o = v.outputs[i];
      if (stepped.count(ref->outputs[i])) {
        if (precision == Precision::kF16) o.ok = true;
        v.ok = v.ok && o.ok;
        continue;
      }
      o.tolerance = std::max(o.tolerance, 4 * want.fp32_noise[i]);
      if (precision == Precision::kF16) o.tolerance = std::max(o.tolerance, 4 * want.fp16_error[i]);
      o.ok = o.comparison.ok(o.tolerance);
      v.ok = v.ok && o.ok;
    }
    if (!v.ok) return {Outcome::kMismatch, v.summary()};
    return {};
  } catch (const std::exception& e) {
    return {Outcome::kCompileError, e.what()};
  }
}

// Smaller graphs of `text`: each graph output dropped (when there are several), and each node
// bypassed (its output replaced by one of its inputs of the same type), dead code removed.
std::vector<std::string> smaller(const std::string& text, uint64_t seed) {
  std::vector<std::string> out;
  std::unique_ptr<Graph> g0 = parse(text, seed);
  PrintOptions print;
  print.max_constant_elements = 0;  // every float constant elided: the seed makes them again
  print.elide_floats_only = true;
  for (size_t i = 0; g0->outputs.size() > 1 && i < g0->outputs.size(); ++i) {
    std::unique_ptr<Graph> g = parse(text, seed);
    g->outputs.erase(g->outputs.begin() + static_cast<long>(i));
    g->remove_dead_code();
    out.push_back(graph_to_string(*g, print));
  }
  for (size_t k = g0->nodes().size(); k-- > 0;) {
    const Node& n0 = *g0->nodes()[k];
    for (int i = 0; i < n0.num_inputs(); ++i) {
      if (!n0.inputs[i] || n0.inputs[i]->type != n0.outputs[0]->type) continue;
      std::unique_ptr<Graph> g = parse(text, seed);
      Node* n = g->nodes()[k].get();
      bool other_outputs_used = false;
      for (size_t o = 1; o < n->outputs.size(); ++o)
        if (n->outputs[o] && (!g->users(n->outputs[o]).empty() || g->is_graph_output(n->outputs[o])))
          other_outputs_used = true;
      if (other_outputs_used) continue;
      g->replace_all_uses(n->outputs[0], n->inputs[i]);
      g->remove_dead_code();
      out.push_back(graph_to_string(*g, print));
      break;
    }
  }
  return out;
}

// The smallest graph found that fails the same way.
std::string shrink(std::string text, uint64_t seed, Precision p, Outcome failure, bool compile_only, std::mutex& gpu) {
  for (bool progress = true; progress;) {
    progress = false;
    for (const std::string& s : smaller(text, seed)) {
      if (s.size() >= text.size()) continue;
      if (check(s, seed, p, compile_only, gpu, /*shrinking=*/true).outcome == failure) {
        text = s;
        progress = true;
        break;
      }
    }
  }
  return text;
}

struct Job {
  std::string name, text;
  uint64_t seed;
  Precision precision;
};

// A saved graph and its seed.
std::pair<std::string, uint64_t> read_regression(const std::string& path) {
  std::ifstream in(path);
  if (!in) user_error("cannot read '", path, "'");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const size_t at = text.find("# seed: ");
  if (at == std::string::npos) user_error(path, ": no '# seed: N' line");
  return {text, std::stoull(text.substr(at + 8))};
}

std::vector<Job> regression_jobs(const Options& opt) {
  std::vector<Job> jobs;
  DIR* d = opendir(opt.regressions.c_str());
  if (!d) user_error("--regressions ", opt.regressions, ": no such folder");
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".mono") files.push_back(n);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    const auto [text, seed] = read_regression(opt.regressions + "/" + f);
    for (Precision p : opt.precisions) jobs.push_back({f, text, seed, p});
  }
  return jobs;
}

int main_body(int argc, char** argv) {
  Options opt;
  Flags flags(argc, argv);
  std::string flag;
  while (flags.next(&flag)) {
    if (flag == "--count") {
      opt.count = std::max(0, flags.int_value(flag));
    } else if (flag == "--seed") {
      opt.seed = static_cast<uint64_t>(flags.int_value(flag));
    } else if (flag == "--dtype") {
      opt.precisions = test::precisions_flag(flags.value(flag));
    } else if (flag == "--compile-only") {
      opt.compile_only = true;
    } else if (flag == "--jobs") {
      opt.jobs = std::max(1, flags.int_value(flag));
    } else if (flag == "--save") {
      opt.save = flags.value(flag);
    } else if (flag == "--regressions") {
      opt.regressions = flags.value(flag);
    } else if (flag == "--print") {
      std::fputs(generate_graph(static_cast<uint64_t>(flags.int_value(flag))).c_str(), stdout);
      return kExitOk;
    } else if (flag == "--plan" || flag == "--cuda") {
      // A seed, or a saved graph (its seed in its '# seed: N' line).
      const std::string what = flags.value(flag);
      uint64_t seed;
      std::string text;
      if (!what.empty() && std::all_of(what.begin(), what.end(), ::isdigit)) {
        seed = std::stoull(what);
        text = generate_graph(seed);
      } else {
        std::tie(text, seed) = read_regression(what);
      }
      std::unique_ptr<Graph> g;
      const BuiltKernel built = build(text, seed, opt.precisions[0], random_inputs(*parse(text, seed), seed), false, &g);
      if (flag == "--plan") print_plan(std::cout, *g, built.plan);
      else std::cout << built.source;
      return kExitOk;
    } else {
      Flags::unknown(flag);
    }
  }
  std::string why;
  if (!opt.compile_only && !gpu_available(&why)) user_error("no GPU (", why, "): use --compile-only");
  std::vector<Job> jobs;
  if (!opt.regressions.empty()) {
    jobs = regression_jobs(opt);
  } else {
    for (int k = 0; k < opt.count; ++k)
      for (Precision p : opt.precisions) {
        const uint64_t seed = opt.seed + static_cast<uint64_t>(k);
        jobs.push_back({str_cat("seed ", seed), generate_graph(seed), seed, p});
      }
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<Check> results(jobs.size());
  std::vector<std::string> shrunk(jobs.size());
  std::mutex gpu, io;
  test::run_parallel(jobs.size(), opt.jobs, [&](size_t i) {
    const Job& j = jobs[i];
    results[i] = check(j.text, j.seed, j.precision, opt.compile_only, gpu);
    if (results[i].outcome == Outcome::kPass || results[i].outcome == Outcome::kInvalid) return;
    shrunk[i] = shrink(j.text, j.seed, j.precision, results[i].outcome, opt.compile_only, gpu);
    std::lock_guard<std::mutex> lock(io);
    std::printf("%s %s %s: %s\n", outcome_name(results[i].outcome), test::precision_name(j.precision), j.name.c_str(),
                results[i].detail.c_str());
    std::printf("  shrunk to:\n%s", shrunk[i].c_str());
    std::fflush(stdout);
  });
  std::map<Outcome, int> counts;
  for (size_t i = 0; i < jobs.size(); ++i) {
    ++counts[results[i].outcome];
    if (results[i].outcome == Outcome::kInvalid)
      std::printf("INVALID %s (a generator bug): %s\n", jobs[i].name.c_str(), results[i].detail.c_str());
    if (!opt.save.empty() && !shrunk[i].empty()) {
      const std::string path = str_cat(opt.save, "/seed_", jobs[i].seed, jobs[i].precision == Precision::kF16 ? "_fp16" : "",
                                       ".mono");
      std::ofstream(path) << "# difftest regression: " << outcome_name(results[i].outcome) << " "
                          << test::precision_name(jobs[i].precision) << ": " << results[i].detail
                          << "\n# seed: " << jobs[i].seed << "\n"
                          << shrunk[i];
      std::printf("saved %s\n", path.c_str());
    }
  }
  std::printf("difftest%s: %zu graphs, %d %s, %d mismatched, %d refused, %d compile errors, %d invalid (%.0f s)\n",
              opt.compile_only ? " (compile only)" : "", jobs.size(), counts[Outcome::kPass],
              opt.compile_only ? "compiled" : "passed", counts[Outcome::kMismatch], counts[Outcome::kRefused],
              counts[Outcome::kCompileError], counts[Outcome::kInvalid],
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return jobs.size() == static_cast<size_t>(counts[Outcome::kPass]) ? kExitOk : kExitMismatch;
}

}  // namespace
}  // namespace mono::difftest

int main(int argc, char** argv) {
  return mono::run_main("difftest", [&] { return mono::difftest::main_body(argc, argv); });
}
