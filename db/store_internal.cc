#include "db/store_internal.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "db/status_macros.h"

namespace mono::db::internal {

const char* const kWorkerSelect =
    "SELECT w.id, w.name, w.gpu_name, w.sm_arch, w.memory_bytes, w.cuda_version, "
    "w.driver_version, w.compile_only, w.gpus, w.compile_threads, w.registered_at, w.last_seen "
    "FROM workers w";

const char* const kSubmissionSelect =
    "SELECT s.id, s.model_name, s.model_sha256, s.model_dir, s.shapes_json, s.precision, "
    "s.gpu_kind, s.dry_run, s.state, s.groups_total, s.created_at, s.updated_at, "
    "COALESCE(s.finished_at, 0), s.artifact_dir, s.error, s.max_measurements FROM submissions s";

const char* const kTaskSelect =
    "SELECT t.id, t.signature, t.gpu_kind, t.context, t.payload, t.created_at FROM tasks t";

const char* const kJobSelect =
    "SELECT j.id, COALESCE(j.task_id, 0), COALESCE(t.signature, ''), "
    "COALESCE(j.submission_id, ''), j.kind, j.gpu_kind, j.payload, j.state, j.attempts, "
    "j.max_attempts, COALESCE(j.lease_worker, ''), COALESCE(j.lease_deadline_ms, 0), "
    "COALESCE(j.failure_class, ''), COALESCE(j.failure_reason, ''), j.created_at, j.updated_at "
    "FROM jobs j LEFT JOIN tasks t ON t.id = j.task_id";

const char* const kResultSelect =
    "SELECT r.job_id, r.candidate, r.ok, COALESCE(r.failure_class, ''), r.reason, r.median_us, "
    "COALESCE(r.spread, 0), r.samples_json, r.registers, r.spill_bytes, r.smem_bytes, "
    "r.env_json, r.worker_id, r.created_at, j.kind FROM results r JOIN jobs j ON j.id = r.job_id";

const char* const kSubmissionJobs =
    "(j.task_id IN (SELECT task_id FROM submission_tasks WHERE submission_id = ?1) "
    "OR j.submission_id = ?1)";

WorkerRecord read_worker(const sql::Stmt& s) {
  WorkerRecord w;
  w.id = s.text(0);
  w.name = s.text(1);
  w.caps.gpu_name = s.text(2);
  w.caps.sm_arch = static_cast<int>(s.int64(3));
  w.caps.memory_bytes = s.int64(4);
  w.caps.cuda_version = s.text(5);
  w.caps.driver_version = s.text(6);
  w.caps.compile_only = s.int64(7) != 0;
  w.caps.gpus = static_cast<int>(s.int64(8));
  w.caps.compile_threads = static_cast<int>(s.int64(9));
  w.registered_at_ms = s.int64(10);
  w.last_seen_ms = s.int64(11);
  return w;
}

SubmissionRecord read_submission(const sql::Stmt& s) {
  SubmissionRecord r;
  r.id = s.text(0);
  r.model_name = s.text(1);
  r.model_sha256 = s.text(2);
  r.model_dir = s.text(3);
  r.shapes_json = s.text(4);
  r.precision = s.text(5);
  r.gpu_kind = s.text(6);
  r.dry_run = s.int64(7) != 0;
  parse(s.text(8), &r.state);
  r.groups_total = static_cast<int>(s.int64(9));
  r.created_at_ms = s.int64(10);
  r.updated_at_ms = s.int64(11);
  r.finished_at_ms = s.int64(12);
  r.artifact_dir = s.text(13);
  r.error = s.text(14);
  r.max_measurements = s.int64(15);
  return r;
}

TaskRecord read_task(const sql::Stmt& s) {
  TaskRecord t;
  t.id = s.int64(0);
  t.signature = s.text(1);
  t.gpu_kind = s.text(2);
  t.context = s.text(3);
  t.payload = s.text(4);
  t.created_at_ms = s.int64(5);
  return t;
}

JobRecord read_job(const sql::Stmt& s) {
  JobRecord j;
  j.id = s.text(0);
  j.task_id = s.int64(1);
  j.signature = s.text(2);
  j.submission_id = s.text(3);
  parse(s.text(4), &j.kind);
  j.gpu_kind = s.text(5);
  j.payload = s.text(6);
  parse(s.text(7), &j.state);
  j.attempts = static_cast<int>(s.int64(8));
  j.max_attempts = static_cast<int>(s.int64(9));
  j.lease_worker = s.text(10);
  j.lease_deadline_ms = s.int64(11);
  parse(s.text(12), &j.failure_class);
  j.failure_reason = s.text(13);
  j.created_at_ms = s.int64(14);
  j.updated_at_ms = s.int64(15);
  return j;
}

ResultRecord read_result(const sql::Stmt& s) {
  ResultRecord r;
  r.job_id = s.text(0);
  CandidateResult& c = r.result;
  c.candidate = static_cast<int>(s.int64(1));
  c.ok = s.int64(2) != 0;
  parse(s.text(3), &c.failure);
  c.reason = s.text(4);
  c.median_us = s.opt_real(5);
  c.spread = s.real(6);
  nlohmann::json samples = nlohmann::json::parse(s.text(7), nullptr, /*allow_exceptions=*/false);
  if (samples.is_array()) {
    for (const nlohmann::json& v : samples) {
      if (v.is_number()) c.samples_us.push_back(v.get<double>());
    }
  }
  c.registers = static_cast<int>(s.int64(8));
  c.spill_bytes = static_cast<int>(s.int64(9));
  c.smem_bytes = static_cast<int>(s.int64(10));
  r.env_json = s.text(11);
  r.worker_id = s.text(12);
  r.created_at_ms = s.int64(13);
  parse(s.text(14), &r.job_kind);
  return r;
}

absl::StatusOr<std::optional<JobRecord>> load_job(sqlite3* db, const std::string& id) {
  MONO_ASSIGN_OR_RETURN(sql::Stmt q,
                        sql::Stmt::prepare(db, absl::StrCat(kJobSelect, " WHERE j.id = ?")));
  q.bind_all(id);
  MONO_ASSIGN_OR_RETURN(bool row, q.step());
  if (!row) return std::optional<JobRecord>();
  return std::optional<JobRecord>(read_job(q));
}

absl::StatusOr<bool> submission_exists(sqlite3* db, const std::string& id) {
  MONO_ASSIGN_OR_RETURN(sql::Stmt q,
                        sql::Stmt::prepare(db, "SELECT 1 FROM submissions WHERE id = ?"));
  q.bind_all(id);
  return q.step();
}

absl::StatusOr<AddTaskResult> insert_task(sqlite3* db, int64_t now, const std::string& signature,
                                          const std::string& gpu_kind, const std::string& context,
                                          const std::string& payload) {
  if (signature.empty()) return absl::InvalidArgumentError("add_task: empty group signature");
  MONO_ASSIGN_OR_RETURN(
      sql::Stmt ins,
      sql::Stmt::prepare(db,
                         "INSERT INTO tasks(signature, gpu_kind, context, payload, created_at) "
                         "VALUES (?, ?, ?, ?, ?) "
                         "ON CONFLICT(signature, gpu_kind, context) DO NOTHING"));
  ins.bind_all(signature, gpu_kind, context, payload, now);
  MONO_RETURN_IF_ERROR(ins.run());
  AddTaskResult out;
  out.created = ins.changes() == 1;
  MONO_ASSIGN_OR_RETURN(
      sql::Stmt q,
      sql::Stmt::prepare(db,
                         "SELECT id FROM tasks WHERE signature = ? AND gpu_kind = ? AND context = ?"));
  q.bind_all(signature, gpu_kind, context);
  MONO_ASSIGN_OR_RETURN(bool row, q.step());
  if (!row) return absl::InternalError("add_task: the task vanished after its insert");
  out.task_id = q.int64(0);
  return out;
}

absl::Status insert_link(sqlite3* db, const std::string& submission_id, int64_t task_id, int instances) {
  MONO_ASSIGN_OR_RETURN(
      sql::Stmt ins,
      sql::Stmt::prepare(db,
                         "INSERT OR IGNORE INTO submission_tasks(submission_id, task_id, instances) "
                         "VALUES (?, ?, ?)"));
  ins.bind_all(submission_id, task_id, static_cast<int64_t>(instances));
  absl::Status st = ins.run();
  if (!st.ok()) {
    return absl::Status(st.code(), absl::StrCat("link task ", task_id, " to submission ",
                                                submission_id, ": ", st.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> insert_job(sqlite3* db, int64_t now, const NewJob& job) {
  if (job.id.empty()) return absl::InvalidArgumentError("add_job: empty job id");
  if (job.max_attempts < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("add_job ", job.id, ": max_attempts must be at least 1"));
  }
  MONO_ASSIGN_OR_RETURN(
      sql::Stmt ins,
      sql::Stmt::prepare(db,
                         "INSERT INTO jobs(id, task_id, submission_id, kind, gpu_kind, payload, "
                         "state, attempts, max_attempts, created_at, updated_at) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', 0, ?7, ?8, ?8) "
                         "ON CONFLICT(id) DO NOTHING"));
  ins.bind(1, job.id);
  if (job.task_id != 0) {
    ins.bind(2, job.task_id);
  } else {
    ins.bind_null(2);
  }
  ins.bind_text_or_null(3, job.submission_id);
  ins.bind(4, to_string(job.kind));
  ins.bind(5, job.gpu_kind);
  ins.bind(6, job.payload);
  ins.bind(7, job.max_attempts);
  ins.bind(8, now);
  absl::Status st = ins.run();
  if (!st.ok()) {
    return absl::Status(st.code(), absl::StrCat("add_job ", job.id, " (task ", job.task_id,
                                                ", submission '", job.submission_id,
                                                "'): ", st.message()));
  }
  return ins.changes() == 1;
}

}  // namespace mono::db::internal
