#include "tuner_server/dashboard.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "compiler/tuning/signature.h"

namespace mono::server {

using nlohmann::json;

namespace {

json failures_json(const std::map<std::string, int64_t>& by_class) {
  json out = json::object();
  for (const auto& [name, n] : by_class) out[name] = n;
  return out;
}

// The tuning section of an artifact's manifest, reduced to what the result view shows.
json result_of(const db::ArtifactRecord& a) {
  json out = {{"artifact_dir", a.dir}, {"created_at_ms", a.created_at_ms}};
  json tuning;
  try {
    tuning = json::parse(a.manifest_json).value("tuning", json::object());
  } catch (const std::exception&) {
    out["note"] = "the artifact's manifest cannot be read";
    return out;
  }
  for (const char* key : {"measured", "gpu_kind", "tuned_us", "default_us", "speedup", "estimated_total_us",
                          "estimated_default_us", "groups_tuned", "groups_default", "overrides_rejected", "note",
                          "context", "whole_kernel", "whole_kernel_job"})
    if (tuning.contains(key)) out[key] = tuning[key];
  out["records"] = tuning.contains("records") ? tuning["records"].size() : 0;
  return out;
}

}  // namespace

absl::StatusOr<const Dashboard::TaskInfo*> Dashboard::task_info(int64_t task_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(task_id);
    if (it != tasks_.end()) return &it->second;
  }
  auto t = store_->get_task(task_id);  // the payload carries the fragment: large
  if (!t.ok()) return t.status();
  TaskInfo info;
  info.signature = t->signature;
  info.context = t->context;
  try {
    const json task = json::parse(t->payload).at("task");
    info.kind = task.value("kind", "");
    info.description = task.value("description", "");
    info.context_json = task.value("context", json::object());
    info.default_est_us = task.value("default_est_us", 0.0);
    info.code_version = task.value("signature_version", 0);
    const json& cands = task.at("candidates");
    for (size_t i = 0; i < cands.size(); ++i) {
      info.est_us.push_back(cands[i].value("est_us", 0.0));
      if (cands[i].value("default", false)) info.default_index = static_cast<int>(i);
    }
  } catch (const std::exception&) {
    info.description = "(a task payload this build cannot read)";
  }
  std::lock_guard<std::mutex> lock(mu_);
  return &tasks_.emplace(task_id, std::move(info)).first->second;
}

absl::StatusOr<json> Dashboard::summary(const db::SubmissionRecord& s) {
  auto p = store_->submission_progress(s.id);
  if (!p.ok()) return p.status();
  const int64_t end = s.finished_at_ms > 0 ? s.finished_at_ms : clock_->now_ms();
  json shapes = json::array();
  try {
    shapes = json::parse(s.shapes_json);
  } catch (const std::exception&) {
  }
  return json{{"id", s.id},
              {"model", s.model_name},
              {"model_sha256", s.model_sha256},
              {"precision", s.precision},
              {"gpu_kind", s.gpu_kind.empty() ? "any" : s.gpu_kind},
              {"dry_run", s.dry_run},
              {"shapes", shapes},
              {"state", db::to_string(s.state)},
              {"error", s.error},
              {"submitted_at_ms", s.created_at_ms},
              {"updated_at_ms", s.updated_at_ms},
              {"finished_at_ms", s.finished_at_ms > 0 ? json(s.finished_at_ms) : json(nullptr)},
              {"elapsed_ms", end - s.created_at_ms},
              {"progress",
               {{"groups_done", p->groups_done},
                {"groups_total", p->groups_total},
                {"candidates_compiled", p->candidates_compiled},
                {"candidates_measured", p->candidates_measured},
                {"jobs_total", p->jobs_total},
                {"jobs_pending", p->jobs_pending},
                {"jobs_failed", p->jobs_failed}}}};
}

absl::StatusOr<json> Dashboard::overview() {
  auto counts = store_->counts_by_state();
  if (!counts.ok()) return counts.status();
  json jobs = json::object();
  int64_t queued = 0, leased = 0;
  for (const db::StateCount& c : *counts) {
    jobs[db::to_string(c.kind)][db::to_string(c.state)] = c.count;
    if (c.state == db::JobState::kQueued) queued += c.count;
    if (c.state == db::JobState::kLeased) leased += c.count;
  }
  auto workers = store_->list_workers();
  if (!workers.ok()) return workers.status();
  const int64_t now = clock_->now_ms();
  int alive = 0;
  for (const db::WorkerRecord& w : *workers) alive += now - w.last_seen_ms <= options_.worker_alive_ms;
  json out = {{"server_time_ms", now},     {"jobs", jobs},       {"queue_depth", queued},
              {"jobs_leased", leased},     {"workers_alive", alive}, {"workers_total", workers->size()}};
  if (auto size = store_->db_size_bytes(); size.ok()) out["db_bytes"] = *size;
  if (auto v = store_->schema_version(); v.ok()) out["schema_version"] = *v;
  return out;
}

absl::StatusOr<json> Dashboard::submissions() {
  auto list = store_->list_submissions();
  if (!list.ok()) return list.status();
  json out = json::array();
  for (const db::SubmissionRecord& s : *list) {
    if (static_cast<int>(out.size()) >= options_.max_submissions) break;
    auto one = summary(s);
    if (!one.ok()) return one.status();
    out.push_back(std::move(*one));
  }
  return json{{"server_time_ms", clock_->now_ms()}, {"submissions", out}};
}

absl::StatusOr<json> Dashboard::submission(const std::string& id, const std::string& part) {
  auto s = store_->get_submission(id);
  if (!s.ok()) return s.status();
  auto links = store_->submission_task_links(id);
  if (!links.ok()) return links.status();
  auto jobs = store_->submission_jobs(id);
  if (!jobs.ok()) return jobs.status();
  auto results = store_->submission_results(id);
  if (!results.ok()) return results.status();

  // ---- per task: what it is, and the state of its jobs and results ----
  struct TaskRow {
    const TaskInfo* info = nullptr;
    int instances = 1;
    int jobs_total = 0, jobs_done = 0, jobs_pending = 0, jobs_failed = 0;
    int64_t tried = 0, ok = 0;
    std::map<std::string, int64_t> failures;
    double best = std::numeric_limits<double>::infinity();  // measured (or, dry, estimated) best
    int best_candidate = -1;
    bool measured = false;  // best is a measurement
    double default_measured = 0;
  };
  std::map<int64_t, TaskRow> rows;
  for (const auto& [task_id, instances] : *links) {
    auto info = task_info(task_id);
    if (!info.ok()) return info.status();
    TaskRow& r = rows[task_id];
    r.info = *info;
    r.instances = instances;
  }
  std::map<std::string, const db::JobSummary*> job_by_id;
  for (const db::JobSummary& j : *jobs) {
    job_by_id[j.id] = &j;
    auto it = rows.find(j.task_id);
    if (it == rows.end()) continue;
    TaskRow& r = it->second;
    ++r.jobs_total;
    if (j.state == db::JobState::kDone) ++r.jobs_done;
    if (j.state == db::JobState::kQueued || j.state == db::JobState::kLeased) ++r.jobs_pending;
    if (j.state == db::JobState::kFailed) {
      ++r.jobs_failed;
      ++r.failures[db::to_string(j.failure_class)];
    }
  }

  // ---- the timeline: replay the results in the order they arrived ----
  // Groups measured alone carry a fixed cost of their own launch, so their times do not add
  // up to the whole kernel's; what they do tell is how much faster a group's best schedule
  // is than its default in the same measurement. So each group keeps a ratio, best / default
  // (1 until both are measured; in a dry run the ratio of the estimates of the best compiled
  // candidate and of the default), weighted by the cost model's estimate of the group's
  // default times its instances. The model's estimate in a context is the sum of the
  // weighted ratios; the best context's is shown, scaled so that it starts at the measured
  // whole-kernel default where that exists (else at the cost model's estimate).
  std::map<std::string, double> context_total;  // sum of weight x ratio
  std::map<int64_t, double> ratio;
  for (auto& [task_id, r] : rows) {
    ratio[task_id] = 1.0;
    context_total[r.info->context] += r.instances * r.info->default_est_us;
  }
  auto best_total = [&] {
    double b = std::numeric_limits<double>::infinity();
    for (const auto& [ctx, total] : context_total) b = std::min(b, total);
    return std::isfinite(b) ? b : 0.0;
  };
  const double default_total_est = best_total();
  const int64_t t0 = s->created_at_ms;
  json points = json::array();
  json whole = json::array();
  double whole_default_us = 0;
  int64_t compiled = 0, measured = 0;
  // best_us on the estimate's scale first; scaled once the whole-kernel default is known.
  points.push_back({{"t_s", 0.0}, {"best_us", default_total_est}, {"measured", 0}, {"compiled", 0}});
  std::map<std::string, int64_t> worker_candidates, worker_failed;
  std::map<std::string, std::map<std::string, int64_t>> worker_failures;
  for (const db::ResultRecord& res : *results) {
    const double t_s = std::max<int64_t>(0, res.created_at_ms - t0) / 1000.0;
    const db::CandidateResult& c = res.result;
    ++worker_candidates[res.worker_id];
    if (!c.ok) {
      ++worker_failed[res.worker_id];
      ++worker_failures[res.worker_id][db::to_string(c.failure)];
    }
    if (res.job_kind == db::JobKind::kWholeKernel) {
      if (c.ok && c.median_us && c.candidate == 0) whole_default_us = *c.median_us;
      whole.push_back({{"t_s", t_s},
                       {"config", c.candidate},
                       {"ok", c.ok},
                       {"median_us", c.median_us ? json(*c.median_us) : json(nullptr)}});
      continue;
    }
    auto job = job_by_id.find(res.job_id);
    if (job == job_by_id.end()) continue;
    auto row = rows.find(job->second->task_id);
    if (row == rows.end()) continue;
    TaskRow& r = row->second;
    ++r.tried;
    const bool is_measure = res.job_kind == db::JobKind::kMeasure;
    is_measure ? ++measured : ++compiled;
    if (c.ok) {
      ++r.ok;
      if (is_measure && c.median_us) {
        if (c.candidate == r.info->default_index) r.default_measured = *c.median_us;
        if (!r.measured || *c.median_us < r.best) {
          r.best = *c.median_us;
          r.best_candidate = c.candidate;
          r.measured = true;
        }
      } else if (!is_measure && !r.measured && c.spill_bytes == 0 && c.candidate >= 0 &&
                 c.candidate < static_cast<int>(r.info->est_us.size()) && r.info->est_us[c.candidate] < r.best) {
        r.best = r.info->est_us[c.candidate];
        r.best_candidate = c.candidate;
      }
      double q = 1.0;
      if (r.measured) {
        if (r.default_measured > 0) q = std::min(r.best, r.default_measured) / r.default_measured;
      } else if (std::isfinite(r.best) && r.info->default_est_us > 0) {
        q = std::min(1.0, r.best / r.info->default_est_us);
      }
      context_total[r.info->context] += r.instances * r.info->default_est_us * (q - ratio[row->first]);
      ratio[row->first] = q;
    } else {
      ++r.failures[db::to_string(c.failure)];
    }
    points.push_back({{"t_s", t_s}, {"best_us", best_total()}, {"measured", measured}, {"compiled", compiled}});
  }
  const double scale = whole_default_us > 0 && default_total_est > 0 ? whole_default_us / default_total_est : 1.0;
  for (json& p : points) p["best_us"] = p["best_us"].get<double>() * scale;
  // Keep the plot light: at most ~600 points, always the first and the last.
  if (points.size() > 600) {
    json thin = json::array();
    const size_t step = (points.size() + 599) / 600;
    for (size_t i = 0; i < points.size(); i += step) thin.push_back(points[i]);
    if (thin.back() != points.back()) thin.push_back(points.back());
    points = std::move(thin);
  }
  const bool any_measured = measured > 0;
  json timeline = {
      {"points", points},
      {"default_estimate_us", default_total_est},
      {"start_us", default_total_est * scale},
      {"start_measured", whole_default_us > 0},
      {"whole_kernel", whole},
      {"basis", std::string(whole_default_us > 0 ? "the measured whole-kernel default"
                                                 : "the cost model's estimate of the default") +
                    (any_measured ? ", times the measured best/default ratio of each group (weighted by the "
                                    "group's estimated share), in the best context"
                                  : ", times the estimated best/default ratio of each group among the candidates "
                                    "that compiled without spills (nothing measured), in the best context")}};
  if (part == "timeline") return timeline;

  json groups = json::array();
  for (const auto& [task_id, r] : rows) {
    const bool pending = r.jobs_pending > 0 || r.jobs_total == 0;
    json g = {{"task_id", task_id},
              {"signature", r.info->signature},
              {"kind", r.info->kind},
              {"ops", r.info->description},
              {"context", r.info->context},
              {"instances", r.instances},
              {"state", pending ? (r.jobs_done > 0 ? "running" : "queued") : "done"},
              {"candidates", r.info->est_us.size()},
              {"jobs", {{"total", r.jobs_total}, {"done", r.jobs_done}, {"pending", r.jobs_pending}, {"failed", r.jobs_failed}}},
              {"tried", r.tried},
              {"ok", r.ok},
              {"failures", failures_json(r.failures)},
              {"default_us", r.default_measured > 0 ? r.default_measured : r.info->default_est_us},
              {"default_measured", r.default_measured > 0},
              // Results of another tuning code version describe code this build no longer
              // generates: never reused (the version keys every task), shown as stale.
              {"code_version", r.info->code_version},
              {"stale", r.info->code_version != tuning::kSignatureVersion}};
    if (std::isfinite(r.best)) {
      g["best_us"] = r.best;
      g["best_measured"] = r.measured;
      g["best_candidate"] = r.best_candidate;
    } else {
      g["best_us"] = nullptr;
    }
    groups.push_back(std::move(g));
  }
  if (part == "groups") return json{{"groups", groups}};

  // ---- workers that did this submission's work ----
  std::map<std::string, int64_t> worker_jobs;
  for (const db::JobSummary& j : *jobs)
    if (j.state == db::JobState::kDone && !j.lease_worker.empty()) ++worker_jobs[j.lease_worker];
  std::set<std::string> ids;
  for (const auto& [w, n] : worker_jobs) ids.insert(w);
  for (const auto& [w, n] : worker_candidates) ids.insert(w);
  json workers = json::array();
  for (const std::string& w : ids) {
    json one = {{"id", w},
                {"jobs_done", worker_jobs[w]},
                {"candidates", worker_candidates[w]},
                {"candidates_failed", worker_failed[w]},
                {"failures", failures_json(worker_failures[w])}};
    if (auto rec = store_->get_worker(w); rec.ok()) {
      one["name"] = rec->name;
      one["gpu"] = rec->caps.compile_only ? "compile-only" : rec->caps.gpu_name;
      one["sm_arch"] = rec->caps.sm_arch;
    }
    workers.push_back(std::move(one));
  }

  auto head = summary(*s);
  if (!head.ok()) return head.status();
  json out = {{"server_time_ms", clock_->now_ms()}, {"submission", *head}, {"timeline", timeline},
              {"groups", groups},                   {"workers", workers},  {"result", nullptr}};
  double tuned_us = 0;
  if (auto a = store_->get_artifact(id); a.ok()) {
    out["result"] = result_of(*a);
    tuned_us = out["result"].value("tuned_us", 0.0);
  }
  json baselines = json::array();
  if (auto b = store_->baselines(s->model_sha256); b.ok()) {
    for (const db::Baseline& x : *b) {
      json one = {{"gpu_kind", x.gpu_kind},
                  {"name", x.name},
                  {"latency_us", x.latency_us},
                  {"source", x.source},
                  {"recorded_at_ms", x.recorded_at_ms}};
      if (tuned_us > 0) one["speedup_of_artifact"] = x.latency_us / tuned_us;
      baselines.push_back(std::move(one));
    }
  }
  out["baselines"] = baselines;
  return out;
}

absl::StatusOr<json> Dashboard::workers() {
  auto list = store_->list_workers();
  if (!list.ok()) return list.status();
  auto activity = store_->worker_activity();
  if (!activity.ok()) return activity.status();
  std::map<std::string, const db::WorkerActivity*> by_id;
  for (const db::WorkerActivity& a : *activity) by_id[a.worker_id] = &a;
  const int64_t now = clock_->now_ms();
  json out = json::array();
  for (const db::WorkerRecord& w : *list) {
    json one = {{"id", w.id},
                {"name", w.name},
                {"gpu", w.caps.compile_only ? "compile-only" : w.caps.gpu_name},
                {"compile_only", w.caps.compile_only},
                {"sm_arch", w.caps.sm_arch},
                {"gpus", w.caps.gpus},
                {"memory_bytes", w.caps.memory_bytes},
                {"cuda_version", w.caps.cuda_version},
                {"driver_version", w.caps.driver_version},
                {"registered_at_ms", w.registered_at_ms},
                {"last_seen_ms", w.last_seen_ms},
                {"alive", now - w.last_seen_ms <= options_.worker_alive_ms},
                {"jobs_done", 0},
                {"jobs_leased", 0},
                {"candidates", 0},
                {"candidates_failed", 0},
                {"failures", json::object()}};
    if (auto it = by_id.find(w.id); it != by_id.end()) {
      const db::WorkerActivity& a = *it->second;
      one["jobs_done"] = a.jobs_done;
      one["jobs_leased"] = a.jobs_leased;
      one["candidates"] = a.candidates;
      one["candidates_failed"] = a.candidates_failed;
      for (const auto& [f, n] : a.failures) one["failures"][db::to_string(f)] = n;
    }
    out.push_back(std::move(one));
  }
  return json{{"server_time_ms", now}, {"workers", out}};
}

absl::Status Dashboard::record_baseline(const std::string& body) {
  json in;
  try {
    in = json::parse(body);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(std::string("the body is not JSON: ") + e.what());
  }
  if (!in.is_object()) return absl::InvalidArgumentError("the body must be a JSON object");
  db::Baseline b;
  try {
    b.name = in.value("name", "");
    b.source = in.value("source", "");
    b.gpu_kind = in.value("gpu_kind", "");
    if (!in.contains("latency_us") || !in["latency_us"].is_number())
      return absl::InvalidArgumentError("latency_us (a number of microseconds) is missing");
    b.latency_us = in["latency_us"].get<double>();
    if (in.contains("submission_id")) {
      auto s = store_->get_submission(in.value("submission_id", ""));
      if (!s.ok()) return absl::InvalidArgumentError(std::string(s.status().message()));
      b.model_sha256 = s->model_sha256;
      if (b.gpu_kind.empty()) b.gpu_kind = s->gpu_kind;
    } else {
      b.model_sha256 = in.value("model_sha256", "");
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(std::string("a field has the wrong type: ") + e.what());
  }
  if (b.model_sha256.empty()) return absl::InvalidArgumentError("model_sha256 or submission_id is missing");
  return store_->record_baseline(b);
}

}  // namespace mono::server
