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

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/plan.h"
#include "compiler/passes/passes.h"
#include "compiler/tuning/fragment.h"

namespace mono {
namespace {

struct ZooPlan {
  int attention = 0, flash = 0, gathers = 0;
};

// A zoo model's plan with the fragment it points into (its graph must outlive the plan).
struct LoadedPlan {
  tuning::LoadedFragment fragment;
  KernelPlan plan;
};

LoadedPlan load_zoo_plan(const std::string& name) {
  std::ifstream in(std::string(MONO_SOURCE_DIR) + "/tests/data/zoo_fragments/" + name + ".json");
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  tuning::LoadedFragment f = tuning::load_fragment(nlohmann::json::parse(text.str()), 1);
  simplify(*f.graph);
  LoadedPlan l{std::move(f), {}};
  l.plan = plan_kernel(*l.fragment.graph, l.fragment.options);
  return l;
}

ZooPlan plan_zoo(const std::string& name) {
  const LoadedPlan l = load_zoo_plan(name);
  const KernelPlan& plan = l.plan;
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

// ViT's 197-row GEMMs (4 row tiles of 64) on wgmma: 64x128 tiles left a quarter of the SMs idle
// (96 items) and 64x64 took two rounds (192); 64x96 fills one round (128 items). Measured on the
// H100 (bench/RESULTS.md session 23, same call): vit-base 545.4 -> 517.1 us, its FFN1 stage
// 9.56 -> 7.89 us. The Q, K and V parts of a stage keep one common schedule (no 3 % better one
// against the other two).
TEST(ZooPlans, VitB16WideGemmsTakeTheNinetySixWideWgmmaTile) {
  const LoadedPlan l = load_zoo_plan("vit-b-16");
  const KernelPlan& plan = l.plan;
  int wide = 0;
  for (const Stage& st : plan.stages) {
    const GemmSchedule* first = nullptr;
    for (int gid : st.groups) {
      const Group& g = plan.groups[gid];
      if (g.kind != GroupKind::kGemm || g.runs_fused()) continue;
      const GemmProblem p = gemm_problem(g);
      if (p.m == 197 && (p.n == 3072 || p.k == 3072)) {
        EXPECT_TRUE(g.gemm.wgmma) << g.anchor->name;
        EXPECT_EQ(g.gemm.bm, 64) << g.anchor->name;
        EXPECT_EQ(g.gemm.bn, 96) << g.anchor->name;
        EXPECT_EQ(g.gemm.warps_n, 2) << g.anchor->name;
        EXPECT_EQ(g.items, 128) << g.anchor->name;
        ++wide;
      }
      if (st.groups.size() == 3) {  // Q, K and V
        if (!first) first = &g.gemm;
        EXPECT_EQ(g.gemm, *first) << g.anchor->name;
      }
    }
  }
  EXPECT_EQ(wide, 24) << "FFN1 and FFN2 of 12 layers";
}

// BERT's and GPT-2's 128-row GEMMs stay on 64x64 wgmma tiles (Q/K/V 3 x 24 items, FFN1 96,
// FFN2 96 with split-K 4) and the out-projection on 32x32 mma.sync (96 items): the 96-wide tile
// and the alternatives measured against them were slower (H100, bench/RESULTS.md session 23,
// same calls: 64x96 split-K 2 for Q/K/V and FFN1 gpt2 416.5 -> 447.8 us; FFN2 64x96 split-K 8
// 428.1; wgmma out-projections 64x32 436.1).
TEST(ZooPlans, BertAndGpt2KeepTheirMeasuredTiles) {
  for (const char* name : {"bert", "gpt2"}) {
    const LoadedPlan l = load_zoo_plan(name);
    int qkv = 0, ffn1 = 0, ffn2 = 0, out = 0;
    for (const Stage& st : l.plan.stages)
      for (int gid : st.groups) {
        const Group& g = l.plan.groups[gid];
        if (g.kind != GroupKind::kGemm || g.runs_fused()) continue;
        const GemmProblem p = gemm_problem(g);
        if (p.m != 128) continue;
        const GemmSchedule& s = g.gemm;
        if (p.n == 768 && p.k == 768 && st.groups.size() == 3) {
          qkv += s.wgmma && s.bm == 64 && s.bn == 64 && s.splits == 1 && g.items == 24;
        } else if (p.n == 768 && p.k == 768) {
          out += !s.wgmma && s.bm == 32 && s.bn == 32 && s.splits == 1 && g.items == 96;
        } else if (p.n == 3072) {
          ffn1 += s.wgmma && s.bm == 64 && s.bn == 64 && s.splits == 1 && g.items == 96;
        } else if (p.k == 3072) {
          ffn2 += s.wgmma && s.bm == 64 && s.bn == 64 && s.splits == 4 && g.items == 96;
        }
      }
    EXPECT_EQ(qkv, 36) << name;
    EXPECT_EQ(out, 12) << name;
    EXPECT_EQ(ffn1, 12) << name;
    EXPECT_EQ(ffn2, 12) << name;
  }
}

// albert-xxlarge (the zoo's albert: 4096 wide, FFN 16384, 128 tokens): its out-projection (K
// 4096, split-K 4), FFN1 (K 4096) and FFN2 (K 16384, split-K 4) are alone in their stages and
// take the 128x128 wgmma tile (cost_model.h wide_wgmma_tiles), each weight byte going to one
// block instead of one per 64 rows; its Q/K/V, three GEMMs in one stage, keep 64x96. H200, same
// call (bench/RESULTS.md session 29, run241): albert 2416.3 -> 2241.0 us. whisper-encoder (K 384
// and 1536) keeps its tiles: offered there, the 128x128 tile made its Q/K/V stage 8.7 -> 12.3 us
// (run240).
TEST(ZooPlans, AlbertsLongKGemmsTakeThe128x128Tile) {
  const LoadedPlan l = load_zoo_plan("albert");
  int wide = 0, qkv = 0;
  for (const Stage& st : l.plan.stages)
    for (int gid : st.groups) {
      const Group& g = l.plan.groups[gid];
      if (g.kind != GroupKind::kGemm || g.runs_fused()) continue;
      const GemmProblem p = gemm_problem(g);
      if (p.m != 128 || p.k < kWideTileMinK) continue;
      const GemmSchedule& s = g.gemm;
      const bool big = s.wgmma && s.bm == 128 && s.bn == 128 && s.warps_m == 8 && s.warps_n == 1;
      if (st.groups.size() == 1) {
        EXPECT_TRUE(big) << g.anchor->name << ": " << s.str();
        EXPECT_EQ(g.items, 128) << g.anchor->name;
        wide += big;
      } else {
        EXPECT_FALSE(big) << g.anchor->name << " shares its stage";
        qkv += s.wgmma && s.bm == 64 && s.bn == 96;
      }
    }
  EXPECT_EQ(wide, 36) << "out-projection, FFN1 and FFN2 of 12 layers";
  EXPECT_EQ(qkv, 36) << "Q, K and V of 12 layers";
}

// The other fragments keep the menu's tiles: whisper-encoder's and swin-t's K is short (384, 96,
// 1536), and bert's, gpt2's and vit-b-16's K-3072 FFN2 is offered the tile but the cost model
// keeps its measured one (split-K 4 on 64-row tiles).
TEST(ZooPlans, OtherZooFragmentsKeepTheMenusTiles) {
  for (const char* name : {"whisper-encoder", "bert", "gpt2", "vit-b-16", "swin-t"}) {
    const LoadedPlan l = load_zoo_plan(name);
    for (const Group& g : l.plan.groups)
      if (g.kind == GroupKind::kGemm && !g.runs_fused())
        EXPECT_FALSE(g.gemm.bm == 128 && g.gemm.bn == 128 && g.gemm.wgmma) << name << " " << g.anchor->name;
  }
}

// Tall row tiles (96 or 128 rows on mma.sync) by default only for a GEMM alone in its stage whose
// menu tile would not run on wgmma, and not for 1-D convolutions (planner/schedules.cc
// choose_gemm; H200, bench/RESULTS.md session 31, run248: resnet50 320.8 -> 315.6 us, swin-t
// and whisper-encoder unchanged). resnet50's stem and its three 56x56 1x1 convolutions that end
// a bottleneck block (N 256) take them: one round of the grid instead of two. (Tiles fitted to
// output channels also have 96 or 128 rows, but widths the tall tiles lack: swin-t's 96x96.)
bool tall(const Group& g) {
  const GemmSchedule& t = g.gemm;
  return (g.kind == GroupKind::kGemm || g.kind == GroupKind::kConvGemm) && !g.runs_fused() && t.bm >= 96 && !t.wgmma &&
         (t.bn == 32 || t.bn == 64 || t.bn == 128);
}

TEST(ZooPlans, Resnet50sLoneGemmsTakeTallRowTiles) {
  const LoadedPlan l = load_zoo_plan("resnet50");
  int stems = 0, wide_1x1 = 0, others = 0;
  for (const Group& g : l.plan.groups) {
    if (!tall(g)) continue;
    const std::vector<int64_t>& out = l.plan.root(g.output)->type.shape;
    if (g.kind == GroupKind::kConvGemm && out == std::vector<int64_t>{1, 112, 112, 64}) ++stems;
    else if (g.kind == GroupKind::kGemm && out == std::vector<int64_t>{1, 56, 56, 256}) ++wide_1x1;
    else ++others;
    EXPECT_EQ(g.gemm.bm, 96) << g.anchor->name;
  }
  EXPECT_EQ(stems, 1);
  EXPECT_EQ(wide_1x1, 3);
  EXPECT_EQ(others, 0);
}

TEST(ZooPlans, TransformersAndOneDConvolutionsTakeNoTallRowTiles) {
  for (const char* name : {"whisper-encoder", "swin-t", "bert", "gpt2", "vit-b-16", "albert"}) {
    const LoadedPlan l = load_zoo_plan(name);
    for (const Group& g : l.plan.groups) EXPECT_FALSE(tall(g)) << name << " " << g.anchor->name;
  }
}

// A pointwise group takes as many elements a thread (up to eight) as fit it in one round of the
// grid, four beyond (planner/cost_model.cc default_ilp; H200, bench/RESULTS.md session 31,
// run249-run250: swin-t 591.6 -> 583.2 us, vit-b-16 512.4 -> 497.4): none runs in two rounds.
// vit-b-16's patch gather (150528 elements) was 147 items of 4 a thread, now 118 of 5.
TEST(ZooPlans, PointwiseGroupsRunInOneRoundOfTheGridWhereEightElementsAThreadFit) {
  for (const char* name : {"vit-b-16", "swin-t", "whisper-encoder", "bert", "gpt2", "resnet50", "albert"}) {
    const LoadedPlan l = load_zoo_plan(name);
    const int64_t grid = l.plan.ctx.grid();
    for (const Group& g : l.plan.groups)
      if (g.kind == GroupKind::kPointwise && g.items > 0)
        EXPECT_FALSE(g.items > grid && g.items <= 2 * grid) << name << " " << g.anchor->name << ": " << g.items << " items";
    if (std::string(name) != "vit-b-16") continue;
    const Group& gather = l.plan.groups[0];
    ASSERT_EQ(gather.anchor->op, OpKind::kTranspose) << gather.anchor->name;
    EXPECT_EQ(gather.pointwise.ilp, 5);
    EXPECT_EQ(gather.items, 118);
  }
}

// Swin's shifted windows (a Pad, two Slices and a Concat per rolled axis) and patch merging (four
// strided Slices) are computed by the groups that read them (Group::at_read): 161 stages became
// 117, H200 same call 681.3 -> 598.9 us (bench/RESULTS.md, session 27, run231).
TEST(ZooPlans, SwinTComputesItsRollsAndPatchMergingWhereRead) {
  const LoadedPlan l = load_zoo_plan("swin-t");
  int at_read = 0;
  for (const Group& g : l.plan.groups) at_read += g.at_read;
  EXPECT_EQ(l.plan.stages.size(), 117u);
  EXPECT_EQ(at_read, 76);
}

TEST(ZooPlans, SwinTSplitsItsProjectionsAndRunsMostlyFlash) {
  const ZooPlan z = plan_zoo("swin-t");
  EXPECT_EQ(z.attention, 12);
  EXPECT_GE(z.flash, 10);
  EXPECT_EQ(z.gathers, 1) << "the pooled features' Gather only (37 with the 36 Q/K/V selects)";
}

}  // namespace
}  // namespace mono
