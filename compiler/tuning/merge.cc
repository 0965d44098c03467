#include "compiler/tuning/merge.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "compiler/backend/artifact_writer.h"
#include "compiler/backend/verify.h"
#include "compiler/runtime/nvrtc_compiler.h"
#include "compiler/support/error.h"
#include "compiler/tuning/signature.h"

namespace mono::tuning {

using nlohmann::json;

namespace {

// One usable result of a task: a candidate's schedule, its value (median, or the estimate in
// a dry run), its work items, and where it came from (for its record).
struct Usable {
  Schedule schedule;
  double us = 0;
  int64_t items = 0;
  bool is_default = false;
  const db::ResultRecord* result = nullptr;  // in TaskBest::results
  const json* candidate = nullptr;           // in TaskBest::candidates
};

// What the database holds for one task: its usable results, the fastest first, and the one
// chosen (the fastest, unless its stage's groups were chosen together).
struct TaskBest {
  // Moved, never copied: `usable` points into `results` and `candidates`.
  TaskBest() = default;
  TaskBest(TaskBest&&) = default;
  TaskBest& operator=(TaskBest&&) = default;
  TaskBest(const TaskBest&) = delete;
  TaskBest& operator=(const TaskBest&) = delete;

  int64_t task_id = 0;
  json candidates;                        // the task payload's
  std::vector<db::ResultRecord> results;  // of all its jobs
  std::vector<Usable> usable;
  size_t chosen = 0;                      // in usable
  bool measured = false;
  double default_us = 0;  // the default candidate's median where measured, else its estimate
  bool default_measured = false;

  bool found() const { return !usable.empty(); }
  const Usable& pick() const { return usable.at(chosen); }
  // The database record the chosen schedule comes from (the artifact's manifest cites it).
  json record(const std::string& signature) const {
    const Usable& u = pick();
    const db::ResultRecord& r = *u.result;
    json rec = {{"task_id", task_id},         {"signature", signature},     {"job_id", r.job_id},
                {"candidate", r.result.candidate}, {"worker_id", r.worker_id}, {"schedule", u.candidate->at("schedule")}};
    if (!measured) {
      rec["est_us"] = u.us;
      rec["measured"] = false;
      return rec;
    }
    rec["median_us"] = u.us;
    rec["samples_us"] = r.result.samples_us;
    rec["measured"] = true;
    try {
      rec["environment"] = json::parse(r.env_json);
    } catch (const std::exception&) {
    }
    return rec;
  }
};

TaskBest best_of_task(db::Store& store, const TuningTask& t, const std::string& kind, bool dry_run) {
  TaskBest best;
  best.default_us = t.default_est_us;
  auto rec = store.find_task(t.signature, kind, context_to_string(t.context));
  if (!rec.ok()) return best;
  best.task_id = rec->id;
  try {
    best.candidates = json::parse(rec->payload).at("task").at("candidates");
  } catch (const std::exception&) {
    return best;  // a payload this build cannot read: treat as untuned
  }
  auto jobs = store.task_jobs(rec->id);
  if (!jobs.ok()) return best;
  for (const db::JobRecord& j : *jobs) {
    auto results = store.job_results(j.id);
    if (results.ok()) best.results.insert(best.results.end(), results->begin(), results->end());
  }
  for (const db::ResultRecord& r : best.results) {
    const db::CandidateResult& c = r.result;
    if (c.candidate < 0 || c.candidate >= static_cast<int>(best.candidates.size()) || !c.ok) continue;
    const json& cand = best.candidates[c.candidate];
    const bool is_default = cand.value("default", false);
    double value;
    if (dry_run) {
      if (c.spill_bytes > 0) continue;  // compiled, but spills: not a dry run's pick
      value = cand.at("est_us").get<double>();
    } else {
      if (!c.median_us) continue;
      value = *c.median_us;
      if (is_default) {
        best.default_us = value;
        best.default_measured = true;
      }
    }
    best.usable.push_back({schedule_from_json(cand.at("schedule")), value, cand.value("items", int64_t{0}), is_default,
                           &r, &cand});
  }
  // The fastest first; among equals the first found, as the chosen one always was.
  std::stable_sort(best.usable.begin(), best.usable.end(), [](const Usable& a, const Usable& b) { return a.us < b.us; });
  best.measured = best.found() && !dry_run;
  return best;
}

// A stage's time from its groups' timings alone: they share the grid, so about ceil(all items
// / grid) rounds of the slowest group's round (a group timed alone took ceil(items / grid)).
double shared_stage_us(const std::vector<const Usable*>& groups, int grid) {
  int64_t items = 0;
  double round_us = 0;
  for (const Usable* u : groups) {
    const int64_t own = std::max<int64_t>(u->items, 1);
    items += own;
    round_us = std::max(round_us, u->us / static_cast<double>((own + grid - 1) / grid));
  }
  return round_us * static_cast<double>((std::max<int64_t>(items, 1) + grid - 1) / grid);
}

// Chooses together the schedules of the tasks that share stages of `ctx` (SharedStage): per
// stage composition, the combination of the tasks' usable results with the least time over
// the model, counting each such stage as shared_stage_us and the tasks' other groups at their
// own time. Every usable result takes part while the combinations number at most
// kMaxCombinations; past that, each task's fastest ones (and its default). A task already
// chosen by an earlier composition keeps its choice. `best` is by signature.
void choose_shared_stages(const TuningSpace& space, const Context& ctx, std::map<std::string, TaskBest>* best) {
  constexpr double kMaxCombinations = 20000;
  std::map<std::string, int> in_shared;  // groups of each task that sit in shared stages
  for (const SharedStage& ss : space.shared_stages)
    if (ss.context == ctx)
      for (const std::string& sig : ss.signatures) in_shared[sig] += ss.count;
  std::map<std::string, int> groups;
  for (const TuningTask& t : space.tasks)
    if (t.context == ctx) groups[t.signature] = static_cast<int>(t.groups.size());
  std::set<std::string> fixed;
  for (const SharedStage& ss : space.shared_stages) {
    if (ss.context != ctx || ss.grid <= 0) continue;
    std::vector<std::string> tasks;  // unique, in order
    for (const std::string& sig : ss.signatures)
      if (std::find(tasks.begin(), tasks.end(), sig) == tasks.end()) tasks.push_back(sig);
    std::vector<std::vector<const Usable*>> options;
    bool usable = true;
    double combinations = 1;
    for (const std::string& sig : tasks) {
      auto it = best->find(sig);
      usable = usable && it != best->end() && it->second.found();
      if (usable && !fixed.count(sig)) combinations *= static_cast<double>(it->second.usable.size());
    }
    // Options per task when the combinations must be cut (each task its fastest this many).
    const size_t per_task = combinations <= kMaxCombinations
                                ? std::numeric_limits<size_t>::max()
                                : static_cast<size_t>(std::max(2.0, std::floor(std::pow(kMaxCombinations, 1.0 / tasks.size()))));
    for (const std::string& sig : tasks) {
      if (!usable) break;
      const TaskBest& b = best->at(sig);
      std::vector<const Usable*> o;
      for (const Usable& u : b.usable)  // fastest first
        if (fixed.count(sig) ? &u == &b.pick() : (o.size() < per_task || u.is_default)) o.push_back(&u);
      if (o.empty()) {
        usable = false;
        break;
      }
      options.push_back(std::move(o));
    }
    if (!usable) continue;
    std::vector<size_t> pick(tasks.size(), 0), best_pick = pick;
    double best_total = std::numeric_limits<double>::infinity();
    while (true) {
      std::vector<const Usable*> stage;
      for (const std::string& sig : ss.signatures) {
        const size_t i = static_cast<size_t>(std::find(tasks.begin(), tasks.end(), sig) - tasks.begin());
        stage.push_back(options[i][pick[i]]);
      }
      double total = ss.count * shared_stage_us(stage, ss.grid);
      for (size_t i = 0; i < tasks.size(); ++i)
        total += std::max(0, groups[tasks[i]] - in_shared[tasks[i]]) * options[i][pick[i]]->us;
      if (total < best_total) {
        best_total = total;
        best_pick = pick;
      }
      size_t d = 0;  // the next combination (odometer)
      while (d < pick.size() && ++pick[d] == options[d].size()) pick[d++] = 0;
      if (d == pick.size()) break;
    }
    for (size_t i = 0; i < tasks.size(); ++i) {
      TaskBest& b = best->at(tasks[i]);
      b.chosen = static_cast<size_t>(options[i][best_pick[i]] - b.usable.data());
      fixed.insert(tasks[i]);
    }
  }
}

}  // namespace

std::vector<ContextChoice> choose_schedules(db::Store& store, const TuningSpace& space,
                                            const std::string& task_gpu_kind, bool dry_run) {
  std::vector<ContextChoice> out;
  for (const Context& ctx : space.contexts) {
    ContextChoice c;
    c.context = ctx;
    std::map<std::string, TaskBest> best;
    for (const TuningTask& t : space.tasks)
      if (t.context == ctx) best[t.signature] = best_of_task(store, t, task_gpu_kind, dry_run);
    choose_shared_stages(space, ctx, &best);
    for (const TuningTask& t : space.tasks) {
      if (t.context != ctx) continue;
      const int n = static_cast<int>(t.groups.size());
      const TaskBest& b = best.at(t.signature);
      if (b.found()) {
        c.schedules[t.signature] = b.pick().schedule;
        c.records.push_back(b.record(t.signature));
        c.groups_tuned += n;
        c.total_us += n * b.pick().us;
        c.all_measured = c.all_measured && b.measured;
      } else {
        c.groups_default += n;
        c.total_us += n * t.default_est_us;
        c.all_measured = false;
      }
      c.default_total_us += n * b.default_us;
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// What a whole-kernel job times, in its order: config 0 the untuned default (the default
// context, no tuned schedules), then the top contexts.
std::vector<ContextChoice> whole_kernel_configs(const std::vector<ContextChoice>& top) {
  std::vector<ContextChoice> configs = {ContextChoice{}};
  configs.insert(configs.end(), top.begin(), top.end());
  return configs;
}

}  // namespace

db::NewJob whole_kernel_job(const json& model_fragment, const std::string& submission_id, const std::string& gpu_kind,
                            const std::vector<ContextChoice>& top, const std::string& kernel_name) {
  json configs = json::array();
  for (const ContextChoice& c : whole_kernel_configs(top)) {
    json s = json::object();
    for (const auto& [sig, sched] : c.schedules) s[sig] = schedule_to_json(sched);
    configs.push_back({{"index", configs.size()},
                       {"label", configs.empty() ? std::string("default (untuned)") : "tuned, " + c.context.str()},
                       {"context", context_to_json(c.context)},
                       {"schedules", s}});
  }
  json payload = {{"kind", "whole_kernel"}, {"fragment", model_fragment}, {"configs", configs}};
  db::NewJob job;
  job.kind = db::JobKind::kWholeKernel;
  job.gpu_kind = gpu_kind;
  job.submission_id = submission_id;
  // The name is left out of the id: mono-compile --db finds the server's job under any name.
  job.id = job_id("w", gpu_kind + "|" + payload.dump());
  if (!kernel_name.empty()) payload["name"] = kernel_name;
  job.payload = payload.dump();
  return job;
}

FinalChoice final_choice(db::Store& store, const json& model_fragment, const TuningSpace& space,
                         const std::string& task_gpu_kind, bool dry_run, const std::string& submission_id,
                         const std::string& kernel_name) {
  std::vector<ContextChoice> choices = choose_schedules(store, space, task_gpu_kind, dry_run);
  std::sort(choices.begin(), choices.end(),
            [](const ContextChoice& a, const ContextChoice& b) { return a.total_us < b.total_us; });
  FinalChoice f;
  if (dry_run) {
    f.choice = choices.front();
    f.info = {{"measured", false},
              {"note", "dry run: nothing was measured on a GPU; each group's schedule is the cost model's choice "
                       "among the candidates that compiled without spills, and the context is the one with the "
                       "lowest total estimate"},
              {"estimated_total_us", f.choice.total_us},
              {"estimated_default_us", f.choice.default_total_us}};
    f.verification = unverified_record("a dry run: nothing ran on a GPU");
    return f;
  }
  choices.resize(std::min<size_t>(choices.size(), static_cast<size_t>(kWholeKernelContexts)));
  f.job = whole_kernel_job(model_fragment, submission_id, task_gpu_kind, choices, kernel_name);
  auto job = store.get_job(f.job.id);
  if (!job.ok()) {
    f.pending = f.job_missing = true;
    f.choice = choices.front();
    return f;
  }
  if (job->state == db::JobState::kQueued || job->state == db::JobState::kLeased) {
    f.pending = true;
    f.choice = choices.front();
    return f;
  }
  // Config 0 is the untuned default, config i the i-th best context.
  double default_us = 0, best_us = std::numeric_limits<double>::infinity();
  int best = -1, wrong = 0;
  std::string wrong_reason;
  json configs = json::array();
  auto results = store.job_results(job->id);
  for (const db::ResultRecord& r : results.ok() ? *results : std::vector<db::ResultRecord>{}) {
    const db::CandidateResult& c = r.result;
    configs.push_back({{"config", c.candidate},
                       {"ok", c.ok},
                       {"median_us", c.median_us ? json(*c.median_us) : json(nullptr)},
                       {"samples_us", c.samples_us},
                       {"failure", db::to_string(c.failure)},
                       {"reason", c.reason}});
    if (c.failure == db::FailureClass::kWrongAnswer && wrong++ == 0) wrong_reason = c.reason;
    if (!c.ok || !c.median_us) continue;
    if (c.candidate == 0) default_us = *c.median_us;
    if (*c.median_us < best_us) {
      best_us = *c.median_us;
      best = c.candidate;
    }
  }
  f.info = {{"measured", true}, {"gpu_kind", task_gpu_kind}, {"whole_kernel_job", job->id}, {"whole_kernel", configs}};
  if (default_us > 0) f.info["default_us"] = default_us;
  if (best < 0 && wrong > 0 && wrong == static_cast<int>(configs.size())) {
    // Never an artifact that gives wrong answers: the submission fails with the reason.
    f.refused = str_cat("every whole kernel (", wrong, ") gave wrong answers on ", task_gpu_kind, " in job ", job->id,
                        ": ", wrong_reason);
    return f;
  }
  if (best < 0) {
    f.verification = unverified_record("no whole kernel could be run on " + task_gpu_kind + " (" + job->failure_reason + ")");
    f.info["note"] = "no whole kernel could be timed (" + job->failure_reason +
                     "); the schedules are the per-group measurements of the best context, unverified as a whole";
    f.choice = choices.front();
    return f;
  }
  // The runner compared the chosen kernel's outputs with the CPU reference before timing it.
  f.verification = {{"verified", true},
                    {"ok", true},
                    {"worst_relative_error", "within the tolerance"},
                    {"against", "the CPU reference on synthetic inputs, whole-kernel job " + job->id},
                    {"gpu", task_gpu_kind}};
  f.info["tuned_us"] = best_us;
  if (default_us > 0) f.info["speedup"] = default_us / best_us;
  f.config = best;
  if (best == 0) {
    f.info["note"] = "the untuned default schedules were the fastest whole kernel";
    f.choice = ContextChoice{};
  } else {
    f.choice = choices.at(best - 1);
  }
  return f;
}

ModelChoice model_choice(db::Store& store, const std::string& where, std::string gpu_kind, const TuningSpace& space,
                         const std::function<json()>& fragment) {
  auto kinds = store.task_gpu_kinds();
  if (!kinds.ok()) user_error(where, ": ", std::string(kinds.status().message()));
  if (gpu_kind.empty()) {
    if (kinds->empty()) user_error(where, ": the database has no tuning results");
    if (kinds->size() > 1) {
      std::string list;
      for (const std::string& k : *kinds) list += (list.empty() ? "'" : ", '") + k + "'";
      user_error(where, " has results for several GPU kinds (", list, "): name one with --gpu-kind");
    }
    gpu_kind = kinds->front();
  } else if (std::find(kinds->begin(), kinds->end(), gpu_kind) == kinds->end()) {
    user_error(where, " has no results for GPU kind '", gpu_kind, "'");
  }
  ModelChoice m;
  m.gpu_kind = gpu_kind;
  m.dry_run = gpu_kind == dry_run_kind();
  FinalChoice f = final_choice(store, m.dry_run ? json() : fragment(), space, gpu_kind, m.dry_run, "", "");
  if (!f.refused.empty()) user_error(where, ": ", f.refused);
  m.choice = std::move(f.choice);
  m.info = std::move(f.info);
  m.pending = f.pending;
  return m;
}

namespace {

// A field of a wire object, or a UserError naming it.
const json& wire_field(const json& j, const char* key, const char* what) {
  if (!j.is_object() || !j.contains(key)) user_error(what, ": missing \"", key, "\"");
  return j.at(key);
}
template <class T>
T wire_value(const json& j, const char* key, const char* what) {
  try {
    return wire_field(j, key, what).get<T>();
  } catch (const json::exception&) {
    user_error(what, ": \"", key, "\" has the wrong type (", j.at(key).type_name(), ")");
  }
}

}  // namespace

json space_to_wire(const TuningSpace& space) {
  json contexts = json::array(), tasks = json::array();
  for (const Context& c : space.contexts) contexts.push_back(context_to_json(c));
  for (const TuningTask& t : space.tasks)
    tasks.push_back({{"signature", t.signature},
                     {"context", context_to_json(t.context)},
                     {"groups", t.groups.size()},
                     {"default_est_us", t.default_est_us}});
  json shared = json::array();
  for (const SharedStage& ss : space.shared_stages)
    shared.push_back({{"context", context_to_json(ss.context)},
                      {"signatures", ss.signatures},
                      {"count", ss.count},
                      {"grid", ss.grid}});
  return {{"contexts", contexts}, {"tasks", tasks}, {"shared_stages", shared}};
}

TuningSpace space_from_wire(const json& j) {
  constexpr const char* kWhat = "tuning space";
  TuningSpace space;
  const json& contexts = wire_field(j, "contexts", kWhat);
  const json& tasks = wire_field(j, "tasks", kWhat);
  if (!contexts.is_array() || contexts.empty() || !tasks.is_array())
    user_error(kWhat, ": \"contexts\" must be a non-empty array and \"tasks\" an array");
  // Bounds far above any model's (bert-base: 2 contexts, ~30 tasks, 134 groups each): the
  // work below is contexts x tasks lookups.
  constexpr size_t kMaxContexts = 64, kMaxTasks = 100000;
  constexpr int64_t kMaxGroups = 1000000;
  if (contexts.size() > kMaxContexts || tasks.size() > kMaxTasks)
    user_error(kWhat, ": ", contexts.size(), " contexts and ", tasks.size(), " tasks (at most ", kMaxContexts, " and ",
               kMaxTasks, ")");
  for (const json& c : contexts) {
    space.contexts.push_back(context_from_json(c));
    if (std::count(space.contexts.begin(), space.contexts.end(), space.contexts.back()) > 1)
      user_error(kWhat, ": context ", space.contexts.back().key(), " is listed twice");
  }
  int64_t total_groups = 0;
  for (const json& t : tasks) {
    TuningTask task;
    task.signature = wire_value<std::string>(t, "signature", kWhat);
    if (task.signature.size() != 16 ||
        task.signature.find_first_not_of("0123456789abcdef") != std::string::npos)
      user_error(kWhat, ": signature '", task.signature, "' is not 16 lower-case hex digits");
    task.context = context_from_json(wire_field(t, "context", kWhat));
    if (std::find(space.contexts.begin(), space.contexts.end(), task.context) == space.contexts.end())
      user_error(kWhat, ": task ", task.signature, " names a context that is not in \"contexts\"");
    const int64_t groups = wire_value<int64_t>(t, "groups", kWhat);
    total_groups += groups;
    if (groups < 1 || total_groups > kMaxGroups)
      user_error(kWhat, ": task ", task.signature, " has ", groups, " groups (at most ", kMaxGroups, " in all)");
    for (int64_t i = 0; i < groups; ++i) task.groups.push_back(static_cast<int>(i));
    task.default_est_us = wire_value<double>(t, "default_est_us", kWhat);
    space.tasks.push_back(std::move(task));
  }
  // Stages several tasks share (optional: a client without them gets each task's own best).
  if (j.contains("shared_stages")) {
    const json& shared = j.at("shared_stages");
    constexpr size_t kMaxGroupsPerStage = 64;
    if (!shared.is_array() || shared.size() > kMaxTasks)
      user_error(kWhat, ": \"shared_stages\" must be an array of at most ", kMaxTasks, " stages");
    for (const json& st : shared) {
      SharedStage ss;
      ss.context = context_from_json(wire_field(st, "context", kWhat));
      ss.count = wire_value<int>(st, "count", kWhat);
      ss.grid = wire_value<int>(st, "grid", kWhat);
      if (ss.count < 1 || ss.count > kMaxGroups || ss.grid < 1 || ss.grid > 1000000)
        user_error(kWhat, ": a shared stage has count ", ss.count, " and grid ", ss.grid, " (each 1 to ", kMaxGroups,
                   ")");
      const json& sigs = wire_field(st, "signatures", kWhat);
      if (!sigs.is_array() || sigs.size() < 2 || sigs.size() > kMaxGroupsPerStage)
        user_error(kWhat, ": a shared stage must name 2 to ", kMaxGroupsPerStage, " signatures");
      for (const json& sig : sigs) {
        if (!sig.is_string()) user_error(kWhat, ": a shared stage's signatures must be strings");
        ss.signatures.push_back(sig.get<std::string>());
        const bool known = std::any_of(space.tasks.begin(), space.tasks.end(), [&](const TuningTask& t) {
          return t.signature == ss.signatures.back() && t.context == ss.context;
        });
        if (!known)
          user_error(kWhat, ": a shared stage names ", ss.signatures.back().substr(0, 40),
                     ", which is no task of its context");
      }
      space.shared_stages.push_back(std::move(ss));
    }
  }
  return space;
}

json model_choice_to_json(const ModelChoice& m) {
  json schedules = json::object();
  for (const auto& [sig, s] : m.choice.schedules) schedules[sig] = schedule_to_json(s);
  const ContextChoice& c = m.choice;
  return {{"gpu_kind", m.gpu_kind},
          {"dry_run", m.dry_run},
          {"pending", m.pending},
          {"info", m.info},
          {"choice",
           {{"context", context_to_json(c.context)},
            {"schedules", schedules},
            {"records", c.records},
            {"total_us", c.total_us},
            {"all_measured", c.all_measured},
            {"groups_tuned", c.groups_tuned},
            {"groups_default", c.groups_default},
            {"default_total_us", c.default_total_us}}}};
}

ModelChoice model_choice_from_json(const json& j) {
  constexpr const char* kWhat = "tuning choice";
  ModelChoice m;
  m.gpu_kind = wire_value<std::string>(j, "gpu_kind", kWhat);
  m.dry_run = wire_value<bool>(j, "dry_run", kWhat);
  m.pending = wire_value<bool>(j, "pending", kWhat);
  m.info = wire_field(j, "info", kWhat);
  const json& c = wire_field(j, "choice", kWhat);
  m.choice.context = context_from_json(wire_field(c, "context", kWhat));
  const json& schedules = wire_field(c, "schedules", kWhat);
  if (!schedules.is_object()) user_error(kWhat, ": \"schedules\" must be an object");
  for (const auto& [sig, s] : schedules.items()) m.choice.schedules[sig] = schedule_from_json(s);
  m.choice.records = wire_field(c, "records", kWhat);
  m.choice.total_us = wire_value<double>(c, "total_us", kWhat);
  m.choice.all_measured = wire_value<bool>(c, "all_measured", kWhat);
  m.choice.groups_tuned = wire_value<int>(c, "groups_tuned", kWhat);
  m.choice.groups_default = wire_value<int>(c, "groups_default", kWhat);
  m.choice.default_total_us = wire_value<double>(c, "default_total_us", kWhat);
  return m;
}

std::string add_tuning_section(const std::string& dir, const KernelPlan& plan, const ContextChoice& choice,
                               json info) {
  info["context"] = context_to_json(choice.context);
  int tuned = 0, rejected = 0;
  for (const Group& g : plan.groups) {
    tuned += g.tuned;
    rejected += !g.override_rejected.empty();
  }
  info["groups_tuned"] = tuned;
  info["groups_default"] = static_cast<int>(plan.groups.size()) - tuned;
  info["overrides_rejected"] = rejected;
  info["records"] = choice.records;
  std::ifstream in(dir + "/manifest.json");
  json manifest = json::parse(in);
  manifest["tuning"] = std::move(info);
  const std::string text = manifest.dump(1) + "\n";
  std::ofstream(dir + "/manifest.json") << text;
  return text;
}

std::string write_tuned_artifact(const PreparedModel& model, const ContextChoice& choice, const json& tuning_info,
                                 const json& verification, const std::string& dir, const CompiledKernel* offered) {
  NvrtcOptions nvrtc;
  nvrtc.cache_dir = default_cache_dir();
  const BuiltKernel built = build_kernel(*model.graph, tuned_options(model.options, choice.context, choice.schedules),
                                         model.label, nvrtc, /*compile=*/true, offered);
  write_artifact(dir, *model.graph, built, verification);
  json info = tuning_info;
  if (offered) info["kernel_from_worker"] = built.compiled.offered;
  return add_tuning_section(dir, built.plan, choice, info);
}

}  // namespace mono::tuning
