#include "compiler/tuning/jobs.h"

#include <algorithm>

#include "compiler/driver/model.h"
#include "compiler/reference/inputs.h"
#include "compiler/support/error.h"
#include "compiler/tuning/fragment.h"
#include "compiler/tuning/signature.h"

namespace mono::tuning {

using nlohmann::json;

PreparedModel prepare_model(const std::string& model_path, const std::string& label,
                            const std::map<std::string, Shape>& shapes, Precision precision) {
  ModelOptions mo;
  mo.load.input_shapes = shapes;
  LoadedModel loaded = load_model(model_path, mo);
  PreparedModel m;
  m.label = label;
  m.graph = std::move(loaded.graph);
  m.notes = std::move(loaded.notes);
  m.options.settings.precision = precision;
  calibrate(*m.graph, synthetic_inputs(*m.graph), &m.options);
  return m;
}

std::string dry_run_kind(int sm_arch) { return "compile-only sm_" + std::to_string(sm_arch); }

std::string job_id(const char* prefix, const std::string& what) {
  return prefix + signature_hash(what + "|v" + std::to_string(kSignatureVersion));
}

// Which candidates of each task get jobs (TuningPlanOptions: all of them; in a dry run the best
// few and the default; under a budget the defaults, then the heaviest tasks' next best).
static std::vector<std::vector<int>> chosen_candidates(const TuningSpace& space, const TuningPlanOptions& opt) {
  const size_t n = space.tasks.size();
  std::vector<std::vector<int>> chosen(n);
  const bool capped = !opt.dry_run && opt.budget > 0;
  for (size_t t = 0; t < n; ++t) {
    const std::vector<Candidate>& cands = space.tasks[t].candidates;
    for (int i = 0; i < static_cast<int>(cands.size()); ++i) {
      const bool take = capped ? cands[i].is_default
                               : !opt.dry_run || i < opt.dry_run_candidates || cands[i].is_default;
      if (take) chosen[t].push_back(i);
    }
  }
  if (!capped) return chosen;
  if (opt.budget < static_cast<int64_t>(n))
    throw BudgetTooSmall(str_cat("--budget ", opt.budget, " is below this model's ", n,
                                 " tuning tasks: each task measures at least its default schedule"));
  std::vector<size_t> order(n);
  for (size_t t = 0; t < n; ++t) order[t] = t;
  const auto weight = [&](size_t t) { return space.tasks[t].groups.size() * space.tasks[t].default_est_us; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight(a) > weight(b); });
  std::vector<int> next(n, 0);  // each task's next candidate to consider, by estimate
  int64_t left = opt.budget - static_cast<int64_t>(n);
  for (bool took = true; left > 0 && took;) {
    took = false;
    for (size_t t : order) {
      const std::vector<Candidate>& cands = space.tasks[t].candidates;
      while (next[t] < static_cast<int>(cands.size()) && cands[next[t]].is_default) ++next[t];
      if (left == 0 || next[t] >= static_cast<int>(cands.size())) continue;
      chosen[t].push_back(next[t]++);
      --left;
      took = true;
    }
  }
  for (std::vector<int>& c : chosen) std::sort(c.begin(), c.end());
  return chosen;
}

TuningPlan plan_tuning(const PreparedModel& model, const TuningPlanOptions& opt) {
  TuningPlan out;
  out.space = enumerate_space(*model.graph, model.options);
  const std::vector<std::vector<int>> chosen_by_task = chosen_candidates(out.space, opt);
  size_t task_index = 0;
  // The plan of each context, for cutting the groups out as fragments.
  std::map<std::string, KernelPlan> plans;
  std::map<std::string, PlanOptions> plan_options;
  for (const Context& ctx : out.space.contexts) {
    PlanOptions o = tuned_options(model.options, ctx, {});
    enable_signatures(&o);
    plans.emplace(ctx.key(), plan_kernel(*model.graph, o));
    plan_options.emplace(ctx.key(), o);
  }
  const db::JobKind kind = opt.dry_run ? db::JobKind::kCompile : db::JobKind::kMeasure;
  for (const TuningTask& t : out.space.tasks) {
    const KernelPlan& plan = plans.at(t.context.key());
    const Group& group = plan.groups.at(t.groups.front());
    json fragment = make_fragment(*model.graph, plan, group, plan_options.at(t.context.key()));
    json task = task_to_json(t);
    db::TaskPlan tp;
    tp.signature = t.signature;
    tp.gpu_kind = opt.task_gpu_kind;
    tp.context = context_to_string(t.context);
    tp.payload = json{{"task", task}, {"fragment", fragment}}.dump();
    tp.instances = static_cast<int>(t.groups.size());

    // The jobs' batches of candidates. Job ids hash their candidates, so under a budget each
    // batch is the part chosen of the batch the unbudgeted plan has (candidates i / per_job):
    // a whole batch is the same job either way, and its measurements are never repeated.
    const std::vector<int>& chosen = chosen_by_task.at(task_index++);
    std::vector<std::vector<int>> batches;
    const bool aligned = !opt.dry_run && opt.budget > 0;
    for (size_t k = 0; k < chosen.size(); ++k) {
      const bool fresh = aligned ? batches.empty() || batches.back().back() / opt.candidates_per_job !=
                                                          chosen[k] / opt.candidates_per_job
                                 : k % opt.candidates_per_job == 0;
      if (fresh) batches.emplace_back();
      batches.back().push_back(chosen[k]);
    }
    for (const std::vector<int>& batch : batches) {
      json cands = json::array();
      std::string ids;
      for (const int i : batch) {
        cands.push_back({{"index", i},
                         {"schedule", schedule_to_json(t.candidates[i].schedule)},
                         {"est_us", t.candidates[i].est_us},
                         {"default", t.candidates[i].is_default}});
        ids += std::to_string(i) + ",";
      }
      db::NewJob job;
      job.kind = kind;
      job.gpu_kind = opt.dry_run ? "" : opt.task_gpu_kind;
      job.id = job_id("j", std::string(db::to_string(kind)) + "|" + opt.task_gpu_kind + "|" + tp.context + "|" +
                               t.signature + "|" + ids);
      job.payload = json{{"kind", db::to_string(kind)},
                         {"signature", t.signature},
                         {"description", t.description},
                         {"gpu_kind", opt.task_gpu_kind},
                         {"context", context_to_json(t.context)},
                         {"fragment", fragment},
                         {"candidates", cands}}
                        .dump();
      out.candidates += static_cast<int64_t>(cands.size());
      tp.jobs.push_back(std::move(job));
    }
    out.tasks.push_back(std::move(tp));
  }
  return out;
}

json whole_model_fragment(const Graph& graph, const PlanOptions& options) {
  PlanOptions o = options;
  enable_signatures(&o);
  return make_fragment(graph, plan_kernel(graph, o), o);
}

}  // namespace mono::tuning
