// The compiler side of the tuning service, second half: turning the results in the database
// back into schedules (the tuner server at merge; mono-compile --db), the whole-kernel timing
// job that decides between the top contexts, and the tuned artifact. Payloads: jobs.h.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/codegen/plan.h"
#include "compiler/runtime/nvrtc_compiler.h"
#include "compiler/tuning/jobs.h"
#include "compiler/tuning/schedule.h"
#include "compiler/tuning/space.h"
#include "db/store.h"

namespace mono::tuning {

// What the database says to use in one context.
struct ContextChoice {
  Context context;
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
std::vector<ContextChoice> choose_schedules(db::Store& store, const TuningSpace& space,
                                            const std::string& task_gpu_kind, bool dry_run);

// The whole-kernel timing job for the top contexts (and the untuned default, for the
// speed-up): its id is a hash of everything it times, so the same model tuned again finds it.
// `kernel_name` (the model's label, "" for none) is what the artifact's source names the model:
// the worker names its kernels so too, so that the compile of the configuration it finds fastest
// is the artifact's (the same compile_key), and the server need not compile it again.
db::NewJob whole_kernel_job(const nlohmann::json& model_fragment, const std::string& submission_id,
                            const std::string& gpu_kind, const std::vector<ContextChoice>& top,
                            const std::string& kernel_name);

// How many of the best contexts a whole-kernel job times beside the untuned default (the server's
// jobs and mono-compile --db's lookup of them must agree). One: in run170's 12 whole-kernel jobs
// (4 models on 1, 2 and 4 GPUs) the second-best context never won, and lost by 1-2 % (resnet50) to
// 13-17 % (bert-base, gpt2); each context timed is a whole-kernel compile.
constexpr int kWholeKernelContexts = 1;

// The final schedules of a model from the database: in a dry run, the context with the lowest
// total estimate; otherwise the fastest verified configuration of the whole-kernel timing job
// for the top kWholeKernelContexts contexts (the untuned default competes). `pending` while that job has not
// finished; `job` is the job to queue when it does not exist yet. `verification` is the
// artifact's record (the whole-kernel job compared the chosen kernel with the CPU reference on
// the GPU); `refused` names why no artifact may be built: every whole kernel gave wrong answers.
struct FinalChoice {
  ContextChoice choice;
  nlohmann::json info;  // for the manifest's "tuning" section
  nlohmann::json verification;
  std::string refused;
  bool pending = false;
  bool job_missing = false;
  db::NewJob job;
  int config = -1;  // the configuration of `job` chosen (its fastest verified), -1: none was timed
};
FinalChoice final_choice(db::Store& store, const nlohmann::json& model_fragment, const TuningSpace& space,
                         const std::string& task_gpu_kind, bool dry_run, const std::string& submission_id,
                         const std::string& kernel_name);

// The final choice for one model as mono-compile builds it, from a tuner database (--db FILE)
// or on the server for a remote client (--server ADDR, the TunedChoice RPC): the GPU kind is
// `gpu_kind`, or the only one the database has results for; then final_choice (`fragment` is
// the model's whole-model fragment, asked for only when measured results exist). Throws UserError naming `where` (the database or server) when the database
// has no results, several kinds and none named, or no results for the named one, and when
// every whole kernel gave wrong answers.
struct ModelChoice {
  ContextChoice choice;
  nlohmann::json info;
  std::string gpu_kind;
  bool dry_run = false;
  bool pending = false;  // the whole-kernel timing has not finished: the best per-group context
};
ModelChoice model_choice(db::Store& store, const std::string& where, std::string gpu_kind, const TuningSpace& space,
                         const std::function<nlohmann::json()>& fragment);

// What TunedChoice carries (JSON, checked; the parsers throw UserError naming the field): a
// model's tuning space as model_choice needs it (contexts; per task the signature, context,
// group count and default estimate), and a ModelChoice.
nlohmann::json space_to_wire(const TuningSpace& space);
TuningSpace space_from_wire(const nlohmann::json& j);
nlohmann::json model_choice_to_json(const ModelChoice& c);
ModelChoice model_choice_from_json(const nlohmann::json& j);

// Adds the "tuning" section to DIR/manifest.json of an artifact built from `plan` with
// `choice`: `info`, the context, groups tuned / at default (from the plan) and the records
// used. Returns the manifest text.
std::string add_tuning_section(const std::string& dir, const KernelPlan& plan, const ContextChoice& choice,
                               nlohmann::json info);

// Compiles the final kernel for `choice` and writes the artifact to `dir`, with a "tuning"
// section in manifest.json (the records used; whether anything was measured; with an `offered`
// kernel, whether it was taken) and the verification record. `offered`: the whole-kernel job's
// compile of this configuration by the worker, taken when its key is the kernel's own (see
// build_kernel). Returns the manifest text.
std::string write_tuned_artifact(const PreparedModel& model, const ContextChoice& choice,
                                 const nlohmann::json& tuning_info, const nlohmann::json& verification,
                                 const std::string& dir, const CompiledKernel* offered = nullptr);

}  // namespace mono::tuning
