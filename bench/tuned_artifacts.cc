// tuned_artifacts --out DIR [--models DIR]
// Writes every tuned variant of the tiny models as an artifact, for a GPU run that checks the
// tuned code paths against the models' test data: every tile of the tuning space's GEMM menu,
// split-K, ILP factors, both default contexts (the second on tiny-bert only). Each variant is
// DIR/<model>-<precision>-ctx<C>-tile<T>[-split]-ilp<I>; DIR/list.txt names each with its test
// data, one "ARTIFACT TEST_DATA" per line:
//   while read a t; do build/client/mono-run "DIR/$a" --gpu --test-data "$t"; done < DIR/list.txt
// Every variant is checked as it is built (each group takes its schedule, the cubin is real,
// the registers fit the cap); exit 1 if any is not.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "compiler/backend/artifact_writer.h"
#include "compiler/backend/verify.h"
#include "compiler/driver/model.h"
#include "compiler/reference/inputs.h"
#include "compiler/support/error.h"
#include "compiler/support/flags.h"
#include "compiler/tuning/schedule.h"
#include "compiler/tuning/space.h"

namespace mono {
namespace {

const char kUsage[] =
    "usage: tuned_artifacts --out DIR [--models DIR]\n"
    "  --out DIR      where the artifacts and list.txt go (created)\n"
    "  --models DIR   the tiny models (default: tests/data/models of the source tree)\n";

struct Model {
  const char* name;
  Precision precision;
};
constexpr Model kModels[] = {{"tiny-bert-opset20", Precision::kF16},
                             {"tiny-gpt2-opset20", Precision::kF16},
                             {"tiny-vit-opset20", Precision::kF16},
                             {"tiny-resnet-opset17", Precision::kF16},
                             {"tiny-bert-opset17", Precision::kF32}};

// What is wrong with a variant as built, or "".
std::string problem(const BuiltKernel& b) {
  for (const Group& grp : b.plan.groups)
    if (!grp.runs_fused() && !grp.tuned)  // attention parts keep fixed tiles
      return str_cat(grp.nodes(), ": schedule not taken: ", grp.override_rejected);
  if (b.compiled.cubin.size() <= 1000) return "no cubin";
  if (b.compiled.usage.registers > b.plan.ctx.register_cap())
    return str_cat(b.compiled.usage.registers, " registers over the cap of ", b.plan.ctx.register_cap());
  return "";
}

int tuned_artifacts_main(int argc, char** argv) {
  std::string out, models = std::string(MONO_SOURCE_DIR) + "/tests/data/models";
  Flags flags(argc, argv);
  std::string flag;
  while (flags.next(&flag)) {
    if (flag == "--out") out = flags.value(flag);
    else if (flag == "--models") models = flags.value(flag);
    else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else Flags::unknown(flag);
  }
  if (out.empty()) user_error("--out DIR is required (see --help)");
  mkdir(out.c_str(), 0755);
  std::ofstream list(out + "/list.txt");
  if (!list) user_error("cannot write '", out, "/list.txt'");
  NvrtcOptions nvrtc;
  nvrtc.cache_dir = default_cache_dir();
  const std::vector<tuning::Context> contexts = tuning::default_contexts();
  int written = 0, failed = 0;
  for (const Model& m : kModels) {
    const std::string dir = models + "/" + m.name;
    const LoadedModel loaded = load_model(dir + "/model.onnx", ModelOptions{});
    const Graph& g = *loaded.graph;
    PlanOptions base;  // precision and calibration, as mono-compile does
    base.settings.precision = m.precision;
    calibrate(g, synthetic_inputs(g), &base);
    const bool f16 = m.precision == Precision::kF16;
    const int tiles = static_cast<int>(tuning::tuning_gemm_tiles(f16, KernelContext{}).size());
    for (int c = 0; c < 2; ++c) {
      if (c == 1 && m.name != std::string("tiny-bert-opset20")) continue;  // the 2-blocks context on one model
      for (int t = 0; t < tiles; ++t) {
        const bool split = c == 0;
        const int ilp = c == 0 ? 8 : 2;
        const std::string name =
            str_cat(m.name, f16 ? "-fp16" : "-fp32", "-ctx", c, "-tile", t, split ? "-split" : "", "-ilp", ilp);
        const auto schedules = tuning::menu_schedules(g, base, contexts[c], t, split, ilp);
        const BuiltKernel b =
            build_kernel(g, tuning::tuned_options(base, contexts[c], schedules), name, nvrtc, /*compile=*/true);
        const std::string why = problem(b);
        std::printf("%-48s %s%s\n", name.c_str(), b.compiled.usage.str().c_str(),
                    why.empty() ? "" : ("  FAIL: " + why).c_str());
        std::fflush(stdout);  // progress: NVRTC takes seconds per variant
        if (!why.empty()) {
          ++failed;
          continue;
        }
        write_artifact(out + "/" + name, g, b,
                       unverified_record("a bench/tuned_artifacts variant: gpu_bench.sh checks it with the test data"));
        list << name << " " << dir << "/test_data_set_0\n";
        ++written;
      }
    }
  }
  std::printf("wrote %d artifacts and %s/list.txt%s\n", written, out.c_str(),
              failed ? str_cat("; ", failed, " variants FAILED").c_str() : "");
  return failed ? 1 : kExitOk;
}

}  // namespace
}  // namespace mono

int main(int argc, char** argv) {
  return mono::run_main("tuned_artifacts", [&] { return mono::tuned_artifacts_main(argc, argv); });
}
