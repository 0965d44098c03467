// tuning_jobs_check --runner MONO_WORKER [--models DIR] [--work DIR] [--candidates N]
// The worker's own path on the GPU without a server: for each tiny model in fp16, every
// tuning task of the first context becomes a measure job (compiler/tuning/jobs.h) of its first
// N candidates (the default and, where the operands allow, wgmma tiles included); each job is
// compiled (compile_job) and run in the runner child (measure_job: checked against the CPU
// reference of the job's fragment, then timed with L2 flushed), exactly as mono-worker does.
// Prints one line per candidate and a summary; exit 1 if a candidate that compiled failed.
#include <cstdio>
#include <filesystem>
#include <string>

#include "compiler/support/error.h"
#include "compiler/support/flags.h"
#include "compiler/tuning/jobs.h"
#include "gpu_worker/candidates.h"

namespace mono {
namespace {

const char kUsage[] =
    "usage: tuning_jobs_check --runner MONO_WORKER [--models DIR] [--work DIR] [--candidates N]\n"
    "  --runner FILE     the mono-worker binary (it runs candidates as mono-worker --runner)\n"
    "  --models DIR      the tiny models (default: tests/data/models of the source tree)\n"
    "  --work DIR        scratch folder (default /tmp/tuning-jobs-check)\n"
    "  --candidates N    candidates per job, best estimates first (default 4)\n";

constexpr const char* kModels[] = {"tiny-bert-opset20", "tiny-gpt2-opset20", "tiny-vit-opset20", "tiny-resnet-opset17"};

int check_main(int argc, char** argv) {
  Flags args(argc, argv);
  std::string runner, models = std::string(MONO_SOURCE_DIR) + "/tests/data/models", work = "/tmp/tuning-jobs-check";
  int per_job = 4;
  std::string flag;
  while (args.next(&flag)) {
    if (flag == "--runner") runner = args.value(flag);
    else if (flag == "--models") models = args.value(flag);
    else if (flag == "--work") work = args.value(flag);
    else if (flag == "--candidates") {
      per_job = args.int_value(flag);
      if (per_job < 1 || per_job > 64) user_error("--candidates ", per_job, " is not in 1..64");
    }
    else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else {
      user_error("unknown argument '", flag, "'");
    }
  }
  if (runner.empty()) user_error("--runner MONO_WORKER is required");
  worker::MeasureOptions mo;
  mo.runner_exe = runner;
  worker::Runner gpu_runner(mo);  // one runner for every job, as in mono-worker
  int ok = 0, failed = 0, not_built = 0, wgmma = 0;
  for (const char* name : kModels) {
    const tuning::PreparedModel model =
        tuning::prepare_model(models + "/" + name + "/model.onnx", name, {}, Precision::kF16);
    tuning::TuningPlanOptions po;
    po.task_gpu_kind = "check";
    po.candidates_per_job = per_job;
    const tuning::TuningPlan plan = tuning::plan_tuning(model, po);
    const std::string first_context = plan.tasks.empty() ? "" : plan.tasks.front().context;
    for (const db::TaskPlan& task : plan.tasks) {
      if (task.context != first_context || task.jobs.empty()) continue;
      const db::NewJob& job = task.jobs.front();  // the best estimates, the default among them
      const nlohmann::json payload = nlohmann::json::parse(job.payload);
      const std::string dir = work + "/" + job.id;
      std::filesystem::create_directories(dir);
      std::vector<worker::CompiledCandidate> cands = worker::compile_job(payload, dir, 16, /*write_artifacts=*/true);
      worker::measure_job(payload, &cands, dir, &gpu_runner);
      for (size_t i = 0; i < cands.size(); ++i) {
        const v1::CandidateResult& r = cands[i].result;
        const nlohmann::json& c = payload.at("candidates").at(i);
        const bool on_wgmma = c.at("schedule").value("wgmma", 0) == 1;
        wgmma += on_wgmma;
        std::printf("%-20s %s %-34s cand %d%s %-60s %s", name, task.signature.c_str(),
                    payload.value("description", "").substr(0, 34).c_str(), r.candidate(),
                    c.value("default", false) ? " (default)" : "", c.at("schedule").dump().substr(0, 60).c_str(),
                    r.ok() ? "ok" : "FAILED");
        if (r.ok()) std::printf(" %.2f us\n", r.median_us());
        else std::printf(": %s\n", r.reason().substr(0, 200).c_str());
        if (r.ok()) ++ok;
        else if (cands[i].dir.empty()) ++not_built;
        else ++failed;
      }
    }
  }
  std::printf("tuning_jobs_check: %d candidates ok (%d on wgmma), %d failed on the GPU, %d not built (resource or "
              "compile refusals)\n",
              ok, wgmma, failed, not_built);
  return failed ? 1 : kExitOk;
}

}  // namespace
}  // namespace mono

int main(int argc, char** argv) {
  return mono::run_main("tuning_jobs_check", [&] { return mono::check_main(argc, argv); });
}
