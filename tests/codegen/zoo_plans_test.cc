// Plans of full-size zoo models from their tuning fragments (tests/data/zoo_fragments: exported
// on the GPU machine, the IR without float weights), with the simplification passes run again
// as build_time --plan --simplify does: the structure the H100 measurements of session 17 rest on.
// torchvision's ViT and Swin select Q, K and V from one projection with Gathers
// (nn.MultiheadAttention); split into one GEMM a part (split_gemm select_parts), K stored swapped
// (swap_b_operands), the attention runs flash: vit-b-16 862.0 -> 695.8 us, swin-t 827.1 -> 711.1
// (bench/RESULTS.md, session 17).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "compiler/codegen/plan.h"
#include "compiler/passes/passes.h"
#include "compiler/tuning/fragment.h"

namespace mono {
namespace {

struct ZooPlan {
  int attention = 0, flash = 0, gathers = 0;
};

ZooPlan plan_zoo(const std::string& name) {
  std::ifstream in(std::string(MONO_SOURCE_DIR) + "/tests/data/zoo_fragments/" + name + ".json");
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  tuning::LoadedFragment f = tuning::load_fragment(nlohmann::json::parse(text.str()), 1);
  simplify(*f.graph);
  const KernelPlan plan = plan_kernel(*f.graph, f.options);
  ZooPlan z;
  for (const Group& g : plan.groups) {
    z.attention += !g.fused.empty();
    z.flash += g.flash;
    z.gathers += g.fused_into < 0 && g.anchor->op == OpKind::kGather;
  }
  return z;
}

TEST(ZooPlans, VitB16SplitsItsProjectionsAndRunsFlash) {
  const ZooPlan z = plan_zoo("vit-b-16");
  EXPECT_EQ(z.attention, 12);
  EXPECT_EQ(z.flash, 12);
  EXPECT_EQ(z.gathers, 1) << "the class token's select only (37 with the 36 Q/K/V selects)";
}

TEST(ZooPlans, SwinTSplitsItsProjectionsAndRunsMostlyFlash) {
  const ZooPlan z = plan_zoo("swin-t");
  EXPECT_EQ(z.attention, 12);
  EXPECT_GE(z.flash, 10);
  EXPECT_EQ(z.gathers, 1) << "the pooled features' Gather only (37 with the 36 Q/K/V selects)";
}

}  // namespace
}  // namespace mono
