// build_time FRAGMENT.json... [--cache DIR] [--source DIR] [--plan [--simplify]] [--config FILE]
// How long a whole kernel takes to build (issue 21, point 4): for each whole-model fragment
// (mono-compile MODEL --emit fragment), the kernel is planned and emitted, then compiled twice
// through the cubin cache: once with the cache empty (cold) and once with it full (cached).
// Prints one line per fragment: groups, group functions out of line, and each step's seconds.
// --plan prints each fragment's kernel plan instead, without compiling: a model exported on the
// GPU machine can be planned here from its fragment (no weights needed; made-up ones are filled
// in). --simplify first runs the simplification passes again on the fragment's IR, which was taken
// after them: to see what a pass changed since would do to the model. --config FILE builds every
// fragment in one configuration of a whole-kernel job (an element of its payload's "configs": a
// context and the tuned schedules by signature, as the tuner database holds them): to see what
// the tuner changed in a model's plan.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/backend/build.h"
#include "compiler/codegen/plan.h"
#include "compiler/passes/passes.h"
#include "compiler/support/elapsed.h"
#include "compiler/support/error.h"
#include "compiler/support/flags.h"
#include "compiler/tuning/fragment.h"
#include "compiler/tuning/schedule.h"

namespace mono {
namespace {

const char kUsage[] =
    "usage: build_time FRAGMENT.json... [--cache DIR] [--source DIR] [--plan [--simplify]] [--config FILE]\n"
    "  --cache DIR   the cubin cache to use, emptied first (default: a fresh folder under /tmp)\n"
    "  --source DIR  also write each kernel's CUDA source (NAME.cu) and NVRTC/ptxas log (NAME.log) there\n"
    "  --plan        print each fragment's kernel plan (mono-compile --emit plan's), compile nothing\n"
    "  --simplify    with --plan, run the simplification passes on the fragment's IR first (approximate:\n"
    "                the fragment's calibrated ranges stay keyed by the values from before the passes)\n"
    "  --config FILE one configuration of a whole-kernel job ({\"context\": ..., \"schedules\": {SIGNATURE:\n"
    "                SCHEDULE}}, from its payload's \"configs\"): build each fragment with it\n";

int build_time_main(int argc, char** argv) {
  Flags args(argc, argv);
  std::vector<std::string> fragments;
  std::string cache = "/tmp/mono-build-time-cache";
  std::string source_dir, config_path;
  std::string flag;
  bool plan_only = false, resimplify = false;
  while (args.next(&flag)) {
    if (flag == "--cache") cache = args.value(flag);
    else if (flag == "--plan") plan_only = true;
    else if (flag == "--simplify") resimplify = true;
    else if (flag == "--source") source_dir = args.value(flag);
    else if (flag == "--config") config_path = args.value(flag);
    else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else if (!flag.empty() && flag[0] == '-') {
      user_error("unknown argument '", flag, "'");
    } else {
      fragments.push_back(flag);
    }
  }
  if (fragments.empty()) user_error("give at least one fragment (mono-compile MODEL --emit fragment)");
  if (resimplify && !plan_only) user_error("--simplify goes with --plan");
  // The configuration's context and schedules (tuning/schedule.h parses and checks them).
  std::optional<tuning::KernelConfig> config;
  if (!config_path.empty()) {
    std::ifstream in(config_path);
    if (!in) user_error("cannot read '", config_path, "'");
    config = tuning::kernel_config_from_json(nlohmann::json::parse(in));
  }
  if (!plan_only)
    std::printf("%-28s %7s %9s %9s %9s %9s  %s\n", "fragment", "groups", "functions", "plan+emit", "cold s", "cached s",
              "kernel");
  for (const std::string& path : fragments) {
    std::ifstream in(path);
    if (!in) user_error("cannot read '", path, "'");
    std::stringstream text;
    text << in.rdbuf();
    tuning::LoadedFragment f = tuning::load_fragment(nlohmann::json::parse(text.str()), 1);
    if (resimplify) simplify(*f.graph, SimplifyOptions{});
    if (config) {
      tuning::use_context(&f.options, config->context);
      tuning::use_schedules(&f.options, config->schedules);
    }
    std::filesystem::remove_all(cache);
    NvrtcOptions nvrtc;
    nvrtc.cache_dir = cache;
    auto t0 = std::chrono::steady_clock::now();
    BuiltKernel built = build_kernel(*f.graph, f.options, "build-time", nvrtc, /*compile=*/false);
    const double front = seconds_since(t0);
    if (plan_only) {
      print_plan(std::cout, *f.graph, built.plan);
      continue;
    }
    // The source first (a failing compile is when it is wanted most), the log after; named
    // after the fragment, with its position when two fragments share a name.
    std::string stem;
    if (!source_dir.empty()) {
      std::filesystem::create_directories(source_dir);
      stem = (std::filesystem::path(source_dir) / std::filesystem::path(path).stem()).string();
      if (std::filesystem::exists(stem + ".cu")) stem += "-" + std::to_string(&path - &fragments[0]);
      std::ofstream(stem + ".cu") << built.source;
    }
    t0 = std::chrono::steady_clock::now();
    built.compiled = compile_cuda(built.source, built.manifest.kernel, nvrtc);
    const double cold = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const CompiledKernel again = compile_cuda(built.source, built.manifest.kernel, nvrtc);
    const double cached = seconds_since(t0);
    if (!again.from_cache || again.cubin != built.compiled.cubin) user_error(path, ": the second build did not come from the cache");
    size_t functions = 0;  // group functions out of line
    for (size_t at = built.source.find("__noinline__ void g"); at != std::string::npos;
         at = built.source.find("__noinline__ void g", at + 1))
      ++functions;
    if (!stem.empty()) std::ofstream(stem + ".log") << built.compiled.log;
    std::printf("%-28s %7zu %9zu %9.2f %9.2f %9.2f  %s\n", std::filesystem::path(path).stem().c_str(),
                built.plan.groups.size(), functions, front, cold, cached, built.compiled.usage.str().c_str());
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace
}  // namespace mono

int main(int argc, char** argv) {
  return mono::run_main("build_time", [&] { return mono::build_time_main(argc, argv); });
}
