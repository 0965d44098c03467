// Drives submissions through their states (DESIGN §5, §6):
//   queued  -> tuning   the model is planned: tasks and jobs are in the database
//   tuning  -> merging  every job of its tasks is done: the best schedule per group per
//                       context is chosen and a whole-kernel timing job is queued for the top
//                       contexts (a dry run skips it: nothing can be measured)
//   merging -> done     the fastest verified whole kernel becomes the artifact
//   any     -> failed   with the reason (a model that no longer loads, a failed build)
// Everything it decides follows from the database, so a restarted server picks up every
// unfinished submission where it was.
//
// One compile per kernel, where workers are trusted with the artifact's code (server_main's
// --worker-kernels): the worker that times the whole-kernel job's configurations sends the compile
// of the fastest (v1::KernelImage, offer_kernel), and the artifact is built from it when its
// compile key is the artifact's own; the server compiles when it is not (another NVRTC, no image
// sent, images not taken). (Before 8b6de83 the server compiled every configuration ahead while
// the job ran: the same compiles twice, on the same cores in a one-host fleet.)
//
// Locking: `mu_` guards only the maps (loaded models, builds in flight, kernels offered) and is
// never held across a slow step. Each loaded model has its own mutex for its plan and estimates; artifact
// builds (NVRTC, seconds to minutes) run on a bounded pool of build threads, so Submit, Watch
// and the other submissions go on meanwhile.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/tuning/jobs.h"
#include "compiler/tuning/merge.h"
#include "db/store.h"
#include "mono/v1/tuning.pb.h"

namespace mono::server {

struct CoordinatorOptions {
  std::string data_dir;  // models/, artifacts/ and staging/ live here
  int build_threads = 2;          // artifact builds at once
  // A build that fails with less than this free in data_dir is tried again after
  // retry_seconds instead of failing the submission (a transiently full disk).
  uint64_t min_free_bytes = uint64_t{256} << 20;
  int retry_seconds = 30;
  // Builds the artifact into a folder from the kernel the worker offered (null: none), else by
  // compiling; returns the manifest (tuning::write_tuned_artifact; tests replace it).
  std::function<std::string(const tuning::PreparedModel&, const tuning::ContextChoice&, const nlohmann::json& info,
                            const nlohmann::json& verification, const std::string& dir, const CompiledKernel* offered)>
      build = tuning::write_tuned_artifact;
  // Kernels offered and not yet built from, at most this many and bytes (the oldest go first).
  size_t max_offered_kernels = 32;
  size_t max_offered_bytes = size_t{256} << 20;
};

class Coordinator {
 public:
  Coordinator(db::Store* store, const db::Clock* clock, CoordinatorOptions options);
  ~Coordinator();  // waits for the builds in flight (see drain)
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // A new submission of the model stored in `model_dir` (model.onnx inside): loads and plans
  // it (InvalidArgument naming the problem when the model cannot be compiled), records it,
  // and queues the jobs the database does not already have.
  absl::StatusOr<v1::SubmitReply> submit(const v1::SubmitHeader& header, const std::string& model_dir,
                                         const std::string& model_sha256);
  // Moves every unfinished submission on as far as the database allows; a submission ready
  // for its artifact is handed to the build pool. Call periodically.
  void step();
  // Waits up to `limit`, or until a submission is recorded (true): the caller's loop then calls
  // step() at once (a resubmission whose jobs all exist goes on without waiting a tick).
  bool wait_for_work(std::chrono::milliseconds limit);
  // The worker's compile of whole-kernel job `job_id`'s fastest configuration (from its report,
  // before the report is stored). Kept until the artifact is built from it; the key is checked
  // then.
  void offer_kernel(const std::string& job_id, const v1::KernelImage& image);
  // Stops taking builds and waits up to `limit` for those in flight; false if some still run
  // (their submissions stay merging and are built again after a restart).
  bool drain(std::chrono::milliseconds limit);
  int builds_in_flight();
  absl::StatusOr<v1::Progress> progress(const std::string& submission_id);

 private:
  struct Loaded {
    std::mutex mu;  // guards what follows but `model`, which does not change once loaded
    tuning::PreparedModel model;
    tuning::TuningSpace space;
    nlohmann::json fragment;  // the whole model, for whole-kernel jobs (made once, when needed)
    double speedup = 0;     // best-so-far speed-up estimate for progress reports,
    int64_t speedup_at = -1;  // ... as of this many measured candidates
    int64_t retry_at_ms = 0;  // no build before this (a build failed on a full disk)
  };
  // The submission's model, loaded and planned once per server run.
  absl::StatusOr<std::shared_ptr<Loaded>> loaded(const db::SubmissionRecord& s);
  absl::Status advance(const db::SubmissionRecord& s, const std::shared_ptr<Loaded>& l);
  void build(const db::SubmissionRecord& s, std::shared_ptr<Loaded> l, tuning::FinalChoice f);
  void fail(const std::string& submission_id, const absl::Status& why);
  // A thread of the build pool: runs the queued builds until stopping (builds_running_ counts
  // them; drain waits for those).
  void work_loop();
  // The submission's tuning plan (its jobs) computed; recorded in the database; both.
  absl::StatusOr<tuning::TuningPlan> tuning_plan(const db::SubmissionRecord& s, const Loaded& l);
  absl::Status record_plan(const db::SubmissionRecord& s, Loaded& l, tuning::TuningPlan tp, v1::SubmitReply* reply);
  absl::Status plan(const db::SubmissionRecord& s, Loaded& l, v1::SubmitReply* reply);
  absl::Status finish(const db::SubmissionRecord& s, Loaded& l, const tuning::ContextChoice& choice, nlohmann::json info,
                      const nlohmann::json& verification, const CompiledKernel* offered);
  std::string pick_gpu_kind(const std::string& asked, bool dry_run, absl::Status* error);

  db::Store* store_;
  const db::Clock* clock_;
  CoordinatorOptions options_;
  std::mutex mu_;  // guards the members below; never held across a slow step
  std::map<std::string, std::shared_ptr<Loaded>> loaded_;
  std::set<std::string> building_;                 // submissions queued for or in a build
  struct Offered {
    int config = -1;  // the whole-kernel job's configuration it is
    CompiledKernel kernel;
  };
  // Forgets the kernel offered for a job (under mu_).
  void drop_offer(const std::string& job_id);
  std::map<std::string, std::shared_ptr<const Offered>> offered_;  // by whole-kernel job id
  std::deque<std::string> offered_order_;                          // offered_'s keys, oldest first
  size_t offered_bytes_ = 0;                                       // their cubins' and logs' bytes
  std::deque<std::function<void()>> build_queue_;
  std::condition_variable build_cv_, idle_cv_, work_cv_;
  bool work_ = false;  // a submission was recorded since the last wait_for_work (under mu_)
  int builds_running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> builders_;  // the artifact builds' pool
};

}  // namespace mono::server
