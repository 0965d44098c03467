// Drives submissions through their states (DESIGN §5, §6):
//   queued  -> tuning   the model is planned: tasks and jobs are in the database
//   tuning  -> merging  every job of its tasks is done: the best schedule per group per
//                       context is chosen and a whole-kernel timing job is queued for the top
//                       contexts (a dry run skips it: nothing can be measured)
//   merging -> done     the fastest verified whole kernel becomes the artifact
//   any     -> failed   with the reason (a model that no longer loads, a failed build)
// Everything it decides follows from the database, so a restarted server picks up every
// unfinished submission where it was.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/tuning/jobs.h"
#include "compiler/tuning/merge.h"
#include "db/store.h"
#include "mono/v1/tuning.pb.h"

namespace mono::server {

struct CoordinatorOptions {
  std::string data_dir;  // models/, artifacts/ and staging/ live here
  int whole_kernel_contexts = 2;  // top contexts timed as whole kernels
};

class Coordinator {
 public:
  Coordinator(db::Store* store, const db::Clock* clock, CoordinatorOptions options)
      : store_(store), clock_(clock), options_(std::move(options)) {}

  // A new submission of the model stored in `model_dir` (model.onnx inside): loads and plans
  // it (InvalidArgument naming the problem when the model cannot be compiled), records it,
  // and queues the jobs the database does not already have.
  absl::StatusOr<v1::SubmitReply> submit(const v1::SubmitHeader& header, const std::string& model_dir,
                                         const std::string& model_sha256);
  // Moves every unfinished submission on as far as the database allows. Call periodically.
  void step();
  absl::StatusOr<v1::Progress> progress(const std::string& submission_id);

 private:
  struct Loaded {
    tuning::PreparedModel model;
    tuning::TuningSpace space;
    nlohmann::json fragment;  // the whole model, for whole-kernel jobs (made once, when needed)
    double speedup = 0;     // best-so-far speed-up estimate for progress reports,
    int64_t speedup_at = -1;  // ... as of this many measured candidates
  };
  // The submission's model, loaded and planned once per server run.
  absl::StatusOr<std::shared_ptr<Loaded>> loaded(const db::SubmissionRecord& s);
  absl::Status advance(const db::SubmissionRecord& s);
  absl::Status plan(const db::SubmissionRecord& s, Loaded& l, v1::SubmitReply* reply);
  absl::Status finish(const db::SubmissionRecord& s, Loaded& l, const tuning::ContextChoice& choice, nlohmann::json info,
                      const nlohmann::json& verification);
  std::string pick_gpu_kind(const std::string& asked, bool dry_run, absl::Status* error);

  db::Store* store_;
  const db::Clock* clock_;
  CoordinatorOptions options_;
  std::mutex mu_;  // guards loaded_ and serialises advancing
  std::map<std::string, std::shared_ptr<Loaded>> loaded_;
};

}  // namespace mono::server
