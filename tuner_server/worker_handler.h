// The logic of the Workers service (register, lease, renew, report), apart from the gRPC
// plumbing: proto messages in, proto messages or a status out, the database underneath.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "db/store.h"
#include "mono/v1/tuning.pb.h"

namespace mono::server {

struct WorkerHandlerOptions {
  int lease_seconds = 30;      // a job returns to the queue this long after the last renewal
  int heartbeat_seconds = 10;  // workers renew this often
  int max_jobs_per_lease = 16;
  // A worker whose reports are refused (request_checks.h) this many times in a row is
  // quarantined: it gets no more jobs and its reports are refused, until the server restarts.
  int quarantine_after = 3;
  // Gets the kernel image of a whole-kernel job's report (Coordinator::offer_kernel) when the
  // report passed check_report and comes from the worker that holds the job's lease, before the
  // report is stored: the build the report makes due finds it. Empty: images are dropped (a
  // server whose workers are not trusted to put code into artifacts: see server_main).
  std::function<void(const std::string& job_id, const v1::KernelImage& image)> on_kernel_image;
};

class WorkerHandler {
 public:
  WorkerHandler(db::Store* store, WorkerHandlerOptions options) : store_(store), options_(std::move(options)) {}

  absl::StatusOr<v1::RegisterReply> Register(const v1::RegisterRequest& req);
  absl::StatusOr<v1::LeaseReply> Lease(const v1::LeaseRequest& req);
  absl::StatusOr<v1::RenewReply> Renew(const v1::RenewRequest& req);
  absl::StatusOr<v1::ReportReply> Report(const v1::ReportRequest& req);
  bool quarantined(const std::string& worker_id) const;

 private:
  absl::Status check_worker(const std::string& worker_id);
  // Counts a refused report (returns the status to send) or resets the count after a good one.
  absl::Status refused(const std::string& worker_id, absl::Status why);
  void accepted(const std::string& worker_id);
  db::Store* store_;
  WorkerHandlerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, int> refused_in_a_row_;  // by worker id
};

// The contract's job kind for the store's (failure classes: proto/failure_class.h).
v1::JobKind job_kind_to_proto(db::JobKind k);

}  // namespace mono::server
