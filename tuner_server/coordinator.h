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
// Locking: `mu_` guards only the maps (loaded models, builds in flight) and is never held
// across a slow step. Each loaded model has its own mutex for its plan and estimates; artifact
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
  int whole_kernel_contexts = 2;  // top contexts timed as whole kernels
  int build_threads = 2;          // artifact builds at once
  // A build that fails with less than this free in data_dir is tried again after
  // retry_seconds instead of failing the submission (a transiently full disk).
  uint64_t min_free_bytes = uint64_t{256} << 20;
  int retry_seconds = 30;
  // Builds the artifact into a folder; returns the manifest (tuning::write_tuned_artifact; tests
  // replace it).
  std::function<std::string(const tuning::PreparedModel&, const tuning::ContextChoice&, const nlohmann::json& info,
                            const nlohmann::json& verification, const std::string& dir)>
      build = tuning::write_tuned_artifact;
  // Submissions whose whole-kernel configurations are compiled ahead at once (each
  // configuration on a thread of its own). With several models submitted together, their
  // whole-kernel jobs run side by side on the GPUs: one submission at a time left the last
  // ones' artifacts to compile after their jobs, on the critical path.
  int prebuild_threads = 4;
  // Compiles one configuration of a whole-kernel job into the cubin cache while the job runs
  // (tuning::prebuild_tuned_kernel), so that the artifact's build after it is a cache hit;
  // empty: nothing is compiled ahead.
  std::function<void(const tuning::PreparedModel&, const tuning::ContextChoice&)> prebuild =
      tuning::prebuild_tuned_kernel;
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
  // for its artifact is handed to the build pool (once its compiles ahead have ended). Call
  // periodically.
  void step();
  // Waits up to `limit`, or until a submission is recorded or a submission's compiles ahead end
  // (true): the caller's loop then calls step() at once (a resubmission whose jobs all exist,
  // or a build that waited for its compiles, goes on without waiting a tick).
  bool wait_for_work(std::chrono::milliseconds limit);
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
  // Queues the compiles of a new whole-kernel job's configurations (options_.prebuild) for the
  // threads that do those (options_.prebuild_threads), apart from the artifact builds' pool. A
  // build whose submission's compiles are running is not queued until they end (they make its
  // cubin; their end wakes wait_for_work); one whose compiles have not started yet compiles for
  // itself, and they are skipped.
  void prebuild(const std::string& submission, std::shared_ptr<Loaded> l, std::vector<tuning::ContextChoice> configs);
  // One of those compiles (skipped once stopping); a failure is logged, not the submission's.
  void compile_ahead(const std::string& submission, const Loaded& l, const tuning::ContextChoice& c);
  void fail(const std::string& submission_id, const absl::Status& why);
  // A pool thread: runs the tasks of `queue` until stopping; artifact builds count in
  // builds_running_ (drain waits for those), compiles ahead do not.
  void work_loop(std::deque<std::function<void()>>* queue, bool artifact_builds);
  // The submission's tuning plan (its jobs) computed; recorded in the database; both.
  absl::StatusOr<tuning::TuningPlan> tuning_plan(const db::SubmissionRecord& s, const Loaded& l);
  absl::Status record_plan(const db::SubmissionRecord& s, Loaded& l, tuning::TuningPlan tp, v1::SubmitReply* reply);
  absl::Status plan(const db::SubmissionRecord& s, Loaded& l, v1::SubmitReply* reply);
  absl::Status finish(const db::SubmissionRecord& s, Loaded& l, const tuning::ContextChoice& choice, nlohmann::json info,
                      const nlohmann::json& verification);
  std::string pick_gpu_kind(const std::string& asked, bool dry_run, absl::Status* error);

  db::Store* store_;
  const db::Clock* clock_;
  CoordinatorOptions options_;
  std::mutex mu_;  // guards the members below; never held across a slow step
  std::map<std::string, std::shared_ptr<Loaded>> loaded_;
  std::set<std::string> building_;                 // submissions queued for or in a build
  std::set<std::string> compiling_ahead_;          // submissions whose compiles ahead run
  std::deque<std::function<void()>> build_queue_;
  std::deque<std::function<void()>> prebuild_queue_;  // compiles ahead (prebuild), a submission each
  std::condition_variable build_cv_, idle_cv_, work_cv_;
  bool work_ = false;  // a submission was recorded, or compiles ahead ended, since the last wait_for_work (under mu_)
  int builds_running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> builders_;  // the artifact builds' pool, then the compiles-ahead pool
};

}  // namespace mono::server
