// Fragments: every group of every tiny model, cut out as a weight-free payload, rebuilds on
// the "worker" side (JSON text -> load_fragment -> plan_kernel) into a group with the same
// signature and default schedule; the whole model does likewise; payloads with made-up
// weights run on the CPU reference; malformed payloads are refused naming the field. Also the
// IR printer's float-only elision and the parser's made-up weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "compiler/codegen/cuda_emitter.h"
#include "compiler/driver/model.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/reference/inputs.h"
#include "compiler/reference/interpreter.h"
#include "compiler/support/error.h"
#include "compiler/tuning/fragment.h"
#include "compiler/tuning/schedule.h"
#include "compiler/tuning/signature.h"
#include "compiler/tuning/space.h"

namespace mono::tuning {
namespace {

using nlohmann::json;

constexpr uint64_t kSeed = 7;

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(std::string(MONO_SOURCE_DIR) + "/tests/data/models"))
    if (std::filesystem::exists(e.path() / "model.onnx")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A model as mono-compile sees it: loaded, simplified and, for fp16, calibrated; signatures on.
struct Model {
  std::string name;
  Precision precision;
  std::unique_ptr<Graph> graph;
  PlanOptions options;
  KernelPlan plan;
};

Model load(const std::string& name, Precision p, const Context* ctx = nullptr) {
  Model m;
  m.name = name;
  m.precision = p;
  m.graph = load_model(std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + name + "/model.onnx", ModelOptions{})
                .graph;
  m.options.settings.precision = p;
  calibrate(*m.graph, synthetic_inputs(*m.graph), &m.options);
  if (ctx) use_context(&m.options, *ctx);
  enable_signatures(&m.options);
  m.plan = plan_kernel(*m.graph, m.options);
  return m;
}

const char* precision_name(Precision p) { return p == Precision::kF16 ? "fp16" : "fp32"; }

// What the worker does with a payload: from its JSON text to a plan.
struct Rebuilt {
  LoadedFragment fragment;
  KernelPlan plan;
};
Rebuilt rebuild(const json& payload) {
  Rebuilt r;
  r.fragment = load_fragment(json::parse(payload.dump()), kSeed);
  r.plan = plan_kernel(*r.fragment.graph, r.fragment.options);
  return r;
}

std::string signatures_of(const KernelPlan& plan) {
  std::string s;
  for (const Group& g : plan.groups) s += str_cat("  ", g.signature, " ", g.nodes(), "\n");
  return s;
}

bool all_finite(const Tensor& t) {
  if (!is_float(t.dtype())) return true;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.as_double(i))) return false;
  return true;
}

// ---- every group of every model ------------------------------------------------------------

TEST(Fragment, EveryGroupOfEveryModelRebuildsWithItsSignatureAndSchedule) {
  int groups = 0, fragments_with_views = 0, fragments_keeping_fp32 = 0, out_of_line = 0, on_wgmma = 0, with_squeeze = 0,
      with_movements = 0;
  std::set<std::string> unique;  // precision + signature
  size_t payload_bytes = 0;
  for (const std::string& name : model_names()) {
    for (Precision p : {Precision::kF32, Precision::kF16}) {
      const Model m = load(name, p);
      for (const Group& g : m.plan.groups) {
        if (!tunable(m.plan, g)) continue;  // not a tuning task (fixed tiles, see space.cc)
        SCOPED_TRACE(str_cat(name, " ", precision_name(p), " group ", g.id, ": ", g.nodes()));
        const json payload = make_fragment(*m.graph, m.plan, g, m.options);
        payload_bytes += payload.dump().size();
        fragments_keeping_fp32 += !payload["keep_fp32"].empty();
        const Rebuilt r = rebuild(payload);
        // The fragment is the group and nothing else (views are no groups), with the squeeze it
        // computes inside (Group::squeeze) and the movements it computes where it reads them
        // (Group::at_read), which must fuse into it there too.
        const Group* sq = g.squeeze >= 0 ? &m.plan.groups[g.squeeze] : nullptr;
        const std::vector<int> movements = at_read_groups(m.plan, g);
        ASSERT_EQ(r.plan.groups.size(), (sq ? 2u : 1u) + movements.size())
            << payload["ir"].get<std::string>() << signatures_of(r.plan);
        size_t own_nodes = 1 + g.epilogue.size() + (sq ? 1 + sq->epilogue.size() : 0);
        for (int id : movements) {
          own_nodes += 1 + m.plan.groups[id].epilogue.size();
          auto same = [&](const Group& f) { return f.nodes() == m.plan.groups[id].nodes(); };
          auto it = std::find_if(r.plan.groups.begin(), r.plan.groups.end(), same);
          ASSERT_NE(it, r.plan.groups.end()) << m.plan.groups[id].nodes();
          EXPECT_TRUE(it->at_read) << m.plan.groups[id].nodes() << " is computed where read in the fragment too";
        }
        with_movements += !movements.empty();
        fragments_with_views += r.fragment.graph->num_nodes() > own_nodes;
        with_squeeze += sq != nullptr;
        const Group* found = find_group(r.plan, g.signature);
        ASSERT_NE(found, nullptr) << "original:\n"
                                  << group_signature_text(m.plan, g) << "fragment:\n"
                                  << group_signature_text(r.plan, r.plan.groups[0]) << "payload IR:\n"
                                  << payload["ir"].get<std::string>();
        EXPECT_EQ(found->kind, g.kind);
        // The same schedule, wgmma included: an A that is an activation in the model is copied
        // into the fragment's arena ("arena_inputs"), where the group reads it the same way.
        EXPECT_EQ(found->schedule(), g.schedule()) << found->schedule().str() << " vs " << g.schedule().str();
        on_wgmma += g.gemm.wgmma;
        EXPECT_EQ(found->f16, g.f16);
        EXPECT_EQ(found->items, g.items);
        // Compiled the way the model's kernel is (inlined or not).
        EXPECT_EQ(r.plan.inline_groups, m.plan.inline_groups);
        out_of_line += !r.plan.inline_groups;
        ++groups;
        unique.insert(str_cat(precision_name(p), g.signature));
      }
    }
  }
  std::printf("fragments: %d groups of %zu models x 2 precisions (%zu unique signatures) rebuilt with their "
              "signature and schedule; %d fragments read through views, %d list values kept in fp32 "
              "beside their ranges, %d out of line as in their model; %zu bytes of payload in all\n",
              groups, model_names().size(), unique.size(), fragments_with_views, fragments_keeping_fp32, out_of_line,
              payload_bytes);
  EXPECT_GE(model_names().size(), 9u);
  EXPECT_GT(groups, 200);
  EXPECT_GT(on_wgmma, 0);
  EXPECT_GT(with_squeeze, 0) << "no model has a squeeze computed inside its consumer";
  EXPECT_GT(with_movements, 0) << "no model has a movement computed where it is read (tiny-swin, tiny-llama)";
}

// The context travels: a 2-blocks-per-SM context with a lower shared-memory limit gives the
// same schedules (which depend on it) on the worker.
// A movement computed where it is read by two groups (Group::at_read): in either reader's
// fragment its one reader would fuse into it as an epilogue, so neither reader is a tuning task
// (plan.h tunable; found in review: their measure jobs failed as "the fragment does not
// reproduce group"). Their signatures name the operand as computed. A movement read by one
// group only is computed in that group's fragment too, which reproduces it.
TEST(Fragment, GroupsSharingAComputedMovementAreNotTuningTasks) {
  ParseOptions fill;
  fill.fill_elided = true;
  auto g = parse_graph(R"(graph g (opset 17) {
  input %x: f32[1,8,16,32]
  const %c: f32[32] = <32 elements>
  const %s: i64[1] = [3]
  const %e: i64[1] = [16]
  const %z: i64[1] = [0]
  const %one: i64[1] = [1]
  %y = Transpose(%x) {perm=[0, 2, 1, 3]}
  %a = Relu(%y)
  %b = Mul(%y, %c)
  %t1 = Slice(%x, %s, %e, %one)
  %t2 = Slice(%x, %z, %s, %one)
  %r = Concat(%t1, %t2) {axis=1}
  output %a
  output %b
  output %r
})",
                       fill);
  infer_shapes(*g);
  for (Precision p : {Precision::kF32, Precision::kF16}) {
    SCOPED_TRACE(precision_name(p));
    PlanOptions options;
    options.settings.precision = p;
    enable_signatures(&options);
    const KernelPlan plan = plan_kernel(*g, options);
    int sharing = 0, roll = 0;
    std::string concat_signature;
    for (const Group& grp : plan.groups) {
      if (grp.at_read) continue;
      const std::string text = group_signature_text(plan, grp);
      EXPECT_NE(text.find("in computed "), std::string::npos) << text;
      if (grp.anchor->op != OpKind::kConcat) {
        ++sharing;
        EXPECT_FALSE(tunable(plan, grp)) << grp.nodes();
        continue;
      }
      ++roll;
      concat_signature = grp.signature;
      EXPECT_TRUE(tunable(plan, grp));
      const json payload = make_fragment(*g, plan, grp, options);
      const Rebuilt r = rebuild(payload);
      ASSERT_NE(find_group(r.plan, grp.signature), nullptr) << payload["ir"].get<std::string>() << signatures_of(r.plan);
    }
    EXPECT_EQ(sharing, 2);
    EXPECT_EQ(roll, 1);
    const TuningSpace space = enumerate_space(*g, options);
    ASSERT_FALSE(space.tasks.empty());
    for (const TuningTask& t : space.tasks) EXPECT_EQ(t.signature, concat_signature) << "the Concat's tasks only";
  }
}

TEST(Fragment, ContextTravelsWithThePayload) {
  Context ctx = Context::make(256, 2);
  ctx.smem_bytes = 64 * 1024;
  const Model m = load("tiny-bert-opset20", Precision::kF16, &ctx);
  for (const Group& g : m.plan.groups) {
    if (g.runs_fused()) continue;  // not a tuning task
    const json payload = make_fragment(*m.graph, m.plan, g, m.options);
    EXPECT_EQ(payload["blocks_per_sm"], 2);
    EXPECT_EQ(payload["smem_limit"], 64 * 1024);
    const Rebuilt r = rebuild(payload);
    const Group* found = find_group(r.plan, g.signature);
    ASSERT_NE(found, nullptr) << g.nodes();
    EXPECT_EQ(found->schedule(), g.schedule()) << g.nodes();
    EXPECT_EQ(r.plan.ctx.smem_limit, m.plan.ctx.smem_limit);
  }
}

TEST(Fragment, WholeModelReproducesEverySignature) {
  int models = 0, groups = 0, causal = 0;
  for (const std::string& name : model_names()) {
    for (Precision p : {Precision::kF32, Precision::kF16}) {
      SCOPED_TRACE(str_cat(name, " ", precision_name(p)));
      const Model m = load(name, p);
      const Rebuilt r = rebuild(make_fragment(*m.graph, m.plan, m.options));
      std::multiset<std::string> want, got;
      for (const Group& g : m.plan.groups) want.insert(g.signature);
      for (const Group& g : r.plan.groups) got.insert(g.signature);
      EXPECT_EQ(got, want) << "original:\n" << signatures_of(m.plan) << "fragment:\n" << signatures_of(r.plan);
      // The same graph: same groups in the same order, same schedules and stages.
      ASSERT_EQ(r.plan.groups.size(), m.plan.groups.size());
      for (size_t i = 0; i < m.plan.groups.size(); ++i) {
        EXPECT_EQ(r.plan.groups[i].schedule(), m.plan.groups[i].schedule()) << m.plan.groups[i].nodes();
        EXPECT_EQ(r.plan.groups[i].stage, m.plan.groups[i].stage) << m.plan.groups[i].nodes();
        // A causal mask applied by index (its constant travels in full) is found again.
        EXPECT_EQ(r.plan.groups[i].causal_mask != nullptr, m.plan.groups[i].causal_mask != nullptr)
            << m.plan.groups[i].nodes();
        causal += m.plan.groups[i].causal_mask != nullptr;
      }
      EXPECT_EQ(r.plan.fp32_fallbacks, m.plan.fp32_fallbacks);
      EXPECT_EQ(r.plan.inline_groups, m.plan.inline_groups);
      EXPECT_EQ(r.fragment.graph->inputs.size(), m.graph->inputs.size());
      EXPECT_EQ(r.fragment.graph->outputs.size(), m.graph->outputs.size());
      ++models;
      groups += static_cast<int>(m.plan.groups.size());
    }
  }
  EXPECT_GE(causal, 2);  // tiny-gpt2's two heads in fp16
  std::printf("whole-model fragments: %d (model, precision) pairs, %d groups, same signatures\n", models, groups);
}

// Made-up weights keep the arithmetic finite: every whole-model fragment and every group
// fragment of every model runs on the CPU reference with finite outputs.
TEST(Fragment, RunsOnTheCpuReferenceWithFiniteOutputs) {
  int runs = 0;
  for (const std::string& name : model_names()) {
    const Model m = load(name, Precision::kF16);
    std::vector<json> payloads = {make_fragment(*m.graph, m.plan, m.options)};
    for (const Group& g : m.plan.groups) payloads.push_back(make_fragment(*m.graph, m.plan, g, m.options));
    for (size_t i = 0; i < payloads.size(); ++i) {
      SCOPED_TRACE(str_cat(name, i == 0 ? " whole model" : str_cat(" group ", i - 1)));
      const LoadedFragment f = load_fragment(payloads[i], kSeed);
      const std::vector<Tensor> outputs = run_reference(*f.graph, fragment_inputs(f));
      ASSERT_EQ(outputs.size(), f.graph->outputs.size());
      for (size_t o = 0; o < outputs.size(); ++o)
        EXPECT_TRUE(all_finite(outputs[o])) << "output %" << f.graph->outputs[o]->name << "\n"
                                            << payloads[i]["ir"].get<std::string>();
      ++runs;
    }
  }
  std::printf("fragments on the CPU reference: %d runs, finite outputs\n", runs);
}

// Loading is deterministic in the seed; weights differ between seeds, structure does not.
TEST(Fragment, MadeUpWeightsFollowTheSeed) {
  const Model m = load("tiny-bert-opset20", Precision::kF32);
  const json payload = make_fragment(*m.graph, m.plan, m.options);
  const LoadedFragment a = load_fragment(payload, 1), b = load_fragment(payload, 1), c = load_fragment(payload, 2);
  std::map<std::string, const Tensor*> originals;
  for (const Value* c : m.graph->constants()) originals[c->name] = c->constant.get();
  int elided = 0;
  for (size_t i = 0; i < a.graph->constants().size(); ++i) {
    const Value* ca = a.graph->constants()[i];
    const Tensor& ta = *ca->constant;
    ASSERT_TRUE(originals.count(ca->name)) << ca->name;
    const Tensor& original = *originals[ca->name];
    EXPECT_EQ(ta.type(), original.type()) << ca->name;
    EXPECT_TRUE(ta.identical(*b.graph->constants()[i]->constant)) << ca->name;
    if (!is_float(ta.dtype()) || ta.numel() <= PrintOptions{}.max_constant_elements) {
      EXPECT_TRUE(ta.identical(original)) << ca->name;  // printed in full
      continue;
    }
    ++elided;
    EXPECT_FALSE(ta.identical(*c.graph->constants()[i]->constant)) << ca->name;
    EXPECT_FALSE(ta.identical(original)) << ca->name;
  }
  EXPECT_GT(elided, 0);
  EXPECT_EQ(graph_to_string(*a.graph), graph_to_string(*c.graph));  // elided the same way
}

// ---- malformed payloads --------------------------------------------------------------------

json small_payload() {
  static const json payload = [] {
    const Model m = load("tiny-bert-opset20", Precision::kF16);
    for (const Group& g : m.plan.groups)
      if (g.kind == GroupKind::kGemm) return make_fragment(*m.graph, m.plan, g, m.options);
    return json();
  }();
  return payload;
}

void expect_refused(const json& payload, const std::string& words) {
  try {
    load_fragment(payload, kSeed);
    ADD_FAILURE() << "accepted; expected an error with '" << words << "'";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Fragment, MalformedPayloadsAreRefusedNamingTheField) {
  const json good = small_payload();
  ASSERT_TRUE(good.is_object());
  EXPECT_NO_THROW(load_fragment(good, kSeed));

  expect_refused(json::array(), "expected a JSON object");
  json j = good;
  j.erase("ir");
  expect_refused(j, "missing \"ir\"");
  j = good;
  j["ir"] = 42;
  expect_refused(j, "\"ir\" must be a string");
  j = good;
  j.erase("threads");
  expect_refused(j, "missing \"threads\"");
  j = good;
  j["threads"] = "256";
  expect_refused(j, "\"threads\" must be an integer");
  j = good;
  j["precision"] = "fp8";
  expect_refused(j, "\"precision\" must be \"fp32\" or \"fp16\"");
  j = good;
  j["ranges"] = json::array();
  expect_refused(j, "\"ranges\" must be an object");
  j = good;
  j["ranges"]["no_such_value"] = 1.0;
  expect_refused(j, "\"ranges\" names %no_such_value");
  j = good;
  j["keep_fp32"] = json::array({"no_such_value"});
  expect_refused(j, "\"keep_fp32\" names %no_such_value");
  j = good;
  j["arena_inputs"] = json::array({"no_such_value"});
  expect_refused(j, "\"arena_inputs\": %no_such_value is not an input of the fragment");
  j = good;
  j["arena_inputs"] = "x";
  expect_refused(j, "\"arena_inputs\" must be an array");
  j = good;
  j["schedule"] = json::object();
  expect_refused(j, "unknown field \"schedule\"");
  j = good;
  j["inline_groups"] = 2;
  expect_refused(j, "\"inline_groups\" is 2, not in 0..1");
  j = good;
  j["prefetch_weights"] = false;  // a field of removed code (measured slower): refused, not ignored
  expect_refused(j, "unknown field \"prefetch_weights\"");

  // An elided constant whose count does not match its shape.
  const std::string ir = good["ir"];
  std::smatch match;
  ASSERT_TRUE(std::regex_search(ir, match, std::regex("<([0-9]+) elements>"))) << ir;
  j = good;
  j["ir"] = ir.substr(0, match.position(0)) + str_cat("<", std::stoll(match[1].str()) - 1, " elements>") +
            ir.substr(match.position(0) + match.length(0));
  expect_refused(j, "is elided with");
  // Bad IR text is reported as the "ir" field's, with its line.
  j = good;
  j["ir"] = ir + "junk";
  expect_refused(j, "fragment: \"ir\": IR text line");
}

// A group whose A is an activation in its model reads it from the arena in its fragment too:
// the payload names it in "arena_inputs", the fragment's kernel copies that input into the
// arena before its stage, and the group keeps its tensor map and its wgmma tile; an input of
// the model stays an input.
TEST(Fragment, ActivationInputsAreCopiedIntoTheArena) {
  const Model m = load("tiny-bert-opset20", Precision::kF16);
  int checked = 0;
  for (const Group& g : m.plan.groups) {
    if (!g.gemm.wgmma) continue;
    SCOPED_TRACE(g.nodes());
    const json payload = make_fragment(*m.graph, m.plan, g, m.options);
    // A, and a residual the epilogue adds, are activations in the model.
    const json& names = payload.at("arena_inputs");
    ASSERT_GE(names.size(), 1u) << payload.dump().substr(0, 400);
    EXPECT_NE(std::find(names.begin(), names.end(), m.plan.root(g.anchor->inputs[0])->name), names.end()) << names;
    const Rebuilt r = rebuild(payload);
    ASSERT_EQ(r.plan.arena_inputs.size(), names.size());
    for (const Value* in : r.plan.arena_inputs) EXPECT_EQ(r.plan.placement.at(in).space, Placement::kArena) << in->name;
    const std::string src = emit_cuda(*r.fragment.graph, r.plan, "fragment");
    EXPECT_NE(src.find("grid_copy(t_"), std::string::npos);
    EXPECT_NE(src.find("GemmWg<"), std::string::npos);
    EXPECT_NE(src.find("TensorK<half_t>"), std::string::npos);
    ++checked;
  }
  EXPECT_EQ(checked, 12);
  // The embedding Gather reads the model's input_ids: not an arena input in its fragment.
  for (const Group& g : m.plan.groups)
    if (g.anchor->op == OpKind::kGather) EXPECT_TRUE(make_fragment(*m.graph, m.plan, g, m.options).at("arena_inputs").empty());
}

// ---- printer and parser ----------------------------------------------------------------------

const char* const kIr = R"(graph g (opset 17) {
  input %x: f32[2,20]
  const %w: f32[20,20] = <400 elements>
  const %shape: i64[1] = [40]
  %y: f32[2,20] = MatMul(%x, %w)
  %z: f32[40] = Reshape(%y, %shape)
  output %z
}
)";

TEST(FragmentIr, PrinterElidesFloatConstantsOnly) {
  Graph g;
  g.opset = 17;
  Value* x = g.add_value("x", TensorType{DType::kI64, {40}});
  g.inputs.push_back(x);
  std::vector<int64_t> indices(40);
  for (int i = 0; i < 40; ++i) indices[i] = i % 7;
  Value* idx = g.add_constant("idx", Tensor::from_ints({40}, indices));
  Value* w = g.add_constant("w", Tensor::from_floats({40}, std::vector<float>(40, 0.5f)));
  Node* n = g.add_node(OpKind::kAdd, "add", {x, idx}, {"y"}, 17);
  n->outputs[0]->type = x->type;
  g.outputs.push_back(n->outputs[0]);
  (void)w;
  const std::string all = graph_to_string(g);
  EXPECT_NE(all.find("const %idx: i64[40] = <40 elements>"), std::string::npos) << all;
  PrintOptions floats_only;
  floats_only.elide_floats_only = true;
  const std::string text = graph_to_string(g, floats_only);
  EXPECT_NE(text.find("const %idx: i64[40] = [0, 1, 2, 3, 4, 5, 6, 0,"), std::string::npos) << text;
  EXPECT_NE(text.find("const %w: f32[40] = <40 elements>"), std::string::npos) << text;
}

TEST(FragmentIr, ParserFillsElidedConstantsOnlyWhenAsked) {
  try {
    parse_graph(kIr);
    ADD_FAILURE() << "an elided constant was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("constant %w is elided (<400 elements>)"), std::string::npos) << e.what();
  }
  ParseOptions fill;
  fill.fill_elided = true;
  fill.seed = 3;
  auto g = parse_graph(kIr, fill);
  infer_shapes(*g);
  verify_graph(*g, /*internal=*/false);
  const Tensor& w = *g->constants()[0]->constant;
  ASSERT_EQ(w.numel(), 400);
  const double bound = 1 / std::sqrt(20.0);
  double lo = 1, hi = -1;
  for (int64_t i = 0; i < w.numel(); ++i) lo = std::min(lo, w.as_double(i)), hi = std::max(hi, w.as_double(i));
  EXPECT_GE(lo, -bound);
  EXPECT_LE(hi, bound);
  EXPECT_LT(lo, -bound / 2);  // spread over the interval
  EXPECT_GT(hi, bound / 2);
  EXPECT_TRUE(w.identical(made_up_constant(w.type(), "w", 3)));
  EXPECT_FALSE(w.identical(made_up_constant(w.type(), "w", 4)));
  EXPECT_FALSE(w.identical(made_up_constant(w.type(), "v", 3)));
  // Integer constants and wrong counts are refused.
  std::string bad = kIr;
  bad.replace(bad.find("<400"), 4, "<399");
  EXPECT_THROW(parse_graph(bad, fill), UserError);
  std::string ints = kIr;
  ints.replace(ints.find("[40]\n"), 4, "<1 elements>");
  try {
    parse_graph(ints, fill);
    ADD_FAILURE() << "an elided integer constant was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("an elided i64 constant cannot be made up"), std::string::npos) << e.what();
  }
}

// A value that meets an fp32 GEMM outside the fragment stays fp32 in it: x feeds an fp16-able
// GEMM (x @ w1, w1 in range) and one whose weight w2 is out of fp16's range, which makes x
// fp32 for both.
TEST(Fragment, KeepsFp32ForGemmsOutsideTheFragment) {
  const char* text = R"(graph g (opset 17) {
  input %x: f32[16,32]
  const %w1: f32[32,32] = <1024 elements>
  const %w2: f32[32,32] = <1024 elements>
  %a: f32[16,32] = MatMul(%x, %w1) @mm1
  %b: f32[16,32] = MatMul(%x, %w2) @mm2
  output %a
  output %b
}
)";
  ParseOptions fill;
  fill.fill_elided = true;
  auto g = parse_graph(text, fill);
  infer_shapes(*g);
  PlanOptions o;
  o.settings.precision = Precision::kF16;
  o.ranges = float_ranges(*g, {Tensor::from_floats({16, 32}, std::vector<float>(512, 1.0f))});
  o.ranges[g->constants()[1]] = 1e6f;  // w2: out of fp16's range
  enable_signatures(&o);
  const KernelPlan plan = plan_kernel(*g, o);
  ASSERT_EQ(plan.groups.size(), 2u);
  const Group& mm1 = plan.groups[0];
  EXPECT_FALSE(mm1.f16);  // x is fp32 because of mm2
  const json payload = make_fragment(*g, plan, mm1, o);
  EXPECT_EQ(payload["keep_fp32"], json::array({"x", "w1"})) << payload.dump(1);
  const Rebuilt r = rebuild(payload);
  EXPECT_NE(find_group(r.plan, mm1.signature), nullptr);
  json without = payload;
  without.erase("keep_fp32");
  const Rebuilt wrong = rebuild(without);
  EXPECT_EQ(find_group(wrong.plan, mm1.signature), nullptr);  // what the field is for
}

// The worker compiles a whole-kernel job's configurations from the whole-model fragment, named
// as the artifact will be; the server builds the artifact from the worker's compile only when
// the compile keys agree (build_kernel's `offered`). So the fragment must emit the model's own
// source, byte for byte: every model, both precisions.
TEST(Fragment, WholeModelEmitsTheModelsOwnSource) {
  int models = 0;
  for (const std::string& name : model_names()) {
    for (Precision p : {Precision::kF32, Precision::kF16}) {
      SCOPED_TRACE(str_cat(name, " ", precision_name(p)));
      const Model m = load(name, p);
      const Rebuilt r = rebuild(make_fragment(*m.graph, m.plan, m.options));
      const std::string want = emit_cuda(*m.graph, m.plan, name), got = emit_cuda(*r.fragment.graph, r.plan, name);
      size_t at = 0;
      while (at < want.size() && at < got.size() && want[at] == got[at]) ++at;
      EXPECT_EQ(got, want) << "first difference at byte " << at << ": ..." << want.substr(at, 120) << "... against ..."
                           << got.substr(at, 120);
      ++models;
    }
  }
  EXPECT_GT(models, 0);
}

}  // namespace
}  // namespace mono::tuning
