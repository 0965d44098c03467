// A worker's work on one job (payloads: compiler/tuning/jobs.h): build every candidate
// kernel of the job (in parallel; NVRTC on all cores), then — for measure and whole-kernel
// jobs — run, verify and time each one in a child process on the GPU (runner), watched by
// the daemon: a candidate that hangs or crashes the child is retried once in a fresh child,
// then recorded as failed (timeout / launch error), and the rest of the job carries on.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mono/v1/tuning.pb.h"

namespace mono::worker {

// The codegen version every result carries (bumped with the signature version).
std::string codegen_version();

struct CompiledCandidate {
  v1::CandidateResult result;  // compile outcome and resources; ok=false with a failure class
  std::string dir;             // artifact folder of a compiled candidate ("" if it failed)
};

// Compiles the job's candidates with `threads` threads. With `write_artifacts`, each
// compiled candidate is written to WORK_DIR/c<index>/ for the runner. A payload that cannot
// be read throws UserError (the job is then reported as a worker-side failure).
std::vector<CompiledCandidate> compile_job(const nlohmann::json& payload, const std::string& work_dir, int threads,
                                           bool write_artifacts);

struct MeasureOptions {
  int gpu = 0;                      // NVML / PCI-order index
  int warmup = 10;
  int samples = 15;
  double respread = 0.10;           // re-measure when (max - min) / median exceeds this
  int candidate_timeout_s = 60;     // per candidate, before the watchdog kills the child
  std::string runner_exe;           // this program (re-run with --runner)
};

// Runs the compiled candidates on the GPU in a child runner process; fills in samples,
// median, spread, or failures. Candidates that failed to compile are left as they are.
void measure_job(const nlohmann::json& payload, std::vector<CompiledCandidate>* candidates,
                 const std::string& work_dir, const MeasureOptions& options);

// The child side (mono-worker --runner DIR --gpu N): reads DIR/run.json, writes one JSON
// line per candidate to DIR/results.jsonl ("start" before it runs, the result after).
int runner_main(const std::string& dir);

}  // namespace mono::worker
