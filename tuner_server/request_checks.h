// What requests from the network may carry, checked before anything is stored or uploaded:
// a worker's report against its job (results are shared across models, so one bad report
// would poison every model that reuses them), a submission's header.
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
  size_t max_kernel_image_bytes = size_t{12} << 20;  // cubin and log: what a worker sends at most
};

// Ok, or InvalidArgument naming the candidate and field at fault:
// - each candidate index is one the job's payload lists ("candidates" or "configs"), once;
// - timings (samples, median) are finite and in (0, max_time_us]; spread finite and >= 0;
// - registers, spill and shared-memory bytes within range;
// - environment strings at most max_env_string bytes;
// - a kernel image only for a whole-kernel job, of a configuration reported timed, with a cubin,
//   at most max_kernel_image_bytes with its log, and a key of 16 lowercase hex digits.
absl::Status check_report(const v1::ReportRequest& req, const db::JobRecord& job, const ReportLimits& limits = {});

// Ok, or InvalidArgument naming the field: model_name, gpu_kind and shape input names of 1 to
// 200 printable characters (no control bytes: NUL, newlines), at most 64 shape bindings of at
// most 8 dimensions, each >= 1.
absl::Status check_submit_header(const v1::SubmitHeader& header);

}  // namespace mono::server
