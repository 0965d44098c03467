// The compiler side of tuning: group signatures, schedules and contexts as JSON, tuned
// schedules in the planner (and their validation), the tuning space and its pruning.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/cuda_emitter.h"
#include "compiler/codegen/support.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
#include "compiler/support/error.h"
#include "compiler/tuning/schedule.h"
#include "compiler/tuning/signature.h"
#include "compiler/tuning/space.h"

namespace mono::tuning {
namespace {

std::unique_ptr<Graph> load_model(const std::string& name) {
  LoadResult loaded = load_onnx(std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + name + "/model.onnx");
  simplify(*loaded.graph);
  return std::move(loaded.graph);
}

PlanOptions options(Precision p) {
  PlanOptions o;
  o.settings.precision = p;
  enable_signatures(&o);
  return o;
}

bool is_gemm(const Group& g) { return g.kind == GroupKind::kGemm || g.kind == GroupKind::kConvGemm; }

// A small hand-built graph: y = Transpose(Add(MatMul(x, W), b)) [* s], with a choice of
// shapes, names and constant values.
struct MlpSpec {
  int64_t m = 16, k = 64, n = 64;
  float weight = 0.5f;
  std::string prefix = "a";
  std::vector<int64_t> perm = {0, 2, 1};
  bool weight_constant = true;
};

std::unique_ptr<Graph> make_mlp(const MlpSpec& s) {
  auto g = std::make_unique<Graph>();
  g->name = s.prefix + "_graph";
  g->opset = 17;
  Value* x = g->add_value(s.prefix + "_x", TensorType{DType::kF32, {1, s.m, s.k}});
  g->inputs.push_back(x);
  Value* w;
  if (s.weight_constant) {
    w = g->add_constant(s.prefix + "_w", Tensor::from_floats({s.k, s.n}, std::vector<float>(s.k * s.n, s.weight)));
  } else {
    w = g->add_value(s.prefix + "_w", TensorType{DType::kF32, {s.k, s.n}});
    g->inputs.push_back(w);
  }
  Value* b = g->add_constant(s.prefix + "_b", Tensor::from_floats({s.n}, std::vector<float>(s.n, s.weight * 2)));
  Node* mm = g->add_node(OpKind::kMatMul, s.prefix + "_mm", {x, w}, {s.prefix + "_y0"}, 17);
  Node* add = g->add_node(OpKind::kAdd, s.prefix + "_add", {b, mm->outputs[0]}, {s.prefix + "_y1"}, 17);
  Node* tr = g->add_node(OpKind::kTranspose, s.prefix + "_tr", {add->outputs[0]}, {s.prefix + "_y2"}, 17);
  tr->attrs["perm"] = s.perm;
  g->outputs.push_back(tr->outputs[0]);
  infer_shapes(*g);
  return g;
}

std::string mlp_signature(const MlpSpec& s, Precision p = Precision::kF16) {
  auto g = make_mlp(s);
  KernelPlan plan = plan_kernel(*g, options(p));
  EXPECT_EQ(plan.groups.size(), 1u);
  return plan.groups.at(0).signature;
}

// ---- signatures ---------------------------------------------------------------------------

TEST(Signature, RepeatedLayersOfTinyBertShareSignatures) {
  auto g = load_model("tiny-bert-opset20");
  for (Precision p : {Precision::kF32, Precision::kF16}) {
    KernelPlan plan = plan_kernel(*g, options(p));
    std::vector<const Group*> gemms;
    for (const Group& grp : plan.groups)
      if (is_gemm(grp)) gemms.push_back(&grp);
    // Two layers: the i-th GEMM group of layer 0 has its twin at i + half in layer 1.
    ASSERT_EQ(gemms.size() % 2, 0u);
    ASSERT_GE(gemms.size(), 8u);
    const size_t half = gemms.size() / 2;
    std::set<std::string> layer0;
    for (size_t i = 0; i < half; ++i) {
      EXPECT_EQ(gemms[i]->signature, gemms[i + half]->signature)
          << gemms[i]->nodes() << " vs " << gemms[i + half]->nodes();
      EXPECT_NE(gemms[i]->signature, "");
      EXPECT_EQ(gemms[i]->signature.size(), 16u);
      EXPECT_EQ(gemms[i]->signature.find_first_not_of("0123456789abcdef"), std::string::npos);
      layer0.insert(gemms[i]->signature);
    }
    // Inside a layer the GEMMs differ (Q and K differ by their Transpose perm).
    EXPECT_EQ(layer0.size(), half);
    // The hash is the hash of the text; the text names no node or value.
    const GroupSignature sig = group_signature(plan, *gemms[0]);
    EXPECT_EQ(sig.hash, gemms[0]->signature);
    EXPECT_EQ(sig.hash, signature_hash(sig.text));
    EXPECT_NE(sig.text.find("anchor MatMul"), std::string::npos) << sig.text;
    EXPECT_NE(sig.text.find(str_cat("v", kSignatureVersion)), std::string::npos) << sig.text;
    EXPECT_EQ(sig.text.find(gemms[0]->anchor->name), std::string::npos) << sig.text;
    EXPECT_EQ(sig.text.find(gemms[0]->anchor->inputs[1]->name), std::string::npos) << sig.text;
  }
}

TEST(Signature, Opset17And20ExportsOfTinyBertAgree) {
  auto g17 = load_model("tiny-bert-opset17");
  auto g20 = load_model("tiny-bert-opset20");
  KernelPlan p17 = plan_kernel(*g17, options(Precision::kF16));
  KernelPlan p20 = plan_kernel(*g20, options(Precision::kF16));
  ASSERT_EQ(p17.groups.size(), p20.groups.size());
  for (size_t i = 0; i < p17.groups.size(); ++i)
    EXPECT_EQ(p17.groups[i].signature, p20.groups[i].signature)
        << "group " << i << ":\n" << group_signature_text(p17, p17.groups[i]) << "vs\n"
        << group_signature_text(p20, p20.groups[i]);
}

TEST(Signature, CoversStructureNotNamesOrConstantValues) {
  MlpSpec base;
  const std::string s = mlp_signature(base);
  // Names and weight values do not matter.
  MlpSpec renamed = base;
  renamed.prefix = "other";
  EXPECT_EQ(mlp_signature(renamed), s);
  MlpSpec reweighted = base;
  reweighted.weight = -3.25f;
  EXPECT_EQ(mlp_signature(reweighted), s);
  // Shapes, perms, dtypes and constness do.
  MlpSpec taller = base;
  taller.m = 32;
  EXPECT_NE(mlp_signature(taller), s);
  MlpSpec wider = base;
  wider.n = 128;
  EXPECT_NE(mlp_signature(wider), s);
  MlpSpec permuted = base;
  permuted.perm = {1, 0, 2};
  EXPECT_NE(mlp_signature(permuted), s);
  EXPECT_NE(mlp_signature(base, Precision::kF32), s);
  MlpSpec activation = base;
  activation.weight_constant = false;
  EXPECT_NE(mlp_signature(activation), s);
}

TEST(Signature, TextShowsPackingBroadcastAndPerm) {
  auto g = make_mlp(MlpSpec{});
  KernelPlan plan = plan_kernel(*g, options(Precision::kF16));
  const std::string t = group_signature_text(plan, plan.groups[0]);
  EXPECT_NE(t.find("kind gemm f16-mma"), std::string::npos) << t;
  EXPECT_NE(t.find("const f16[64,64] packing=nk"), std::string::npos) << t;
  EXPECT_NE(t.find("epilogue Add\n  in running\n  in const f16[64] bcast=__="), std::string::npos) << t;
  EXPECT_NE(t.find("epilogue Transpose perm=[0,2,1]"), std::string::npos) << t;
}

// ---- schedules and contexts as JSON --------------------------------------------------------

TEST(ScheduleJson, RoundTripsEveryKind) {
  Schedule gemm;
  gemm.kind = GroupKind::kGemm;
  gemm.gemm = GemmSchedule{128, 128, 32, 2, 4, 3, 2};
  EXPECT_EQ(schedule_to_string(gemm),
            R"({"bk":32,"bm":128,"bn":128,"kind":"gemm","split_k":2,"stages":3,"warps_m":2,"warps_n":4})");
  Schedule conv = gemm;
  conv.kind = GroupKind::kConvGemm;
  Schedule pw;
  pw.kind = GroupKind::kPointwise;
  pw.pointwise.ilp = 8;
  EXPECT_EQ(schedule_to_string(pw), R"({"ilp":8,"kind":"pointwise"})");
  Schedule rows;
  rows.kind = GroupKind::kRows;
  EXPECT_EQ(schedule_to_string(rows), R"({"kind":"rows"})");
  Schedule wg = gemm;  // on wgmma: the key appears only then (older records keep their text)
  wg.gemm = GemmSchedule{64, 64, 128, 4, 2, 4, 1};
  wg.gemm.wgmma = true;
  EXPECT_EQ(schedule_to_string(wg),
            R"({"bk":128,"bm":64,"bn":64,"kind":"gemm","split_k":1,"stages":4,"warps_m":4,"warps_n":2,"wgmma":1})");
  EXPECT_NE(wg, Schedule(schedule_from_string(R"({"bk":128,"bm":64,"bn":64,"kind":"gemm","split_k":1,"stages":4,"warps_m":4,"warps_n":2})")));
  EXPECT_THROW(schedule_from_string(
                   R"({"bk":128,"bm":64,"bn":64,"kind":"gemm","split_k":1,"stages":4,"warps_m":4,"warps_n":2,"wgmma":2})"),
               UserError);
  for (const Schedule& s : {gemm, conv, pw, rows, wg}) {
    EXPECT_EQ(schedule_from_string(schedule_to_string(s)), s) << schedule_to_string(s);
    EXPECT_EQ(schedule_from_json(schedule_to_json(s)), s);
    EXPECT_EQ(schedule_to_string(schedule_from_string(schedule_to_string(s))), schedule_to_string(s));
  }
  EXPECT_NE(gemm, conv);
}

TEST(ScheduleJson, RejectsMalformedInput) {
  EXPECT_THROW(schedule_from_string("not json"), UserError);
  EXPECT_THROW(schedule_from_string("[]"), UserError);
  EXPECT_THROW(schedule_from_string(R"({"ilp":4})"), UserError);                       // no kind
  EXPECT_THROW(schedule_from_string(R"({"kind":"fancy","ilp":4})"), UserError);        // unknown kind
  EXPECT_THROW(schedule_from_string(R"({"kind":"pointwise"})"), UserError);            // missing knob
  EXPECT_THROW(schedule_from_string(R"({"kind":"pointwise","ilp":4,"x":1})"), UserError);  // unknown knob
  EXPECT_THROW(schedule_from_string(R"({"kind":"pointwise","ilp":"4"})"), UserError);  // not an integer
  EXPECT_THROW(schedule_from_string(R"({"kind":"pointwise","ilp":4.5})"), UserError);
  try {
    schedule_from_string(R"({"kind":"gemm","bm":64,"bn":64,"bk":32,"warps_m":2,"warps_n":4,"stages":3})");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("split_k"), std::string::npos) << e.what();
  }
}

TEST(ContextJson, RoundTripsAndDerivesBudgetAndCap) {
  const std::vector<Context> cs = default_contexts();
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].threads, 256);
  EXPECT_EQ(cs[0].blocks_per_sm, 1);
  EXPECT_EQ(cs[0].smem_bytes, 227 * 1024);
  EXPECT_EQ(cs[0].register_cap, 255);
  EXPECT_EQ(cs[1].blocks_per_sm, 2);
  EXPECT_EQ(cs[1].smem_bytes, 227 * 1024 / 2);
  EXPECT_EQ(cs[1].register_cap, 128);
  EXPECT_EQ(context_to_string(cs[1]), R"({"blocks_per_sm":2,"register_cap":128,"smem_bytes":116224,"threads":256})");
  EXPECT_EQ(cs[1].key(), "threads=256,blocks_per_sm=2,smem=116224");
  for (const Context& c : cs) {
    EXPECT_EQ(context_from_string(context_to_string(c)), c);
    EXPECT_EQ(context_from_json(context_to_json(c)), c);
  }
  EXPECT_NE(cs[0], cs[1]);
  // Budget and cap may be left out; a lower budget is kept; a wrong cap or a bad block is refused.
  EXPECT_EQ(context_from_string(R"({"threads":256,"blocks_per_sm":2})"), cs[1]);
  EXPECT_EQ(context_from_string(R"({"threads":256,"blocks_per_sm":1,"smem_bytes":65536})").smem_bytes, 65536);
  EXPECT_THROW(context_from_string(R"({"threads":256,"blocks_per_sm":1,"register_cap":64})"), UserError);
  EXPECT_THROW(context_from_string(R"({"threads":256,"blocks_per_sm":1,"smem_bytes":300000})"), UserError);
  EXPECT_THROW(context_from_string(R"({"threads":100,"blocks_per_sm":1})"), UserError);
  EXPECT_THROW(context_from_string(R"({"threads":1024,"blocks_per_sm":4})"), UserError);
  EXPECT_THROW(context_from_string(R"({"threads":256})"), UserError);
  EXPECT_THROW(context_from_string(R"({"threads":256,"blocks_per_sm":1,"sms":132})"), UserError);
}

// ---- tuned schedules in the planner --------------------------------------------------------

// The GEMM groups of a plan sharing the signature of the first GEMM group whose default
// differs from `s` (its signature out).
std::vector<int> gemm_groups_not_using(const KernelPlan& plan, const GemmSchedule& s, std::string* sig) {
  for (const Group& g : plan.groups)
    if (is_gemm(g) && g.gemm != s) {
      *sig = g.signature;
      break;
    }
  std::vector<int> ids;
  for (const Group& g : plan.groups)
    if (g.signature == *sig) ids.push_back(g.id);
  return ids;
}

TEST(TunedSchedules, DefaultPlanIsUnchangedBySignatures) {
  auto g = load_model("tiny-bert-opset20");
  PlanOptions plain;
  plain.settings.precision = Precision::kF16;
  KernelPlan a = plan_kernel(*g, plain);
  KernelPlan b = plan_kernel(*g, options(Precision::kF16));
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t i = 0; i < a.groups.size(); ++i) {
    EXPECT_EQ(a.groups[i].schedule(), b.groups[i].schedule());
    EXPECT_EQ(a.groups[i].est_us, b.groups[i].est_us);
    EXPECT_FALSE(a.groups[i].tuned);
    EXPECT_FALSE(b.groups[i].tuned);
    EXPECT_EQ(a.groups[i].signature, "");
  }
  EXPECT_EQ(emit_cuda(*g, a, "m"), emit_cuda(*g, b, "m"));
}

TEST(TunedSchedules, ChangeThePlanAndAreMarkedTuned) {
  auto g = load_model("tiny-bert-opset20");
  const PlanOptions base = options(Precision::kF16);
  KernelPlan def = plan_kernel(*g, base);
  Schedule s;
  s.kind = GroupKind::kGemm;
  s.gemm = GemmSchedule{128, 128, 32, 2, 4, 3, 1};
  std::string sig;
  const std::vector<int> ids = gemm_groups_not_using(def, s.gemm, &sig);
  ASSERT_EQ(ids.size(), 2u);  // a layer-0 GEMM and its layer-1 twin

  KernelPlan tuned = plan_kernel(*g, tuned_options(base, default_contexts()[0], {{sig, s}}));
  for (const Group& grp : tuned.groups) {
    const bool hit = std::count(ids.begin(), ids.end(), grp.id) > 0;
    EXPECT_EQ(grp.tuned, hit) << grp.nodes();
    EXPECT_EQ(grp.override_rejected, "");
    if (hit) {
      EXPECT_EQ(grp.gemm, s.gemm);
      EXPECT_EQ(grp.est_us, estimate_gemm_us(gemm_problem(grp), grp.f16, s.gemm, tuned.ctx));
      EXPECT_EQ(grp.items, gemm_items(gemm_problem(grp), s.gemm));
      EXPECT_EQ(grp.smem_bytes, gemm_smem_bytes(true, 128, 128, 32, 3));
    } else {
      EXPECT_EQ(grp.schedule(), def.groups[grp.id].schedule());
    }
  }
  EXPECT_GE(tuned.ctx.smem_bytes, gemm_smem_bytes(true, 128, 128, 32, 3));
  const std::string src = emit_cuda(*g, tuned, "m");
  EXPECT_NE(src.find("GemmF16<128, 128, 32, 2, 4, 3>"), std::string::npos);
  std::ostringstream os;
  print_plan(os, *g, tuned);
  EXPECT_NE(os.str().find("schedules: 2 tuned, "), std::string::npos) << os.str();
  EXPECT_NE(os.str().find(", tuned\n"), std::string::npos);
  EXPECT_NE(os.str().find(", default (untuned)\n"), std::string::npos);
}

TEST(TunedSchedules, InvalidOnesFallBackWithAReason) {
  auto g = load_model("tiny-bert-opset20");
  const PlanOptions base = options(Precision::kF16);
  KernelPlan def = plan_kernel(*g, base);
  std::string sig;
  const std::vector<int> ids = gemm_groups_not_using(def, GemmSchedule{}, &sig);
  ASSERT_FALSE(ids.empty());
  struct Bad {
    GemmSchedule s;
    const char* why;
  };
  const std::vector<Bad> bad = {
      {{48, 64, 32, 2, 4, 3, 1}, "BM 48 is not a multiple of 16 x warps_m"},
      {{64, 60, 32, 2, 4, 3, 1}, "BN 60 is not a multiple of 8 x warps_n"},
      {{64, 64, 24, 2, 4, 3, 1}, "BK 24 is not a multiple of 16"},
      {{64, 64, 32, 4, 4, 3, 1}, "warps 4x4 are 512 threads, the context has 256"},
      {{256, 256, 64, 2, 4, 8, 1}, "accumulator registers"},
      {{128, 64, 128, 2, 4, 8, 1}, "shared memory"},
      {{64, 64, 32, 2, 4, 3, 7}, "split-K 7"},
      {{64, 64, 32, 2, 4, 1, 1}, "stages 1"},
      {{64, 64, 128, 2, 4, 4, 1, true}, "BM = 16 x warps_m"},  // wgmma: 4 warps per 64 rows
      {{64, 80, 128, 4, 2, 4, 1, true}, "BN / warps_n in 16, 32, 48, 64, 128"},
      {{64, 64, 32, 4, 2, 4, 1, true}, "BK a multiple of 64"},
  };
  for (const Bad& b : bad) {
    Schedule s;
    s.kind = GroupKind::kGemm;
    s.gemm = b.s;
    KernelPlan p = plan_kernel(*g, tuned_options(base, default_contexts()[0], {{sig, s}}));
    for (int id : ids) {
      const Group& grp = p.groups[id];
      EXPECT_FALSE(grp.tuned) << b.why;
      EXPECT_NE(grp.override_rejected.find(b.why), std::string::npos) << grp.override_rejected;
      EXPECT_EQ(grp.schedule(), def.groups[id].schedule()) << b.why;
    }
    std::ostringstream os;
    print_plan(os, *g, p);
    EXPECT_NE(os.str().find("tuned schedule rejected: "), std::string::npos);
  }
  // A schedule of the wrong kind.
  Schedule pw;
  pw.kind = GroupKind::kPointwise;
  KernelPlan p = plan_kernel(*g, tuned_options(base, default_contexts()[0], {{sig, pw}}));
  EXPECT_NE(p.groups[ids[0]].override_rejected.find("for a pointwise group"), std::string::npos);
  // Schedules without a signature function are our bug.
  PlanOptions no_fn;
  no_fn.schedules[sig] = pw;
  EXPECT_THROW(plan_kernel(*g, no_fn), InternalError);
}

TEST(TunedSchedules, PointwiseIlpAndContext) {
  auto g = load_model("tiny-bert-opset20");
  const PlanOptions base = options(Precision::kF16);
  KernelPlan def = plan_kernel(*g, base);
  const Group* pw = nullptr;
  for (const Group& grp : def.groups)
    if (grp.kind == GroupKind::kPointwise) pw = &grp;
  ASSERT_NE(pw, nullptr);
  Schedule s;
  s.kind = GroupKind::kPointwise;
  s.pointwise.ilp = 8;
  const Context two = default_contexts()[1];
  KernelPlan p = plan_kernel(*g, tuned_options(base, two, {{pw->signature, s}}));
  EXPECT_EQ(p.ctx.blocks_per_sm, 2);
  EXPECT_EQ(p.ctx.threads, 256);
  EXPECT_EQ(p.ctx.smem_limit, two.smem_bytes);
  EXPECT_EQ(p.ctx.register_cap(), two.register_cap);
  EXPECT_EQ(p.ctx.grid(), 2 * 132);
  EXPECT_LE(p.ctx.smem_bytes, p.ctx.smem_limit);
  EXPECT_TRUE(p.groups[pw->id].tuned);
  EXPECT_EQ(p.groups[pw->id].pointwise.ilp, 8);
  EXPECT_EQ(p.groups[pw->id].items, pointwise_items(pointwise_problem(p, p.groups[pw->id]), 8, p.ctx));
  s.pointwise.ilp = 0;
  KernelPlan bad = plan_kernel(*g, tuned_options(base, two, {{pw->signature, s}}));
  EXPECT_FALSE(bad.groups[pw->id].tuned);
  EXPECT_NE(bad.groups[pw->id].override_rejected.find("ILP factor 0"), std::string::npos);
  s.pointwise.ilp = 4;  // a strip height for a group that is not a strip convolution
  s.pointwise.strip = 4;
  bad = plan_kernel(*g, tuned_options(base, two, {{pw->signature, s}}));
  EXPECT_FALSE(bad.groups[pw->id].tuned);
  EXPECT_NE(bad.groups[pw->id].override_rejected.find("not a strip convolution"), std::string::npos);
}

// A strip convolution's height is a knob: its candidates cover the even cuts of at most 1, 2, 4
// and 8 rows, a tuned height is used, one out of range is refused, and the JSON carries it.
TEST(TunedSchedules, StripHeights) {
  auto g = load_model("tiny-efficientnet-opset20");
  PlanOptions base = options(Precision::kF16);
  enable_signatures(&base);
  const KernelPlan def = plan_kernel(*g, base);
  const Group* dw = nullptr;
  for (const Group& grp : def.groups)
    if (grp.pointwise.strip > 0) dw = &grp;
  ASSERT_NE(dw, nullptr);
  std::set<int> heights;
  for (const Candidate& c : group_candidates(def, *dw, 0, nullptr)) heights.insert(c.schedule.pointwise.strip);
  const int64_t rows = dw->anchor->outputs[0]->type.shape[2];
  std::set<int> expected;
  for (int most : {1, 2, 4, 8}) expected.insert(even_strip_height(rows, most));
  EXPECT_EQ(heights, expected);
  Schedule s = dw->schedule();
  s.pointwise.strip = 1;
  PlanOptions o = base;
  o.schedules[dw->signature] = s;
  KernelPlan p = plan_kernel(*g, o);
  EXPECT_TRUE(p.groups[dw->id].tuned) << p.groups[dw->id].override_rejected;
  EXPECT_EQ(p.groups[dw->id].pointwise.strip, 1);
  EXPECT_EQ(schedule_from_string(schedule_to_string(s)), s);
  EXPECT_NE(schedule_to_string(s).find("\"strip\":1"), std::string::npos);
  o.schedules[dw->signature].pointwise.strip = 9;
  p = plan_kernel(*g, o);
  EXPECT_FALSE(p.groups[dw->id].tuned);
  EXPECT_NE(p.groups[dw->id].override_rejected.find("not in 1..8"), std::string::npos);
}

// A GlobalAveragePool's warps per output are a knob: its candidates are 1, 2, 4 and 8, a tuned
// count is used, one that is not a power of two up to 8 is refused (and a count on another
// group), and the JSON carries it.
TEST(TunedSchedules, PoolWarps) {
  auto g = parse_graph("graph g (opset 20) {\n  input %x: f32[1,6,48,48]\n  %r = Relu(%x)\n"
                       "  %p = GlobalAveragePool(%r)\n  output %p\n}\n");
  infer_shapes(*g);
  PlanOptions base = options(Precision::kF16);
  const KernelPlan def = plan_kernel(*g, base);
  const Group* pool = nullptr;
  const Group* relu = nullptr;
  for (const Group& grp : def.groups) (grp.anchor->op == OpKind::kGlobalAveragePool ? pool : relu) = &grp;
  ASSERT_NE(pool, nullptr);
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(pool->pointwise.warps, 4);  // 2304 elements a plane: two vectors a lane at 4 warps
  EXPECT_EQ(relu->pointwise.warps, 0);
  std::set<int> warps;
  for (const Candidate& c : group_candidates(def, *pool, 0, nullptr)) warps.insert(c.schedule.pointwise.warps);
  EXPECT_EQ(warps, (std::set<int>{1, 2, 4, 8}));
  Schedule s = pool->schedule();
  s.pointwise.warps = 8;
  PlanOptions o = base;
  o.schedules[pool->signature] = s;
  KernelPlan p = plan_kernel(*g, o);
  EXPECT_TRUE(p.groups[pool->id].tuned) << p.groups[pool->id].override_rejected;
  EXPECT_EQ(p.groups[pool->id].pointwise.warps, 8);
  EXPECT_EQ(p.groups[pool->id].items, ceil_div(6 * 32 * 8, int64_t{p.ctx.threads} * s.pointwise.ilp));
  EXPECT_NE(emit_cuda(*g, p, "t").find("// 8 warps per output"), std::string::npos);
  EXPECT_EQ(schedule_from_string(schedule_to_string(s)), s);
  EXPECT_NE(schedule_to_string(s).find("\"warps\":8"), std::string::npos);
  o.schedules[pool->signature].pointwise.warps = 3;
  p = plan_kernel(*g, o);
  EXPECT_FALSE(p.groups[pool->id].tuned);
  EXPECT_NE(p.groups[pool->id].override_rejected.find("is not 1, 2, 4 or 8"), std::string::npos);
  Schedule r = relu->schedule();
  r.pointwise.warps = 2;
  o = base;
  o.schedules[relu->signature] = r;
  p = plan_kernel(*g, o);
  EXPECT_FALSE(p.groups[relu->id].tuned);
  EXPECT_NE(p.groups[relu->id].override_rejected.find("not a GlobalAveragePool"), std::string::npos);
}

// ---- the tuning space ----------------------------------------------------------------------

void check_space(const Graph& g, const PlanOptions& po, const TuningSpace& space, double factor,
                 int most = SpaceOptions{}.max_candidates) {
  std::map<std::string, KernelPlan> plans;  // by context key
  for (const Context& c : space.contexts) {
    PlanOptions o = po;
    use_context(&o, c);
    enable_signatures(&o);
    plans.emplace(c.key(), plan_kernel(g, o));
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (const TuningTask& t : space.tasks) {
    EXPECT_TRUE(seen.insert({t.context.key(), t.signature}).second) << "duplicate task";
    const KernelPlan& plan = plans.at(t.context.key());
    const Group& example = plan.groups.at(t.groups.at(0));
    EXPECT_EQ(example.signature, t.signature);
    ASSERT_FALSE(t.candidates.empty());
    EXPECT_LE(static_cast<int>(t.candidates.size()), t.candidates_before);
    if (most > 0) EXPECT_LE(static_cast<int>(t.candidates.size()), most) << t.description;
    int defaults = 0;
    double best = 1e30;
    for (const Candidate& c : t.candidates) best = std::min(best, c.est_us);
    for (size_t i = 0; i < t.candidates.size(); ++i) {
      const Candidate& c = t.candidates[i];
      if (i) {
        EXPECT_LE(t.candidates[i - 1].est_us, c.est_us) << "not ordered by estimate";
      }
      if (factor > 0 && !c.is_default && (t.kind == GroupKind::kGemm || t.kind == GroupKind::kConvGemm)) {
        EXPECT_LE(c.est_us, factor * best);  // pointwise groups keep their four ILP factors
      }
      EXPECT_EQ(c.schedule.kind, t.kind);
      if (c.is_default) {
        ++defaults;
        // The planner's estimate of its default equals the space's estimate of that candidate.
        EXPECT_EQ(c.schedule, example.schedule());
        EXPECT_EQ(c.schedule, t.default_schedule);
        EXPECT_DOUBLE_EQ(c.est_us, example.est_us) << t.description;
        EXPECT_DOUBLE_EQ(t.default_est_us, example.est_us);
      }
      if (is_gemm(example)) {
        const GemmProblem p = gemm_problem(example);
        EXPECT_EQ(gemm_schedule_problem(example.f16, c.schedule.gemm, plan.ctx, &p), "") << c.schedule.str();
        // Every split non-empty.
        const int64_t chunk = ceil_div(ceil_div(p.k, c.schedule.gemm.splits), c.schedule.gemm.bk) * c.schedule.gemm.bk;
        EXPECT_LT((c.schedule.gemm.splits - 1) * chunk, p.k) << c.schedule.str();
        EXPECT_DOUBLE_EQ(c.est_us, estimate_gemm_us(p, example.f16, c.schedule.gemm, plan.ctx));
      }
      // Each candidate is accepted by the planner as a tuned schedule.
      if (i < 2) {
        KernelPlan tp = plan_kernel(g, tuned_options(po, t.context, {{t.signature, c.schedule}}));
        for (int id : t.groups) {
          EXPECT_TRUE(tp.groups[id].tuned) << tp.groups[id].override_rejected;
          EXPECT_EQ(tp.groups[id].schedule(), c.schedule);
          EXPECT_DOUBLE_EQ(tp.groups[id].est_us, c.est_us);
        }
      }
    }
    EXPECT_EQ(defaults, 1) << t.description;
  }
}

TEST(Space, TinyBertDedupsLayersAndKeepsDefaults) {
  auto g = load_model("tiny-bert-opset20");
  for (Precision p : {Precision::kF32, Precision::kF16}) {
    PlanOptions po;
    po.settings.precision = p;
    const TuningSpace space = enumerate_space(*g, po);
    const SpaceSummary s = summarize(space);
    EXPECT_EQ(s.contexts, 2);
    // Every group but the parts of attention groups (fixed tiles) is a tuning task.
    const KernelPlan plan = plan_kernel(*g, po);
    int tunable = 0, attention = 0;
    for (const Group& grp : plan.groups) tunable += !grp.runs_fused(), attention += !grp.fused.empty();
    EXPECT_EQ(attention, 2);  // one per layer
    EXPECT_EQ(s.groups_total, tunable);
    EXPECT_LT(s.unique_signatures, s.groups_total);
    EXPECT_EQ(s.tasks, s.contexts * s.unique_signatures);
    EXPECT_LE(s.candidates_after, s.candidates_before);
    EXPECT_GT(s.candidates_after, s.tasks);  // more than the defaults
    int grouped = 0;
    for (const TuningTask& t : space.tasks) grouped += static_cast<int>(t.groups.size());
    EXPECT_EQ(grouped, s.contexts * s.groups_total);
    check_space(*g, po, space, SpaceOptions{}.prune_factor);
    // Printed for --emit plan.
    std::ostringstream os;
    print_space(os, space);
    EXPECT_NE(os.str().find(str_cat("tuning space: 2 contexts x ", s.unique_signatures, " unique group signatures (",
                                    s.groups_total, " groups before dedup)")),
              std::string::npos)
        << os.str();
    EXPECT_NE(os.str().find(str_cat(s.candidates_before, " before pruning, ", s.candidates_after, " after")),
              std::string::npos);
    EXPECT_NE(os.str().find("[gemm] x2 groups: MatMul"), std::string::npos) << os.str();
    // As JSON for a job payload.
    const nlohmann::json j = task_to_json(space.tasks.back());
    EXPECT_EQ(j.at("signature"), space.tasks.back().signature);
    EXPECT_EQ(context_from_json(j.at("context")), space.tasks.back().context);
    EXPECT_EQ(j.at("candidates").size(), space.tasks.back().candidates.size());
    EXPECT_EQ(schedule_from_json(j.at("candidates")[0].at("schedule")), space.tasks.back().candidates[0].schedule);
  }
}

// BERT-base's FFN up-projection, [1,128,768] x [768,3072], planned in fp16.
std::unique_ptr<Graph> bert_ffn_up(PlanOptions* po) {
  po->settings.precision = Precision::kF16;
  MlpSpec big;
  big.m = 128, big.k = 768, big.n = 3072;
  return make_mlp(big);
}

TEST(Space, PrunesFarSlowerCandidatesOfALargeGemm) {
  PlanOptions po;
  auto g = bert_ffn_up(&po);
  const TuningSpace pruned = enumerate_space(*g, po);
  SpaceOptions keep_all;
  keep_all.prune_factor = 0;
  keep_all.max_candidates = 0;
  const TuningSpace all = enumerate_space(*g, po, keep_all);
  const SpaceSummary a = summarize(all), p = summarize(pruned);
  EXPECT_EQ(a.candidates_before, p.candidates_before);
  EXPECT_EQ(a.candidates_after, a.candidates_before);
  EXPECT_LT(p.candidates_after, p.candidates_before);
  // Split-K candidates exist (K = 768 allows them) and the 2-blocks context drops no tile for
  // shared memory but keeps within its budget.
  bool split = false;
  for (const TuningTask& t : all.tasks)
    for (const Candidate& c : t.candidates) {
      split |= c.schedule.gemm.splits > 1;
      EXPECT_LE(c.smem_bytes, t.context.smem_bytes);
    }
  EXPECT_TRUE(split);
  check_space(*g, po, pruned, SpaceOptions{}.prune_factor);
  check_space(*g, po, all, 0, 0);
}

// A task measures its default and the lowest estimates after it, at most max_candidates in all
// (the others of the uncapped list, in its order); 0 keeps them all.
TEST(Space, MeasuresTheDefaultAndTheLowestEstimates) {
  PlanOptions po;
  auto g = bert_ffn_up(&po);
  SpaceOptions uncapped, three;
  uncapped.max_candidates = 0;
  three.max_candidates = 3;
  const TuningSpace all = enumerate_space(*g, po, uncapped), capped = enumerate_space(*g, po, three);
  ASSERT_EQ(all.tasks.size(), capped.tasks.size());
  for (size_t i = 0; i < all.tasks.size(); ++i) {
    const std::vector<Candidate>& a = all.tasks[i].candidates;
    const std::vector<Candidate>& c = capped.tasks[i].candidates;
    ASSERT_GT(a.size(), 3u) << all.tasks[i].description;  // the cap has something to drop
    EXPECT_EQ(c.size(), 3u);
    std::vector<Schedule> got;
    for (const Candidate& x : c) got.push_back(x.schedule);
    std::vector<Schedule> expect;
    int others = 0;
    for (const Candidate& x : a)
      if (x.is_default || others++ < 2) expect.push_back(x.schedule);
    EXPECT_EQ(got, expect);
    EXPECT_EQ(std::count_if(c.begin(), c.end(), [](const Candidate& x) { return x.is_default; }), 1);
  }
  check_space(*g, po, capped, SpaceOptions{}.prune_factor, 3);
}

TEST(Space, EveryTinyModelEnumerates) {
  for (const char* m : {"tiny-gpt2-opset20", "tiny-mobilenet-opset20", "tiny-resnet-opset17", "tiny-vit-opset20"}) {
    auto g = load_model(m);
    PlanOptions po;
    po.settings.precision = Precision::kF16;
    const TuningSpace space = enumerate_space(*g, po);
    const SpaceSummary s = summarize(space);
    EXPECT_LE(s.unique_signatures, s.groups_total) << m;
    EXPECT_LE(s.candidates_after, s.candidates_before) << m;
    for (const TuningTask& t : space.tasks)
      EXPECT_EQ(std::count_if(t.candidates.begin(), t.candidates.end(), [](const Candidate& c) { return c.is_default; }), 1)
          << m << " " << t.description;
  }
}

// The default plan of tiny-bert in fp16 runs its projection GEMMs on wgmma (their A is an
// activation read through a tensor map, their B packed weights, swizzled); a tuned schedule
// can put a group back on mma.sync, and a wgmma schedule tuned for a group whose A is the
// model's input runs on mma.sync instead.
TEST(TunedSchedules, WgmmaIsTheDefaultCoreAndATunedChoice) {
  auto g = load_model("tiny-bert-opset20");
  const PlanOptions base = options(Precision::kF16);
  const KernelPlan def = plan_kernel(*g, base);
  int wg = 0;
  std::string sig;
  int id = -1;
  for (const Group& grp : def.groups) {
    if (!grp.gemm.wgmma) continue;
    ++wg;
    EXPECT_EQ(grp.gemm.warps_m * 16, grp.gemm.bm) << grp.nodes();
    EXPECT_TRUE(def.packing(*grp.anchor, 1).swizzled) << grp.nodes();
    if (id < 0) id = grp.id, sig = tuning::group_signature(def, grp).hash;
  }
  EXPECT_EQ(wg, 12);  // Q, K, V, out-projection, FFN1, FFN2 of both layers
  ASSERT_GE(id, 0);
  EXPECT_NE(emit_cuda(*g, def, "m").find("GemmWg<64, 32, 64, 4, 2, 4>"), std::string::npos);  // the 32x32 menu tile, grown to a warpgroup
  Schedule mma;
  mma.kind = GroupKind::kGemm;
  mma.gemm = GemmSchedule{64, 64, 64, 2, 4, 4, 1};
  const KernelPlan tuned = plan_kernel(*g, tuned_options(base, default_contexts()[0], {{sig, mma}}));
  EXPECT_TRUE(tuned.groups[id].tuned);
  EXPECT_FALSE(tuned.groups[id].gemm.wgmma);
  EXPECT_FALSE(tuned.packing(*tuned.groups[id].anchor, 1).swizzled);
  // A tuned wgmma tile in k groups is emitted with them.
  Schedule kg;
  kg.kind = GroupKind::kGemm;
  kg.gemm = wgmma_k_grouped(def.groups[id].gemm, def.ctx);
  ASSERT_EQ(kg.gemm.warps_n, 1);
  const KernelPlan tuned_kg = plan_kernel(*g, tuned_options(base, default_contexts()[0], {{sig, kg}}));
  EXPECT_TRUE(tuned_kg.groups[id].tuned);
  EXPECT_EQ(wgmma_k_groups(tuned_kg.groups[id].gemm, tuned_kg.ctx), 2);
  EXPECT_NE(emit_cuda(*g, tuned_kg, "m").find("GemmWg<64, 32, 64, 4, 1, 4, 2>"), std::string::npos);
}

TEST(Space, OffersWgmmaTilesWhereTheOperandsAllow) {
  auto g = load_model("tiny-bert-opset20");
  const KernelPlan plan = plan_kernel(*g, options(Precision::kF16));
  const std::vector<GemmSchedule> tiles = tuning_wgmma_tiles(plan.ctx);
  // Seven tiles with warpgroups side by side along n or m (64x96x128 among them: m64n48, and
  // 128x128x128: two of m64n128); the three whose k groups fit (64x64x128, 64x32x128, 64x64x64)
  // in k groups too.
  EXPECT_EQ(tiles.size(), 10u);
  EXPECT_NE(std::find_if(tiles.begin(), tiles.end(), [](const GemmSchedule& s) { return s.bn == 96 && s.warps_n == 2; }),
            tiles.end());
  EXPECT_NE(std::find_if(tiles.begin(), tiles.end(),
                         [](const GemmSchedule& s) { return s.bm == 128 && s.bn == 128 && s.warps_m == 8 && s.warps_n == 1; }),
            tiles.end());
  int k_grouped = 0;
  for (const GemmSchedule& s : tiles) {
    EXPECT_TRUE(s.wgmma);
    EXPECT_EQ(gemm_schedule_problem(true, s, plan.ctx, nullptr), "") << s.str();
    k_grouped += wgmma_k_groups(s, plan.ctx) > 1;
  }
  EXPECT_EQ(k_grouped, 3);
  int with_wg = 0;
  for (const TuningTask& t : enumerate_space(*g, options(Precision::kF16)).tasks) {
    if (t.kind != GroupKind::kGemm) continue;
    int wg = 0;
    for (const Candidate& c : t.candidates) wg += c.schedule.gemm.wgmma && !c.is_default;
    with_wg += wg > 0;
    if (t.default_schedule.gemm.wgmma) EXPECT_GT(wg, 0) << t.description;
  }
  EXPECT_GT(with_wg, 0);
}


// wgmma tiles may leave warpgroups to k groups, which sum through the staged epilogue: a tile of
// at most 16 values a thread; mma.sync tiles still take every warp.
TEST(Space, WgmmaKGroupsOnlyWhereTheStagedEpilogueTakesTheTile) {
  KernelContext ctx;  // 256 threads
  GemmSchedule s{64, 64, 128, 4, 1, 4, 1};
  s.wgmma = true;
  EXPECT_EQ(wgmma_k_groups(s, ctx), 2);
  EXPECT_EQ(gemm_schedule_problem(true, s, ctx, nullptr), "");
  GemmSchedule wide = s;
  wide.bn = 128;  // 32 values a thread
  EXPECT_NE(gemm_schedule_problem(true, wide, ctx, nullptr).find("staged epilogue"), std::string::npos);
  GemmSchedule three = s;
  three.bk = 64;
  ctx.threads = 384;  // 3 k groups for 4 k steps
  EXPECT_NE(gemm_schedule_problem(true, three, ctx, nullptr).find("do not divide"), std::string::npos);
  ctx.threads = 256;
  GemmSchedule mma = s;
  mma.wgmma = false;
  EXPECT_EQ(wgmma_k_groups(mma, ctx), 1);
  EXPECT_NE(gemm_schedule_problem(true, mma, ctx, nullptr).find("threads"), std::string::npos);
  // The default lays warpgroups along n; the k-grouped layout where it fits.
  const GemmSchedule def = wgmma_schedule(GemmSchedule{64, 64, 128, 1, 1, 4, 1}, ctx);
  EXPECT_EQ(def.warps_n, 2);
  EXPECT_EQ(wgmma_k_grouped(def, ctx).warps_n, 1);
  const GemmSchedule wide_def = wgmma_schedule(GemmSchedule{64, 128, 64, 1, 1, 3, 1}, ctx);
  EXPECT_EQ(wgmma_k_grouped(wide_def, ctx), wide_def);
}

// Tiles fitted to output channels the menu does not divide are candidates too, for a GEMM of 96
// channels (a 96-wide tile); one of 64 channels gets only the menu's and the wgmma tiles. Over
// many rows (pixels) both also get 96- and 128-row tiles (tall_gemm_tiles), which the defaults
// do not use; over 128 rows they do not.
TEST(Space, OffersTilesFittedToTheOutputChannelsAndTallOnes) {
  for (int64_t m : {4096, 128}) {
    for (int64_t n : {96, 64}) {
      SCOPED_TRACE(testing::Message() << "M = " << m << ", N = " << n);
      MlpSpec spec;
      spec.m = m;
      spec.k = 32;
      spec.n = n;
      auto g = make_mlp(spec);
      const KernelPlan plan = plan_kernel(*g, options(Precision::kF16));
      ASSERT_EQ(plan.groups.size(), 1u);
      std::set<int> widths, heights;
      for (const Candidate& c : group_candidates(plan, plan.groups[0], 0, nullptr)) {
        widths.insert(c.schedule.gemm.bn);
        heights.insert(c.schedule.gemm.bm);
        EXPECT_EQ(gemm_schedule_problem(true, c.schedule.gemm, plan.ctx, nullptr), "") << c.schedule.gemm.str();
      }
      EXPECT_EQ(widths.count(96), n == 96 ? 1u : 0u);
      EXPECT_EQ(heights.count(96), m == 4096 || n == 96 ? 1u : 0u);
      if (n == 64) EXPECT_NE(plan.groups[0].gemm.bm, 96);
    }
  }
}

}  // namespace
}  // namespace mono::tuning
