// The service's final choice verifies what it ships (issue 18): the whole-kernel job compares
// every configuration with the CPU reference on the GPU; the chosen one carries a verification
// record into the artifact, and when every configuration gave wrong answers the submission is
// refused instead of shipping one.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "compiler/backend/build.h"
#include "compiler/driver/model.h"
#include "compiler/support/atomic_file.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/tuning/jobs.h"
#include "compiler/tuning/merge.h"
#include "compiler/tuning/signature.h"
#include "compiler/tuning/space.h"
#include "compiler/support/error.h"
#include "tests/db/db_test_util.h"

namespace mono::tuning {
namespace {

constexpr char kGpu[] = "NVIDIA H100 80GB HBM3";

struct Fixture {
  db::testing::TempDir dir;
  db::FakeClock clock{1000};
  std::unique_ptr<db::Store> store = db::testing::open_or_die(dir.file("mono.db"), &clock);
  PreparedModel model = prepare_model(std::string(MONO_SOURCE_DIR) + "/tests/data/models/tiny-resnet-opset17/model.onnx",
                                      "tiny-resnet", {}, Precision::kF32);
  TuningSpace space = enumerate_space(*model.graph, model.options);
  nlohmann::json fragment = whole_model_fragment(*model.graph, model.options);

  FinalChoice choose() { return final_choice(*store, fragment, space, kGpu, /*dry_run=*/false, "", "tiny-resnet"); }

  // Queues the whole-kernel job, leases it to a GPU worker and reports `results` for it.
  void run_whole_kernel_job(const std::function<db::CandidateResult(int config)>& result) {
    const FinalChoice f = choose();
    ASSERT_TRUE(f.pending && f.job_missing);
    const auto added = store->add_job(f.job);
    ASSERT_TRUE(added.ok()) << added.status();
    auto worker = store->register_worker("w", db::testing::gpu_caps(kGpu));
    ASSERT_TRUE(worker.ok()) << worker.status();
    auto leased = store->lease(*worker, 1, 60000);
    ASSERT_TRUE(leased.ok() && leased->size() == 1u);
    const int configs = static_cast<int>(nlohmann::json::parse(f.job.payload).at("configs").size());
    std::vector<db::CandidateResult> results;
    for (int c = 0; c < configs; ++c) results.push_back(result(c));
    db::Environment env;
    env.gpu_name = kGpu;
    auto reported = store->report(*worker, f.job.id, results, env);
    ASSERT_TRUE(reported.ok() && *reported);
  }
};

db::CandidateResult wrong(int config) {
  db::CandidateResult r;
  r.candidate = config;
  r.failure = db::FailureClass::kWrongAnswer;
  r.reason = "output 'y' differs from the reference: relative error 0.7 (tolerance 0.0001)";
  return r;
}

TEST(FinalChoice, EveryWholeKernelWrongIsRefused) {
  Fixture fx;
  fx.run_whole_kernel_job(wrong);
  const FinalChoice f = fx.choose();
  EXPECT_FALSE(f.pending);
  EXPECT_NE(f.refused.find("gave wrong answers on NVIDIA H100"), std::string::npos) << f.refused;
  EXPECT_NE(f.refused.find("relative error 0.7"), std::string::npos) << f.refused;
}

TEST(FinalChoice, TheChosenWholeKernelCarriesItsVerification) {
  Fixture fx;
  fx.run_whole_kernel_job([](int config) {
    if (config != 0) return wrong(config);  // the tuned contexts fail; the default passes
    db::CandidateResult r;
    r.candidate = 0;
    r.ok = true;
    r.samples_us = {10.0, 10.5, 10.2};
    r.median_us = 10.2;
    return r;
  });
  const FinalChoice f = fx.choose();
  EXPECT_TRUE(f.refused.empty()) << f.refused;
  ASSERT_TRUE(f.verification.is_object());
  EXPECT_TRUE(f.verification.at("verified").get<bool>());
  EXPECT_TRUE(f.verification.at("ok").get<bool>());
  EXPECT_EQ(f.verification.at("gpu"), kGpu);
  EXPECT_TRUE(f.choice.schedules.empty()) << "the default, the only correct configuration";
}

// The whole-kernel job names its kernels as the artifact will (the worker's compile of the
// fastest configuration is then the artifact's), and the name stays out of its id: mono-compile
// --db, which knows no name, finds the server's job.
TEST(FinalChoice, TheWholeKernelJobNamesTheKernelOutsideItsId) {
  Fixture fx;
  const FinalChoice named = fx.choose();
  EXPECT_EQ(nlohmann::json::parse(named.job.payload).at("name"), "tiny-resnet");
  const FinalChoice unnamed = final_choice(*fx.store, fx.fragment, fx.space, kGpu, false, "", "");
  EXPECT_FALSE(nlohmann::json::parse(unnamed.job.payload).contains("name"));
  EXPECT_EQ(unnamed.job.id, named.job.id);
}

TEST(FinalChoice, NamesTheConfigurationChosen) {
  Fixture fx;
  fx.run_whole_kernel_job([](int config) {
    db::CandidateResult r;
    r.candidate = config;
    r.ok = true;
    r.median_us = config == 1 ? 9.0 : 12.0;  // the best context wins
    r.samples_us = {r.median_us.value()};
    return r;
  });
  const FinalChoice f = fx.choose();
  EXPECT_FALSE(f.pending);
  EXPECT_EQ(f.config, 1);
}

// The artifact is built from a worker's compile of its configuration when the compile keys
// agree, without compiling; an offer under another key (another source, another NVRTC) is
// ignored and the artifact compiles its own kernel.
TEST(TunedArtifact, TakesTheWorkersKernelOnlyUnderItsOwnKey) {
  Fixture fx;
  const ContextChoice choice;  // the untuned default
  // What the worker sends: the same source compiled (here, on this machine), cubin and log.
  NvrtcOptions nvrtc;
  const BuiltKernel want = build_kernel(*fx.model.graph, fx.model.options, fx.model.label, nvrtc, /*compile=*/true);
  CompiledKernel offered = want.compiled;
  offered.cubin.insert(offered.cubin.end(), {'M', 'O', 'N', 'O'});  // marks the bytes taken (never loaded here)
  const nlohmann::json ok = {{"verified", false}};
  const std::string manifest =
      write_tuned_artifact(fx.model, choice, nlohmann::json::object(), ok, fx.dir.file("taken"), &offered);
  EXPECT_TRUE(nlohmann::json::parse(manifest).at("tuning").at("kernel_from_worker").get<bool>());
  std::string cubin;
  ASSERT_TRUE(read_file_whole(fx.dir.file("taken") + "/kernel.cubin", &cubin));
  EXPECT_EQ(cubin, std::string(offered.cubin.begin(), offered.cubin.end()));

  CompiledKernel other = offered;
  other.key = "0123456789abcdef";
  other.cubin.assign(16, '\0');  // not a kernel: loading it would fail
  const std::string compiled =
      write_tuned_artifact(fx.model, choice, nlohmann::json::object(), ok, fx.dir.file("compiled"), &other);
  EXPECT_FALSE(nlohmann::json::parse(compiled).at("tuning").at("kernel_from_worker").get<bool>());
  ASSERT_TRUE(read_file_whole(fx.dir.file("compiled") + "/kernel.cubin", &cubin));
  EXPECT_EQ(cubin, std::string(want.compiled.cubin.begin(), want.compiled.cubin.end()));
}

TEST(FinalChoice, ADryRunIsRecordedAsNotVerified) {
  Fixture fx;
  const FinalChoice f = final_choice(*fx.store, nlohmann::json(), fx.space, dry_run_kind(), /*dry_run=*/true, "s1", "tiny-resnet");
  EXPECT_FALSE(f.verification.at("verified").get<bool>());
  EXPECT_NE(f.verification.at("reason").get<std::string>().find("dry run"), std::string::npos);
}


// Results are keyed by the tuning code version (kSignatureVersion is part of every group
// signature): a database holding the same task measured by an older version of the code never
// lends that measurement to the current one, however fast it was. Shown with both versions'
// tasks in one database: the older task's result is 100x faster, the choice ignores it.
TEST(ModelChoice, ARecordOfAnotherCodeVersionIsNeverUsed) {
  Fixture fx;
  TuningPlanOptions po;
  po.task_gpu_kind = kGpu;
  const TuningPlan plan = plan_tuning(fx.model, po);
  ASSERT_FALSE(plan.tasks.empty());
  // The first task of the first context, and its twin as the previous code version keyed it.
  const db::TaskPlan& now = plan.tasks.front();
  const TuningTask* task = nullptr;
  for (const TuningTask& t : plan.space.tasks)
    if (t.signature == now.signature && context_to_string(t.context) == now.context) task = &t;
  ASSERT_NE(task, nullptr);
  ASSERT_GE(task->candidates.size(), 2u);
  const std::string version = str_cat("mono-group-signature v", kSignatureVersion, "\n");
  ASSERT_EQ(task->signature_text.rfind(version, 0), 0u) << task->signature_text.substr(0, 40);
  db::TaskPlan old = now;
  old.signature = signature_hash(str_cat("mono-group-signature v", kSignatureVersion - 1, "\n") +
                                 task->signature_text.substr(version.size()));
  ASSERT_NE(old.signature, now.signature);
  nlohmann::json old_payload = nlohmann::json::parse(now.payload);
  old_payload["task"]["signature"] = old.signature;
  old_payload["task"]["signature_version"] = kSignatureVersion - 1;
  old.payload = old_payload.dump();
  for (db::NewJob& j : old.jobs) j.id = "old-" + j.id;
  db::SubmissionRecord sub;
  sub.model_name = "tiny-resnet";
  auto sid = fx.store->create_submission(sub);
  ASSERT_TRUE(sid.ok()) << sid.status();
  auto added = fx.store->add_plan(*sid, {now, old});
  ASSERT_TRUE(added.ok()) << added.status();

  // Every job of both tasks measured: the old version's non-default candidate at 0.1 us, the
  // current version's default at 10 us and the others slower.
  auto worker = fx.store->register_worker("w", db::testing::gpu_caps(kGpu));
  ASSERT_TRUE(worker.ok()) << worker.status();
  auto leased = fx.store->lease(*worker, 1000, 60000);
  ASSERT_TRUE(leased.ok()) << leased.status();
  int reported = 0;
  for (const db::JobRecord& j : *leased) {
    const nlohmann::json payload = nlohmann::json::parse(j.payload);
    if (!payload.contains("candidates")) continue;
    const bool is_old = j.id.rfind("old-", 0) == 0;
    std::vector<db::CandidateResult> results;
    for (const nlohmann::json& c : payload.at("candidates")) {
      db::CandidateResult r;
      r.candidate = c.at("index").get<int>();
      r.ok = true;
      const double us = c.value("default", false) ? 10.0 : is_old ? 0.1 : 12.0;
      r.samples_us = {us, us, us};
      r.median_us = us;
      results.push_back(r);
    }
    db::Environment env;
    env.gpu_name = kGpu;
    auto rep = fx.store->report(*worker, j.id, results, env);
    ASSERT_TRUE(rep.ok() && *rep) << j.id;
    ++reported;
  }
  ASSERT_GE(reported, 2);
  // Per context, the current task's best is its own default at 10 us (the choice's
  // records), never the old task's 0.1 us.
  const std::vector<ContextChoice> per_context = choose_schedules(*fx.store, fx.space, kGpu, false);
  bool seen = false;
  for (const ContextChoice& c : per_context)
    for (const nlohmann::json& r : c.records) {
      EXPECT_NE(r.at("task_id").get<int64_t>(), added->task_ids[1]) << "a record of the older code version was used";
      if (r.at("task_id").get<int64_t>() == added->task_ids[0]) {
        seen = true;
        EXPECT_EQ(r.at("median_us").get<double>(), 10.0) << r.dump();
      }
    }
  EXPECT_TRUE(seen) << "the current version's own record was not used";
  const ModelChoice m = model_choice(*fx.store, "the test database", kGpu, fx.space, [&] { return fx.fragment; });
  EXPECT_TRUE(m.pending);  // the whole-kernel job is not queued in this test
  for (const nlohmann::json& r : m.choice.records) EXPECT_NE(r.at("task_id").get<int64_t>(), added->task_ids[1]);
  EXPECT_EQ(m.choice.schedules.count(old.signature), 0u);
}


// Groups that share a stage share the grid (issue 21 point 3): three projections of one
// input (BERT's Q, K, V) planned into one stage are chosen together. A schedule that measured
// faster alone but whose items, three times over, need a second round of the grid loses to one
// that keeps the stage in one round; where the grid is large enough (2 blocks per SM) the faster
// one is chosen. The space records the shared stage and it survives the wire.
TEST(ModelChoice, GroupsSharingAStageAreChosenTogether) {
  db::testing::TempDir dir;
  db::FakeClock clock{1000};
  std::unique_ptr<db::Store> store = db::testing::open_or_die(dir.file("mono.db"), &clock);
  ParseOptions parse;
  parse.fill_elided = true;
  PreparedModel model;
  model.label = "qkv";
  model.graph = parse_graph(
      "graph g (opset 20) {\n"
      "  input %x: f32[1,128,768]\n"
      "  const %wq: f32[768,768] = <589824 elements>\n"
      "  const %wk: f32[768,768] = <589824 elements>\n"
      "  const %wv: f32[768,768] = <589824 elements>\n"
      "  %q: f32[1,128,768] = MatMul(%x, %wq) @q\n"
      "  %k: f32[1,128,768] = MatMul(%x, %wk) @k\n"
      "  %v: f32[1,128,768] = MatMul(%x, %wv) @v\n"
      "  output %q\n  output %k\n  output %v\n}\n",
      parse);
  infer_shapes(*model.graph);
  model.options.settings.precision = Precision::kF16;
  TuningPlanOptions po;
  po.task_gpu_kind = kGpu;
  const TuningPlan plan = plan_tuning(model, po);
  ASSERT_FALSE(plan.space.shared_stages.empty());
  for (const SharedStage& ss : plan.space.shared_stages) EXPECT_EQ(ss.signatures.size(), 3u);
  const TuningSpace wired = space_from_wire(space_to_wire(plan.space));
  ASSERT_EQ(wired.shared_stages.size(), plan.space.shared_stages.size());
  EXPECT_EQ(wired.shared_stages[0].signatures, plan.space.shared_stages[0].signatures);
  EXPECT_EQ(wired.shared_stages[0].grid, plan.space.shared_stages[0].grid);

  db::SubmissionRecord sub;
  sub.model_name = "qkv";
  auto sid = store->create_submission(sub);
  ASSERT_TRUE(sid.ok()) << sid.status();
  auto added = store->add_plan(*sid, plan.tasks);
  ASSERT_TRUE(added.ok()) << added.status();
  // Items of each task's candidates, by job payload index.
  std::map<std::string, nlohmann::json> task_candidates;  // signature + context -> candidates
  for (const db::TaskPlan& t : plan.tasks)
    task_candidates[t.signature + t.context] = nlohmann::json::parse(t.payload).at("task").at("candidates");
  // Measured: the default 10 us; a candidate whose three copies need more than one round of
  // the 1-block grid (132) 9 us; the others 11 us.
  auto worker = store->register_worker("w", db::testing::gpu_caps(kGpu));
  ASSERT_TRUE(worker.ok()) << worker.status();
  auto leased = store->lease(*worker, 1000, 60000);
  ASSERT_TRUE(leased.ok()) << leased.status();
  bool faster_alone = false;
  for (const db::JobRecord& j : *leased) {
    const nlohmann::json payload = nlohmann::json::parse(j.payload);
    if (!payload.contains("candidates")) continue;
    const nlohmann::json& cands =
        task_candidates.at(payload.at("signature").get<std::string>() + context_to_string(context_from_json(payload.at("context"))));
    std::vector<db::CandidateResult> results;
    for (const nlohmann::json& c : payload.at("candidates")) {
      const int i = c.at("index").get<int>();
      const int64_t items = cands.at(i).at("items").get<int64_t>();
      db::CandidateResult r;
      r.candidate = i;
      r.ok = true;
      const double us = cands.at(i).value("default", false) ? 10.0 : 3 * items > 132 ? 9.0 : 11.0;
      faster_alone = faster_alone || us == 9.0;
      r.samples_us = {us, us, us};
      r.median_us = us;
      results.push_back(r);
    }
    db::Environment env;
    env.gpu_name = kGpu;
    auto rep = store->report(*worker, j.id, results, env);
    ASSERT_TRUE(rep.ok() && *rep) << j.id;
  }
  ASSERT_TRUE(faster_alone) << "no candidate needs a second round: the test would show nothing";
  const std::vector<ContextChoice> per_context = choose_schedules(*store, plan.space, kGpu, false);
  ASSERT_EQ(per_context.size(), plan.space.contexts.size());
  for (const ContextChoice& c : per_context) {
    SCOPED_TRACE(c.context.key());
    const int grid = 132 * c.context.blocks_per_sm;
    ASSERT_EQ(c.records.size(), 1u);
    const nlohmann::json& r = c.records[0];
    const std::string key = r.at("signature").get<std::string>() + context_to_string(c.context);
    const int64_t items = task_candidates.at(key).at(r.at("candidate").get<int>()).at("items").get<int64_t>();
    EXPECT_LE(3 * items, grid) << r.dump();
    // 1 block/SM: the 9 us candidates need two rounds, so the default's one round (10 us) wins;
    // 2 blocks/SM (264): a 9 us candidate whose three copies fit one round wins, if any.
    bool fits_faster = false;
    for (const nlohmann::json& cand : task_candidates.at(key))
      fits_faster = fits_faster || (!cand.value("default", false) && 3 * cand.at("items").get<int64_t>() > 132 &&
                                    3 * cand.at("items").get<int64_t>() <= grid);
    EXPECT_EQ(r.at("median_us").get<double>(), fits_faster ? 9.0 : 10.0) << r.dump();
  }
}

// What the TunedChoice RPC carries: the space round-trips; a malformed or oversized one is
// refused naming what is wrong (the server parses it from an untrusted client).
TEST(Wire, SpaceAndChoiceRoundTripAndBadSpacesAreRefused) {
  Fixture fx;
  const TuningSpace back = space_from_wire(nlohmann::json::parse(space_to_wire(fx.space).dump()));
  ASSERT_EQ(back.contexts, fx.space.contexts);
  ASSERT_EQ(back.tasks.size(), fx.space.tasks.size());
  for (size_t i = 0; i < back.tasks.size(); ++i) {
    EXPECT_EQ(back.tasks[i].signature, fx.space.tasks[i].signature);
    EXPECT_EQ(back.tasks[i].context, fx.space.tasks[i].context);
    EXPECT_EQ(back.tasks[i].groups.size(), fx.space.tasks[i].groups.size());
    EXPECT_EQ(back.tasks[i].default_est_us, fx.space.tasks[i].default_est_us);
  }
  ModelChoice m;
  m.gpu_kind = kGpu;
  m.pending = true;
  m.info = {{"note", "x"}};
  m.choice.context = fx.space.contexts.back();
  Schedule s;
  s.kind = GroupKind::kGemm;
  s.gemm = GemmSchedule{64, 64, 128, 4, 2, 4, 1, true};
  m.choice.schedules[fx.space.tasks.front().signature] = s;
  m.choice.groups_tuned = 3;
  const ModelChoice b = model_choice_from_json(nlohmann::json::parse(model_choice_to_json(m).dump()));
  EXPECT_EQ(b.gpu_kind, m.gpu_kind);
  EXPECT_TRUE(b.pending);
  EXPECT_EQ(b.choice.context, m.choice.context);
  EXPECT_EQ(b.choice.schedules, m.choice.schedules);
  EXPECT_EQ(b.choice.groups_tuned, 3);

  auto refused = [](const nlohmann::json& j, const std::string& words) {
    try {
      space_from_wire(j);
      ADD_FAILURE() << "accepted: " << j.dump().substr(0, 200);
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  const nlohmann::json good = space_to_wire(fx.space);
  nlohmann::json j = good;
  j["contexts"].push_back(j["contexts"][0]);
  refused(j, "is listed twice");
  j = good;
  j["tasks"][0]["groups"] = 2000000;
  refused(j, "at most 1000000 in all");
  j = good;
  j["tasks"][0]["signature"] = "not-hex";
  refused(j, "is not 16 lower-case hex digits");
  j = good;
  j["tasks"][0]["signature"] = nlohmann::json::array();
  refused(j, "\"signature\" has the wrong type (array)");
  j = good;
  j.erase("contexts");
  refused(j, "missing \"contexts\"");
  // Shared stages: optional, but checked where given.
  j = good;
  j.erase("shared_stages");
  EXPECT_TRUE(space_from_wire(j).shared_stages.empty());
  j = good;
  j["shared_stages"] = nlohmann::json::array(
      {{{"context", j["contexts"][0]}, {"signatures", {"0123456789abcdef", "0123456789abcdef"}}, {"count", 1}, {"grid", 132}}});
  refused(j, "which is no task of its context");
  j["shared_stages"][0]["signatures"] = {good["tasks"][0]["signature"]};
  refused(j, "must name 2 to 64 signatures");
  j["shared_stages"][0]["signatures"] = {good["tasks"][0]["signature"], good["tasks"][0]["signature"]};
  j["shared_stages"][0]["context"] = good["tasks"][0]["context"];
  j["shared_stages"][0]["grid"] = 0;
  refused(j, "grid 0");
  j["shared_stages"][0]["grid"] = 132;
  EXPECT_EQ(space_from_wire(j).shared_stages.size(), 1u);
}

}  // namespace
}  // namespace mono::tuning

namespace mono::tuning {
namespace {

// Every candidate a plan's jobs carry, per task (task order), as candidate indices.
std::vector<std::vector<int>> planned_candidates(const TuningPlan& plan) {
  std::vector<std::vector<int>> out;
  for (const db::TaskPlan& t : plan.tasks) {
    std::vector<int> idx;
    for (const db::NewJob& j : t.jobs) {
      const nlohmann::json payload = nlohmann::json::parse(j.payload);
      for (const auto& c : payload.at("candidates")) idx.push_back(c.at("index").get<int>());
    }
    out.push_back(idx);
  }
  return out;
}

// mono-submit --budget N: at most N candidates in all, every task's default among them, the
// rest to the heaviest tasks (instances x default estimate) in their estimate order; a budget
// below the task count is refused; the plan is the same when made again (a restarted server).
TEST(Budget, CapsMeasurementsKeepsDefaultsAndFavoursHeavyTasks) {
  const PreparedModel model = prepare_model(std::string(MONO_SOURCE_DIR) + "/tests/data/models/tiny-bert-opset20/model.onnx",
                                            "tiny-bert", {}, Precision::kF16);
  TuningPlanOptions po;
  po.task_gpu_kind = "gpu";
  const TuningPlan all = plan_tuning(model, po);
  const size_t tasks = all.tasks.size();
  ASSERT_GT(all.candidates, static_cast<int64_t>(tasks) + 4);

  po.budget = static_cast<int64_t>(tasks) + 3;
  const TuningPlan capped = plan_tuning(model, po);
  EXPECT_EQ(capped.candidates, po.budget);
  const std::vector<std::vector<int>> got = planned_candidates(capped);
  ASSERT_EQ(got.size(), tasks);
  // Which tasks weigh most: the three extra candidates go to the three heaviest that have any.
  std::vector<size_t> order(tasks);
  for (size_t t = 0; t < tasks; ++t) order[t] = t;
  const auto weight = [&](size_t t) { return capped.space.tasks[t].groups.size() * capped.space.tasks[t].default_est_us; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight(a) > weight(b); });
  std::set<size_t> extra;
  for (size_t t : order)
    if (extra.size() < 3 && capped.space.tasks[t].candidates.size() > 1) extra.insert(t);
  for (size_t t = 0; t < tasks; ++t) {
    const std::vector<Candidate>& cands = capped.space.tasks[t].candidates;
    int defaults = 0;
    for (int i : got[t]) defaults += cands.at(i).is_default;
    EXPECT_EQ(defaults, 1) << "task " << t << " must measure its default";
    EXPECT_EQ(got[t].size(), extra.count(t) ? 2u : 1u) << "task " << t;
    if (extra.count(t)) {  // its best estimate that is not the default
      const int best = cands.at(0).is_default ? 1 : 0;
      EXPECT_NE(std::find(got[t].begin(), got[t].end(), best), got[t].end()) << "task " << t;
    }
  }
  EXPECT_EQ(planned_candidates(plan_tuning(model, po)), got);  // deterministic

  po.budget = 1'000'000'000;  // more than there is: everything, in the same jobs
  const TuningPlan everything = plan_tuning(model, po);
  EXPECT_EQ(everything.candidates, all.candidates);
  const auto job_ids = [](const TuningPlan& p) {
    std::set<std::string> ids;
    for (const db::TaskPlan& t : p.tasks)
      for (const db::NewJob& j : t.jobs) ids.insert(j.id);
    return ids;
  };
  const std::set<std::string> all_ids = job_ids(all);
  EXPECT_EQ(job_ids(everything), all_ids);
  // All but one candidate: every batch but one is taken whole, and is the same job as without
  // a budget (measurements are shared by job, so they are not repeated).
  po.budget = all.candidates - 1;
  const std::set<std::string> most = job_ids(plan_tuning(model, po));
  size_t shared = 0;
  for (const std::string& id : most) shared += all_ids.count(id);
  EXPECT_GE(shared + 1, most.size());
  EXPECT_GE(shared + 1, all_ids.size());
  po.budget = static_cast<int64_t>(tasks) - 1;
  try {
    plan_tuning(model, po);
    ADD_FAILURE() << "a budget below the task count was accepted";
  } catch (const BudgetTooSmall& e) {
    EXPECT_NE(std::string(e.what()).find("--budget " + std::to_string(tasks - 1) + " is below"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mono::tuning
