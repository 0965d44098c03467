// The Store: workers, tasks, submissions, the job lease state machine, results, artifacts,
// and resuming from the file after a restart. Time moves only through the FakeClock.
#include <algorithm>
#include <string>
#include <vector>

#include "db/store.h"
#include "tests/db/db_test_util.h"

namespace mono::db::testing {
namespace {

constexpr const char* kH100 = "NVIDIA H100 80GB HBM3";
constexpr const char* kA100 = "NVIDIA A100-SXM4-80GB";
constexpr int64_t kLease = 30'000;

std::vector<std::string> ids(const std::vector<JobRecord>& jobs) {
  std::vector<std::string> out;
  for (const JobRecord& j : jobs) out.push_back(j.id);
  return out;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = open_or_die(":memory:", &clock_);
    ASSERT_NE(store_, nullptr);
    task_ = store_->add_task("sig-gemm-1", kH100, "ctx-256x1", "{}")->task_id;
  }

  std::string worker(const std::string& name, const WorkerCaps& caps) {
    absl::StatusOr<std::string> id = store_->register_worker(name, caps);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  void add(const NewJob& j) {
    absl::StatusOr<bool> created = store_->add_job(j);
    ASSERT_TRUE(created.ok()) << created.status();
    ASSERT_TRUE(*created) << j.id;
    clock_.advance(1);  // distinct creation times: "oldest first" is well defined
  }

  std::vector<std::string> lease(const std::string& worker_id, int max_jobs = 10) {
    absl::StatusOr<std::vector<JobRecord>> got = store_->lease(worker_id, max_jobs, kLease);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? ids(*got) : std::vector<std::string>{};
  }

  JobRecord get(const std::string& id) {
    absl::StatusOr<JobRecord> j = store_->get_job(id);
    EXPECT_TRUE(j.ok()) << j.status();
    return j.value_or(JobRecord{});
  }

  bool report(const std::string& worker_id, const std::string& job_id,
              const std::vector<CandidateResult>& results) {
    Environment env;
    env.gpu_name = kH100;
    env.codegen_version = "1";
    absl::StatusOr<bool> r = store_->report(worker_id, job_id, results, env);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.value_or(false);
  }

  int expire() {
    absl::StatusOr<int> n = store_->expire_leases();
    EXPECT_TRUE(n.ok()) << n.status();
    return n.value_or(-1);
  }

  FakeClock clock_{1'000'000};
  std::unique_ptr<Store> store_;
  int64_t task_ = 0;
};

// ---- workers and tasks ------------------------------------------------------------------------

TEST_F(StoreTest, ReRegistrationKeepsTheWorkerId) {
  const std::string a = worker("host-a", gpu_caps(kH100));
  const std::string b = worker("host-b", compile_caps());
  EXPECT_NE(a, b);
  EXPECT_FALSE(a.empty());

  clock_.advance(60'000);
  WorkerCaps upgraded = gpu_caps(kA100);
  upgraded.gpus = 4;
  EXPECT_EQ(worker("host-a", upgraded), a);

  absl::StatusOr<WorkerRecord> w = store_->get_worker(a);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->name, "host-a");
  EXPECT_EQ(w->caps.gpu_name, kA100);
  EXPECT_EQ(w->caps.gpus, 4);
  EXPECT_EQ(w->registered_at_ms, 1'000'000);
  EXPECT_EQ(w->last_seen_ms, 1'060'000);
  EXPECT_EQ(store_->list_workers()->size(), 2u);
  EXPECT_EQ(store_->register_worker("", gpu_caps()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->get_worker("w-none").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, TasksAreDeduplicated) {
  absl::StatusOr<AddTaskResult> again = store_->add_task("sig-gemm-1", kH100, "ctx-256x1", "{\"x\":1}");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->task_id, task_);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(store_->get_task(task_)->payload, "{}");  // the first payload stays

  absl::StatusOr<AddTaskResult> other_ctx = store_->add_task("sig-gemm-1", kH100, "ctx-128x2", "{}");
  absl::StatusOr<AddTaskResult> other_gpu = store_->add_task("sig-gemm-1", kA100, "ctx-256x1", "{}");
  ASSERT_TRUE(other_ctx.ok() && other_gpu.ok());
  EXPECT_TRUE(other_ctx->created);
  EXPECT_TRUE(other_gpu->created);
  EXPECT_NE(other_ctx->task_id, task_);
  EXPECT_NE(other_gpu->task_id, task_);
  EXPECT_NE(other_ctx->task_id, other_gpu->task_id);
  EXPECT_EQ(store_->add_task("", kH100, "c", "{}").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---- add_job and lease routing ------------------------------------------------------------------

TEST_F(StoreTest, AddJobIsIdempotent) {
  add(job("j1", task_, JobKind::kMeasure, kH100));
  NewJob same = job("j1", task_, JobKind::kCompile, "", 9);
  same.payload = "changed";
  absl::StatusOr<bool> again = store_->add_job(same);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(*again);
  JobRecord j = get("j1");
  EXPECT_EQ(j.kind, JobKind::kMeasure);
  EXPECT_EQ(j.payload, "{\"job\":\"j1\"}");
  EXPECT_EQ(j.max_attempts, 3);
  EXPECT_EQ(j.state, JobState::kQueued);
  EXPECT_EQ(j.signature, "sig-gemm-1");

  EXPECT_EQ(store_->add_job(job("", task_, JobKind::kCompile)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->add_job(job("orphan", 12345, JobKind::kCompile)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->get_job("orphan").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, LeaseRoutesByCapabilities) {
  const std::string cpu = worker("cpu", compile_caps());
  const std::string h100 = worker("h100", gpu_caps(kH100));
  const std::string a100 = worker("a100", gpu_caps(kA100));
  add(job("compile", task_, JobKind::kCompile));
  add(job("measure-h100", task_, JobKind::kMeasure, kH100));
  add(job("measure-a100", task_, JobKind::kMeasure, kA100));
  add(job("measure-any", task_, JobKind::kMeasure, ""));
  add(job("whole-h100", task_, JobKind::kWholeKernel, kH100));
  add(job("compile-2", task_, JobKind::kCompile));

  // Compile-only: compile jobs only, oldest first.
  EXPECT_EQ(lease(cpu, 1), std::vector<std::string>({"compile"}));
  // A GPU worker: compile jobs and the GPU jobs of its kind (or of any kind).
  EXPECT_EQ(lease(a100, 10), std::vector<std::string>({"measure-a100", "measure-any", "compile-2"}));
  EXPECT_EQ(lease(h100, 10), std::vector<std::string>({"measure-h100", "whole-h100"}));  // measurements first
  EXPECT_TRUE(lease(cpu).empty());
  EXPECT_TRUE(lease(h100).empty());

  JobRecord j = get("measure-h100");
  EXPECT_EQ(j.state, JobState::kLeased);
  EXPECT_EQ(j.lease_worker, h100);
  EXPECT_EQ(j.lease_deadline_ms, clock_.now_ms() + kLease);
  EXPECT_EQ(j.attempts, 1);

  EXPECT_EQ(store_->lease("w-unknown", 1, kLease).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->lease(h100, 1, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

// A submission's whole-kernel job is created after its measurements finish, behind whatever
// other submissions queued. Fresh, it waits for the measurements queued before and after it,
// so that every model's measurements end early and the whole-kernel jobs run side by side;
// once it has waited StoreOptions::whole_kernel_wait_ms it goes before them, so that a
// finished model's artifact is not held back by a stream of other submissions.
TEST_F(StoreTest, WholeKernelJobsWaitForMeasurementsUntilOverdue) {
  const int64_t wait_ms = StoreOptions{}.whole_kernel_wait_ms;
  const std::string h100 = worker("h100", gpu_caps(kH100));
  add(job("measure-1", task_, JobKind::kMeasure, kH100));
  add(job("whole-1", task_, JobKind::kWholeKernel, kH100));
  add(job("measure-2", task_, JobKind::kMeasure, ""));
  add(job("compile", task_, JobKind::kCompile));
  add(job("whole-2", task_, JobKind::kWholeKernel, ""));
  add(job("measure-3", task_, JobKind::kMeasure, kH100));
  EXPECT_EQ(lease(h100, 2), std::vector<std::string>({"measure-1", "measure-2"}));

  // whole-1 is overdue, whole-2 (created 3 ms later) not yet.
  clock_.advance(wait_ms - 3);
  EXPECT_EQ(lease(h100, 2), std::vector<std::string>({"whole-1", "compile"}));
  clock_.advance(3);  // now whole-2 too
  EXPECT_EQ(lease(h100, 10), std::vector<std::string>({"whole-2", "measure-3"}));
}

TEST_F(StoreTest, FreshWholeKernelJobsComeAfterEveryMeasurement) {
  const std::string h100 = worker("h100", gpu_caps(kH100));
  add(job("whole-1", task_, JobKind::kWholeKernel, kH100));
  add(job("measure-1", task_, JobKind::kMeasure, ""));
  add(job("whole-2", task_, JobKind::kWholeKernel, ""));
  add(job("measure-2", task_, JobKind::kMeasure, kH100));
  EXPECT_EQ(lease(h100, 10), std::vector<std::string>({"measure-1", "measure-2", "whole-1", "whole-2"}));
}

TEST_F(StoreTest, CompileOnlyFlagWinsOverAGpuName) {
  WorkerCaps caps = gpu_caps(kH100);
  caps.compile_only = true;  // --compile-only on a GPU host
  const std::string w = worker("gpu-host-compile-only", caps);
  add(job("m", task_, JobKind::kMeasure, kH100));
  add(job("c", task_, JobKind::kCompile));
  EXPECT_EQ(lease(w), std::vector<std::string>({"c"}));
}

// ---- renew ----------------------------------------------------------------------------------------

TEST_F(StoreTest, RenewExtendsOnlyHeldLeases) {
  const std::string a = worker("a", gpu_caps(kH100));
  const std::string b = worker("b", gpu_caps(kH100));
  add(job("j1", task_, JobKind::kMeasure, kH100));
  add(job("j2", task_, JobKind::kMeasure, kH100));
  add(job("j3", task_, JobKind::kMeasure, kH100));
  ASSERT_EQ(lease(a, 2), std::vector<std::string>({"j1", "j2"}));
  ASSERT_EQ(lease(b, 1), std::vector<std::string>({"j3"}));

  clock_.advance(20'000);
  absl::StatusOr<RenewResult> r = store_->renew(a, {"j1", "j2", "j3", "nope"}, kLease);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->renewed, std::vector<std::string>({"j1", "j2"}));
  EXPECT_EQ(r->lost, std::vector<std::string>({"j3", "nope"}));
  EXPECT_EQ(get("j1").lease_deadline_ms, clock_.now_ms() + kLease);
  EXPECT_EQ(get("j3").lease_deadline_ms, clock_.now_ms() - 20'000 + kLease);  // untouched

  // Renewed leases survive past the first deadline; b's did not get renewed.
  clock_.advance(15'000);
  EXPECT_EQ(expire(), 1);
  EXPECT_EQ(get("j1").state, JobState::kLeased);
  EXPECT_EQ(get("j3").state, JobState::kQueued);
  r = store_->renew(b, {"j3"}, kLease);
  EXPECT_EQ(r->lost, std::vector<std::string>({"j3"}));

  // A finished job is lost to renew too.
  ASSERT_TRUE(report(a, "j1", {measured(0, 10)}));
  r = store_->renew(a, {"j1", "j2"}, kLease);
  EXPECT_EQ(r->renewed, std::vector<std::string>({"j2"}));
  EXPECT_EQ(r->lost, std::vector<std::string>({"j1"}));
}

// ---- expiry and retries ---------------------------------------------------------------------------

TEST_F(StoreTest, ExpiredLeaseIsRequeuedAndRetriedOnAnotherWorker) {
  const std::string a = worker("a", gpu_caps(kH100));
  const std::string b = worker("b", gpu_caps(kH100));
  add(job("j", task_, JobKind::kMeasure, kH100));
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));

  clock_.advance(kLease - 1);
  EXPECT_EQ(expire(), 0);
  EXPECT_EQ(get("j").state, JobState::kLeased);
  clock_.advance(1);
  EXPECT_EQ(expire(), 1);
  JobRecord j = get("j");
  EXPECT_EQ(j.state, JobState::kQueued);
  EXPECT_EQ(j.lease_worker, "");
  EXPECT_EQ(j.lease_deadline_ms, 0);
  EXPECT_EQ(j.attempts, 1);
  EXPECT_NE(j.failure_reason.find("lease expired"), std::string::npos) << j.failure_reason;

  // a failed it and b is alive and able: a does not get it back, b does.
  EXPECT_TRUE(lease(a).empty());
  EXPECT_EQ(lease(b), std::vector<std::string>({"j"}));
  EXPECT_EQ(get("j").attempts, 2);
  EXPECT_EQ(get("j").lease_worker, b);
}

TEST_F(StoreTest, RetryReturnsToTheSameWorkerWhenItIsTheOnlyOne) {
  const std::string a = worker("a", gpu_caps(kH100));
  const std::string cpu = worker("cpu", compile_caps());  // cannot run a measure job
  const std::string a100 = worker("a100", gpu_caps(kA100));  // wrong GPU kind
  add(job("j", task_, JobKind::kMeasure, kH100));
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));
  clock_.advance(kLease);
  ASSERT_EQ(expire(), 1);
  EXPECT_TRUE(lease(cpu).empty());
  EXPECT_TRUE(lease(a100).empty());
  EXPECT_EQ(lease(a), std::vector<std::string>({"j"}));
}

TEST_F(StoreTest, RetryIgnoresWorkersNotSeenLately) {
  const std::string a = worker("a", gpu_caps(kH100));
  const std::string b = worker("b", gpu_caps(kH100));
  add(job("j", task_, JobKind::kMeasure, kH100));
  clock_.advance(StoreOptions{}.worker_alive_ms + 1);  // b registered long ago, never came back
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));
  clock_.advance(kLease);
  ASSERT_EQ(expire(), 1);
  EXPECT_EQ(lease(a), std::vector<std::string>({"j"}));
  (void)b;
}

TEST_F(StoreTest, MaxAttemptsFailsTheJobAsWorkerLost) {
  const std::string a = worker("a", gpu_caps(kH100));
  add(job("j", task_, JobKind::kMeasure, kH100, /*max_attempts=*/2));
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));
  clock_.advance(kLease);
  EXPECT_EQ(expire(), 1);
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));
  clock_.advance(kLease);
  EXPECT_EQ(expire(), 0);  // failed, not requeued

  JobRecord j = get("j");
  EXPECT_EQ(j.state, JobState::kFailed);
  EXPECT_EQ(j.failure_class, FailureClass::kWorkerLost);
  EXPECT_EQ(j.attempts, 2);
  EXPECT_TRUE(lease(a).empty());
  EXPECT_FALSE(report(a, "j", {measured(0, 1)}));

  absl::StatusOr<std::vector<StateCount>> counts = store_->counts_by_state();
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].kind, JobKind::kMeasure);
  EXPECT_EQ((*counts)[0].state, JobState::kFailed);
  EXPECT_EQ((*counts)[0].count, 1);
  absl::StatusOr<std::vector<FailureCount>> failures = store_->failure_counts();
  ASSERT_TRUE(failures.ok());
  ASSERT_EQ(failures->size(), 1u);
  EXPECT_EQ((*failures)[0].failure, FailureClass::kWorkerLost);
}

TEST_F(StoreTest, WorkerFailureRequeuesForAnotherWorker) {
  const std::string a = worker("a", gpu_caps(kH100));
  const std::string b = worker("b", gpu_caps(kH100));
  add(job("j", task_, JobKind::kMeasure, kH100));
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));

  EXPECT_FALSE(*store_->report_worker_failure(b, "j", "not mine"));  // b does not hold it
  EXPECT_EQ(get("j").state, JobState::kLeased);
  EXPECT_TRUE(*store_->report_worker_failure(a, "j", "Xid 79: GPU fell off the bus"));
  JobRecord j = get("j");
  EXPECT_EQ(j.state, JobState::kQueued);
  EXPECT_EQ(j.failure_reason, "Xid 79: GPU fell off the bus");
  EXPECT_EQ(j.failure_class, FailureClass::kNone);
  EXPECT_FALSE(*store_->report_worker_failure(a, "j", "again"));  // no longer held
  EXPECT_FALSE(report(a, "j", {measured(0, 1)}));

  EXPECT_TRUE(lease(a).empty());
  EXPECT_EQ(lease(b), std::vector<std::string>({"j"}));
  EXPECT_TRUE(report(b, "j", {measured(0, 5)}));
  EXPECT_EQ(get("j").state, JobState::kDone);
}

TEST_F(StoreTest, WorkerFailureAtMaxAttemptsFails) {
  const std::string a = worker("a", gpu_caps(kH100));
  add(job("j", task_, JobKind::kCompile, "", /*max_attempts=*/1));
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));
  EXPECT_TRUE(*store_->report_worker_failure(a, "j", "out of disk"));
  JobRecord j = get("j");
  EXPECT_EQ(j.state, JobState::kFailed);
  EXPECT_EQ(j.failure_class, FailureClass::kWorkerLost);
  EXPECT_EQ(j.failure_reason, "out of disk");
}

// ---- reports ---------------------------------------------------------------------------------------

TEST_F(StoreTest, ReportIsAcceptedOnceAndDuplicatesChangeNothing) {
  const std::string a = worker("a", gpu_caps(kH100));
  add(job("j", task_, JobKind::kMeasure, kH100));
  EXPECT_FALSE(report(a, "j", {measured(0, 1)}));  // not leased yet
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));

  EXPECT_TRUE(report(a, "j", {measured(0, 12.5), measured(1, 10.0)}));
  EXPECT_EQ(get("j").state, JobState::kDone);
  EXPECT_EQ(get("j").lease_worker, a);
  // The same report again (a retry after a lost reply), or a different one: rejected.
  EXPECT_FALSE(report(a, "j", {measured(0, 12.5), measured(1, 10.0)}));
  EXPECT_FALSE(report(a, "j", {measured(0, 1.0), measured(2, 1.0)}));

  absl::StatusOr<std::vector<ResultRecord>> rs = store_->job_results("j");
  ASSERT_TRUE(rs.ok()) << rs.status();
  ASSERT_EQ(rs->size(), 2u);
  EXPECT_EQ((*rs)[0].result.candidate, 0);
  EXPECT_EQ((*rs)[0].result.median_us, 12.5);
  EXPECT_EQ((*rs)[0].result.samples_us.size(), 3u);
  EXPECT_EQ((*rs)[0].worker_id, a);
  EXPECT_EQ(environment_from_json((*rs)[0].env_json).gpu_name, kH100);
  EXPECT_EQ((*rs)[1].result.median_us, 10.0);
  EXPECT_EQ((*rs)[1].job_kind, JobKind::kMeasure);
}

TEST_F(StoreTest, LateReportAfterReassignmentIsRejected) {
  const std::string a = worker("a", gpu_caps(kH100));
  const std::string b = worker("b", gpu_caps(kH100));
  add(job("j", task_, JobKind::kMeasure, kH100));
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));
  clock_.advance(kLease + 1);
  ASSERT_EQ(expire(), 1);
  ASSERT_EQ(lease(b), std::vector<std::string>({"j"}));

  EXPECT_FALSE(report(a, "j", {measured(0, 99.0)}));  // a was too slow
  EXPECT_TRUE(report(b, "j", {measured(0, 7.0)}));
  EXPECT_FALSE(report(a, "j", {measured(0, 99.0)}));
  EXPECT_FALSE(report(b, "j", {measured(0, 7.0)}));

  absl::StatusOr<std::vector<ResultRecord>> rs = store_->job_results("j");
  ASSERT_TRUE(rs.ok());
  ASSERT_EQ(rs->size(), 1u);
  EXPECT_EQ((*rs)[0].worker_id, b);
  EXPECT_EQ((*rs)[0].result.median_us, 7.0);
}

TEST_F(StoreTest, ReportAfterDeadlineButBeforeExpiryIsAccepted) {
  const std::string a = worker("a", gpu_caps(kH100));
  add(job("j", task_, JobKind::kMeasure, kH100));
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));
  clock_.advance(kLease + 5);  // nobody else can hold it until the sweep runs
  EXPECT_TRUE(report(a, "j", {measured(0, 3.0)}));
  EXPECT_EQ(expire(), 0);
  EXPECT_EQ(get("j").state, JobState::kDone);
}

TEST_F(StoreTest, CandidateFailuresAreResultsNotRetries) {
  const std::string a = worker("a", gpu_caps(kH100));
  add(job("j", task_, JobKind::kMeasure, kH100));
  ASSERT_EQ(lease(a), std::vector<std::string>({"j"}));
  EXPECT_TRUE(report(a, "j",
                     {failed(0, FailureClass::kCompileError, "ptxas: too many registers"),
                      failed(1, FailureClass::kResourceError, "smem 300KB > 227KB"),
                      failed(2, FailureClass::kTimeout, "watchdog after 2s"),
                      failed(3, FailureClass::kWrongAnswer, "max rel err 0.3"),
                      measured(4, 8.0)}));
  JobRecord j = get("j");
  EXPECT_EQ(j.state, JobState::kDone);
  EXPECT_EQ(j.attempts, 1);
  EXPECT_TRUE(lease(a).empty());

  absl::StatusOr<std::vector<ResultRecord>> rs = store_->job_results("j");
  ASSERT_EQ(rs->size(), 5u);
  EXPECT_FALSE((*rs)[2].result.ok);
  EXPECT_EQ((*rs)[2].result.failure, FailureClass::kTimeout);
  EXPECT_EQ((*rs)[2].result.reason, "watchdog after 2s");
  EXPECT_FALSE((*rs)[2].result.median_us.has_value());

  absl::StatusOr<std::vector<FailureCount>> failures = store_->failure_counts();
  ASSERT_TRUE(failures.ok());
  EXPECT_EQ(failures->size(), 4u);
  for (const FailureCount& f : *failures) EXPECT_EQ(f.count, 1) << to_string(f.failure);
}

TEST_F(StoreTest, BestResultsPerCandidateSet) {
  const std::string a = worker("a", gpu_caps(kH100));
  add(job("batch-1", task_, JobKind::kMeasure, kH100));
  add(job("batch-2", task_, JobKind::kMeasure, kH100));
  add(job("compile", task_, JobKind::kCompile));
  ASSERT_EQ(lease(a).size(), 3u);
  ASSERT_TRUE(report(a, "batch-1", {measured(0, 20.0), measured(1, 15.0),
                                    failed(2, FailureClass::kWrongAnswer, "bad")}));
  ASSERT_TRUE(report(a, "batch-2", {measured(0, 11.0), measured(1, 30.0)}));
  CandidateResult compiled;
  compiled.candidate = 0;
  compiled.ok = true;
  compiled.registers = 128;
  ASSERT_TRUE(report(a, "compile", {compiled}));

  absl::StatusOr<std::vector<ResultRecord>> best = store_->best_results(task_);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_EQ(best->size(), 2u);
  EXPECT_EQ((*best)[0].job_id, "batch-2");
  EXPECT_EQ((*best)[0].result.candidate, 0);
  EXPECT_EQ((*best)[0].result.median_us, 11.0);
  EXPECT_EQ((*best)[1].job_id, "batch-1");
  EXPECT_EQ((*best)[1].result.candidate, 1);
  EXPECT_TRUE(store_->best_results(task_ + 100)->empty());
}

// ---- submissions, plans, progress, artifacts --------------------------------------------------------

SubmissionRecord submission(const std::string& model) {
  SubmissionRecord s;
  s.model_name = model;
  s.model_sha256 = "abc123";
  s.model_dir = "/var/lib/mono/models/" + model;
  s.shapes_json = "[{\"input\":\"x\",\"dims\":[1,128]}]";
  s.precision = "fp16";
  s.gpu_kind = kH100;
  return s;
}

TEST_F(StoreTest, SubmissionLifecycle) {
  absl::StatusOr<std::string> s1 = store_->create_submission(submission("bert"));
  ASSERT_TRUE(s1.ok()) << s1.status();
  clock_.advance(10);
  SubmissionRecord named = submission("gpt2");
  named.id = "s-chosen";
  named.max_measurements = 200;  // mono-submit --budget 200, kept for a restarted server's plan
  ASSERT_EQ(*store_->create_submission(named), "s-chosen");
  EXPECT_EQ(store_->get_submission("s-chosen")->max_measurements, 200);
  EXPECT_EQ(store_->create_submission(named).status().code(), absl::StatusCode::kAlreadyExists);

  absl::StatusOr<SubmissionRecord> got = store_->get_submission(*s1);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->model_name, "bert");
  EXPECT_EQ(got->state, SubmissionState::kQueued);
  EXPECT_EQ(got->precision, "fp16");
  EXPECT_EQ(got->finished_at_ms, 0);
  EXPECT_EQ(got->max_measurements, 0);  // no budget

  std::vector<SubmissionRecord> all = *store_->list_submissions();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, "s-chosen");  // newest first

  clock_.advance(10);
  ASSERT_TRUE(store_->set_submission_state(*s1, SubmissionState::kTuning).ok());
  ASSERT_TRUE(store_->set_submission_groups_total(*s1, 12).ok());
  ASSERT_TRUE(store_->set_submission_state("s-chosen", SubmissionState::kFailed, "no GPU").ok());
  got = store_->get_submission("s-chosen");
  EXPECT_EQ(got->state, SubmissionState::kFailed);
  EXPECT_EQ(got->error, "no GPU");
  EXPECT_EQ(got->finished_at_ms, clock_.now_ms());
  EXPECT_EQ(store_->get_submission(*s1)->groups_total, 12);

  std::vector<SubmissionRecord> open = *store_->unfinished_submissions();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].id, *s1);
  EXPECT_EQ(open[0].state, SubmissionState::kTuning);

  EXPECT_EQ(store_->get_submission("s-none").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->set_submission_state("s-none", SubmissionState::kDone).code(),
            absl::StatusCode::kNotFound);
}

// A failed submission's queued jobs leave the queue unless another unfinished submission needs
// their task (issue 22, finding 9); planning the task again queues them again.
TEST_F(StoreTest, FailedSubmissionsQueuedJobsAreCancelledUnlessShared) {
  const std::string s1 = *store_->create_submission(submission("a")), s2 = *store_->create_submission(submission("b"));
  TaskPlan shared{"sig-shared", kH100, "ctx", "{}", 1, {job("shared-measure", 0, JobKind::kMeasure, kH100)}};
  TaskPlan own{"sig-own", kH100, "ctx", "{}", 1, {job("own-measure", 0, JobKind::kMeasure, kH100)}};
  ASSERT_TRUE(store_->add_plan(s1, {shared, own}).ok());
  ASSERT_TRUE(store_->add_plan(s2, {shared}).ok());
  for (const std::string& s : {s1, s2}) ASSERT_TRUE(store_->set_submission_state(s, SubmissionState::kTuning).ok());
  ASSERT_TRUE(store_->set_submission_state(s1, SubmissionState::kFailed, "model rejected").ok());
  EXPECT_EQ(*store_->cancel_orphaned_jobs(), 1);
  EXPECT_EQ(store_->get_job("own-measure").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->get_job("shared-measure").ok()) << "s2 still needs it";
  EXPECT_EQ(*store_->cancel_orphaned_jobs(), 0);
  const std::string s3 = *store_->create_submission(submission("a again"));
  auto again = store_->add_plan(s3, {shared, own});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->jobs_created, 1);
  EXPECT_TRUE(store_->get_job("own-measure").ok());
}

TEST_F(StoreTest, PlanSharesTasksAcrossSubmissionsAndTracksProgress) {
  const std::string a = worker("a", gpu_caps(kH100));
  const std::string s1 = *store_->create_submission(submission("bert"));
  const std::string s2 = *store_->create_submission(submission("bert-large"));

  TaskPlan gemm{"sig-gemm-1", kH100, "ctx-256x1", "{}", {}};  // exists already (task_)
  gemm.jobs = {job("gemm-compile", 0, JobKind::kCompile), job("gemm-measure", 0, JobKind::kMeasure, kH100)};
  gemm.jobs[0].submission_id = s1;
  TaskPlan norm{"sig-norm-1", kH100, "ctx-256x1", "{}", {}};
  norm.jobs = {job("norm-measure", 0, JobKind::kMeasure, kH100)};
  absl::StatusOr<PlanResult> p1 = store_->add_plan(s1, {gemm, norm});
  ASSERT_TRUE(p1.ok()) << p1.status();
  EXPECT_EQ(p1->tasks_created, 1);
  EXPECT_EQ(p1->tasks_reused, 1);
  EXPECT_EQ(p1->jobs_created, 3);
  ASSERT_EQ(p1->task_ids.size(), 2u);
  EXPECT_EQ(p1->task_ids[0], task_);
  EXPECT_EQ(get("gemm-compile").task_id, task_);
  EXPECT_EQ(get("gemm-compile").submission_id, s1);

  // The second model has the same GEMM: the task and its jobs are reused.
  absl::StatusOr<PlanResult> p2 = store_->add_plan(s2, {gemm});
  ASSERT_TRUE(p2.ok()) << p2.status();
  EXPECT_EQ(p2->tasks_created, 0);
  EXPECT_EQ(p2->tasks_reused, 1);
  EXPECT_EQ(p2->jobs_created, 0);
  EXPECT_EQ(store_->submission_tasks(s1)->size(), 2u);
  ASSERT_EQ(store_->submission_tasks(s2)->size(), 1u);
  EXPECT_EQ((*store_->submission_tasks(s2))[0].id, task_);
  EXPECT_EQ(store_->add_plan("s-none", {gemm}).status().code(), absl::StatusCode::kNotFound);

  SubmissionProgress p = *store_->submission_progress(s1);
  EXPECT_EQ(p.groups_total, 2);
  EXPECT_EQ(p.groups_done, 0);
  EXPECT_EQ(p.jobs_total, 3);
  EXPECT_EQ(p.jobs_pending, 3);

  ASSERT_EQ(lease(a, 2), std::vector<std::string>({"gemm-compile", "gemm-measure"}));
  CandidateResult compiled;
  compiled.ok = true;
  ASSERT_TRUE(report(a, "gemm-compile", {compiled, failed(1, FailureClass::kCompileError, "x")}));
  p = *store_->submission_progress(s1);
  EXPECT_EQ(p.groups_done, 0);  // the GEMM still has a measure job out
  EXPECT_EQ(p.candidates_compiled, 2);
  ASSERT_TRUE(report(a, "gemm-measure", {measured(0, 4.0)}));
  p = *store_->submission_progress(s1);
  EXPECT_EQ(p.groups_done, 1);
  EXPECT_EQ(p.candidates_measured, 1);
  EXPECT_EQ(p.jobs_pending, 1);

  // s2 sees the shared task finished by s1's jobs.
  SubmissionProgress q = *store_->submission_progress(s2);
  EXPECT_EQ(q.groups_total, 1);
  EXPECT_EQ(q.groups_done, 1);
  EXPECT_EQ(q.candidates_measured, 1);

  // A failed job also finishes its task.
  ASSERT_EQ(lease(a), std::vector<std::string>({"norm-measure"}));
  ASSERT_TRUE(*store_->report_worker_failure(a, "norm-measure", "x"));
  ASSERT_EQ(lease(a), std::vector<std::string>({"norm-measure"}));
  ASSERT_TRUE(*store_->report_worker_failure(a, "norm-measure", "x"));
  ASSERT_EQ(lease(a), std::vector<std::string>({"norm-measure"}));
  ASSERT_TRUE(*store_->report_worker_failure(a, "norm-measure", "x"));
  p = *store_->submission_progress(s1);
  EXPECT_EQ(p.groups_done, 2);
  EXPECT_EQ(p.jobs_failed, 1);
  EXPECT_EQ(p.jobs_pending, 0);
}

TEST_F(StoreTest, ProgressUsesDeclaredGroupsUntilTasksAreLinked) {
  SubmissionRecord s = submission("m");
  s.groups_total = 7;
  const std::string id = *store_->create_submission(s);
  SubmissionProgress p = *store_->submission_progress(id);
  EXPECT_EQ(p.groups_total, 7);
  EXPECT_EQ(p.groups_done, 0);
  ASSERT_TRUE(store_->link_task(id, task_).ok());
  ASSERT_TRUE(store_->link_task(id, task_).ok());  // idempotent
  p = *store_->submission_progress(id);
  EXPECT_EQ(p.groups_total, 1);
  EXPECT_EQ(p.groups_done, 0);  // no jobs yet: not done
  EXPECT_EQ(store_->submission_progress("s-none").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, Artifacts) {
  const std::string s = *store_->create_submission(submission("bert"));
  EXPECT_EQ(store_->get_artifact(s).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store_->save_artifact(s, "/art/1", "{\"records\":[\"j1:0\"]}").ok());
  ASSERT_TRUE(store_->save_artifact(s, "/art/2", "{\"records\":[\"j2:1\"]}").ok());  // replaced
  absl::StatusOr<ArtifactRecord> a = store_->get_artifact(s);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dir, "/art/2");
  EXPECT_EQ(a->manifest_json, "{\"records\":[\"j2:1\"]}");
  EXPECT_EQ(store_->get_submission(s)->artifact_dir, "/art/2");
  EXPECT_EQ(store_->save_artifact("s-none", "/x", "{}").code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, CountsAndSize) {
  const std::string a = worker("a", gpu_caps(kH100));
  add(job("c1", task_, JobKind::kCompile));
  add(job("c2", task_, JobKind::kCompile));
  add(job("m1", task_, JobKind::kMeasure, kH100));
  ASSERT_EQ(lease(a, 1).size(), 1u);
  std::vector<StateCount> counts = *store_->counts_by_state();
  ASSERT_EQ(counts.size(), 3u);
  auto count = [&](JobKind k, JobState s) -> int64_t {
    for (const StateCount& c : counts) {
      if (c.kind == k && c.state == s) return c.count;
    }
    return 0;
  };
  EXPECT_EQ(count(JobKind::kCompile, JobState::kLeased), 1);
  EXPECT_EQ(count(JobKind::kCompile, JobState::kQueued), 1);
  EXPECT_EQ(count(JobKind::kMeasure, JobState::kQueued), 1);
  absl::StatusOr<int64_t> size = store_->db_size_bytes();
  ASSERT_TRUE(size.ok()) << size.status();
  EXPECT_GT(*size, 0);
}

TEST(Records, NamesRoundTrip) {
  for (FailureClass f : {FailureClass::kNone, FailureClass::kCompileError,
                         FailureClass::kResourceError, FailureClass::kLaunchError,
                         FailureClass::kTimeout, FailureClass::kWrongAnswer,
                         FailureClass::kWorkerLost}) {
    FailureClass back = FailureClass::kWorkerLost;
    ASSERT_TRUE(parse(to_string(f), &back));
    EXPECT_EQ(back, f);
  }
  JobKind k;
  EXPECT_TRUE(parse("whole_kernel", &k));
  EXPECT_EQ(k, JobKind::kWholeKernel);
  EXPECT_FALSE(parse("bogus", &k));
  Environment env;
  env.gpu_name = "g";
  env.sm_clock_mhz = 1980;
  env.codegen_version = "7";
  Environment back = environment_from_json(to_json(env));
  EXPECT_EQ(back.gpu_name, "g");
  EXPECT_EQ(back.sm_clock_mhz, 1980);
  EXPECT_EQ(back.codegen_version, "7");
  EXPECT_EQ(environment_from_json("not json").gpu_name, "");
  EXPECT_EQ(environment_from_json("{\"sm_clock_mhz\":\"fast\"}").sm_clock_mhz, 0);
}

// ---- restart ------------------------------------------------------------------------------------------

TEST(StoreRestart, StateSurvivesReopeningTheFile) {
  TempDir dir;
  const std::string path = dir.file("server.db");
  FakeClock clock(5'000'000);
  std::string a, sub;
  {
    auto store = open_or_die(path, &clock);
    ASSERT_NE(store, nullptr);
    a = *store->register_worker("gpu-host", gpu_caps(kH100));
    sub = *store->create_submission(submission("bert"));
    ASSERT_TRUE(store->set_submission_state(sub, SubmissionState::kTuning).ok());
    TaskPlan t{"sig", kH100, "ctx", "{}", {}};
    for (int i = 0; i < 3; ++i) {
      t.jobs.push_back(job("j" + std::to_string(i), 0, JobKind::kMeasure, kH100));
      clock.advance(1);
    }
    ASSERT_TRUE(store->add_plan(sub, {t}).ok());
    // Same creation time within one plan: insertion order decides.
    std::vector<JobRecord> held = *store->lease(a, 2, kLease);
    ASSERT_EQ(ids(held), std::vector<std::string>({"j0", "j1"}));
    ASSERT_TRUE(*store->report(a, "j0", {measured(0, 3.0)}, Environment{}));
  }  // the server stops

  clock.advance(1000);
  auto store = open_or_die(path, &clock);
  ASSERT_NE(store, nullptr);
  std::vector<SubmissionRecord> open = *store->unfinished_submissions();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].id, sub);
  EXPECT_EQ(open[0].state, SubmissionState::kTuning);
  EXPECT_EQ(store->get_job("j0")->state, JobState::kDone);
  EXPECT_EQ(store->get_job("j1")->state, JobState::kLeased);
  EXPECT_EQ(store->get_job("j2")->state, JobState::kQueued);
  EXPECT_EQ(store->job_results("j0")->size(), 1u);

  // The worker reconnects: same id, it carries on with the job it holds.
  EXPECT_EQ(*store->register_worker("gpu-host", gpu_caps(kH100)), a);
  absl::StatusOr<RenewResult> r = store->renew(a, {"j1"}, kLease);
  EXPECT_EQ(r->renewed, std::vector<std::string>({"j1"}));
  EXPECT_TRUE(*store->report(a, "j1", {measured(0, 2.0)}, Environment{}));
  EXPECT_EQ(ids(*store->lease(a, 5, kLease)), std::vector<std::string>({"j2"}));
  EXPECT_EQ(store->submission_progress(sub)->candidates_measured, 2);
}

TEST(StoreRestart, LeasesOfAWorkerThatNeverCameBackExpire) {
  TempDir dir;
  const std::string path = dir.file("server.db");
  FakeClock clock;
  {
    auto store = open_or_die(path, &clock);
    ASSERT_NE(store, nullptr);
    const std::string gone = *store->register_worker("gone", gpu_caps(kH100));
    int64_t t = store->add_task("s", kH100, "c", "{}")->task_id;
    ASSERT_TRUE(*store->add_job(job("j", t, JobKind::kMeasure, kH100)));
    ASSERT_EQ(store->lease(gone, 1, kLease)->size(), 1u);
  }
  clock.advance(kLease);
  auto store = open_or_die(path, &clock);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->expire_leases(), 1);
  const std::string fresh = *store->register_worker("fresh", gpu_caps(kH100));
  EXPECT_EQ(ids(*store->lease(fresh, 1, kLease)), std::vector<std::string>({"j"}));
}

}  // namespace
}  // namespace mono::db::testing
