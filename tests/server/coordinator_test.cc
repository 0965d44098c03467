// The coordinator never holds its lock across an artifact build (issue 22, finding 2): while
// one submission's build runs (here: a stand-in build that waits to be released), step(),
// progress() and a new submission all answer at once; SIGTERM's drain gives up on a build
// after its time limit instead of waiting for it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "../db/db_test_util.h"
#include "tuner_server/coordinator.h"

namespace mono::server {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = db::Store::Open(":memory:", &clock_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    db::WorkerCaps caps;
    caps.compile_only = true;
    auto w = store_->register_worker("cpu", caps);
    ASSERT_TRUE(w.ok()) << w.status();
    worker_ = *w;
  }
  // A checked-in tiny model stored as the server stores uploads; the folder.
  std::string upload(const std::string& name, const std::string& model = "tiny-resnet-opset17") {
    const std::string dir = dir_.file(name);
    fs::create_directories(dir);
    fs::copy_file(std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + model + "/model.onnx", dir + "/model.onnx");
    return dir;
  }
  // A dry-run submission of it.
  std::string submit(Coordinator& c, const std::string& name) {
    v1::SubmitHeader h;
    h.set_model_name(name);
    h.set_dry_run(true);
    auto r = c.submit(h, upload(name), name + "-sha");
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->submission_id() : "";
  }
  // A measuring worker with a "Test GPU"; its id ("" if it could not register).
  std::string register_gpu_worker() {
    db::WorkerCaps caps;
    caps.gpu_name = "Test GPU";
    caps.sm_arch = 90;
    auto w = store_->register_worker("gpu", caps);
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? *w : "";
  }
  // A candidate measured at `us`.
  static db::CandidateResult measured(int candidate, double us) {
    db::CandidateResult res;
    res.candidate = candidate;
    res.ok = true;
    res.samples_us = {us};
    res.median_us = us;
    return res;
  }
  // The GPU worker's report of a job's results.
  void report_measured(const std::string& gpu, const std::string& job, const std::vector<db::CandidateResult>& results) {
    db::Environment env;
    env.gpu_name = "Test GPU";
    EXPECT_TRUE(store_->report(gpu, job, results, env).ok());
  }
  // What a GPU worker would do with the queued measure jobs: every candidate measured at 10 us.
  // Returns the whole-kernel jobs it leased on the way, unreported.
  std::vector<db::JobRecord> measure_queued(const std::string& gpu) {
    std::vector<db::JobRecord> whole;
    auto jobs = store_->lease(gpu, 1000, 60'000);
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    if (!jobs.ok()) return whole;
    for (const db::JobRecord& j : *jobs) {
      if (j.kind == db::JobKind::kWholeKernel) {
        whole.push_back(j);
        continue;
      }
      std::vector<db::CandidateResult> results;
      const nlohmann::json payload = nlohmann::json::parse(j.payload);  // outlives the loop
      for (const nlohmann::json& cand : payload.at("candidates")) results.push_back(measured(cand.at("index").get<int>(), 10.0));
      report_measured(gpu, j.id, results);
    }
    return whole;
  }
  // A whole-kernel job's report: configuration `fastest` at 50 us, the others at 100.
  void time_whole_kernel(const std::string& gpu, const db::JobRecord& job, int fastest) {
    std::vector<db::CandidateResult> timed;
    const nlohmann::json payload = nlohmann::json::parse(job.payload);  // outlives the loop
    for (const nlohmann::json& cfg : payload.at("configs")) {
      const int index = cfg.at("index").get<int>();
      timed.push_back(measured(index, index == fastest ? 50.0 : 100.0));
    }
    report_measured(gpu, job.id, timed);
  }
  // What compile-only workers would do: every queued job leased and reported.
  void finish_jobs() {
    while (true) {
      auto jobs = store_->lease(worker_, 64, 60'000);
      ASSERT_TRUE(jobs.ok()) << jobs.status();
      if (jobs->empty()) return;
      for (const db::JobRecord& j : *jobs) ASSERT_TRUE(store_->report(worker_, j.id, {}, db::Environment{}).ok());
    }
  }
  db::testing::TempDir dir_;
  db::FakeClock clock_;
  std::unique_ptr<db::Store> store_;
  std::string worker_;
};

TEST_F(CoordinatorTest, ArtifactBuildsDoNotHoldTheLock) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> started{0};
  CoordinatorOptions o;
  o.data_dir = dir_.file("data");
  o.build = [&](const tuning::PreparedModel&, const tuning::ContextChoice&, const nlohmann::json&, const nlohmann::json&,
                const std::string& out) {
    fs::create_directories(out);
    ++started;
    released.wait();  // an NVRTC build of a large model
    return std::string("{}");
  };
  Coordinator c(store_.get(), &clock_, o);
  const std::string first = submit(c, "first");
  finish_jobs();
  auto stepped = std::async(std::launch::async, [&] { c.step(); });
  const bool step_returned = stepped.wait_for(seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(step_returned) << "step() waited for the build";
  for (int i = 0; i < 200 && started == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(started, 1) << "the build did not start";
  EXPECT_EQ(c.builds_in_flight(), 1);

  // Meanwhile everything else answers (each call on its own thread, so a blocked one fails the
  // test instead of hanging it).
  auto progress = std::async(std::launch::async, [&] { return c.progress(first); });
  ASSERT_EQ(progress.wait_for(seconds(10)), std::future_status::ready) << "progress() waited for the build";
  ASSERT_TRUE(progress.get().ok());
  auto second = std::async(std::launch::async, [&] { return submit(c, "second"); });
  ASSERT_EQ(second.wait_for(seconds(30)), std::future_status::ready) << "submit() waited for the build";
  const std::string second_id = second.get();
  EXPECT_FALSE(second_id.empty());
  // The second submission reuses every task: its build starts on the pool's other thread,
  // and the first one is not queued again.
  for (int k = 0; k < 3; ++k) {
    auto again = std::async(std::launch::async, [&] { c.step(); });
    ASSERT_EQ(again.wait_for(seconds(10)), std::future_status::ready);
  }
  for (int i = 0; i < 200 && started < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(started, 2);
  EXPECT_EQ(c.builds_in_flight(), 2);

  release.set_value();
  stepped.wait();
  for (int i = 0; i < 200 && c.builds_in_flight() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(c.builds_in_flight(), 0);
  auto done = store_->get_submission(first);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, db::SubmissionState::kDone) << done->error;
  EXPECT_EQ(started, 2);
}

TEST_F(CoordinatorTest, DrainGivesUpOnALongBuild) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  CoordinatorOptions o;
  o.data_dir = dir_.file("data");
  std::atomic<int> started{0};
  o.build = [&](const tuning::PreparedModel&, const tuning::ContextChoice&, const nlohmann::json&, const nlohmann::json&,
                const std::string& out) {
    fs::create_directories(out);
    ++started;
    released.wait();
    return std::string("{}");
  };
  Coordinator c(store_.get(), &clock_, o);
  const std::string id = submit(c, "m");
  finish_jobs();
  c.step();
  for (int i = 0; i < 200 && started == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(started, 1);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(c.drain(std::chrono::milliseconds(300)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, seconds(5));
  release.set_value();  // let the build end before the coordinator is destroyed
  EXPECT_TRUE(c.drain(seconds(30)));
  auto s = store_->get_submission(id);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->state, db::SubmissionState::kFailed) << s->error;
}

// A build that fails while the disk is (nearly) full leaves no .tmp folder and is tried again
// after a pause instead of failing the submission (issue 22, finding 9); any other failed
// build fails it.
TEST_F(CoordinatorTest, BuildOnAFullDiskIsRetriedNotFailed) {
  std::atomic<int> attempts{0};
  CoordinatorOptions o;
  o.data_dir = dir_.file("data");
  o.min_free_bytes = ~uint64_t{0};  // "full" whatever the disk holds
  o.retry_seconds = 30;
  o.build = [&](const tuning::PreparedModel&, const tuning::ContextChoice&, const nlohmann::json&, const nlohmann::json&,
                const std::string& out) {
    fs::create_directories(out);
    if (++attempts == 1) throw std::runtime_error("write: No space left on device");
    return std::string("{}");
  };
  Coordinator c(store_.get(), &clock_, o);
  const std::string id = submit(c, "m");
  finish_jobs();
  auto wait_builds = [&] {
    c.step();
    for (int i = 0; i < 200 && c.builds_in_flight() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  wait_builds();
  EXPECT_EQ(attempts, 1);
  auto s = store_->get_submission(id);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->state, db::SubmissionState::kFailed) << s->error;
  EXPECT_NE(s->state, db::SubmissionState::kDone);
  EXPECT_FALSE(fs::exists(o.data_dir + "/artifacts/" + id + ".tmp"));
  wait_builds();
  EXPECT_EQ(attempts, 1) << "tried again before the pause";
  clock_.advance(31'000);
  wait_builds();
  EXPECT_EQ(attempts, 2);
  s = store_->get_submission(id);
  EXPECT_EQ(s->state, db::SubmissionState::kDone) << s->error;
}

TEST_F(CoordinatorTest, OtherBuildFailuresFailTheSubmission) {
  CoordinatorOptions o;
  o.data_dir = dir_.file("data");
  o.min_free_bytes = 0;
  o.build = [](const tuning::PreparedModel&, const tuning::ContextChoice&, const nlohmann::json&, const nlohmann::json&,
               const std::string&) -> std::string { throw std::runtime_error("NVRTC said no"); };
  Coordinator c(store_.get(), &clock_, o);
  const std::string id = submit(c, "m");
  finish_jobs();
  c.step();
  for (int i = 0; i < 200 && c.builds_in_flight() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto s = store_->get_submission(id);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->state, db::SubmissionState::kFailed);
  EXPECT_NE(s->error.find("NVRTC said no"), std::string::npos) << s->error;
}

// A recorded submission wakes the coordinator's loop (wait_for_work returns true at once), so
// a resubmission whose jobs all exist is built without waiting for the next tick; with
// nothing recorded the wait runs its course and says so.
TEST_F(CoordinatorTest, ASubmissionWakesTheCoordinatorAtOnce) {
  CoordinatorOptions o;
  o.data_dir = dir_.file("data");
  Coordinator c(store_.get(), &clock_, o);
  EXPECT_FALSE(c.wait_for_work(std::chrono::milliseconds(1)));
  std::atomic<bool> woken{false};
  std::atomic<int64_t> waited_ms{0};
  std::thread waiter([&] {
    const auto t0 = std::chrono::steady_clock::now();
    woken = c.wait_for_work(std::chrono::seconds(60));
    waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  });
  const std::string id = submit(c, "wake");
  waiter.join();
  ASSERT_FALSE(id.empty());
  EXPECT_TRUE(woken);
  EXPECT_LT(waited_ms, 30000) << "the wait ran its course: the submission did not wake it";
}

// mono-submit --budget N: the submission's jobs carry N candidates in all (tiny-resnet fp16:
// 20 tasks) and the budget is stored with it (a restarted server plans from the
// record); a budget below the task count is refused with one line naming it, and nothing recorded.
TEST_F(CoordinatorTest, ABudgetCapsTheMeasurementsAndOneTooSmallIsRefused) {
  CoordinatorOptions o;
  o.data_dir = dir_.file("data");
  Coordinator c(store_.get(), &clock_, o);
  const std::string gpu = register_gpu_worker();
  ASSERT_FALSE(gpu.empty());
  v1::SubmitHeader h;
  h.set_model_name("small");
  h.set_max_measurements(19);
  auto refused = c.submit(h, upload("small"), "small-sha");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "--budget 19 is below this model's 20 tuning tasks: each task measures at least its default schedule");
  auto recorded = store_->list_submissions();
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_TRUE(recorded->empty()) << "a refused submission leaves no record";

  h.set_model_name("capped");
  h.set_max_measurements(30);
  auto r = c.submit(h, upload("capped"), "capped-sha");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(store_->get_submission(r->submission_id())->max_measurements, 30);
  auto jobs = store_->lease(gpu, 1000, 60'000);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  size_t candidates = 0;
  for (const db::JobRecord& j : *jobs) candidates += nlohmann::json::parse(j.payload).at("candidates").size();
  EXPECT_EQ(candidates, 30u);
}

// While the whole-kernel job times its configurations on a GPU, the server compiles each of them
// (CoordinatorOptions::prebuild), so the artifact's build after the job is a cubin-cache hit
// instead of a compile on the submission's critical path; the artifact is still built from the
// configuration the job found fastest.
TEST_F(CoordinatorTest, TheWholeKernelConfigurationsAreCompiledWhileTheJobTimesThem) {
  std::mutex mu;
  std::vector<nlohmann::json> prebuilt;  // the contexts compiled ahead
  std::vector<nlohmann::json> built;     // the artifact's
  CoordinatorOptions o;
  o.data_dir = dir_.file("data");
  o.prebuild = [&](const tuning::PreparedModel&, const tuning::ContextChoice& c) {
    std::lock_guard<std::mutex> lock(mu);
    prebuilt.push_back(tuning::context_to_json(c.context));
  };
  o.build = [&](const tuning::PreparedModel&, const tuning::ContextChoice& c, const nlohmann::json&,
                const nlohmann::json&, const std::string& out) {
    fs::create_directories(out);
    std::lock_guard<std::mutex> lock(mu);
    built.push_back(tuning::context_to_json(c.context));
    return std::string("{}");
  };
  Coordinator c(store_.get(), &clock_, o);
  const std::string gpu = register_gpu_worker();
  ASSERT_FALSE(gpu.empty());
  v1::SubmitHeader h;
  h.set_model_name("measured");
  h.set_max_measurements(20);  // the default schedule of each task: few jobs
  auto r = c.submit(h, upload("measured"), "measured-sha");
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string id = r->submission_id();
  EXPECT_TRUE(measure_queued(gpu).empty());
  c.step();  // the whole-kernel job is queued, and its configurations compiled ahead
  auto whole = store_->lease(gpu, 10, 60'000);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->size(), 1u);
  ASSERT_EQ(whole->front().kind, db::JobKind::kWholeKernel);
  const nlohmann::json configs = nlohmann::json::parse(whole->front().payload).at("configs");
  ASSERT_GE(configs.size(), 2u);
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (prebuilt.size() == configs.size()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(prebuilt.size(), configs.size());
    for (const nlohmann::json& cfg : configs)
      EXPECT_NE(std::find(prebuilt.begin(), prebuilt.end(), cfg.at("context")), prebuilt.end()) << cfg.dump();
    EXPECT_TRUE(built.empty()) << "the artifact was built before the job picked";
  }
  // The job finds the last configuration fastest: that one becomes the artifact.
  time_whole_kernel(gpu, whole->front(), configs.back().at("index").get<int>());
  c.step();
  for (int i = 0; i < 200 && c.builds_in_flight() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto done = store_->get_submission(id);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, db::SubmissionState::kDone) << done->error;
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(built.front(), configs.back().at("context"));
}

// Several models submitted together finish their measurements close together, and their
// whole-kernel jobs run side by side on the GPUs: their configurations are compiled ahead at
// the same time too (CoordinatorOptions::prebuild_threads), not one submission after another.
// An artifact's build whose compiles ahead still run waits for them instead of compiling the
// same kernel again.
TEST_F(CoordinatorTest, CompilesAheadOfSeveralSubmissionsRunAtOnceAndTheBuildWaitsForThem) {
  std::mutex mu;
  std::condition_variable cv;
  int running = 0, peak = 0;
  bool release = false;
  int built = 0;
  CoordinatorOptions o;
  o.data_dir = dir_.file("data");
  o.prebuild = [&](const tuning::PreparedModel&, const tuning::ContextChoice&) {
    std::unique_lock<std::mutex> lock(mu);
    peak = std::max(peak, ++running);
    cv.notify_all();
    cv.wait_for(lock, seconds(20), [&] { return release; });
    --running;
  };
  o.build = [&](const tuning::PreparedModel&, const tuning::ContextChoice&, const nlohmann::json&,
                const nlohmann::json&, const std::string& out) {
    fs::create_directories(out);
    std::lock_guard<std::mutex> lock(mu);
    ++built;
    return std::string("{}");
  };
  Coordinator c(store_.get(), &clock_, o);
  // Declared after `c`, so destroyed first: a failed assertion does not leave the compiles
  // blocked while the coordinator's destructor joins them.
  struct Release {
    std::mutex& mu;
    std::condition_variable& cv;
    bool& release;
    ~Release() {
      {
        std::lock_guard<std::mutex> lock(mu);
        release = true;
      }
      cv.notify_all();
    }
  } release_on_exit{mu, cv, release};
  const std::string gpu = register_gpu_worker();
  ASSERT_FALSE(gpu.empty());
  std::vector<std::string> ids;
  for (const char* model : {"tiny-resnet-opset17", "tiny-mobilenet-opset17"}) {
    v1::SubmitHeader h;
    h.set_model_name(model);
    auto r = c.submit(h, upload(model, model), std::string(model) + "-sha");
    ASSERT_TRUE(r.ok()) << r.status();
    ids.push_back(r->submission_id());
  }
  EXPECT_TRUE(measure_queued(gpu).empty());
  c.step();  // both whole-kernel jobs queued, and their configurations compiled ahead
  std::vector<db::JobRecord> whole = measure_queued(gpu);
  ASSERT_EQ(whole.size(), 2u);
  size_t configs = 0;
  for (const db::JobRecord& j : whole) configs += nlohmann::json::parse(j.payload).at("configs").size();
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, seconds(10), [&] { return peak == static_cast<int>(configs); });
    EXPECT_EQ(peak, static_cast<int>(configs)) << "the two submissions' configurations were not compiled at once";
  }
  // Both jobs report while the compiles still run: the builds wait for them, without taking a
  // thread of the build pool.
  for (const db::JobRecord& j : whole) time_whole_kernel(gpu, j, 0);
  c.wait_for_work(std::chrono::milliseconds(0));  // what the submissions left
  c.step();
  EXPECT_EQ(c.builds_in_flight(), 0) << "a build was queued while its configurations were compiled ahead";
  EXPECT_FALSE(c.wait_for_work(std::chrono::milliseconds(300)));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(built, 0) << "an artifact was built while its configurations were still being compiled ahead";
    release = true;
  }
  cv.notify_all();
  // The compiles' end wakes the server's loop, whose step builds the artifacts.
  EXPECT_TRUE(c.wait_for_work(std::chrono::seconds(10)));
  for (int i = 0; i < 250; ++i) {
    c.step();
    if (store_->get_submission(ids[0])->state == db::SubmissionState::kDone &&
        store_->get_submission(ids[1])->state == db::SubmissionState::kDone)
      break;
    c.wait_for_work(std::chrono::milliseconds(20));
  }
  for (const std::string& id : ids) {
    auto done = store_->get_submission(id);
    ASSERT_TRUE(done.ok());
    EXPECT_EQ(done->state, db::SubmissionState::kDone) << done->error;
  }
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(built, 2);
}

}  // namespace
}  // namespace mono::server
