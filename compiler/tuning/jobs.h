// The compiler side of the tuning service, first half: turning a model into tuning tasks and
// jobs (the tuner server at submit), and the whole-model fragment whole-kernel jobs carry.
// The second half, turning results back into schedules, is merge.h.
//
// Job payloads are JSON (docs/tuning.md, "Job payloads"):
//   compile / measure: {"kind", "signature", "description", "gpu_kind", "context",
//                       "fragment" (compiler/tuning/fragment.h), "candidates": [
//                       {"index", "schedule", "est_us", "default"}]}
//   whole_kernel:      {"kind", "fragment" (the whole model), "configs": [
//                       {"index", "label", "context", "schedules": {signature: schedule}}]}
// A candidate's "index" is its place in its task's candidate list (the task's payload), the
// number a worker reports results under.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/codegen/plan.h"
#include "compiler/ir/graph.h"
#include "compiler/support/error.h"
#include "compiler/tuning/space.h"
#include "db/store.h"

namespace mono::tuning {

// A model ready to plan: loaded with its shape bindings, simplified, and calibrated in fp16.
struct PreparedModel {
  std::string label;  // e.g. "bert-base"
  std::unique_ptr<Graph> graph;
  PlanOptions options;  // precision and calibration ranges
  std::vector<std::string> notes;  // the front end's notes on loading it
};

// Loads `model_path` (model.onnx; external data next to it). Throws UserError.
PreparedModel prepare_model(const std::string& model_path, const std::string& label,
                            const std::map<std::string, Shape>& shapes, Precision precision);

// The GPU kind tasks of a dry run are keyed by: compile results depend on the architecture
// only, and must never be mistaken for measurements on a real GPU.
std::string dry_run_kind(int sm_arch = 90);

struct TuningPlanOptions {
  std::string task_gpu_kind;  // the GPU name, or dry_run_kind()
  bool dry_run = false;       // compile jobs (no GPU) instead of measure jobs
  int candidates_per_job = 8;
  // At most this many candidates measured in all (mono-submit --budget; 0: every candidate).
  // Every task measures its default; the rest go, one candidate per task per round, to the
  // tasks that weigh most (instances x default estimate), each taking its next best estimate.
  // A budget below the number of tasks is refused (BudgetTooSmall).
  int64_t budget = 0;
  // Dry runs compile only the cost model's best few candidates per task (the default always).
  int dry_run_candidates = 3;
};

// A budget that cannot measure every task's default: the submission is refused.
struct BudgetTooSmall : UserError {
  using UserError::UserError;
};

struct TuningPlan {
  TuningSpace space;
  std::vector<db::TaskPlan> tasks;  // one per task of the space, with its jobs
  int64_t candidates = 0;           // in jobs
};

TuningPlan plan_tuning(const PreparedModel& model, const TuningPlanOptions& options);

// A stable job id: `prefix` and a hash of `what`, everything that defines the job's work (with
// the signature version), so that the same work planned again finds the same job.
std::string job_id(const char* prefix, const std::string& what);

// The whole model as a weight-free fragment (compiler/tuning/fragment.h): what whole-kernel
// jobs carry. Compute it once per model; it is the largest part of the job.
nlohmann::json whole_model_fragment(const Graph& graph, const PlanOptions& options);

}  // namespace mono::tuning
