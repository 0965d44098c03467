// The worker's build step on real job payloads (no GPU needed): every candidate of a measure
// job of tiny-bert compiles for sm_90 and lands as a loadable artifact folder for the runner,
// and a whole-kernel job builds every configuration, named so that its compile is the
// artifact's, and reports the fastest one's compile.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/backend/build.h"
#include "compiler/ir/tensor.h"
#include "compiler/tuning/jobs.h"
#include "compiler/tuning/merge.h"
#include "gpu_worker/candidates.h"

namespace mono {
namespace {

namespace fs = std::filesystem;

const char* kModel = MONO_SOURCE_DIR "/tests/data/models/tiny-bert-opset20/model.onnx";

TEST(WorkerBuild, MeasureJobCandidatesBecomeArtifactFolders) {
  tuning::PreparedModel m = tuning::prepare_model(kModel, "tiny-bert", {}, Precision::kF16);
  tuning::TuningPlanOptions o;
  o.task_gpu_kind = "NVIDIA H100 80GB HBM3";
  tuning::TuningPlan plan = tuning::plan_tuning(m, o);
  ASSERT_FALSE(plan.tasks.empty());
  // The first GEMM task's first job.
  const db::TaskPlan* gemm = nullptr;
  for (const db::TaskPlan& t : plan.tasks)
    if (t.payload.find("\"kind\":\"gemm\"") != std::string::npos) gemm = &t;
  ASSERT_NE(gemm, nullptr);
  const nlohmann::json payload = nlohmann::json::parse(gemm->jobs.front().payload);
  EXPECT_EQ(payload.at("kind"), "measure");
  const std::string dir = fs::temp_directory_path() / "mono-worker-build-test" / "job-1";  // parent absent
  fs::remove_all(fs::path(dir).parent_path());
  std::vector<worker::CompiledCandidate> out = worker::compile_job(payload, dir, 2, /*write_artifacts=*/true);
  ASSERT_EQ(out.size(), payload.at("candidates").size());
  for (const worker::CompiledCandidate& c : out) {
    EXPECT_TRUE(c.result.ok()) << c.result.reason();
    EXPECT_GT(c.result.registers(), 0);
    EXPECT_TRUE(fs::exists(c.dir + "/kernel.cubin")) << c.dir;
    EXPECT_TRUE(fs::exists(c.dir + "/manifest.json")) << c.dir;
  }
  fs::remove_all(fs::path(dir).parent_path());
}

TEST(WorkerBuild, WholeKernelJobBuildsEveryConfiguration) {
  tuning::PreparedModel m = tuning::prepare_model(kModel, "tiny-bert", {}, Precision::kF16);
  const tuning::TuningSpace space = tuning::enumerate_space(*m.graph, m.options);
  // One context other than the default (the untuned default is configuration 0), no tuned
  // schedules: the server builds it with tuned_options.
  std::vector<tuning::ContextChoice> top(1);
  for (const tuning::Context& c : space.contexts)
    if (tuning::context_to_json(c) != tuning::context_to_json(tuning::Context{})) top[0].context = c;
  db::NewJob job = tuning::whole_kernel_job(tuning::whole_model_fragment(*m.graph, m.options), "s-test",
                                            "NVIDIA H100 80GB HBM3", top, m.label);
  const nlohmann::json payload = nlohmann::json::parse(job.payload);
  const std::string dir = fs::temp_directory_path() / "mono-worker-build-test2";
  fs::remove_all(dir);
  std::vector<worker::CompiledCandidate> out = worker::compile_job(payload, dir, 2, true);
  ASSERT_EQ(out.size(), 2u);  // the untuned default and the one context
  for (const worker::CompiledCandidate& c : out) {
    EXPECT_TRUE(c.result.ok()) << c.result.reason();
    EXPECT_TRUE(fs::exists(c.dir + "/kernel.cubin"));
  }
  // Named as the payload says, each configuration's compile is the one the server would make of
  // the model itself for that configuration's artifact: the same key.
  ASSERT_NE(tuning::context_to_json(top[0].context), tuning::context_to_json(tuning::Context{})) << "no other context";
  for (size_t i = 0; i < out.size(); ++i) {
    const tuning::Context ctx = i == 0 ? tuning::Context{} : top[0].context;
    const BuiltKernel server = build_kernel(*m.graph, tuning::tuned_options(m.options, ctx, {}), m.label, NvrtcOptions{},
                                            /*compile=*/false);
    EXPECT_EQ(out[i].kernel.key, compile_key(server.source, NvrtcOptions{})) << "configuration " << i;
    EXPECT_FALSE(out[i].kernel.cubin.empty());
  }
  EXPECT_NE(out[0].kernel.key, out[1].kernel.key);

  // The report carries the fastest timed configuration's compile; none when it is too large.
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].result.add_samples_us(i == 1 ? 40.0 : 50.0);
    out[i].result.set_median_us(i == 1 ? 40.0 : 50.0);
  }
  v1::ReportRequest report;
  worker::attach_kernel_image(out, &report, size_t{12} << 20);
  ASSERT_TRUE(report.has_kernel_image());
  EXPECT_EQ(report.kernel_image().candidate(), out[1].result.candidate());
  EXPECT_EQ(report.kernel_image().key(), out[1].kernel.key);
  EXPECT_EQ(report.kernel_image().cubin(), std::string(out[1].kernel.cubin.begin(), out[1].kernel.cubin.end()));
  v1::ReportRequest small;
  worker::attach_kernel_image(out, &small, 1024);
  EXPECT_FALSE(small.has_kernel_image());
  fs::remove_all(dir);
  (void)space;
}

}  // namespace
}  // namespace mono
