// The tuning service's database: workers, submissions, tuning tasks, the job queue with its
// lease state machine, results and artifacts, in one SQLite file (WAL).
//
// Jobs move queued -> leased -> done, or back to queued when the worker is at fault (its
// lease expired, or it reported a worker failure), or to failed (worker_lost) once they
// used up max_attempts leases. Candidate-side failures (compile, resource, launch, timeout,
// wrong answer) are results of a done job, never retries. A job that failed on a worker is
// leased to another eligible live worker where one exists.
//
// Every public method is thread-safe; every change of several rows is one transaction; the
// time comes from the injected Clock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/clock.h"
#include "db/records.h"

struct sqlite3;

namespace mono::db {

struct StoreOptions {
  // How long a statement waits for another connection's lock before Unavailable.
  int busy_timeout_ms = 5000;
  // A worker seen (register, lease, renew, report) within this window counts as alive when
  // deciding whether a job that failed on one worker can go to another instead.
  int64_t worker_alive_ms = 120'000;
  // A whole-kernel job is leased after the queued compile and measure jobs until it has waited
  // this long, and before them from then on (see lease).
  int64_t whole_kernel_wait_ms = 60'000;
};

struct FailureCount {
  FailureClass failure = FailureClass::kNone;
  int64_t count = 0;  // failed result rows plus failed jobs of that class
};

class Store {
 public:
  // Opens (creating if needed) the database at `path` (":memory:" for tests) and applies
  // the schema migrations it lacks. A database with a newer schema than this build knows
  // is refused (FailedPrecondition). An existing file is never silently replaced by an empty
  // database: one of 0 bytes, or without Mono's tables (its data lost with a deleted -wal
  // file), is refused (FailedPrecondition), and one that fails SQLite's quick_check (DataLoss).
  // `clock` must outlive the store.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path, const Clock* clock,
                                                     StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // ---- workers ----
  // The id of the worker named `name`: the same id as before for a known name (a
  // reconnecting worker carries on), a new one otherwise. Stores `caps` and the time seen.
  absl::StatusOr<std::string> register_worker(const std::string& name, const WorkerCaps& caps);
  absl::StatusOr<WorkerRecord> get_worker(const std::string& id);  // NotFound
  absl::StatusOr<std::vector<WorkerRecord>> list_workers();         // by name

  // ---- submissions ----
  // Stores `s` (state, timestamps from the clock) and returns its id (a new one when s.id is
  // empty; AlreadyExists when taken).
  absl::StatusOr<std::string> create_submission(const SubmissionRecord& s);
  absl::StatusOr<SubmissionRecord> get_submission(const std::string& id);  // NotFound
  absl::StatusOr<std::vector<SubmissionRecord>> list_submissions();        // newest first
  // queued, tuning or merging; oldest first (to resume after a restart).
  absl::StatusOr<std::vector<SubmissionRecord>> unfinished_submissions();
  // Sets the state and the error text (empty clears it); done/failed set finished_at.
  absl::Status set_submission_state(const std::string& id, SubmissionState state,
                                    const std::string& error = "");
  absl::Status set_submission_groups_total(const std::string& id, int groups_total);
  absl::StatusOr<SubmissionProgress> submission_progress(const std::string& id);

  // ---- tasks ----
  // The task (signature, gpu_kind, context): created, or found when it exists.
  absl::StatusOr<AddTaskResult> add_task(const std::string& signature, const std::string& gpu_kind,
                                         const std::string& context, const std::string& payload);
  absl::StatusOr<TaskRecord> get_task(int64_t id);  // NotFound
  // The task (signature, gpu_kind, context) if it exists; NotFound otherwise (never creates).
  absl::StatusOr<TaskRecord> find_task(const std::string& signature, const std::string& gpu_kind,
                                       const std::string& context);
  // The GPU kinds that have tasks, sorted.
  absl::StatusOr<std::vector<std::string>> task_gpu_kinds();
  // Makes the task one of the submission's (idempotent).
  absl::Status link_task(const std::string& submission_id, int64_t task_id);
  absl::StatusOr<std::vector<TaskRecord>> submission_tasks(const std::string& submission_id);
  // add_task + link_task + add_job for every task of a plan, in one transaction.
  absl::StatusOr<PlanResult> add_plan(const std::string& submission_id,
                                      const std::vector<TaskPlan>& plan);

  // ---- jobs ----
  // Queues a job. Returns false (and changes nothing) when a job with that id exists.
  absl::StatusOr<bool> add_job(const NewJob& job);
  absl::StatusOr<JobRecord> get_job(const std::string& id);  // NotFound
  absl::StatusOr<std::vector<JobRecord>> task_jobs(int64_t task_id);
  // Up to max_jobs queued jobs for the worker, each leased until now + lease_ms: whole-kernel
  // jobs queued longer than options.whole_kernel_wait_ms, then compile and measure jobs, then
  // the other whole-kernel jobs; oldest (first added) first within each; a requeued job keeps
  // its place.
  // Compile-only workers get compile jobs; GPU workers also get measure and whole_kernel
  // jobs pinned to their GPU kind (or to any: ""). NotFound for an unknown worker.
  absl::StatusOr<std::vector<JobRecord>> lease(const std::string& worker_id, int max_jobs,
                                               int64_t lease_ms);
  // Extends the leases the worker still holds; the other ids are reported lost.
  absl::StatusOr<RenewResult> renew(const std::string& worker_id,
                                    const std::vector<std::string>& job_ids, int64_t lease_ms);
  // Stores the job's results and marks it done, if the job is leased to this worker; false
  // for a late or duplicate report (nothing changes).
  absl::StatusOr<bool> report(const std::string& worker_id, const std::string& job_id,
                              const std::vector<CandidateResult>& results, const Environment& env);
  // The worker could not do the job (its own fault): back to the queue for another worker,
  // or failed (worker_lost) after max_attempts. False when the job is not leased to it.
  absl::StatusOr<bool> report_worker_failure(const std::string& worker_id,
                                             const std::string& job_id, const std::string& reason);
  // Leased jobs past their deadline go back to the queue (or fail as worker_lost after
  // max_attempts). Returns how many were requeued.
  absl::StatusOr<int> expire_leases();

  // ---- results ----
  absl::StatusOr<std::vector<ResultRecord>> job_results(const std::string& job_id);
  // For each job of the task, its fastest ok measured candidate; fastest first.
  absl::StatusOr<std::vector<ResultRecord>> best_results(int64_t task_id);

  // ---- artifacts ----
  // Records (or replaces) the submission's artifact and sets its artifact_dir.
  absl::Status save_artifact(const std::string& submission_id, const std::string& dir,
                             const std::string& manifest_json);
  absl::StatusOr<ArtifactRecord> get_artifact(const std::string& submission_id);  // NotFound

  // ---- dashboard (db/dashboard.cc) ----
  // The submission's tasks as (task id, instances), by task id: submission_tasks() without
  // the payloads.
  absl::StatusOr<std::vector<std::pair<int64_t, int>>> submission_task_links(const std::string& submission_id);
  // The submission's jobs (those of its tasks and its own), in the order they were added.
  absl::StatusOr<std::vector<JobSummary>> submission_jobs(const std::string& submission_id);
  // Every result of those jobs, oldest first.
  absl::StatusOr<std::vector<ResultRecord>> submission_results(const std::string& submission_id);
  // One entry per worker that holds or finished a job or reported a result, by worker id.
  absl::StatusOr<std::vector<WorkerActivity>> worker_activity();
  // Records (or replaces) the baseline (model, GPU kind, name); the time comes from the clock.
  // InvalidArgument for an empty key or a latency that is not positive.
  absl::Status record_baseline(const Baseline& b);
  // The baselines recorded for the model, by GPU kind and name.
  absl::StatusOr<std::vector<Baseline>> baselines(const std::string& model_sha256);

  // ---- metrics and diagnostics ----
  absl::StatusOr<std::vector<StateCount>> counts_by_state();  // per kind and state
  absl::StatusOr<std::vector<FailureCount>> failure_counts();  // per failure class
  absl::StatusOr<int64_t> db_size_bytes();
  absl::StatusOr<std::string> journal_mode();  // "wal" for a file database
  absl::StatusOr<int> schema_version();
  // Deletes the queued jobs no unfinished submission needs (after a submission failed): those
  // of tasks that no queued, tuning or merging submission links to, and whole-kernel jobs of
  // finished submissions. A later submission of the same tasks queues them again (job ids are
  // deterministic). Returns how many went.
  absl::StatusOr<int> cancel_orphaned_jobs();
  // Whether Open created the database (no file was there).
  bool created() const { return created_; }
  // Moves the write-ahead log into the database file, so that losing the -wal file loses
  // little (the server calls it periodically).
  absl::Status checkpoint();

 private:
  Store(sqlite3* db, const Clock* clock, StoreOptions options);

  // Runs `body` under the connection's mutex in a transaction: BEGIN IMMEDIATE for
  // writes, a deferred BEGIN (one consistent snapshot) for reads. Commits when body
  // returns OK, rolls back otherwise.
  absl::Status write(const std::function<absl::Status(sqlite3*)>& body);
  absl::Status read(const std::function<absl::Status(sqlite3*)>& body);
  absl::Status transaction(const char* begin, const std::function<absl::Status(sqlite3*)>& body);
  // A fresh random id such as "w-3f9a0c...". Call under mu_.
  std::string new_id(const char* prefix);

  std::mutex mu_;  // guards db_ and rng_
  sqlite3* db_;
  bool created_ = false;
  const Clock* clock_;
  StoreOptions options_;
  std::mt19937_64 rng_;
};

}  // namespace mono::db
