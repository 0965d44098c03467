// The daemon's side of the GPU runner (gpu_worker/candidates.h: Runner, measure_job) without a
// GPU: a shell script stands in for `mono-worker --runner` and speaks its protocol, and each
// job folder's `mode` file tells it how to misbehave. What is checked: one runner serves job
// after job; a crash or a hang costs a fresh runner and the candidate a second try, then a
// failure of the right class; a launch failure ends the runner and the rest of the job runs
// in a fresh one; a runner that died between jobs is replaced without failing the next job.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "db/failure_class.h"
#include "gpu_worker/candidates.h"
#include "proto/failure_class.h"

namespace mono::worker {
namespace {

namespace fs = std::filesystem;

// Reads job folders on standard input; for each candidate index in run.json it writes the start
// line and a result (1 + index microseconds). Modes: ok; crash1 (candidate 1 kills the runner
// the first time); die1 (the runner dies between candidates 0 and 1, the first time); hang1
// (candidate 1 never finishes); launch0 (candidate 0 fails to launch, so the runner ends the job
// and exits).
const char kFakeRunner[] = R"(#!/bin/sh
while read d; do
  mode=$(cat "$d/mode")
  out="$d/results.jsonl"
  stays=true
  for i in $(grep -o '"index":[0-9]*' "$d/run.json" | cut -d: -f2); do
    if [ "$mode" = die1 ] && [ "$i" = 1 ] && [ ! -f "$d/died" ]; then touch "$d/died"; kill -9 $$; fi
    echo "{\"start\":$i}" >> "$out"
    if [ "$mode" = crash1 ] && [ "$i" = 1 ] && [ ! -f "$d/crashed" ]; then touch "$d/crashed"; kill -9 $$; fi
    if [ "$mode" = hang1 ] && [ "$i" = 1 ]; then sleep 60; fi
    if [ "$mode" = launch0 ] && [ "$i" = 0 ]; then
      echo "{\"candidate\":0,\"failure\":\"launch_error\",\"reason\":\"illegal address\"}" >> "$out"
      stays=false
      break
    fi
    echo "{\"candidate\":$i,\"samples_us\":[$((i + 1))],\"median_us\":$((i + 1)),\"spread\":0,\"load_s\":0.5}" >> "$out"
  done
  echo "{\"done\":true,\"stays\":$stays,\"fragment_s\":0.3,\"reference_s\":1.5}" >> "$out"
  [ $stays = true ] || exit 0
done
)";

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("mono-runner-test-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    script_ = (root_ / "fake-runner.sh").string();
    std::ofstream(script_) << kFakeRunner;
    chmod(script_.c_str(), 0755);
    MeasureOptions o;
    o.runner_exe = script_;
    o.candidate_timeout_s = 1;
    runner_ = std::make_unique<Runner>(o);
  }
  void TearDown() override {
    runner_.reset();
    fs::remove_all(root_);
  }

  // Runs a measure job of `n` compiled candidates in the given mode; returns their results.
  std::vector<v1::CandidateResult> job(const std::string& name, const std::string& mode, int n = 3) {
    const std::string dir = (root_ / name).string();
    fs::create_directories(dir);
    std::ofstream(dir + "/mode") << mode;
    std::vector<CompiledCandidate> cands(n);
    for (int i = 0; i < n; ++i) {
      cands[i].result.set_candidate(i);
      cands[i].result.set_ok(true);
      cands[i].dir = dir + "/c" + std::to_string(i);
    }
    const nlohmann::json payload = {{"kind", "measure"}, {"fragment", {{"precision", "fp16"}}}};
    times_ = measure_job(payload, &cands, dir, runner_.get());
    std::vector<v1::CandidateResult> out;
    for (const CompiledCandidate& c : cands) out.push_back(c.result);
    return out;
  }

  static void expect_measured(const v1::CandidateResult& r) {
    ASSERT_TRUE(r.ok()) << r.reason();
    EXPECT_DOUBLE_EQ(r.median_us(), r.candidate() + 1);
  }

  fs::path root_;
  std::string script_;
  std::string times_;  // measure_job's account of the runner's time, for the last job
  std::unique_ptr<Runner> runner_;
};

TEST_F(RunnerTest, OneRunnerServesJobAfterJob) {
  for (const char* name : {"j1", "j2", "j3"})
    for (const v1::CandidateResult& r : job(name, "ok")) expect_measured(r);
  EXPECT_EQ(runner_->starts(), 1);
  EXPECT_GT(runner_->pid(), 0);  // idle, waiting for the next job
  // The daemon's log says where the runner's time went: its preparation and each candidate's.
  EXPECT_EQ(times_, "runner: fragment 0.3 s, reference 1.5 s, load 1.5 s, check 0.0 s, timing 0.0 s");
}

TEST_F(RunnerTest, ACrashGetsTheCandidateASecondTryInAFreshRunner) {
  for (const v1::CandidateResult& r : job("j1", "crash1")) expect_measured(r);
  EXPECT_EQ(runner_->starts(), 2);
  for (const v1::CandidateResult& r : job("j2", "ok")) expect_measured(r);
  EXPECT_EQ(runner_->starts(), 2);  // the fresh runner stays
}

// Between two candidates no candidate is to blame: what was measured is kept, and the rest runs
// in a fresh runner (not a failure of the whole job).
TEST_F(RunnerTest, ARunnerThatDiesBetweenCandidatesLosesNothing) {
  for (const v1::CandidateResult& r : job("j1", "die1")) expect_measured(r);
  EXPECT_EQ(runner_->starts(), 2);
}

TEST_F(RunnerTest, AHangTwiceIsATimeoutAndTheRestIsMeasured) {
  const std::vector<v1::CandidateResult> rs = job("j1", "hang1");
  expect_measured(rs[0]);
  EXPECT_FALSE(rs[1].ok());
  EXPECT_EQ(failure_from_proto(rs[1].failure()), db::FailureClass::kTimeout);
  EXPECT_NE(rs[1].reason().find("twice"), std::string::npos) << rs[1].reason();
  expect_measured(rs[2]);
  // The first runner, the second try of candidate 1, and the one that measured candidate 2.
  EXPECT_EQ(runner_->starts(), 3);
}

TEST_F(RunnerTest, ALaunchFailureEndsTheRunnerAndTheRestRunsInAFreshOne) {
  const std::vector<v1::CandidateResult> rs = job("j1", "launch0");
  EXPECT_FALSE(rs[0].ok());
  EXPECT_EQ(failure_from_proto(rs[0].failure()), db::FailureClass::kLaunchError);
  EXPECT_EQ(rs[0].reason(), "illegal address");
  expect_measured(rs[1]);
  expect_measured(rs[2]);
  EXPECT_EQ(runner_->starts(), 2);
}

// A daemon started with its standard input closed: the runner's pipe then is fd 0 itself.
TEST_F(RunnerTest, TheRunnerGetsItsJobsWhenTheDaemonHasNoStandardInput) {
  const int saved = dup(0);
  ASSERT_GE(saved, 0);
  close(0);
  std::vector<v1::CandidateResult> rs;
  std::string error;
  try {
    rs = job("j1", "ok");
  } catch (const std::exception& e) {
    error = e.what();
  }
  dup2(saved, 0);  // before any assertion can end the test
  close(saved);
  ASSERT_EQ(error, "");
  for (const v1::CandidateResult& r : rs) expect_measured(r);
  EXPECT_EQ(runner_->starts(), 1);
}

TEST_F(RunnerTest, ARunnerThatDiedBetweenJobsIsReplaced) {
  for (const v1::CandidateResult& r : job("j1", "ok")) expect_measured(r);
  ASSERT_GT(runner_->pid(), 0);
  kill(runner_->pid(), SIGKILL);
  for (const v1::CandidateResult& r : job("j2", "ok")) expect_measured(r);
  EXPECT_EQ(runner_->starts(), 2);
}

}  // namespace
}  // namespace mono::worker
