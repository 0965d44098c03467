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
#include <map>
#include <mutex>
#include <thread>

#include "../db/db_test_util.h"
#include "compiler/tuning/space.h"
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
                const std::string& out, const CompiledKernel*) {
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
                const std::string& out, const CompiledKernel*) {
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
                const std::string& out, const CompiledKernel*) {
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
               const std::string&, const CompiledKernel*) -> std::string { throw std::runtime_error("NVRTC said no"); };
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

// What an artifact's build got: the key of the kernel offered ("" none) and the context, beside
// the context of its whole-kernel job's winning configuration.
struct BuildSeen {
  std::string key;
  nlohmann::json context;
  nlohmann::json winner_context;  // the whole-kernel job's last configuration's
};

class OfferTest : public CoordinatorTest {
 protected:
  std::map<std::string, std::string> keys_ = {{"tiny-resnet-opset17", "00000000000000aa"},
                                              {"tiny-mobilenet-opset17", "00000000000000bb"}};
  // Two models tuned at once by a coordinator with options `o`, every candidate measured by a GPU
  // worker; in each whole-kernel job the last configuration wins, and the worker offers the
  // kernel of configuration offer(name, last) (-1: none) under keys_[name], in the order the jobs
  // were leased (appended to offer_order). Per model, what its artifact's build got.
  std::map<std::string, BuildSeen> tune_two(CoordinatorOptions o, const std::function<int(const std::string&, int)>& offer,
                                            std::vector<std::string>* offer_order, std::vector<std::string>* ids) {
    std::mutex mu;
    std::map<std::string, BuildSeen> seen;
    o.data_dir = dir_.file("data");
    o.build = [&](const tuning::PreparedModel& m, const tuning::ContextChoice& choice, const nlohmann::json&,
                  const nlohmann::json&, const std::string& out, const CompiledKernel* offered) {
      fs::create_directories(out);
      std::lock_guard<std::mutex> lock(mu);
      seen[m.label].key = offered ? offered->key : "";
      seen[m.label].context = tuning::context_to_json(choice.context);
      return std::string("{}");
    };
    Coordinator c(store_.get(), &clock_, o);
    const std::string gpu = register_gpu_worker();
    EXPECT_FALSE(gpu.empty());
    for (const char* model : {"tiny-resnet-opset17", "tiny-mobilenet-opset17"}) {
      v1::SubmitHeader h;
      h.set_model_name(model);
      auto r = c.submit(h, upload(model, model), std::string(model) + "-sha");
      EXPECT_TRUE(r.ok()) << r.status();
      if (r.ok()) ids->push_back(r->submission_id());
    }
    EXPECT_TRUE(measure_queued(gpu).empty());
    c.step();  // both whole-kernel jobs queued
    std::vector<db::JobRecord> whole = measure_queued(gpu);
    EXPECT_EQ(whole.size(), 2u);
    std::map<std::string, nlohmann::json> winners;
    for (const db::JobRecord& j : whole) {
      const nlohmann::json payload = nlohmann::json::parse(j.payload);
      const std::string name = payload.at("name").get<std::string>();  // the worker names its kernels so
      EXPECT_TRUE(keys_.count(name)) << name;
      const nlohmann::json& last = payload.at("configs").back();
      winners[name] = last.at("context");
      if (const int config = offer(name, last.at("index").get<int>()); config >= 0) {
        v1::KernelImage image;
        image.set_key(keys_[name]);
        image.set_cubin("cubin");
        image.set_candidate(config);
        c.offer_kernel(j.id, image);
        offer_order->push_back(name);
      }
      time_whole_kernel(gpu, j, last.at("index").get<int>());
    }
    for (int i = 0; i < 250; ++i) {
      c.step();
      bool done = true;
      for (const std::string& id : *ids) done = done && store_->get_submission(id)->state == db::SubmissionState::kDone;
      if (done) break;
      c.wait_for_work(std::chrono::milliseconds(20));
    }
    for (const std::string& id : *ids) EXPECT_EQ(store_->get_submission(id)->state, db::SubmissionState::kDone);
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [name, b] : seen) b.winner_context = winners[name];
    return seen;
  }
};

// The artifact is built from the worker's compile of the configuration the whole-kernel job
// chose (v1::KernelImage, offered with the job's report), so the server compiles nothing; a
// kernel offered for another configuration is not passed to the build, which then compiles.
TEST_F(OfferTest, TheArtifactIsBuiltFromTheKernelTheWorkerSentForTheChosenConfiguration) {
  std::vector<std::string> order, ids;
  // resnet: the winning configuration's kernel; mobilenet: the default's, which loses.
  auto seen = tune_two({}, [](const std::string& name, int last) { return name == "tiny-resnet-opset17" ? last : 0; },
                       &order, &ids);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen["tiny-resnet-opset17"].key, "00000000000000aa");
  EXPECT_EQ(seen["tiny-mobilenet-opset17"].key, "") << "a kernel of a configuration the job did not choose";
  for (const auto& [name, b] : seen) EXPECT_EQ(b.context, b.winner_context) << name << ": not the chosen configuration";
  // mono-compile --db finds the whole-kernel job the server made (the same id: the name is not
  // in it, and both count the same contexts), so the model is not pending there.
  const auto sub = store_->get_submission(ids.at(0));
  ASSERT_TRUE(sub.ok());
  const tuning::PreparedModel m = tuning::prepare_model(sub->model_dir + "/model.onnx", sub->model_name, {},
                                                        sub->precision == "fp32" ? Precision::kF32 : Precision::kF16);
  const tuning::ModelChoice mc =
      tuning::model_choice(*store_, "the test database", sub->gpu_kind, tuning::enumerate_space(*m.graph, m.options),
                           [&] { return tuning::whole_model_fragment(*m.graph, m.options); });
  EXPECT_FALSE(mc.pending) << "mono-compile --db did not find the server's whole-kernel job";
}

// Offers beyond CoordinatorOptions::max_offered_kernels are dropped, the oldest first: that
// model's build compiles for itself.
TEST_F(OfferTest, OffersBeyondTheBudgetAreDroppedOldestFirst) {
  CoordinatorOptions o;
  o.max_offered_kernels = 1;
  std::vector<std::string> order, ids;
  auto seen = tune_two(o, [](const std::string&, int last) { return last; }, &order, &ids);
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(seen[order[0]].key, "") << "the older offer was kept";
  EXPECT_EQ(seen[order[1]].key, keys_[order[1]]);
}

}  // namespace
}  // namespace mono::server
