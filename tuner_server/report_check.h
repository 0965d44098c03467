// What a worker's report may say about its job, checked before anything is stored: results are
// shared across models, so one bad report would poison every model that reuses them.
#pragma once

#include "absl/status/status.h"
#include "db/records.h"
#include "mono/v1/tuning.pb.h"

namespace mono::server {

// Limits on what a report carries.
struct ReportLimits {
  size_t max_samples = 1000;        // timing samples per candidate
  double max_time_us = 1e8;         // 100 s: no candidate takes longer
  size_t max_env_string = 256;      // bytes per environment field
  int max_registers = 255;          // per thread, the hardware's limit
  int64_t max_smem_bytes = 1 << 20;
};

// Ok, or InvalidArgument naming the candidate and field at fault:
// - each candidate index is one the job's payload lists ("candidates" or "configs"), once;
// - timings (samples, median) are finite and in (0, max_time_us]; spread finite and >= 0;
// - registers, spill and shared-memory bytes within range;
// - environment strings at most max_env_string bytes.
absl::Status check_report(const v1::ReportRequest& req, const db::JobRecord& job, const ReportLimits& limits = {});

}  // namespace mono::server
