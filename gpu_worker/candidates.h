// A worker's work on one job (payloads: compiler/tuning/jobs.h): build every candidate
// kernel of the job (in parallel; NVRTC on all cores), then — for measure and whole-kernel
// jobs — run, verify and time each one in a child process on the GPU (the runner, kept from
// job to job), watched by the daemon: a candidate that hangs or crashes the runner is retried
// once in a fresh one, then recorded as failed (timeout / launch error), and the rest of the
// job carries on.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/runtime/nvrtc_compiler.h"
#include "mono/v1/tuning.pb.h"

namespace mono::worker {

// The codegen version every result carries (bumped with the signature version).
std::string codegen_version();

struct CompiledCandidate {
  v1::CandidateResult result;  // compile outcome and resources; ok=false with a failure class
  std::string dir;             // artifact folder of a compiled candidate ("" if it failed)
  CompiledKernel kernel;       // a whole-kernel configuration's compile (empty for group candidates)
};

// Compiles the job's candidates with `threads` threads. With `write_artifacts`, each
// compiled candidate is written to WORK_DIR/c<index>/ for the runner. A payload that cannot
// be read throws UserError (the job is then reported as a worker-side failure).
std::vector<CompiledCandidate> compile_job(const nlohmann::json& payload, const std::string& work_dir, int threads,
                                           bool write_artifacts);

// Puts the compile of a whole-kernel job's fastest verified configuration into its report
// (KernelImage): the server builds the artifact from it rather than compile it again. Nothing
// when no configuration was timed, or when the image is over `max_bytes` (the server's message
// limit).
void attach_kernel_image(const std::vector<CompiledCandidate>& candidates, v1::ReportRequest* report, size_t max_bytes);

struct MeasureOptions {
  int gpu = 0;                      // NVML / PCI-order index
  int warmup = 10;
  int samples = 15;
  double respread = 0.10;           // re-measure when (max - min) / median exceeds this
  int candidate_timeout_s = 60;     // per candidate, before the watchdog kills the child
  std::string runner_exe;           // this program (re-run with --runner)
};

// The runner child of one GPU, kept from job to job so that CUDA starts once, not once per
// job: it reads job folders (DIR/run.json) from its standard input, one per line, and writes
// DIR/results.jsonl: {"start": i} before candidate i, its result after, and {"done": true,
// "stays": B} at the end of the job. A candidate that fails to launch ends the runner (its
// context may be lost: "stays" is false); one that crashes or hangs it gets it killed. The
// next job then starts a fresh runner. Not thread-safe: one per lane.
class Runner {
 public:
  struct Outcome {
    std::map<int, nlohmann::json> results;  // by candidate index
    int crashed = -1;                       // candidate running when the runner died or hung
    bool hung = false;
    bool started = false;                   // the runner wrote something for this job
    std::string why;                        // why the runner ended the job early ("" if it did not)
    nlohmann::json done;                    // the runner's last line for the job, if it finished
  };

  explicit Runner(MeasureOptions options);
  ~Runner();  // an idle runner exits when its input closes
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Runs one job's candidates (RUN is DIR/run.json's content) and watches it.
  Outcome run(const std::string& dir, const nlohmann::json& run, int timeout_per_candidate);
  const MeasureOptions& options() const { return opt_; }
  int starts() const { return starts_; }  // runners started so far
  int pid() const { return pid_; }        // the live runner's, or -1

 private:
  bool start(std::string* why);
  void stop(bool kill_it);
  Outcome watch(const std::string& dir, int timeout_per_candidate);

  MeasureOptions opt_;
  int pid_ = -1;
  int to_child_ = -1;  // its standard input
  int starts_ = 0;
};

// Runs the compiled candidates on the GPU in the runner; fills in samples, median, spread, or
// failures. A candidate that hangs or crashes the runner is tried once more in a fresh one,
// then recorded as failed. Candidates that failed to compile are left as they are.
// Returns where the runner's time went ("runner: fragment F s, reference R s, load L s, check
// C s, timing T s", summed over the job's rounds), for the daemon's log.
std::string measure_job(const nlohmann::json& payload, std::vector<CompiledCandidate>* candidates,
                        const std::string& work_dir, Runner* runner);

// The runner's side (mono-worker --runner): runs the jobs named on standard input until it
// closes, or until a candidate fails to launch.
int runner_main();

}  // namespace mono::worker
