// The value types of the tuning service's database: what goes in and comes out of Store.
// Enum values are stored as the lower-case names given by to_string(); those names are part
// of the schema, so they never change.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/failure_class.h"

namespace mono::db {

// ---- enums and their stored names -------------------------------------------------------

enum class SubmissionState { kQueued, kTuning, kMerging, kDone, kFailed };
enum class JobKind { kCompile, kMeasure, kWholeKernel };
enum class JobState { kQueued, kLeased, kDone, kFailed };
// FailureClass, with to_string and parse: db/failure_class.h.

const char* to_string(SubmissionState s);  // "queued" | "tuning" | "merging" | "done" | "failed"
const char* to_string(JobKind k);          // "compile" | "measure" | "whole_kernel"
const char* to_string(JobState s);         // "queued" | "leased" | "done" | "failed"

// Parsers: false when the name is unknown (the output is left alone).
bool parse(std::string_view s, SubmissionState* out);
bool parse(std::string_view s, JobKind* out);
bool parse(std::string_view s, JobState* out);

// ---- workers --------------------------------------------------------------------------------

struct WorkerCaps {
  std::string gpu_name;  // empty for compile-only workers; the GPU kind jobs are pinned to
  int sm_arch = 0;       // e.g. 90
  int64_t memory_bytes = 0;
  std::string cuda_version;
  std::string driver_version;
  bool compile_only = false;
  int gpus = 0;  // runners on the host
  int compile_threads = 0;
};

struct WorkerRecord {
  std::string id;
  std::string name;
  WorkerCaps caps;
  int64_t registered_at_ms = 0;
  int64_t last_seen_ms = 0;
};

// ---- submissions ----------------------------------------------------------------------------

struct SubmissionRecord {
  std::string id;  // empty on create: the store picks one
  std::string model_name;
  std::string model_sha256;
  std::string model_dir;    // where the uploaded files lie
  std::string shapes_json;  // [{"input": "x", "dims": [1, 3]}, ...]
  std::string precision;    // "fp16", "fp32"
  std::string gpu_kind;     // empty: any registered kind
  bool dry_run = false;
  int64_t max_measurements = 0;  // mono-submit --budget: candidates measured at most (0: all)
  SubmissionState state = SubmissionState::kQueued;
  int groups_total = 0;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  int64_t finished_at_ms = 0;  // 0 until done or failed
  std::string artifact_dir;
  std::string error;  // why it failed
};

struct SubmissionProgress {
  std::string submission_id;
  SubmissionState state = SubmissionState::kQueued;
  // Tuning tasks (groups) of the submission; a task is done when it has jobs and every one
  // of them is done or failed. groups_total is the number of linked tasks, or the
  // submission's groups_total while none are linked yet.
  int groups_total = 0;
  int groups_done = 0;
  // Result rows of compile jobs and of measure jobs of the submission's tasks (whatever
  // submission first created those jobs).
  int64_t candidates_compiled = 0;
  int64_t candidates_measured = 0;
  int64_t jobs_total = 0;
  int64_t jobs_pending = 0;  // queued or leased
  int64_t jobs_failed = 0;
  std::string error;
};

// ---- tasks and jobs -------------------------------------------------------------------------

// A tuning task: one group signature on one GPU kind in one context. Shared by every
// submission and model that has that group.
struct TaskRecord {
  int64_t id = 0;
  std::string signature;
  std::string gpu_kind;
  std::string context;  // canonical serialisation of the launch context
  std::string payload;  // JSON for the workers: model fragment etc.
  int64_t created_at_ms = 0;
};

struct AddTaskResult {
  int64_t task_id = 0;
  bool created = false;  // false: the task existed (its results are reused)
};

// A job to add. The id is deterministic (e.g. a hash of task and candidate batch), so
// adding the same job twice is harmless.
struct NewJob {
  std::string id;
  int64_t task_id = 0;        // 0: none (e.g. a whole-kernel job of a submission)
  std::string submission_id;  // empty: none
  JobKind kind = JobKind::kCompile;
  std::string gpu_kind;  // measure / whole_kernel: the GPU kind it runs on; "" = any
  std::string payload;   // JSON for the worker
  int max_attempts = 3;  // leases before the job fails as worker_lost
};

struct JobRecord {
  std::string id;
  int64_t task_id = 0;
  std::string signature;  // the task's group signature ("" without a task)
  std::string submission_id;
  JobKind kind = JobKind::kCompile;
  std::string gpu_kind;
  std::string payload;
  JobState state = JobState::kQueued;
  int attempts = 0;  // leases so far
  int max_attempts = 0;
  std::string lease_worker;       // holder while leased; who finished it when done
  int64_t lease_deadline_ms = 0;  // 0 unless leased
  FailureClass failure_class = FailureClass::kNone;
  std::string failure_reason;  // last worker-side failure
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

// A batch of tasks with their jobs for one submission, added in one transaction.
struct TaskPlan {
  std::string signature;
  std::string gpu_kind;
  std::string context;
  std::string payload;
  int instances = 1;         // groups of the submission's model with this signature
  std::vector<NewJob> jobs;  // task_id is filled in by the store
};

struct PlanResult {
  std::vector<int64_t> task_ids;  // one per TaskPlan, in order
  int tasks_created = 0;
  int tasks_reused = 0;
  int64_t jobs_created = 0;
};

struct RenewResult {
  std::vector<std::string> renewed;  // still leased to the worker, deadline extended
  std::vector<std::string> lost;     // expired, reassigned, finished or unknown
};

// ---- results --------------------------------------------------------------------------------

// One candidate of a job as reported by a worker. Estimates of a cost model never come
// here: only compile results and measurements.
struct CandidateResult {
  int candidate = 0;
  bool ok = false;
  FailureClass failure = FailureClass::kNone;
  std::string reason;
  std::vector<double> samples_us;    // empty when not measured
  std::optional<double> median_us;   // absent when not measured
  double spread = 0;                 // (max - min) / median
  int registers = 0;
  int spill_bytes = 0;
  int smem_bytes = 0;
};

// Where a result was measured.
struct Environment {
  std::string gpu_name;
  int sm_clock_mhz = 0;
  int mem_clock_mhz = 0;
  std::string driver_version;
  std::string cuda_version;
  std::string codegen_version;
};

std::string to_json(const Environment& env);
// Unknown keys are ignored; a malformed document gives an empty Environment.
Environment environment_from_json(std::string_view json);

struct ResultRecord {
  std::string job_id;
  CandidateResult result;
  std::string env_json;
  std::string worker_id;
  int64_t created_at_ms = 0;
  JobKind job_kind = JobKind::kCompile;
};

// ---- queries --------------------------------------------------------------------------------

struct StateCount {
  JobKind kind = JobKind::kCompile;
  JobState state = JobState::kQueued;
  int64_t count = 0;
};

struct ArtifactRecord {
  std::string submission_id;
  std::string dir;
  std::string manifest_json;
  int64_t created_at_ms = 0;
};

// ---- dashboard ------------------------------------------------------------------------------

// A job without its payload (payloads carry model fragments: large).
struct JobSummary {
  std::string id;
  int64_t task_id = 0;  // 0: none (whole-kernel job)
  JobKind kind = JobKind::kCompile;
  JobState state = JobState::kQueued;
  int attempts = 0;
  std::string lease_worker;  // holder while leased; who finished it when done
  FailureClass failure_class = FailureClass::kNone;
};

// What one worker has done, from the job and result rows.
struct WorkerActivity {
  std::string worker_id;
  int64_t jobs_done = 0;    // jobs it finished (reported)
  int64_t jobs_leased = 0;  // jobs it holds now
  int64_t candidates = 0;   // result rows it reported
  int64_t candidates_failed = 0;
  std::vector<std::pair<FailureClass, int64_t>> failures;  // failed result rows by class
};

// The latency of another tool for a model on a GPU kind (e.g. "torch.compile").
struct Baseline {
  std::string model_sha256;
  std::string gpu_kind;
  std::string name;
  double latency_us = 0;
  std::string source;  // free text: the script or command that measured it
  int64_t recorded_at_ms = 0;
};

}  // namespace mono::db
