// Tuned schedules make kernels NVRTC compiles: tiny-bert with mixed tiles of the tuning
// space's GEMM menu (split-K where K allows it) and ILP factors, in both default contexts.
// bench/tuned_artifacts.cc builds every variant of every tiny model as artifacts for a GPU run.
#include <gtest/gtest.h>

#include <map>

#include "compiler/codegen/cost_model.h"
#include "compiler/backend/build.h"
#include "compiler/driver/model.h"
#include "compiler/reference/inputs.h"
#include "compiler/tuning/schedule.h"
#include "compiler/tuning/space.h"

namespace mono::tuning {
namespace {

struct Loaded {
  std::unique_ptr<Graph> graph;
  PlanOptions base;  // precision and calibration, as mono-compile does
};

Loaded load(const std::string& name, Precision p) {
  Loaded l;
  l.graph = load_model(std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + name + "/model.onnx", ModelOptions{}).graph;
  l.base.settings.precision = p;
  calibrate(*l.graph, synthetic_inputs(*l.graph), &l.base);
  return l;
}

// Compiles for real (no cache): every group but the attention parts must take its schedule,
// and the kernel must fit the context's register cap.
BuiltKernel build(const Loaded& l, const Context& ctx, const std::map<std::string, Schedule>& schedules,
                  const std::string& label) {
  BuiltKernel b = build_kernel(*l.graph, tuned_options(l.base, ctx, schedules), label, NvrtcOptions{}, /*compile=*/true);
  for (const Group& grp : b.plan.groups) {
    if (!tunable(b.plan, grp)) continue;  // fixed tiles or no fragment of its own: never tuned
    EXPECT_TRUE(grp.tuned) << label << ": " << grp.nodes() << ": " << grp.override_rejected;
  }
  EXPECT_GT(b.compiled.cubin.size(), 1000u) << label;
  EXPECT_LE(b.compiled.usage.registers, b.plan.ctx.register_cap()) << label;
  std::printf("%-40s %s\n", label.c_str(), b.compiled.usage.str().c_str());
  return b;
}

TEST(TunedKernels, MixedTilesCompileInBothContexts) {
  const Loaded bert = load("tiny-bert-opset20", Precision::kF16);
  const std::vector<Context> cs = default_contexts();
  build(bert, cs[0], menu_schedules(*bert.graph, bert.base, cs[0], -1, true, 8), "tiny-bert fp16 mixed split ilp8 1x");
  BuiltKernel b =
      build(bert, cs[1], menu_schedules(*bert.graph, bert.base, cs[1], -1, false, 2), "tiny-bert fp16 mixed ilp2 2x");
  EXPECT_EQ(b.manifest.blocks_per_sm, 2);
  EXPECT_NE(b.source.find("__launch_bounds__(MONO_THREADS, 2)"), std::string::npos);
}

}  // namespace
}  // namespace mono::tuning
