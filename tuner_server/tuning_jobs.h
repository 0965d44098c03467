// The compiler side of the tuning service: turning a model into tuning tasks and jobs
// (server, at submit), and turning the results in the database back into schedules
// (server, at merge; mono-compile --db).
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
#include "compiler/tuning/schedule.h"
#include "compiler/tuning/space.h"
#include "db/store.h"

namespace mono::server {

// A model ready to plan: loaded with its shape bindings, simplified, and calibrated in fp16.
struct PreparedModel {
  std::string label;  // e.g. "bert-base"
  std::unique_ptr<Graph> graph;
  PlanOptions options;  // precision and calibration ranges
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
  // Dry runs compile only the cost model's best few candidates per task (the default always).
  int dry_run_candidates = 3;
};

struct TuningPlan {
  tuning::TuningSpace space;
  std::vector<db::TaskPlan> tasks;  // one per task of the space, with its jobs
  int64_t candidates = 0;           // in jobs
};

TuningPlan plan_tuning(const PreparedModel& model, const TuningPlanOptions& options);

// What the database says to use in one context.
struct ContextChoice {
  tuning::Context context;
  std::map<std::string, Schedule> schedules;  // by group signature: the tuned ones only
  nlohmann::json records = nlohmann::json::array();  // the database records used
  double total_us = 0;  // sum over the model's groups: measured medians where tuned, else estimates
  bool all_measured = true;
  int groups_tuned = 0;    // groups whose schedule comes from a record
  int groups_default = 0;  // groups left at the default (no usable record)
  double default_total_us = 0;  // the same sum for the default schedules (measured where possible)
};

// For each context of `space`, the best recorded schedule of every task: the fastest
// verified measurement, or, when `dry_run`, the cost model's best among the candidates that
// compiled without spills. Tasks without results keep the default schedule.
std::vector<ContextChoice> choose_schedules(db::Store& store, const tuning::TuningSpace& space,
                                            const std::string& task_gpu_kind, bool dry_run);

// The whole model as a weight-free fragment (compiler/tuning/fragment.h): what whole-kernel
// jobs carry. Compute it once per model; it is the largest part of the job.
nlohmann::json whole_model_fragment(const Graph& graph, const PlanOptions& options);

// The whole-kernel timing job for the top contexts (and the untuned default, for the
// speed-up): its id is a hash of everything it times, so the same model tuned again finds it.
db::NewJob whole_kernel_job(const nlohmann::json& model_fragment, const std::string& submission_id,
                            const std::string& gpu_kind, const std::vector<ContextChoice>& top);

// The final schedules of a model from the database: in a dry run, the context with the lowest
// total estimate; otherwise the fastest verified configuration of the whole-kernel timing job
// for the top contexts (the untuned default competes). `pending` while that job has not
// finished; `job` is the job to queue when it does not exist yet.
struct FinalChoice {
  ContextChoice choice;
  nlohmann::json info;  // for the manifest's "tuning" section
  bool pending = false;
  bool job_missing = false;
  db::NewJob job;
};
FinalChoice final_choice(db::Store& store, const nlohmann::json& model_fragment, const tuning::TuningSpace& space,
                         const std::string& task_gpu_kind, bool dry_run, int top_contexts,
                         const std::string& submission_id);

// Adds the "tuning" section to DIR/manifest.json of an artifact built from `plan` with
// `choice`: `info`, the context, groups tuned / at default (from the plan) and the records
// used. Returns the manifest text.
std::string add_tuning_section(const std::string& dir, const KernelPlan& plan, const ContextChoice& choice,
                               nlohmann::json info);

// Compiles the final kernel for `choice` and writes the artifact to `dir`, with a "tuning"
// section in manifest.json (the records used; whether anything was measured). Returns the
// manifest text.
std::string write_tuned_artifact(const PreparedModel& model, const ContextChoice& choice,
                                 const nlohmann::json& tuning_info, const std::string& dir);

}  // namespace mono::server
