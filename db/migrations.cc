#include "db/migrations.h"

#include "absl/strings/str_cat.h"
#include "db/sqlite.h"
#include "db/status_macros.h"

namespace mono::db {

namespace {

// Migration 1: the whole first schema. Times are milliseconds from the injected clock.
constexpr const char* kInitialSchema = R"sql(
CREATE TABLE workers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  gpu_name TEXT NOT NULL DEFAULT '',
  sm_arch INTEGER NOT NULL DEFAULT 0,
  memory_bytes INTEGER NOT NULL DEFAULT 0,
  cuda_version TEXT NOT NULL DEFAULT '',
  driver_version TEXT NOT NULL DEFAULT '',
  compile_only INTEGER NOT NULL DEFAULT 0,
  gpus INTEGER NOT NULL DEFAULT 0,
  compile_threads INTEGER NOT NULL DEFAULT 0,
  registered_at INTEGER NOT NULL,
  last_seen INTEGER NOT NULL
);

CREATE TABLE submissions (
  id TEXT PRIMARY KEY,
  model_name TEXT NOT NULL DEFAULT '',
  model_sha256 TEXT NOT NULL DEFAULT '',
  model_dir TEXT NOT NULL DEFAULT '',
  shapes_json TEXT NOT NULL DEFAULT '[]',
  precision TEXT NOT NULL DEFAULT '',
  gpu_kind TEXT NOT NULL DEFAULT '',
  dry_run INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL CHECK (state IN ('queued', 'tuning', 'merging', 'done', 'failed')),
  groups_total INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER,
  artifact_dir TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX submissions_by_state ON submissions(state);

-- A tuning task: (group signature, GPU kind, context), shared across submissions and models.
CREATE TABLE tasks (
  id INTEGER PRIMARY KEY,
  signature TEXT NOT NULL,
  gpu_kind TEXT NOT NULL,
  context TEXT NOT NULL,
  payload TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  UNIQUE (signature, gpu_kind, context)
);

CREATE TABLE submission_tasks (
  submission_id TEXT NOT NULL REFERENCES submissions(id),
  task_id INTEGER NOT NULL REFERENCES tasks(id),
  PRIMARY KEY (submission_id, task_id)
);
CREATE INDEX submission_tasks_by_task ON submission_tasks(task_id);

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  task_id INTEGER REFERENCES tasks(id),
  submission_id TEXT REFERENCES submissions(id),
  kind TEXT NOT NULL CHECK (kind IN ('compile', 'measure', 'whole_kernel')),
  gpu_kind TEXT NOT NULL DEFAULT '',  -- '' = any worker
  payload TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL CHECK (state IN ('queued', 'leased', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  lease_worker TEXT,
  lease_deadline_ms INTEGER,
  failure_class TEXT,
  failure_reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- The lease query walks these in rowid (insertion) order: jobs_by_state for GPU jobs of one
-- kind and GPU kind, jobs_by_kind for compile jobs of any GPU kind.
CREATE INDEX jobs_by_state ON jobs(state, kind, gpu_kind);
CREATE INDEX jobs_by_kind ON jobs(state, kind);
CREATE INDEX jobs_by_deadline ON jobs(lease_deadline_ms);
CREATE INDEX jobs_by_task ON jobs(task_id);
CREATE INDEX jobs_by_submission ON jobs(submission_id);

-- Workers a job failed on (expired lease or worker failure): it is leased to them again only
-- when no other eligible worker is alive.
CREATE TABLE job_exclusions (
  job_id TEXT NOT NULL REFERENCES jobs(id),
  worker_id TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  PRIMARY KEY (job_id, worker_id)
);

-- Compile results and measurements. Cost-model estimates are never stored here.
CREATE TABLE results (
  job_id TEXT NOT NULL REFERENCES jobs(id),
  candidate INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  failure_class TEXT,
  reason TEXT NOT NULL DEFAULT '',
  median_us REAL,
  spread REAL,
  samples_json TEXT NOT NULL DEFAULT '[]',
  registers INTEGER NOT NULL DEFAULT 0,
  spill_bytes INTEGER NOT NULL DEFAULT 0,
  smem_bytes INTEGER NOT NULL DEFAULT 0,
  env_json TEXT NOT NULL DEFAULT '{}',
  worker_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (job_id, candidate)
);

CREATE TABLE artifacts (
  submission_id TEXT PRIMARY KEY REFERENCES submissions(id),
  dir TEXT NOT NULL,
  manifest_json TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
);
)sql";

// Migration 2, for the dashboard: how many groups of the submission's model each of its
// tasks stands for (rows from before count as 1), and the latencies of other tools (PyTorch
// eager, CUDA graphs, torch.compile) timed for a model on a GPU kind.
constexpr const char* kDashboard = R"sql(
ALTER TABLE submission_tasks ADD COLUMN instances INTEGER NOT NULL DEFAULT 1;
CREATE TABLE baselines (
  model_sha256 TEXT NOT NULL,
  gpu_kind TEXT NOT NULL,
  name TEXT NOT NULL,
  latency_us REAL NOT NULL CHECK (latency_us > 0),
  source TEXT NOT NULL DEFAULT '',
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (model_sha256, gpu_kind, name)
);
)sql";

constexpr const char* kCreateMigrationsTable = R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  description TEXT NOT NULL,
  applied_at INTEGER NOT NULL
);
)sql";

absl::Status check_list(const std::vector<Migration>& list) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].version != static_cast<int>(i) + 1) {
      return absl::InternalError(absl::StrCat("migration list out of order: entry ", i,
                                              " has version ", list[i].version));
    }
  }
  return absl::OkStatus();
}

absl::Status apply_one(sqlite3* db, const Clock& clock, const Migration& m) {
  MONO_RETURN_IF_ERROR(sql::exec(db, "BEGIN IMMEDIATE"));
  absl::Status st = [&]() -> absl::Status {
    // Another process may have applied it since we looked.
    MONO_ASSIGN_OR_RETURN(int current, schema_version(db));
    if (current >= m.version) return absl::OkStatus();
    MONO_RETURN_IF_ERROR(sql::exec(db, m.sql));
    MONO_ASSIGN_OR_RETURN(
        sql::Stmt ins,
        sql::Stmt::prepare(db, "INSERT INTO schema_migrations(version, description, applied_at) "
                               "VALUES (?, ?, ?)"));
    ins.bind_all(m.version, m.description, clock.now_ms());
    return ins.run();
  }();
  if (st.ok()) st = sql::exec(db, "COMMIT");
  if (!st.ok()) {
    (void)sql::exec(db, "ROLLBACK");
    return absl::Status(st.code(), absl::StrCat("schema migration ", m.version, " (",
                                                m.description, "): ", st.message()));
  }
  return absl::OkStatus();
}

}  // namespace

// Migration 3: a submission's cap on candidate measurements (mono-submit --budget; 0: none),
// kept so that a restarted server plans the same jobs again.
constexpr const char* kBudget = R"sql(
ALTER TABLE submissions ADD COLUMN max_measurements INTEGER NOT NULL DEFAULT 0;
)sql";

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> kList = {
      {1, "initial schema: workers, submissions, tasks, jobs, results, artifacts",
       kInitialSchema},
      {2, "dashboard: submission_tasks.instances, baselines per model and GPU kind", kDashboard},
      {3, "submissions.max_measurements (mono-submit --budget)", kBudget},
  };
  return kList;
}

int latest_schema_version() { return migrations().back().version; }

absl::StatusOr<int> schema_version(sqlite3* db) {
  MONO_ASSIGN_OR_RETURN(int64_t v,
                        sql::query_int(db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
  return static_cast<int>(v);
}

absl::Status apply_migrations(sqlite3* db, const Clock& clock, const std::vector<Migration>& list) {
  MONO_RETURN_IF_ERROR(check_list(list));
  MONO_RETURN_IF_ERROR(sql::exec(db, kCreateMigrationsTable));
  MONO_ASSIGN_OR_RETURN(int current, schema_version(db));
  const int newest = list.empty() ? 0 : list.back().version;
  if (current > newest) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database schema version ", current, " is newer than this build knows (", newest,
        "); use a newer mono-tuner-server or another --db file"));
  }
  for (const Migration& m : list) {
    if (m.version <= current) continue;
    MONO_RETURN_IF_ERROR(apply_one(db, clock, m));
  }
  return absl::OkStatus();
}

}  // namespace mono::db
