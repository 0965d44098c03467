// The service's final choice verifies what it ships (issue 18): the whole-kernel job compares
// every configuration with the CPU reference on the GPU; the chosen one carries a verification
// record into the artifact, and when every configuration gave wrong answers the submission is
// refused instead of shipping one.
#include <gtest/gtest.h>

#include <functional>

#include "compiler/driver/model.h"
#include "compiler/tuning/jobs.h"
#include "compiler/tuning/merge.h"
#include "compiler/tuning/space.h"
#include "tests/db/db_test_util.h"

namespace mono::tuning {
namespace {

constexpr char kGpu[] = "NVIDIA H100 80GB HBM3";

struct Fixture {
  db::testing::TempDir dir;
  db::FakeClock clock{1000};
  std::unique_ptr<db::Store> store = db::testing::open_or_die(dir.file("mono.db"), &clock);
  PreparedModel model = prepare_model(std::string(MONO_SOURCE_DIR) + "/tests/data/models/tiny-resnet-opset17/model.onnx",
                                      "tiny-resnet", {}, Precision::kF32);
  TuningSpace space = enumerate_space(*model.graph, model.options);
  nlohmann::json fragment = whole_model_fragment(*model.graph, model.options);

  FinalChoice choose() { return final_choice(*store, fragment, space, kGpu, /*dry_run=*/false, 2, ""); }

  // Queues the whole-kernel job, leases it to a GPU worker and reports `results` for it.
  void run_whole_kernel_job(const std::function<db::CandidateResult(int config)>& result) {
    const FinalChoice f = choose();
    ASSERT_TRUE(f.pending && f.job_missing);
    const auto added = store->add_job(f.job);
    ASSERT_TRUE(added.ok()) << added.status();
    auto worker = store->register_worker("w", db::testing::gpu_caps(kGpu));
    ASSERT_TRUE(worker.ok()) << worker.status();
    auto leased = store->lease(*worker, 1, 60000);
    ASSERT_TRUE(leased.ok() && leased->size() == 1u);
    const int configs = static_cast<int>(nlohmann::json::parse(f.job.payload).at("configs").size());
    std::vector<db::CandidateResult> results;
    for (int c = 0; c < configs; ++c) results.push_back(result(c));
    db::Environment env;
    env.gpu_name = kGpu;
    auto reported = store->report(*worker, f.job.id, results, env);
    ASSERT_TRUE(reported.ok() && *reported);
  }
};

db::CandidateResult wrong(int config) {
  db::CandidateResult r;
  r.candidate = config;
  r.failure = db::FailureClass::kWrongAnswer;
  r.reason = "output 'y' differs from the reference: relative error 0.7 (tolerance 0.0001)";
  return r;
}

TEST(FinalChoice, EveryWholeKernelWrongIsRefused) {
  Fixture fx;
  fx.run_whole_kernel_job(wrong);
  const FinalChoice f = fx.choose();
  EXPECT_FALSE(f.pending);
  EXPECT_NE(f.refused.find("gave wrong answers on NVIDIA H100"), std::string::npos) << f.refused;
  EXPECT_NE(f.refused.find("relative error 0.7"), std::string::npos) << f.refused;
}

TEST(FinalChoice, TheChosenWholeKernelCarriesItsVerification) {
  Fixture fx;
  fx.run_whole_kernel_job([](int config) {
    if (config != 0) return wrong(config);  // the tuned contexts fail; the default passes
    db::CandidateResult r;
    r.candidate = 0;
    r.ok = true;
    r.samples_us = {10.0, 10.5, 10.2};
    r.median_us = 10.2;
    return r;
  });
  const FinalChoice f = fx.choose();
  EXPECT_TRUE(f.refused.empty()) << f.refused;
  ASSERT_TRUE(f.verification.is_object());
  EXPECT_TRUE(f.verification.at("verified").get<bool>());
  EXPECT_TRUE(f.verification.at("ok").get<bool>());
  EXPECT_EQ(f.verification.at("gpu"), kGpu);
  EXPECT_TRUE(f.choice.schedules.empty()) << "the default, the only correct configuration";
}

TEST(FinalChoice, ADryRunIsRecordedAsNotVerified) {
  Fixture fx;
  const FinalChoice f = final_choice(*fx.store, nlohmann::json(), fx.space, dry_run_kind(), /*dry_run=*/true, 2, "s1");
  EXPECT_FALSE(f.verification.at("verified").get<bool>());
  EXPECT_NE(f.verification.at("reason").get<std::string>().find("dry run"), std::string::npos);
}

}  // namespace
}  // namespace mono::tuning
