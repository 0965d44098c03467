// Store: the read queries behind the dashboard's JSON API, and the baselines it compares with.
#include <sqlite3.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "db/sqlite.h"
#include "db/status_macros.h"
#include "db/store.h"
#include "db/store_internal.h"

namespace mono::db {

absl::StatusOr<std::vector<std::pair<int64_t, int>>> Store::submission_task_links(const std::string& submission_id) {
  std::vector<std::pair<int64_t, int>> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(sql::Stmt q, sql::Stmt::prepare(db, "SELECT task_id, instances FROM submission_tasks "
                                                              "WHERE submission_id = ? ORDER BY task_id"));
    q.bind_all(submission_id);
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      out.emplace_back(q.int64(0), static_cast<int>(q.int64(1)));
    }
  }));
  return out;
}

absl::StatusOr<std::vector<JobSummary>> Store::submission_jobs(const std::string& submission_id) {
  std::vector<JobSummary> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q,
        sql::Stmt::prepare(db, absl::StrCat("SELECT j.id, COALESCE(j.task_id, 0), j.kind, j.state, j.attempts, "
                                            "COALESCE(j.lease_worker, ''), COALESCE(j.failure_class, '') "
                                            "FROM jobs j WHERE ",
                                            internal::kSubmissionJobs, " ORDER BY j.created_at, j.rowid")));
    q.bind_all(submission_id);
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      JobSummary j;
      j.id = q.text(0);
      j.task_id = q.int64(1);
      parse(q.text(2), &j.kind);
      parse(q.text(3), &j.state);
      j.attempts = static_cast<int>(q.int64(4));
      j.lease_worker = q.text(5);
      parse(q.text(6), &j.failure_class);
      out.push_back(std::move(j));
    }
  }));
  return out;
}

absl::StatusOr<std::vector<ResultRecord>> Store::submission_results(const std::string& submission_id) {
  std::vector<ResultRecord> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(sql::Stmt q,
                          sql::Stmt::prepare(db, absl::StrCat(internal::kResultSelect, " WHERE ", internal::kSubmissionJobs,
                                                              " ORDER BY r.created_at, r.rowid")));
    q.bind_all(submission_id);
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      out.push_back(internal::read_result(q));
    }
  }));
  return out;
}

absl::StatusOr<std::vector<WorkerActivity>> Store::worker_activity() {
  std::map<std::string, WorkerActivity> by_id;
  auto entry = [&](const std::string& id) -> WorkerActivity& {
    WorkerActivity& a = by_id[id];
    a.worker_id = id;
    return a;
  };
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(sql::Stmt jobs,
                          sql::Stmt::prepare(db, "SELECT lease_worker, COALESCE(SUM(state = 'done'), 0), "
                                                 "COALESCE(SUM(state = 'leased'), 0) FROM jobs "
                                                 "WHERE lease_worker IS NOT NULL GROUP BY lease_worker"));
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, jobs.step());
      if (!row) break;
      WorkerActivity& a = entry(jobs.text(0));
      a.jobs_done = jobs.int64(1);
      a.jobs_leased = jobs.int64(2);
    }
    MONO_ASSIGN_OR_RETURN(sql::Stmt results,
                          sql::Stmt::prepare(db, "SELECT worker_id, COALESCE(failure_class, ''), ok, COUNT(*) "
                                                 "FROM results GROUP BY 1, 2, 3"));
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, results.step());
      if (!row) return absl::OkStatus();
      WorkerActivity& a = entry(results.text(0));
      const int64_t n = results.int64(3);
      a.candidates += n;
      if (results.int64(2) != 0) continue;
      a.candidates_failed += n;
      FailureClass f = FailureClass::kNone;
      parse(results.text(1), &f);
      a.failures.emplace_back(f, n);
    }
  }));
  std::vector<WorkerActivity> out;
  for (auto& [id, a] : by_id) out.push_back(std::move(a));
  return out;
}

absl::Status Store::record_baseline(const Baseline& b) {
  if (b.model_sha256.empty() || b.name.empty())
    return absl::InvalidArgumentError("a baseline needs a model_sha256 and a name");
  if (!(b.latency_us > 0)) return absl::InvalidArgumentError("a baseline's latency_us must be positive");
  return write([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q,
        sql::Stmt::prepare(db, "INSERT INTO baselines(model_sha256, gpu_kind, name, latency_us, source, recorded_at) "
                               "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (model_sha256, gpu_kind, name) DO UPDATE SET "
                               "latency_us = excluded.latency_us, source = excluded.source, "
                               "recorded_at = excluded.recorded_at"));
    q.bind_all(b.model_sha256, b.gpu_kind, b.name, b.latency_us, b.source, clock_->now_ms());
    return q.run();
  });
}

absl::StatusOr<std::vector<Baseline>> Store::baselines(const std::string& model_sha256) {
  std::vector<Baseline> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(sql::Stmt q,
                          sql::Stmt::prepare(db, "SELECT gpu_kind, name, latency_us, source, recorded_at "
                                                 "FROM baselines WHERE model_sha256 = ? ORDER BY gpu_kind, name"));
    q.bind_all(model_sha256);
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      Baseline b;
      b.model_sha256 = model_sha256;
      b.gpu_kind = q.text(0);
      b.name = q.text(1);
      b.latency_us = q.real(2);
      b.source = q.text(3);
      b.recorded_at_ms = q.int64(4);
      out.push_back(std::move(b));
    }
  }));
  return out;
}

}  // namespace mono::db
