#include "tuner_server/worker_handler.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "proto/failure_class.h"
#include "tuner_server/request_checks.h"

namespace mono::server {

v1::JobKind job_kind_to_proto(db::JobKind k) {
  switch (k) {
    case db::JobKind::kCompile: return v1::COMPILE;
    case db::JobKind::kMeasure: return v1::MEASURE;
    case db::JobKind::kWholeKernel: return v1::WHOLE_KERNEL;
  }
  return v1::JOB_KIND_UNSPECIFIED;
}

absl::Status WorkerHandler::check_worker(const std::string& worker_id) {
  if (worker_id.empty()) return absl::InvalidArgumentError("worker_id is empty: register first");
  auto w = store_->get_worker(worker_id);
  if (!w.ok()) return absl::NotFoundError(std::string("unknown worker '") + worker_id + "': register again");
  if (quarantined(worker_id))
    return absl::PermissionDeniedError("worker '" + worker_id + "' is quarantined: " +
                                       std::to_string(options_.quarantine_after) +
                                       " of its reports in a row were refused (see the server log); fix it, then restart the server");
  return absl::OkStatus();
}

bool WorkerHandler::quarantined(const std::string& worker_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = refused_in_a_row_.find(worker_id);
  return it != refused_in_a_row_.end() && it->second >= options_.quarantine_after;
}

absl::Status WorkerHandler::refused(const std::string& worker_id, absl::Status why) {
  std::lock_guard<std::mutex> lock(mu_);
  const int n = ++refused_in_a_row_[worker_id];
  std::fprintf(stderr, "mono-tuner-server: refused a report of worker %s (%d in a row%s): %s\n", worker_id.c_str(), n,
               n >= options_.quarantine_after ? ", QUARANTINED" : "", std::string(why.message()).c_str());
  return why;
}

void WorkerHandler::accepted(const std::string& worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  refused_in_a_row_.erase(worker_id);
}

absl::StatusOr<v1::RegisterReply> WorkerHandler::Register(const v1::RegisterRequest& req) {
  if (req.worker_name().empty() || req.worker_name().size() > 200)
    return absl::InvalidArgumentError("worker_name must be 1 to 200 characters");
  const v1::Capabilities& c = req.capabilities();
  if (!c.compile_only() && c.gpu_name().empty())
    return absl::InvalidArgumentError("a measuring worker must name its GPU (or register compile_only)");
  db::WorkerCaps caps;
  caps.gpu_name = c.gpu_name();
  caps.sm_arch = c.sm_arch();
  caps.memory_bytes = static_cast<int64_t>(c.memory_bytes());
  caps.cuda_version = c.cuda_version();
  caps.driver_version = c.driver_version();
  caps.compile_only = c.compile_only();
  caps.gpus = c.gpus();
  caps.compile_threads = c.compile_threads();
  auto id = store_->register_worker(req.worker_name(), caps);
  if (!id.ok()) return id.status();
  v1::RegisterReply reply;
  reply.set_worker_id(*id);
  reply.set_lease_seconds(options_.lease_seconds);
  reply.set_heartbeat_seconds(options_.heartbeat_seconds);
  return reply;
}

absl::StatusOr<v1::LeaseReply> WorkerHandler::Lease(const v1::LeaseRequest& req) {
  if (auto s = check_worker(req.worker_id()); !s.ok()) return s;
  const int max_jobs = std::max(1, std::min(req.max_jobs() > 0 ? req.max_jobs() : 1, options_.max_jobs_per_lease));
  auto jobs = store_->lease(req.worker_id(), max_jobs, int64_t{options_.lease_seconds} * 1000);
  if (!jobs.ok()) return jobs.status();
  v1::LeaseReply reply;
  reply.set_lease_seconds(options_.lease_seconds);
  for (const db::JobRecord& j : *jobs) {
    v1::Job* out = reply.add_jobs();
    out->set_job_id(j.id);
    out->set_kind(job_kind_to_proto(j.kind));
    out->set_submission_id(j.submission_id);
    out->set_group_signature(j.signature);
    out->set_payload(j.payload);
    out->set_attempt(j.attempts);
  }
  return reply;
}

absl::StatusOr<v1::RenewReply> WorkerHandler::Renew(const v1::RenewRequest& req) {
  if (auto s = check_worker(req.worker_id()); !s.ok()) return s;
  std::vector<std::string> ids(req.job_ids().begin(), req.job_ids().end());
  auto r = store_->renew(req.worker_id(), ids, int64_t{options_.lease_seconds} * 1000);
  if (!r.ok()) return r.status();
  v1::RenewReply reply;
  for (const std::string& id : r->renewed) reply.add_renewed(id);
  for (const std::string& id : r->lost) reply.add_lost(id);
  return reply;
}

absl::StatusOr<v1::ReportReply> WorkerHandler::Report(const v1::ReportRequest& req) {
  if (auto s = check_worker(req.worker_id()); !s.ok()) return s;
  if (req.job_id().empty()) return absl::InvalidArgumentError("job_id is empty");
  v1::ReportReply reply;
  if (req.worker_failure()) {
    auto accepted =
        store_->report_worker_failure(req.worker_id(), req.job_id(), req.worker_failure_reason().substr(0, 2000));
    if (!accepted.ok()) return accepted.status();
    reply.set_accepted(*accepted);
    return reply;
  }
  // Checked against the job before anything is stored (an unknown job is the store's to answer).
  bool lease_holder = false;  // the job is leased to this worker: its image may be taken
  if (auto job = store_->get_job(req.job_id()); job.ok()) {
    if (auto s = check_report(req, *job); !s.ok()) return refused(req.worker_id(), s);
    lease_holder = job->state == db::JobState::kLeased && job->lease_worker == req.worker_id();
  }
  std::vector<db::CandidateResult> results;
  for (const v1::CandidateResult& c : req.results()) {
    if (c.candidate() < 0) return refused(req.worker_id(), absl::InvalidArgumentError("a candidate index is negative"));
    db::CandidateResult r;
    r.candidate = c.candidate();
    r.ok = c.ok();
    r.failure = failure_from_proto(c.failure());
    r.reason = c.reason().substr(0, 2000);
    r.samples_us.assign(c.samples_us().begin(), c.samples_us().end());
    if (!r.samples_us.empty()) r.median_us = c.median_us();
    r.spread = c.spread();
    r.registers = c.registers();
    r.spill_bytes = c.spill_bytes();
    r.smem_bytes = c.smem_bytes();
    if (r.ok && r.failure != db::FailureClass::kNone)
      return refused(req.worker_id(), absl::InvalidArgumentError(absl::StrCat("candidate ", r.candidate, " is ok but names a failure")));
    if (r.failure == db::FailureClass::kWorkerLost)
      return refused(req.worker_id(), absl::InvalidArgumentError("worker_lost is the server's verdict: report worker_failure instead"));
    results.push_back(std::move(r));
  }
  db::Environment env;
  env.gpu_name = req.environment().gpu_name();
  env.sm_clock_mhz = req.environment().sm_clock_mhz();
  env.mem_clock_mhz = req.environment().mem_clock_mhz();
  env.driver_version = req.environment().driver_version();
  env.cuda_version = req.environment().cuda_version();
  env.codegen_version = req.environment().codegen_version();
  // Checked above (check_report). Only the lease holder's: a late or stale worker's report is not
  // stored, and its image must not stand in for the results that are.
  if (req.has_kernel_image() && lease_holder && options_.on_kernel_image)
    options_.on_kernel_image(req.job_id(), req.kernel_image());
  auto stored = store_->report(req.worker_id(), req.job_id(), results, env);
  if (!stored.ok()) return stored.status();
  accepted(req.worker_id());
  reply.set_accepted(*stored);
  return reply;
}

}  // namespace mono::server
