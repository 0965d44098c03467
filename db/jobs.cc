// Store: the job queue and its lease state machine.
//
//   queued --lease--> leased --report--> done
//                       |--expired lease / worker failure--> queued   (attempts < max)
//                       '--expired lease / worker failure--> failed   (worker_lost)
//
// A worker a job failed on is recorded in job_exclusions and gets the job again only when
// no other live, eligible, non-excluded worker exists.
#include <sqlite3.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "db/sqlite.h"
#include "db/status_macros.h"
#include "db/store.h"
#include "db/store_internal.h"

namespace mono::db {

namespace {

// A queued job the worker may take, unless it failed on this worker before and another
// live worker could take it instead. ?1 = worker id, ?3 = "alive since" time.
constexpr const char* kNotExcluded = R"sql(
  (NOT EXISTS (SELECT 1 FROM job_exclusions x WHERE x.job_id = j.id AND x.worker_id = ?1)
   OR NOT EXISTS (
     SELECT 1 FROM workers w
     WHERE w.id <> ?1 AND w.last_seen >= ?3
       AND (j.kind = 'compile'
            OR (w.compile_only = 0 AND w.gpu_name <> ''
                AND (j.gpu_kind = '' OR j.gpu_kind = w.gpu_name)))
       AND NOT EXISTS (SELECT 1 FROM job_exclusions x
                       WHERE x.job_id = j.id AND x.worker_id = w.id)))
)sql";

// The ids of the jobs a worker can run, in this order:
//   1. whole-kernel jobs queued for longer than StoreOptions::whole_kernel_wait_ms;
//   2. compile and measure jobs;
//   3. the other whole-kernel jobs;
// oldest (first inserted) first within each. Measurements go before a newer whole-kernel job
// because a whole-kernel job waits for every measurement of its own submission: with several
// models submitted at once, whole-kernel jobs taken first held GPUs while the last model's
// measurements waited, and that model's whole-kernel job (one NVRTC compile of the whole
// kernel, 8-10 s) then ran alone at the end (4 H100s, four models: measurements ended at 25.8
// s, the last artifact at 39.3 s; bench/RESULTS.md, session 17). Taken after the measurements,
// the whole-kernel jobs run side by side on all GPUs. The wait bounds what a finished model's
// artifact can lose to a stream of other submissions' measurements (taking whole-kernel jobs
// first had been the cure for that: 4 H200s, resnet50 measured at 32 s and got its artifact at
// 97 s; bench/RESULTS.md, 2026-11-26). Compile jobs always; measure and whole_kernel jobs only on
// a GPU worker, of its GPU kind or of any (''). Each (kind, gpu_kind) is one branch that walks
// an index in rowid order and stops at the limit, so a lease costs about the same with ten
// queued jobs or a hundred thousand.
// ?1 = worker id, ?2 = its GPU name, ?3 = "alive since" time, ?4 = limit, ?5 = a whole-kernel
// job created at or before this time is overdue.
std::string leasable_sql(bool has_gpu) {
  std::vector<std::string> conditions = {"j.kind = 'compile'"};
  if (has_gpu) {
    for (const char* kind : {"measure", "whole_kernel"}) {
      for (const char* gpu : {"''", "?2"}) {
        conditions.push_back(absl::StrCat("j.kind = '", kind, "' AND j.gpu_kind = ", gpu));
      }
    }
  }
  std::string sql = "SELECT id FROM (";
  for (size_t i = 0; i < conditions.size(); ++i) {
    absl::StrAppend(&sql, i == 0 ? "" : " UNION ALL ",
                    "SELECT * FROM (SELECT j.id AS id, j.rowid AS rid, "
                    "CASE WHEN j.kind <> 'whole_kernel' THEN 1 WHEN j.created_at <= ?5 THEN 0 ELSE 2 END AS rank "
                    "FROM jobs j "
                    "WHERE j.state = 'queued' AND ", conditions[i], " AND ", kNotExcluded,
                    " ORDER BY j.rowid LIMIT ?4)");
  }
  absl::StrAppend(&sql, ") ORDER BY rank, rid LIMIT ?4");
  return sql;
}

absl::Status touch_worker(sqlite3* db, const std::string& worker_id, int64_t now) {
  MONO_ASSIGN_OR_RETURN(sql::Stmt up,
                        sql::Stmt::prepare(db, "UPDATE workers SET last_seen = ? WHERE id = ?"));
  up.bind_all(now, worker_id);
  return up.run();
}

// Is the job leased to this worker right now (whether or not its deadline has passed: until
// expire_leases runs nobody else can hold it)?
absl::StatusOr<bool> held_by(sqlite3* db, const std::string& job_id, const std::string& worker_id) {
  MONO_ASSIGN_OR_RETURN(
      sql::Stmt q,
      sql::Stmt::prepare(db,
                         "SELECT 1 FROM jobs WHERE id = ? AND state = 'leased' "
                         "AND lease_worker = ?"));
  q.bind_all(job_id, worker_id);
  return q.step();
}

// The worker failed the job (through no fault of the candidates): remember it, then put the
// job back in the queue, or fail it as worker_lost once its attempts are used up. Returns
// true when requeued.
absl::StatusOr<bool> requeue_or_fail(sqlite3* db, int64_t now, const std::string& job_id,
                                     const std::string& worker_id, const std::string& reason) {
  MONO_ASSIGN_OR_RETURN(
      sql::Stmt ex,
      sql::Stmt::prepare(db,
                         "INSERT OR IGNORE INTO job_exclusions(job_id, worker_id, reason, "
                         "created_at) VALUES (?, ?, ?, ?)"));
  ex.bind_all(job_id, worker_id, reason, now);
  MONO_RETURN_IF_ERROR(ex.run());

  MONO_ASSIGN_OR_RETURN(sql::Stmt q, sql::Stmt::prepare(db, "SELECT attempts >= max_attempts "
                                                            "FROM jobs WHERE id = ?"));
  q.bind_all(job_id);
  MONO_ASSIGN_OR_RETURN(bool row, q.step());
  if (!row) return absl::InternalError(absl::StrCat("job ", job_id, " vanished"));
  const bool exhausted = q.int64(0) != 0;
  MONO_ASSIGN_OR_RETURN(
      sql::Stmt up,
      sql::Stmt::prepare(db,
                         exhausted
                             ? "UPDATE jobs SET state = 'failed', failure_class = 'worker_lost', "
                               "failure_reason = ?, lease_deadline_ms = NULL, updated_at = ? "
                               "WHERE id = ?"
                             : "UPDATE jobs SET state = 'queued', failure_reason = ?, "
                               "lease_worker = NULL, lease_deadline_ms = NULL, updated_at = ? "
                               "WHERE id = ?"));
  up.bind_all(reason, now, job_id);
  MONO_RETURN_IF_ERROR(up.run());
  return !exhausted;
}

std::string samples_json(const std::vector<double>& samples) {
  return nlohmann::json(samples).dump();
}

}  // namespace

absl::StatusOr<bool> Store::add_job(const NewJob& job) {
  bool created = false;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(created, internal::insert_job(db, clock_->now_ms(), job));
    return absl::OkStatus();
  }));
  return created;
}

absl::StatusOr<JobRecord> Store::get_job(const std::string& id) {
  JobRecord out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(std::optional<JobRecord> job, internal::load_job(db, id));
    if (!job) return absl::NotFoundError(absl::StrCat("unknown job ", id));
    out = std::move(*job);
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::vector<JobRecord>> Store::task_jobs(int64_t task_id) {
  std::vector<JobRecord> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q,
        sql::Stmt::prepare(db, absl::StrCat(internal::kJobSelect,
                                            " WHERE j.task_id = ? ORDER BY j.created_at, j.rowid")));
    q.bind_all(task_id);
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      out.push_back(internal::read_job(q));
    }
  }));
  return out;
}

absl::StatusOr<std::vector<JobRecord>> Store::lease(const std::string& worker_id, int max_jobs,
                                                    int64_t lease_ms) {
  if (lease_ms <= 0) return absl::InvalidArgumentError("lease: lease_ms must be positive");
  std::vector<JobRecord> out;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    const int64_t now = clock_->now_ms();
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt w, sql::Stmt::prepare(db, "SELECT compile_only, gpu_name FROM workers WHERE id = ?"));
    w.bind_all(worker_id);
    MONO_ASSIGN_OR_RETURN(bool known, w.step());
    if (!known) return absl::NotFoundError(absl::StrCat("lease: unknown worker ", worker_id));
    const std::string gpu_name = w.text(1);
    const bool has_gpu = w.int64(0) == 0 && !gpu_name.empty();
    MONO_RETURN_IF_ERROR(touch_worker(db, worker_id, now));
    if (max_jobs <= 0) return absl::OkStatus();

    MONO_ASSIGN_OR_RETURN(sql::Stmt pick, sql::Stmt::prepare(db, leasable_sql(has_gpu)));
    pick.bind_all(worker_id, gpu_name, now - options_.worker_alive_ms,
                  static_cast<int64_t>(max_jobs), now - options_.whole_kernel_wait_ms);
    std::vector<std::string> ids;
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, pick.step());
      if (!row) break;
      ids.push_back(pick.text(0));
    }

    MONO_ASSIGN_OR_RETURN(
        sql::Stmt up,
        sql::Stmt::prepare(db,
                           "UPDATE jobs SET state = 'leased', lease_worker = ?, "
                           "lease_deadline_ms = ?, attempts = attempts + 1, updated_at = ? "
                           "WHERE id = ? AND state = 'queued'"));
    for (const std::string& id : ids) {
      up.reset();
      up.bind_all(worker_id, now + lease_ms, now, id);
      MONO_RETURN_IF_ERROR(up.run());
      if (up.changes() != 1) {
        return absl::InternalError(absl::StrCat("lease: job ", id, " was not queued"));
      }
      MONO_ASSIGN_OR_RETURN(std::optional<JobRecord> job, internal::load_job(db, id));
      if (!job) return absl::InternalError(absl::StrCat("lease: job ", id, " vanished"));
      out.push_back(std::move(*job));
    }
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<RenewResult> Store::renew(const std::string& worker_id,
                                         const std::vector<std::string>& job_ids,
                                         int64_t lease_ms) {
  if (lease_ms <= 0) return absl::InvalidArgumentError("renew: lease_ms must be positive");
  RenewResult out;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    out = RenewResult{};
    const int64_t now = clock_->now_ms();
    MONO_RETURN_IF_ERROR(touch_worker(db, worker_id, now));
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt up,
        sql::Stmt::prepare(db,
                           "UPDATE jobs SET lease_deadline_ms = ?, updated_at = ? "
                           "WHERE id = ? AND state = 'leased' AND lease_worker = ?"));
    for (const std::string& id : job_ids) {
      up.reset();
      up.bind_all(now + lease_ms, now, id, worker_id);
      MONO_RETURN_IF_ERROR(up.run());
      (up.changes() == 1 ? out.renewed : out.lost).push_back(id);
    }
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<bool> Store::report(const std::string& worker_id, const std::string& job_id,
                                   const std::vector<CandidateResult>& results,
                                   const Environment& env) {
  bool accepted = false;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    accepted = false;
    const int64_t now = clock_->now_ms();
    MONO_RETURN_IF_ERROR(touch_worker(db, worker_id, now));
    MONO_ASSIGN_OR_RETURN(bool held, held_by(db, job_id, worker_id));
    if (!held) return absl::OkStatus();  // late or duplicate: nothing changes

    const std::string env_json = to_json(env);
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt ins,
        sql::Stmt::prepare(db,
                           "INSERT OR IGNORE INTO results(job_id, candidate, ok, failure_class, "
                           "reason, median_us, spread, samples_json, registers, spill_bytes, "
                           "smem_bytes, env_json, worker_id, created_at) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    for (const CandidateResult& r : results) {
      ins.reset();
      ins.bind_all(job_id, r.candidate, r.ok);
      ins.bind_text_or_null(4, to_string(r.failure));
      ins.bind(5, r.reason);
      ins.bind(6, r.median_us);
      if (r.median_us.has_value()) {
        ins.bind(7, r.spread);
      } else {
        ins.bind_null(7);
      }
      ins.bind(8, samples_json(r.samples_us));
      ins.bind(9, r.registers);
      ins.bind(10, r.spill_bytes);
      ins.bind(11, r.smem_bytes);
      ins.bind(12, env_json);
      ins.bind(13, worker_id);
      ins.bind(14, now);
      MONO_RETURN_IF_ERROR(ins.run());
    }
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt up,
        sql::Stmt::prepare(db,
                           "UPDATE jobs SET state = 'done', lease_deadline_ms = NULL, "
                           "updated_at = ? WHERE id = ?"));
    up.bind_all(now, job_id);
    MONO_RETURN_IF_ERROR(up.run());
    accepted = true;
    return absl::OkStatus();
  }));
  return accepted;
}

absl::StatusOr<bool> Store::report_worker_failure(const std::string& worker_id,
                                                  const std::string& job_id,
                                                  const std::string& reason) {
  bool accepted = false;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    accepted = false;
    const int64_t now = clock_->now_ms();
    MONO_RETURN_IF_ERROR(touch_worker(db, worker_id, now));
    MONO_ASSIGN_OR_RETURN(bool held, held_by(db, job_id, worker_id));
    if (!held) return absl::OkStatus();
    MONO_RETURN_IF_ERROR(requeue_or_fail(db, now, job_id, worker_id,
                                         reason.empty() ? std::string("worker failure") : reason)
                             .status());
    accepted = true;
    return absl::OkStatus();
  }));
  return accepted;
}

absl::StatusOr<int> Store::expire_leases() {
  int requeued = 0;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    requeued = 0;
    const int64_t now = clock_->now_ms();
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q,
        sql::Stmt::prepare(db,
                           "SELECT id, COALESCE(lease_worker, '') FROM jobs "
                           "WHERE state = 'leased' AND lease_deadline_ms <= ? "
                           "ORDER BY lease_deadline_ms"));
    q.bind_all(now);
    std::vector<std::pair<std::string, std::string>> expired;
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) break;
      expired.emplace_back(q.text(0), q.text(1));
    }
    for (const auto& [job_id, worker_id] : expired) {
      MONO_ASSIGN_OR_RETURN(bool again,
                            requeue_or_fail(db, now, job_id, worker_id,
                                            absl::StrCat("lease expired on worker ", worker_id)));
      requeued += again ? 1 : 0;
    }
    return absl::OkStatus();
  }));
  return requeued;
}

}  // namespace mono::db
