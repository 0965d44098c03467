// Store: read-only queries for the server, the dashboard and the metrics.
#include <sqlite3.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "db/migrations.h"
#include "db/sqlite.h"
#include "db/status_macros.h"
#include "db/store.h"
#include "db/store_internal.h"

namespace mono::db {

namespace {

absl::Status collect_results(sql::Stmt& q, std::vector<ResultRecord>* out) {
  while (true) {
    MONO_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) return absl::OkStatus();
    out->push_back(internal::read_result(q));
  }
}

}  // namespace

absl::StatusOr<SubmissionProgress> Store::submission_progress(const std::string& id) {
  SubmissionProgress p;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt s,
        sql::Stmt::prepare(db, "SELECT state, groups_total, error FROM submissions WHERE id = ?"));
    s.bind_all(id);
    MONO_ASSIGN_OR_RETURN(bool found, s.step());
    if (!found) return absl::NotFoundError(absl::StrCat("unknown submission ", id));
    p.submission_id = id;
    parse(s.text(0), &p.state);
    const int declared_groups = static_cast<int>(s.int64(1));
    p.error = s.text(2);

    // A task is done when it has jobs and none of them is queued or leased.
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt g,
        sql::Stmt::prepare(db,
                           "SELECT COUNT(*), COALESCE(SUM("
                           "  EXISTS (SELECT 1 FROM jobs j WHERE j.task_id = st.task_id) AND "
                           "  NOT EXISTS (SELECT 1 FROM jobs j WHERE j.task_id = st.task_id "
                           "              AND j.state IN ('queued', 'leased'))), 0) "
                           "FROM submission_tasks st WHERE st.submission_id = ?"));
    g.bind_all(id);
    MONO_ASSIGN_OR_RETURN(bool grow, g.step());
    if (!grow) return absl::InternalError("submission_progress: no group row");
    const int linked = static_cast<int>(g.int64(0));
    p.groups_total = linked > 0 ? linked : declared_groups;
    p.groups_done = static_cast<int>(g.int64(1));

    MONO_ASSIGN_OR_RETURN(
        sql::Stmt c,
        sql::Stmt::prepare(db, absl::StrCat("SELECT COALESCE(SUM(j.kind = 'compile'), 0), "
                                            "COALESCE(SUM(j.kind = 'measure'), 0) "
                                            "FROM results r JOIN jobs j ON j.id = r.job_id WHERE ",
                                            internal::kSubmissionJobs)));
    c.bind_all(id);
    MONO_ASSIGN_OR_RETURN(bool crow, c.step());
    if (!crow) return absl::InternalError("submission_progress: no candidate row");
    p.candidates_compiled = c.int64(0);
    p.candidates_measured = c.int64(1);

    MONO_ASSIGN_OR_RETURN(
        sql::Stmt j,
        sql::Stmt::prepare(db, absl::StrCat("SELECT COUNT(*), "
                                            "COALESCE(SUM(j.state IN ('queued', 'leased')), 0), "
                                            "COALESCE(SUM(j.state = 'failed'), 0) "
                                            "FROM jobs j WHERE ",
                                            internal::kSubmissionJobs)));
    j.bind_all(id);
    MONO_ASSIGN_OR_RETURN(bool jrow, j.step());
    if (!jrow) return absl::InternalError("submission_progress: no job row");
    p.jobs_total = j.int64(0);
    p.jobs_pending = j.int64(1);
    p.jobs_failed = j.int64(2);
    return absl::OkStatus();
  }));
  return p;
}

absl::StatusOr<std::vector<ResultRecord>> Store::job_results(const std::string& job_id) {
  std::vector<ResultRecord> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q, sql::Stmt::prepare(db, absl::StrCat(internal::kResultSelect,
                                                         " WHERE r.job_id = ? ORDER BY r.candidate")));
    q.bind_all(job_id);
    return collect_results(q, &out);
  }));
  return out;
}

absl::StatusOr<std::vector<ResultRecord>> Store::best_results(int64_t task_id) {
  std::vector<ResultRecord> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q,
        sql::Stmt::prepare(
            db, absl::StrCat("WITH ranked AS ("
                             "  SELECT r.job_id, r.candidate, ROW_NUMBER() OVER ("
                             "    PARTITION BY r.job_id ORDER BY r.median_us, r.candidate) AS rn "
                             "  FROM results r JOIN jobs j ON j.id = r.job_id "
                             "  WHERE j.task_id = ?1 AND r.ok = 1 AND r.median_us IS NOT NULL) ",
                             internal::kResultSelect,
                             " JOIN ranked b ON b.job_id = r.job_id AND b.candidate = r.candidate "
                             "WHERE b.rn = 1 ORDER BY r.median_us, r.job_id")));
    q.bind_all(task_id);
    return collect_results(q, &out);
  }));
  return out;
}

absl::StatusOr<std::vector<StateCount>> Store::counts_by_state() {
  std::vector<StateCount> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q,
        sql::Stmt::prepare(db, "SELECT kind, state, COUNT(*) FROM jobs GROUP BY kind, state "
                               "ORDER BY kind, state"));
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      StateCount c;
      parse(q.text(0), &c.kind);
      parse(q.text(1), &c.state);
      c.count = q.int64(2);
      out.push_back(c);
    }
  }));
  return out;
}

absl::StatusOr<std::vector<FailureCount>> Store::failure_counts() {
  std::map<FailureClass, int64_t> counts;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q,
        sql::Stmt::prepare(db,
                           "SELECT COALESCE(failure_class, ''), COUNT(*) FROM results "
                           "WHERE ok = 0 GROUP BY 1 "
                           "UNION ALL "
                           "SELECT COALESCE(failure_class, ''), COUNT(*) FROM jobs "
                           "WHERE state = 'failed' GROUP BY 1"));
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      FailureClass f = FailureClass::kNone;
      parse(q.text(0), &f);
      counts[f] += q.int64(1);
    }
  }));
  std::vector<FailureCount> out;
  for (const auto& [f, n] : counts) out.push_back({f, n});
  return out;
}

absl::StatusOr<int64_t> Store::db_size_bytes() {
  int64_t out = 0;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(out, sql::query_int(db, "SELECT page_count * page_size "
                                                  "FROM pragma_page_count(), pragma_page_size()"));
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::string> Store::journal_mode() {
  std::lock_guard<std::mutex> lock(mu_);
  MONO_ASSIGN_OR_RETURN(sql::Stmt q, sql::Stmt::prepare(db_, "PRAGMA journal_mode"));
  MONO_ASSIGN_OR_RETURN(bool row, q.step());
  if (!row) return absl::InternalError("PRAGMA journal_mode gave no row");
  return q.text(0);
}

absl::StatusOr<int> Store::schema_version() {
  int out = 0;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(out, db::schema_version(db));
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace mono::db
