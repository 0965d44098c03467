// Tuned schedules make kernels NVRTC compiles: tiny models with every tile of the tuning
// space's GEMM menu (split-K where K allows it), ILP factors, and both default contexts.
//
// Without a GPU this compiles two mixed variants. With MONO_TUNED_ARTIFACTS=DIR set it
// compiles every variant and writes each as an artifact DIR/<model>-<precision>-<variant>
// (with its test data's folder named in DIR/list.txt), for a GPU run:
//   for each line "ARTIFACT TEST_DATA" of list.txt: mono-run ARTIFACT --gpu --test-data TEST_DATA
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "client/cli.h"
#include "compiler/runtime/artifact.h"
#include "compiler/support/error.h"
#include "compiler/tuning/schedule.h"
#include "compiler/tuning/signature.h"
#include "compiler/tuning/space.h"

namespace mono::tuning {
namespace {

std::string model_dir(const std::string& name) { return std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + name; }

struct Loaded {
  std::unique_ptr<Graph> graph;
  PlanOptions base;  // precision and calibration, as mono-compile does
};

Loaded load(const std::string& name, Precision p) {
  Loaded l;
  l.graph = cli::load_model(model_dir(name) + "/model.onnx", cli::ModelOptions{});
  l.base.precision = p;
  if (p == Precision::kF16) cli::calibrate(*l.graph, cli::synthetic_inputs(*l.graph), &l.base);
  return l;
}

// Schedules for every group of the plan in `ctx`: GEMM signature i gets the i-th tile of the
// menu (or `tile` for all when >= 0) with its largest split-K factor when `split`; pointwise
// groups get `ilp`.
std::map<std::string, Schedule> variant(const Graph& g, const PlanOptions& base, const Context& ctx, int tile, bool split,
                                        int ilp) {
  PlanOptions o = base;
  use_context(&o, ctx);
  enable_signatures(&o);
  const KernelPlan plan = plan_kernel(g, o);
  std::map<std::string, Schedule> out;
  int next = 0;
  for (const Group& grp : plan.groups) {
    if (out.count(grp.signature) || grp.in_attention()) continue;
    Schedule s = grp.schedule();
    if (grp.kind == GroupKind::kGemm || grp.kind == GroupKind::kConvGemm) {
      const std::vector<GemmSchedule> menu = tuning_gemm_tiles(grp.f16, plan.ctx);
      s.gemm = menu[(tile >= 0 ? tile : next++) % menu.size()];
      if (split) s.gemm.splits = split_k_factors(gemm_problem(grp).k, s.gemm.bk).back();
    } else if (grp.kind == GroupKind::kPointwise) {
      s.pointwise.ilp = ilp;
    }
    out[grp.signature] = s;
  }
  return out;
}

BuiltKernel build(const Loaded& l, const Context& ctx, const std::map<std::string, Schedule>& schedules,
                  const std::string& label, bool cache) {
  const PlanOptions o = tuned_options(l.base, ctx, schedules);
  NvrtcOptions nvrtc;  // without the cache, NVRTC compiles for real
  if (cache) nvrtc.cache_dir = default_cache_dir();
  BuiltKernel b = build_kernel(*l.graph, o, label, nvrtc, /*compile=*/true);
  for (const Group& grp : b.plan.groups) {
    if (grp.in_attention()) continue;  // fixed tiles, never tuned
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
  build(bert, cs[0], variant(*bert.graph, bert.base, cs[0], -1, true, 8), "tiny-bert fp16 mixed split ilp8 1x", false);
  BuiltKernel b = build(bert, cs[1], variant(*bert.graph, bert.base, cs[1], -1, false, 2), "tiny-bert fp16 mixed ilp2 2x", false);
  EXPECT_EQ(b.manifest.blocks_per_sm, 2);
  EXPECT_NE(b.source.find("__launch_bounds__(MONO_THREADS, 2)"), std::string::npos);
}

TEST(TunedKernels, WriteArtifactsForAGpuRun) {
  const char* dir = std::getenv("MONO_TUNED_ARTIFACTS");
  if (!dir || !*dir) GTEST_SKIP() << "set MONO_TUNED_ARTIFACTS=DIR to write every variant";
  mkdir(dir, 0755);
  std::ofstream list(std::string(dir) + "/list.txt");
  const std::vector<Context> cs = default_contexts();
  struct Model {
    const char* name;
    Precision precision;
  };
  for (const Model& m : {Model{"tiny-bert-opset20", Precision::kF16}, Model{"tiny-gpt2-opset20", Precision::kF16},
                         Model{"tiny-vit-opset20", Precision::kF16}, Model{"tiny-resnet-opset17", Precision::kF16},
                         Model{"tiny-bert-opset17", Precision::kF32}}) {
    const Loaded l = load(m.name, m.precision);
    const int tiles = static_cast<int>(tuning_gemm_tiles(m.precision == Precision::kF16, KernelContext{}).size());
    for (int c = 0; c < 2; ++c) {
      if (c == 1 && m.name != std::string("tiny-bert-opset20")) continue;  // the 2-blocks context on one model
      for (int t = 0; t < tiles; ++t) {
        const bool split = c == 0;
        const int ilp = c == 0 ? 8 : 2;
        const std::string name = str_cat(m.name, m.precision == Precision::kF16 ? "-fp16" : "-fp32", "-ctx", c, "-tile", t,
                                         split ? "-split" : "", "-ilp", ilp);
        BuiltKernel b = build(l, cs[c], variant(*l.graph, l.base, cs[c], t, split, ilp), name, true);
        write_artifact(std::string(dir) + "/" + name, *l.graph, b);
        list << name << " " << model_dir(m.name) << "/test_data_set_0\n";
      }
    }
  }
}

}  // namespace
}  // namespace mono::tuning
