// Store: opening, transactions, workers, submissions, tasks and artifacts. The job state
// machine is in jobs.cc, the read-only queries in queries.cc.
#include "db/store.h"

#include <sqlite3.h>

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/migrations.h"
#include "db/sqlite.h"
#include "db/status_macros.h"
#include "db/store_internal.h"

namespace mono::db {

using internal::kSubmissionSelect;
using internal::kTaskSelect;
using internal::kWorkerSelect;

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, const Clock* clock,
                                                   StoreOptions options) {
  if (clock == nullptr) return absl::InvalidArgumentError("Store::Open: no clock");
  if (path.empty()) return absl::InvalidArgumentError("Store::Open: empty database path");
  const bool in_memory = path == ":memory:" || path.rfind("file:", 0) == 0;
  std::error_code ec;
  const bool existed = !in_memory && std::filesystem::exists(path, ec);
  if (existed && std::filesystem::file_size(path, ec) == 0 && !ec)
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is an empty file (0 bytes): refusing to start on it (a lost or truncated database?). Restore a backup, "
              "or move it away to start a new database"));
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    absl::Status st = sql::error(db, rc, absl::StrCat("open ", path));
    sqlite3_close(db);
    return st;
  }
  // From here the Store owns the connection and closes it on every path.
  std::unique_ptr<Store> store(new Store(db, clock, options));
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  for (const char* pragma : {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL",
                             "PRAGMA foreign_keys = ON"}) {
    absl::Status st = sql::exec(db, pragma);
    if (!st.ok()) {
      return absl::Status(st.code(), absl::StrCat("open ", path, ": ", st.message()));
    }
  }
  if (existed) {
    // The first line quick_check reports ("ok" when sound); a file that is not a database at
    // all fails already at the prepare.
    std::string check = "ok";
    absl::StatusOr<sql::Stmt> q = sql::Stmt::prepare(db, "PRAGMA quick_check");
    absl::StatusOr<bool> row = q.ok() ? q->step() : absl::StatusOr<bool>(q.status());
    if (!row.ok()) check = std::string(row.status().message());
    else if (*row) check = q->text(0);
    if (check != "ok")
      return absl::DataLossError(absl::StrCat(path, " fails SQLite's integrity check (", check.substr(0, 200),
                                              "): refusing to serve it. Restore a backup (docs/deploy.md)"));
    MONO_ASSIGN_OR_RETURN(sql::Stmt t, sql::Stmt::prepare(db, "SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'"));
    MONO_ASSIGN_OR_RETURN(bool has_row, t.step());
    if (!has_row || t.text(0) == "0")
      return absl::FailedPreconditionError(absl::StrCat(
          path, " exists but holds no Mono tables: refusing to start on it (its data may have been lost with a deleted "
                "-wal file). Restore a backup, or move it away to start a new database"));
  }
  store->created_ = !existed && !in_memory;
  absl::Status st = apply_migrations(db, *clock);
  if (!st.ok()) return absl::Status(st.code(), absl::StrCat(path, ": ", st.message()));
  if (!in_memory) MONO_RETURN_IF_ERROR(store->checkpoint());
  return store;
}

Store::Store(sqlite3* db, const Clock* clock, StoreOptions options)
    : db_(db), clock_(clock), options_(options), rng_(std::random_device{}()) {}

Store::~Store() { sqlite3_close_v2(db_); }

absl::StatusOr<int> Store::cancel_orphaned_jobs() {
  int deleted = 0;
  MONO_RETURN_IF_ERROR(transaction("BEGIN IMMEDIATE", [&](sqlite3* db) -> absl::Status {
    static const char kOrphans[] =
        "SELECT id FROM jobs WHERE state = 'queued' AND ("
        " (task_id IS NOT NULL AND task_id NOT IN (SELECT st.task_id FROM submission_tasks st"
        "   JOIN submissions s ON s.id = st.submission_id WHERE s.state IN ('queued', 'tuning', 'merging')))"
        " OR (task_id IS NULL AND submission_id IN (SELECT id FROM submissions WHERE state IN ('failed', 'done'))))";
    MONO_RETURN_IF_ERROR(sql::exec(db, std::string("DELETE FROM job_exclusions WHERE job_id IN (") + kOrphans + ")"));
    MONO_RETURN_IF_ERROR(sql::exec(db, std::string("DELETE FROM jobs WHERE id IN (") + kOrphans + ")"));
    deleted = sqlite3_changes(db);
    return absl::OkStatus();
  }));
  return deleted;
}

absl::Status Store::checkpoint() {
  std::lock_guard<std::mutex> lock(mu_);
  return sql::exec(db_, "PRAGMA wal_checkpoint(PASSIVE)");
}

absl::Status Store::transaction(const char* begin,
                                const std::function<absl::Status(sqlite3*)>& body) {
  std::lock_guard<std::mutex> lock(mu_);
  MONO_RETURN_IF_ERROR(sql::exec(db_, begin));
  absl::Status st = body(db_);
  if (st.ok()) st = sql::exec(db_, "COMMIT");
  if (!st.ok() && !sqlite3_get_autocommit(db_)) (void)sql::exec(db_, "ROLLBACK");
  return st;
}

absl::Status Store::write(const std::function<absl::Status(sqlite3*)>& body) {
  return transaction("BEGIN IMMEDIATE", body);
}

absl::Status Store::read(const std::function<absl::Status(sqlite3*)>& body) {
  return transaction("BEGIN", body);
}

std::string Store::new_id(const char* prefix) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = prefix;
  uint64_t a = rng_(), b = rng_();
  for (int i = 0; i < 16; ++i) id += kHex[(a >> (4 * i)) & 15];
  for (int i = 0; i < 8; ++i) id += kHex[(b >> (4 * i)) & 15];
  return id;
}

// ---- workers ----------------------------------------------------------------------------------

absl::StatusOr<std::string> Store::register_worker(const std::string& name,
                                                   const WorkerCaps& caps) {
  if (name.empty()) return absl::InvalidArgumentError("register_worker: empty worker name");
  std::string id;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    const int64_t now = clock_->now_ms();
    MONO_ASSIGN_OR_RETURN(sql::Stmt q, sql::Stmt::prepare(db, "SELECT id FROM workers WHERE name = ?"));
    q.bind_all(name);
    MONO_ASSIGN_OR_RETURN(bool found, q.step());
    if (found) {
      id = q.text(0);
      MONO_ASSIGN_OR_RETURN(
          sql::Stmt up,
          sql::Stmt::prepare(db,
                             "UPDATE workers SET gpu_name = ?, sm_arch = ?, memory_bytes = ?, "
                             "cuda_version = ?, driver_version = ?, compile_only = ?, gpus = ?, "
                             "compile_threads = ?, last_seen = ? WHERE id = ?"));
      up.bind_all(caps.gpu_name, caps.sm_arch, caps.memory_bytes, caps.cuda_version,
                  caps.driver_version, caps.compile_only, caps.gpus, caps.compile_threads, now, id);
      return up.run();
    }
    id = new_id("w-");
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt ins,
        sql::Stmt::prepare(db,
                           "INSERT INTO workers(id, name, gpu_name, sm_arch, memory_bytes, "
                           "cuda_version, driver_version, compile_only, gpus, compile_threads, "
                           "registered_at, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    ins.bind_all(id, name, caps.gpu_name, caps.sm_arch, caps.memory_bytes, caps.cuda_version,
                 caps.driver_version, caps.compile_only, caps.gpus, caps.compile_threads, now, now);
    return ins.run();
  }));
  return id;
}

absl::StatusOr<WorkerRecord> Store::get_worker(const std::string& id) {
  WorkerRecord out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(sql::Stmt q,
                          sql::Stmt::prepare(db, absl::StrCat(kWorkerSelect, " WHERE w.id = ?")));
    q.bind_all(id);
    MONO_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) return absl::NotFoundError(absl::StrCat("unknown worker ", id));
    out = internal::read_worker(q);
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::vector<WorkerRecord>> Store::list_workers() {
  std::vector<WorkerRecord> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(sql::Stmt q,
                          sql::Stmt::prepare(db, absl::StrCat(kWorkerSelect, " ORDER BY w.name")));
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      out.push_back(internal::read_worker(q));
    }
  }));
  return out;
}

// ---- submissions ------------------------------------------------------------------------------

absl::StatusOr<std::string> Store::create_submission(const SubmissionRecord& s) {
  std::string id = s.id;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    const int64_t now = clock_->now_ms();
    if (id.empty()) id = new_id("s-");
    MONO_ASSIGN_OR_RETURN(bool exists, internal::submission_exists(db, id));
    if (exists) return absl::AlreadyExistsError(absl::StrCat("submission ", id, " exists"));
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt ins,
        sql::Stmt::prepare(db,
                           "INSERT INTO submissions(id, model_name, model_sha256, model_dir, "
                           "shapes_json, precision, gpu_kind, dry_run, state, groups_total, "
                           "created_at, updated_at, finished_at, artifact_dir, error, max_measurements) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, ?14, ?15)"));
    const bool finished = s.state == SubmissionState::kDone || s.state == SubmissionState::kFailed;
    ins.bind_all(id, s.model_name, s.model_sha256, s.model_dir,
                 s.shapes_json.empty() ? std::string("[]") : s.shapes_json, s.precision,
                 s.gpu_kind, s.dry_run, to_string(s.state), s.groups_total, now);
    if (finished) {
      ins.bind(12, now);
    } else {
      ins.bind_null(12);
    }
    ins.bind(13, s.artifact_dir);
    ins.bind(14, s.error);
    ins.bind(15, s.max_measurements);
    return ins.run();
  }));
  return id;
}

absl::StatusOr<SubmissionRecord> Store::get_submission(const std::string& id) {
  SubmissionRecord out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q, sql::Stmt::prepare(db, absl::StrCat(kSubmissionSelect, " WHERE s.id = ?")));
    q.bind_all(id);
    MONO_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) return absl::NotFoundError(absl::StrCat("unknown submission ", id));
    out = internal::read_submission(q);
    return absl::OkStatus();
  }));
  return out;
}

namespace {

absl::Status collect_submissions(sqlite3* db, const std::string& query,
                                 std::vector<SubmissionRecord>* out) {
  MONO_ASSIGN_OR_RETURN(sql::Stmt q, sql::Stmt::prepare(db, query));
  while (true) {
    MONO_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) return absl::OkStatus();
    out->push_back(internal::read_submission(q));
  }
}

}  // namespace

absl::StatusOr<std::vector<SubmissionRecord>> Store::list_submissions() {
  std::vector<SubmissionRecord> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) {
    return collect_submissions(
        db, absl::StrCat(kSubmissionSelect, " ORDER BY s.created_at DESC, s.rowid DESC"), &out);
  }));
  return out;
}

absl::StatusOr<std::vector<SubmissionRecord>> Store::unfinished_submissions() {
  std::vector<SubmissionRecord> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) {
    return collect_submissions(db,
                               absl::StrCat(kSubmissionSelect,
                                            " WHERE s.state IN ('queued', 'tuning', 'merging') "
                                            "ORDER BY s.created_at, s.rowid"),
                               &out);
  }));
  return out;
}

absl::Status Store::set_submission_state(const std::string& id, SubmissionState state,
                                         const std::string& error) {
  return write([&](sqlite3* db) -> absl::Status {
    const int64_t now = clock_->now_ms();
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt up,
        sql::Stmt::prepare(db,
                           "UPDATE submissions SET state = ?, error = ?, updated_at = ?, "
                           "finished_at = ? WHERE id = ?"));
    const bool finished = state == SubmissionState::kDone || state == SubmissionState::kFailed;
    up.bind_all(to_string(state), error, now);
    if (finished) {
      up.bind(4, now);
    } else {
      up.bind_null(4);
    }
    up.bind(5, id);
    MONO_RETURN_IF_ERROR(up.run());
    if (up.changes() == 0) return absl::NotFoundError(absl::StrCat("unknown submission ", id));
    return absl::OkStatus();
  });
}

absl::Status Store::set_submission_groups_total(const std::string& id, int groups_total) {
  return write([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt up,
        sql::Stmt::prepare(db,
                           "UPDATE submissions SET groups_total = ?, updated_at = ? WHERE id = ?"));
    up.bind_all(groups_total, clock_->now_ms(), id);
    MONO_RETURN_IF_ERROR(up.run());
    if (up.changes() == 0) return absl::NotFoundError(absl::StrCat("unknown submission ", id));
    return absl::OkStatus();
  });
}

// ---- tasks ------------------------------------------------------------------------------------

absl::StatusOr<AddTaskResult> Store::add_task(const std::string& signature,
                                              const std::string& gpu_kind,
                                              const std::string& context,
                                              const std::string& payload) {
  AddTaskResult out;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(out, internal::insert_task(db, clock_->now_ms(), signature, gpu_kind,
                                                     context, payload));
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<TaskRecord> Store::get_task(int64_t id) {
  TaskRecord out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(sql::Stmt q,
                          sql::Stmt::prepare(db, absl::StrCat(kTaskSelect, " WHERE t.id = ?")));
    q.bind_all(id);
    MONO_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) return absl::NotFoundError(absl::StrCat("unknown task ", id));
    out = internal::read_task(q);
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<TaskRecord> Store::find_task(const std::string& signature, const std::string& gpu_kind,
                                            const std::string& context) {
  TaskRecord out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q, sql::Stmt::prepare(db, absl::StrCat(kTaskSelect,
                                                         " WHERE t.signature = ? AND t.gpu_kind = ? AND t.context = ?")));
    q.bind_all(signature, gpu_kind, context);
    MONO_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) return absl::NotFoundError(absl::StrCat("no task ", signature, " on '", gpu_kind, "'"));
    out = internal::read_task(q);
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::vector<std::string>> Store::task_gpu_kinds() {
  std::vector<std::string> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(sql::Stmt q, sql::Stmt::prepare(db, "SELECT DISTINCT gpu_kind FROM tasks ORDER BY gpu_kind"));
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      out.push_back(q.text(0));
    }
  }));
  return out;
}

absl::Status Store::link_task(const std::string& submission_id, int64_t task_id) {
  return write([&](sqlite3* db) { return internal::insert_link(db, submission_id, task_id); });
}

absl::StatusOr<std::vector<TaskRecord>> Store::submission_tasks(const std::string& submission_id) {
  std::vector<TaskRecord> out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q,
        sql::Stmt::prepare(db, absl::StrCat(kTaskSelect,
                                            " JOIN submission_tasks st ON st.task_id = t.id "
                                            "WHERE st.submission_id = ? ORDER BY t.id")));
    q.bind_all(submission_id);
    while (true) {
      MONO_ASSIGN_OR_RETURN(bool row, q.step());
      if (!row) return absl::OkStatus();
      out.push_back(internal::read_task(q));
    }
  }));
  return out;
}

absl::StatusOr<PlanResult> Store::add_plan(const std::string& submission_id,
                                           const std::vector<TaskPlan>& plan) {
  PlanResult out;
  MONO_RETURN_IF_ERROR(write([&](sqlite3* db) -> absl::Status {
    const int64_t now = clock_->now_ms();
    MONO_ASSIGN_OR_RETURN(bool exists, internal::submission_exists(db, submission_id));
    if (!exists) return absl::NotFoundError(absl::StrCat("unknown submission ", submission_id));
    for (const TaskPlan& t : plan) {
      MONO_ASSIGN_OR_RETURN(AddTaskResult task, internal::insert_task(db, now, t.signature,
                                                                      t.gpu_kind, t.context,
                                                                      t.payload));
      out.task_ids.push_back(task.task_id);
      ++(task.created ? out.tasks_created : out.tasks_reused);
      MONO_RETURN_IF_ERROR(internal::insert_link(db, submission_id, task.task_id, t.instances));
      for (NewJob job : t.jobs) {
        job.task_id = task.task_id;
        MONO_ASSIGN_OR_RETURN(bool created, internal::insert_job(db, now, job));
        out.jobs_created += created ? 1 : 0;
      }
    }
    return absl::OkStatus();
  }));
  return out;
}

// ---- artifacts --------------------------------------------------------------------------------

absl::Status Store::save_artifact(const std::string& submission_id, const std::string& dir,
                                  const std::string& manifest_json) {
  return write([&](sqlite3* db) -> absl::Status {
    const int64_t now = clock_->now_ms();
    MONO_ASSIGN_OR_RETURN(bool exists, internal::submission_exists(db, submission_id));
    if (!exists) return absl::NotFoundError(absl::StrCat("unknown submission ", submission_id));
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt ins,
        sql::Stmt::prepare(db,
                           "INSERT INTO artifacts(submission_id, dir, manifest_json, created_at) "
                           "VALUES (?1, ?2, ?3, ?4) ON CONFLICT(submission_id) DO UPDATE SET "
                           "dir = ?2, manifest_json = ?3, created_at = ?4"));
    ins.bind_all(submission_id, dir, manifest_json.empty() ? std::string("{}") : manifest_json,
                 now);
    MONO_RETURN_IF_ERROR(ins.run());
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt up,
        sql::Stmt::prepare(db,
                           "UPDATE submissions SET artifact_dir = ?, updated_at = ? WHERE id = ?"));
    up.bind_all(dir, now, submission_id);
    return up.run();
  });
}

absl::StatusOr<ArtifactRecord> Store::get_artifact(const std::string& submission_id) {
  ArtifactRecord out;
  MONO_RETURN_IF_ERROR(read([&](sqlite3* db) -> absl::Status {
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt q,
        sql::Stmt::prepare(db,
                           "SELECT submission_id, dir, manifest_json, created_at FROM artifacts "
                           "WHERE submission_id = ?"));
    q.bind_all(submission_id);
    MONO_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) return absl::NotFoundError(absl::StrCat("no artifact for submission ", submission_id));
    out.submission_id = q.text(0);
    out.dir = q.text(1);
    out.manifest_json = q.text(2);
    out.created_at_ms = q.int64(3);
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace mono::db
