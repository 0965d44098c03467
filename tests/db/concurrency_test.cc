// Many workers leasing at once never get the same job: one shared Store (its mutex) and one
// Store per thread on the same file (SQLite's BEGIN IMMEDIATE between connections).
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/store.h"
#include "tests/db/db_test_util.h"

namespace mono::db::testing {
namespace {

constexpr int kJobs = 200;
constexpr int kThreads = 4;

void add_jobs(Store& store) {
  int64_t task = store.add_task("sig", "NVIDIA H100 80GB HBM3", "ctx", "{}")->task_id;
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_TRUE(*store.add_job(job("job-" + std::to_string(i), task, JobKind::kCompile)));
  }
}

// Each thread leases in a loop (1..4 jobs at a time) until the queue is empty, reporting
// every other batch. Returns how often each job was leased.
std::map<std::string, int> lease_all(const std::vector<Store*>& stores,
                                     const std::vector<std::string>& workers) {
  std::mutex mu;
  std::map<std::string, int> leased;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Store& store = *stores[t];
      for (int round = 0;; ++round) {
        absl::StatusOr<std::vector<JobRecord>> got = store.lease(workers[t], 1 + round % 4, 60'000);
        if (!got.ok()) {
          ++errors;
          return;
        }
        if (got->empty()) return;
        for (const JobRecord& j : *got) {
          {
            std::lock_guard<std::mutex> lock(mu);
            ++leased[j.id];
          }
          if (round % 2 == 0) {
            absl::StatusOr<bool> ok = store.report(workers[t], j.id, {measured(0, 1.0)}, {});
            if (!ok.ok() || !*ok) ++errors;
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  return leased;
}

void expect_each_once(Store& store, const std::map<std::string, int>& leased) {
  EXPECT_EQ(leased.size(), static_cast<size_t>(kJobs));
  for (const auto& [id, n] : leased) EXPECT_EQ(n, 1) << id;
  int64_t total = 0;
  const std::vector<StateCount> counts = *store.counts_by_state();
  for (const StateCount& c : counts) {
    EXPECT_NE(c.state, JobState::kQueued);
    total += c.count;
  }
  EXPECT_EQ(total, kJobs);
  for (int i = 0; i < kJobs; i += 17) {
    JobRecord j = *store.get_job("job-" + std::to_string(i));
    EXPECT_EQ(j.attempts, 1);
    EXPECT_LE(store.job_results(j.id)->size(), 1u);
  }
}

TEST(Concurrency, SharedStoreLeasesEachJobOnce) {
  FakeClock clock;
  TempDir dir;
  auto store = open_or_die(dir.file("shared.db"), &clock);
  ASSERT_NE(store, nullptr);
  add_jobs(*store);
  std::vector<std::string> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.push_back(*store->register_worker("w" + std::to_string(t), compile_caps()));
  }
  std::vector<Store*> stores(kThreads, store.get());
  expect_each_once(*store, lease_all(stores, workers));
}

TEST(Concurrency, ConnectionPerThreadLeasesEachJobOnce) {
  FakeClock clock;
  TempDir dir;
  const std::string path = dir.file("many.db");
  std::vector<std::unique_ptr<Store>> owned;
  for (int t = 0; t < kThreads; ++t) {
    owned.push_back(open_or_die(path, &clock));
    ASSERT_NE(owned.back(), nullptr);
  }
  add_jobs(*owned[0]);
  std::vector<std::string> workers;
  std::vector<Store*> stores;
  for (int t = 0; t < kThreads; ++t) {
    workers.push_back(*owned[t]->register_worker("w" + std::to_string(t), compile_caps()));
    stores.push_back(owned[t].get());
  }
  expect_each_once(*owned[0], lease_all(stores, workers));
}

}  // namespace
}  // namespace mono::db::testing
