// The dashboard's JSON API (docs/dashboard.md): every view the web page shows, computed
// from the database alone, so that scripts see exactly what people see.
//
//   GET  /api/overview                      queue depth by job kind and state, workers, DB size
//   GET  /api/submissions                   newest first, with progress
//   GET  /api/submissions/{id}              one submission: summary, result, baselines,
//                                           workers, timeline and groups together
//   GET  /api/submissions/{id}/timeline     tuning progress over time
//   GET  /api/submissions/{id}/groups       per-group table
//   GET  /api/workers                       every registered worker and what it has done
//   POST /api/baselines                     record another tool's latency for a model
//
// Estimates and measurements are never mixed silently: every latency carries whether it was
// measured on a GPU or is a cost-model estimate.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "db/clock.h"
#include "db/store.h"

namespace mono::server {

struct DashboardOptions {
  int64_t worker_alive_ms = 60'000;  // a worker seen within this window counts as alive
  int max_submissions = 200;         // the list shows at most this many, newest first
};

class Dashboard {
 public:
  Dashboard(db::Store* store, const db::Clock* clock, DashboardOptions options = {})
      : store_(store), clock_(clock), options_(options) {}

  absl::StatusOr<nlohmann::json> overview();
  absl::StatusOr<nlohmann::json> submissions();
  // NotFound for an unknown id. `part` is "" (everything), "timeline" or "groups".
  absl::StatusOr<nlohmann::json> submission(const std::string& id, const std::string& part = "");
  absl::StatusOr<nlohmann::json> workers();
  // Body: {"model_sha256" or "submission_id", "gpu_kind" (default: the submission's or ""),
  //        "name", "latency_us", "source"}. InvalidArgument naming what is wrong.
  absl::Status record_baseline(const std::string& body);

  // What a task's payload says, without its fragment: parsed once per task (payloads never
  // change) and kept.
  struct TaskInfo {
    std::string signature;
    std::string kind;         // group kind, e.g. "gemm"
    std::string description;  // the ops: "MatMul + Add -> f16[1,128,768]"
    std::string context;      // canonical context string
    nlohmann::json context_json;
    double default_est_us = 0;
    int default_index = -1;
    std::vector<double> est_us;  // per candidate index
    int code_version = 0;        // the tuning code version its jobs were planned with (0: unknown)
  };

 private:
  absl::StatusOr<nlohmann::json> summary(const db::SubmissionRecord& s);
  // The task's info, read from the database (payload and all) only the first time.
  absl::StatusOr<const TaskInfo*> task_info(int64_t task_id);

  db::Store* store_;
  const db::Clock* clock_;
  DashboardOptions options_;
  std::mutex mu_;  // guards tasks_
  std::map<int64_t, TaskInfo> tasks_;
};

}  // namespace mono::server
