// The dashboard's JSON API over a database filled by hand on a fake clock: the timeline
// replays results in order (a measurement replaces an estimate, the best context wins), the
// group table counts tries and failures, workers and baselines; and the HTTP side serves
// the API, /metrics, the page, and refuses unauthenticated or malformed POSTs.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../db/db_test_util.h"
#include "db/migrations.h"
#include "compiler/tuning/signature.h"
#include "tuner_server/dashboard.h"
#include "tuner_server/http_server.h"

namespace mono::server {
namespace {

using db::testing::measured;
using nlohmann::json;

// A task payload as plan_tuning writes it (without the fragment the dashboard ignores).
std::string payload(const std::string& context, double default_est, std::vector<double> est, int default_index,
                    int code_version = tuning::kSignatureVersion) {
  json cands = json::array();
  for (size_t i = 0; i < est.size(); ++i)
    cands.push_back({{"est_us", est[i]}, {"default", static_cast<int>(i) == default_index}});
  return json{{"task",
               {{"kind", "gemm"},
                {"description", "MatMul + Add -> f16[1,8]"},
                {"context", {{"threads", 256}}},
                {"default_est_us", default_est},
                {"signature_version", code_version},
                {"candidates", cands}}}}
      .dump();
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = db::testing::open_or_die(":memory:", &clock_);
    db::SubmissionRecord s;
    s.model_name = "m";
    s.model_sha256 = "abc";
    s.precision = "fp16";
    s.gpu_kind = "H100";
    sub_ = *store_->create_submission(s);
    // Context A: t1 (2 instances, default est 4 us), t2 (1 instance, est 10 us).
    // Context B: t3 (3 instances, est 10 us each): 30 us, worse than A's 18 us.
    std::vector<db::TaskPlan> plan(3);
    plan[0] = {"sig1", "H100", "A", payload("A", 4, {4, 3.5}, 0), 2, {db::testing::job("j1", 0, db::JobKind::kMeasure, "H100")}};
    plan[1] = {"sig2", "H100", "A", payload("A", 10, {10}, 0), 1, {db::testing::job("j2", 0, db::JobKind::kMeasure, "H100")}};
    // sig3 was planned by an older tuning code version: its results are stale.
    plan[2] = {"sig3", "H100", "B", payload("B", 10, {10}, 0, tuning::kSignatureVersion - 1), 3,
               {db::testing::job("j3", 0, db::JobKind::kMeasure, "H100")}};
    ASSERT_TRUE(store_->add_plan(sub_, plan).ok());
    worker_ = *store_->register_worker("gpu0", db::testing::gpu_caps("H100"));
  }

  void lease_and_report(const std::string& job, std::vector<db::CandidateResult> results) {
    auto leased = store_->lease(worker_, 1, 60'000);
    ASSERT_TRUE(leased.ok());
    ASSERT_EQ(leased->size(), 1u);
    ASSERT_EQ(leased->front().id, job);
    ASSERT_TRUE(*store_->report(worker_, job, results, {}));
  }

  db::FakeClock clock_{1'000'000};
  std::unique_ptr<db::Store> store_;
  std::string sub_, worker_;
};

TEST_F(DashboardTest, TimelineReplaysResultsInOrder) {
  Dashboard d(store_.get(), &clock_);
  clock_.advance(2000);
  // t1: the non-default candidate measures 2 us; nothing changes until the default is
  // measured too (3 us): then t1 counts 2/3 of its estimated share: 2*4*2/3 + 10 = 15.33.
  lease_and_report("j1", {measured(1, 2.0), measured(0, 3.0)});
  clock_.advance(1000);
  lease_and_report("j2", {db::testing::failed(0, db::FailureClass::kWrongAnswer, "off by 1")});
  lease_and_report("j3", {measured(0, 10.0)});

  auto t = d.submission(sub_, "timeline");
  ASSERT_TRUE(t.ok()) << t.status();
  const json* pts = &(*t)["points"];
  ASSERT_EQ(pts->size(), 5u);
  EXPECT_DOUBLE_EQ((*pts)[0]["best_us"], 18.0);
  EXPECT_DOUBLE_EQ((*pts)[1]["best_us"], 18.0);
  EXPECT_DOUBLE_EQ((*pts)[1]["t_s"], 2.0);
  EXPECT_NEAR((*pts)[2]["best_us"].get<double>(), 8.0 * 2 / 3 + 10, 1e-9);
  EXPECT_EQ((*pts)[2]["measured"], 2);
  EXPECT_NEAR((*pts)[3]["best_us"].get<double>(), 8.0 * 2 / 3 + 10, 1e-9);  // a failure changes nothing
  EXPECT_EQ((*pts)[3]["measured"], 3);
  EXPECT_DOUBLE_EQ((*pts)[3]["t_s"], 3.0);
  EXPECT_DOUBLE_EQ((*t)["default_estimate_us"], 18.0);
  EXPECT_FALSE((*t)["start_measured"]);

  // Once the whole-kernel default is measured (36 us), the curve starts there.
  db::NewJob w = db::testing::job("w1", 0, db::JobKind::kWholeKernel, "H100");
  w.submission_id = sub_;
  ASSERT_TRUE(*store_->add_job(w));
  lease_and_report("w1", {measured(0, 36.0), measured(1, 30.0)});
  t = d.submission(sub_, "timeline");
  ASSERT_TRUE(t.ok());
  pts = &(*t)["points"];
  ASSERT_EQ(pts->size(), 5u);  // whole-kernel timings are separate
  EXPECT_DOUBLE_EQ((*pts)[0]["best_us"], 36.0);
  EXPECT_NEAR((*pts)[4]["best_us"].get<double>(), 2 * (8.0 * 2 / 3 + 10), 1e-9);
  EXPECT_TRUE((*t)["start_measured"]);
  ASSERT_EQ((*t)["whole_kernel"].size(), 2u);
  EXPECT_DOUBLE_EQ((*t)["whole_kernel"][1]["median_us"], 30.0);

  auto g = d.submission(sub_, "groups");
  ASSERT_TRUE(g.ok());
  const json& groups = (*g)["groups"];
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0]["signature"], "sig1");
  EXPECT_EQ(groups[0]["instances"], 2);
  EXPECT_EQ(groups[0]["tried"], 2);
  EXPECT_DOUBLE_EQ(groups[0]["best_us"], 2.0);
  EXPECT_EQ(groups[0]["best_candidate"], 1);
  EXPECT_TRUE(groups[0]["best_measured"]);
  EXPECT_DOUBLE_EQ(groups[0]["default_us"], 3.0);
  EXPECT_TRUE(groups[0]["default_measured"]);
  EXPECT_EQ(groups[0]["state"], "done");
  EXPECT_FALSE(groups[0]["stale"]);
  EXPECT_EQ(groups[0]["code_version"], tuning::kSignatureVersion);
  EXPECT_TRUE(groups[2]["stale"]) << "planned by the previous tuning code version";
  EXPECT_EQ(groups[1]["failures"]["wrong_answer"], 1);
  EXPECT_TRUE(groups[1]["best_us"].is_null());
  EXPECT_FALSE(groups[1]["default_measured"]);
  EXPECT_EQ(groups[2]["state"], "done");
}

TEST_F(DashboardTest, SubmissionListWorkersAndOverview) {
  Dashboard d(store_.get(), &clock_, {/*worker_alive_ms=*/10'000});
  lease_and_report("j1", {measured(0, 3.0), db::testing::failed(1, db::FailureClass::kTimeout, "hang")});
  auto list = d.submissions();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["submissions"].size(), 1u);
  const json& s = (*list)["submissions"][0];
  EXPECT_EQ(s["id"], sub_);
  EXPECT_EQ(s["state"], "queued");
  EXPECT_EQ(s["progress"]["groups_total"], 3);
  EXPECT_EQ(s["progress"]["groups_done"], 1);
  EXPECT_EQ(s["progress"]["candidates_measured"], 2);

  auto w = d.workers();
  ASSERT_TRUE(w.ok());
  ASSERT_EQ((*w)["workers"].size(), 1u);
  const json& one = (*w)["workers"][0];
  EXPECT_EQ(one["name"], "gpu0");
  EXPECT_EQ(one["gpu"], "H100");
  EXPECT_EQ(one["jobs_done"], 1);
  EXPECT_EQ(one["candidates"], 2);
  EXPECT_EQ(one["failures"]["timeout"], 1);
  EXPECT_TRUE(one["alive"]);
  clock_.advance(20'000);
  EXPECT_FALSE((*d.workers())["workers"][0]["alive"]);

  auto o = d.overview();
  ASSERT_TRUE(o.ok());
  EXPECT_EQ((*o)["queue_depth"], 2);
  EXPECT_EQ((*o)["jobs"]["measure"]["done"], 1);
  EXPECT_EQ((*o)["workers_alive"], 0);

  auto full = d.submission(sub_);
  ASSERT_TRUE(full.ok());
  ASSERT_EQ((*full)["workers"].size(), 1u);
  EXPECT_EQ((*full)["workers"][0]["candidates_failed"], 1);
  EXPECT_TRUE((*full)["result"].is_null());
  EXPECT_EQ(d.submission("s-none").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(DashboardTest, BaselinesAreCheckedRecordedAndCompared) {
  Dashboard d(store_.get(), &clock_);
  EXPECT_EQ(d.record_baseline("not json").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.record_baseline(R"({"name": "eager"})").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.record_baseline(R"({"model_sha256": "abc", "name": "eager", "latency_us": -1})").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.record_baseline(R"({"submission_id": "s-none", "name": "eager", "latency_us": 5})").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.record_baseline(R"({"model_sha256": "abc", "name": 7, "latency_us": 5})").code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(d.record_baseline(R"({"submission_id": ")" + sub_ + R"(", "name": "torch.compile", "latency_us": 90})").ok());
  // The same key again replaces the value.
  ASSERT_TRUE(d.record_baseline(R"({"submission_id": ")" + sub_ + R"(", "name": "torch.compile", "latency_us": 80})").ok());
  json manifest = {{"tuning", {{"measured", true}, {"tuned_us", 40.0}, {"default_us", 50.0}, {"speedup", 1.25}}}};
  ASSERT_TRUE(store_->save_artifact(sub_, "/tmp/a", manifest.dump()).ok());
  auto full = d.submission(sub_);
  ASSERT_TRUE(full.ok());
  ASSERT_EQ((*full)["baselines"].size(), 1u);
  EXPECT_EQ((*full)["baselines"][0]["gpu_kind"], "H100");
  EXPECT_DOUBLE_EQ((*full)["baselines"][0]["latency_us"], 80.0);
  EXPECT_DOUBLE_EQ((*full)["baselines"][0]["speedup_of_artifact"], 2.0);
  EXPECT_DOUBLE_EQ((*full)["result"]["tuned_us"], 40.0);
  EXPECT_EQ((*full)["result"]["artifact_dir"], "/tmp/a");
}

// A database made before migration 2 gets the new column (old links count 1) and table.
TEST(DashboardMigration, OldDatabaseIsUpgraded) {
  db::testing::TempDir dir;
  const std::string path = dir.file("old.db");
  db::FakeClock clock;
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_TRUE(db::apply_migrations(raw, clock, {db::migrations().front()}).ok());
  ASSERT_EQ(sqlite3_exec(raw,
                         "INSERT INTO submissions(id, state, created_at, updated_at) VALUES ('s1', 'done', 1, 1);"
                         "INSERT INTO tasks(id, signature, gpu_kind, context, created_at) VALUES (7, 'x', 'k', 'c', 1);"
                         "INSERT INTO submission_tasks(submission_id, task_id) VALUES ('s1', 7);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto store = db::testing::open_or_die(path, &clock);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->schema_version(), db::latest_schema_version());
  auto links = store->submission_task_links("s1");
  ASSERT_TRUE(links.ok());
  ASSERT_EQ(links->size(), 1u);
  EXPECT_EQ((*links)[0], std::make_pair(int64_t{7}, 1));
  db::Baseline b{"sha", "k", "eager", 12.5, "test", 0};
  EXPECT_TRUE(store->record_baseline(b).ok());
  EXPECT_EQ(store->baselines("sha")->size(), 1u);
}

// ---- HTTP ----

// One request over a fresh connection; returns the whole response (status line, headers, body).
std::string http(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return "connect failed";
  }
  timeval limit{5, 0};  // a server that does not answer fails the test instead of hanging it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  (void)!write(fd, request.data(), request.size());
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

std::string get(int port, const std::string& path, const std::string& header = "") {
  return http(port, "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + header + "\r\n");
}
const char kBearer[] = "Authorization: Bearer s3cret\r\n";

std::string post(int port, const std::string& path, const std::string& body, const std::string& auth = "",
                 const std::string& type = "application/json") {
  return http(port, "POST " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: " + type + "\r\n" +
                        (auth.empty() ? "" : "Authorization: " + auth + "\r\n") +
                        "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
}

TEST_F(DashboardTest, HttpServesApiMetricsAndPage) {
  Dashboard d(store_.get(), &clock_);
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter().Name("mono_test_total").Help("a test counter").Register(*registry).Add({}).Increment(3);
  auto server = HttpServer::Start("127.0.0.1:0", &d, registry, "s3cret");
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);

  // With a token every path but /healthz and /login needs it.
  EXPECT_EQ(get(port, "/healthz").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(get(port, "/api/submissions").rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(get(port, "/metrics").rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(get(port, "/api/submissions", "Authorization: Bearer s3cre\r\n").rfind("HTTP/1.1 401", 0), 0u);
  std::string r = get(port, "/");
  EXPECT_EQ(r.rfind("HTTP/1.1 303", 0), 0u) << r;  // a browser is sent to the sign-in form
  EXPECT_NE(r.find("Location: /login"), std::string::npos);
  EXPECT_NE(get(port, "/login").find("<form method=\"post\" action=\"/login\">"), std::string::npos);
  r = post(port, "/login", "token=wrong", "", "application/x-www-form-urlencoded");
  EXPECT_EQ(r.rfind("HTTP/1.1 401", 0), 0u) << r;
  EXPECT_EQ(r.find("Set-Cookie"), std::string::npos);
  r = post(port, "/login", "token=s3cret", "", "application/x-www-form-urlencoded");
  EXPECT_EQ(r.rfind("HTTP/1.1 303", 0), 0u) << r;
  EXPECT_NE(r.find("Set-Cookie: mono_token=s3cret; Path=/; HttpOnly; SameSite=Strict"), std::string::npos) << r;
  EXPECT_EQ(get(port, "/", "Cookie: a=b; mono_token=s3cret\r\n").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(get(port, "/api/overview", "Cookie: mono_token=s3cretX\r\n").rfind("HTTP/1.1 401", 0), 0u);

  r = get(port, "/api/submissions", kBearer);
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_NE(r.find("application/json"), std::string::npos);
  EXPECT_NE(r.find(sub_), std::string::npos);
  EXPECT_EQ(get(port, "/api/submissions/s-none", kBearer).rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(get(port, "/api/nothing", kBearer).rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_NE(get(port, "/api/submissions/" + sub_ + "/groups", kBearer).find("sig3"), std::string::npos);
  r = get(port, "/metrics", kBearer);
  EXPECT_NE(r.find("mono_test_total 3"), std::string::npos) << r;
  r = get(port, "/", kBearer);
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_NE(r.find("text/html"), std::string::npos);
  EXPECT_NE(r.find("/app.js"), std::string::npos);
  EXPECT_EQ(get(port, "/app.js", kBearer).rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(get(port, "/no-such-file", kBearer).rfind("HTTP/1.1 404", 0), 0u);

  const std::string body = R"({"model_sha256": "abc", "name": "eager", "latency_us": 10})";
  EXPECT_EQ(post(port, "/api/baselines", body).rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(post(port, "/api/baselines", body, "Bearer wrong").rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(post(port, "/api/baselines", "{", "Bearer s3cret").rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(post(port, "/api/other", body, "Bearer s3cret").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_TRUE(store_->baselines("abc")->empty());  // nothing recorded by the refused requests
  r = post(port, "/api/baselines", body, "Bearer s3cret");
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_EQ(store_->baselines("abc")->size(), 1u);

  // A second server on the same port is refused with a clear error.
  auto again = HttpServer::Start("127.0.0.1:" + std::to_string(port), &d, registry, "");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("cannot listen on"), std::string::npos);
}

// Without a token the whole HTTP side is open (loopback or a trusted network only).
TEST_F(DashboardTest, HttpWithoutTokenIsOpen) {
  Dashboard d(store_.get(), &clock_);
  auto server = HttpServer::Start("127.0.0.1:0", &d, std::make_shared<prometheus::Registry>(), "");
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  EXPECT_EQ(get(port, "/api/submissions").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(get(port, "/").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(post(port, "/login", "token=x", "", "application/x-www-form-urlencoded").rfind("HTTP/1.1 401", 0), 0u);
}

// 100 clients that open a connection and send half a request (no token needed) must not keep
// the probes waiting: /healthz and /metrics answer within a second while they hang.
TEST_F(DashboardTest, SlowClientsDoNotStarveProbes) {
  Dashboard d(store_.get(), &clock_);
  auto server = HttpServer::Start("127.0.0.1:0", &d, std::make_shared<prometheus::Registry>(), "s3cret");
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  std::vector<int> slow;
  for (int i = 0; i < 100; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const char partial[] = "GET /api/overview HTTP/1.1\r\nHost: x\r\n";  // never finished
    (void)!write(fd, partial, sizeof partial - 1);
    slow.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // every slow request is being read
  for (const char* path : {"/healthz", "/metrics"}) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string r = get(port, path, kBearer);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << path << ": " << r;
    EXPECT_LT(s, 1.0) << path;
  }
  for (int fd : slow) close(fd);
}

}  // namespace
}  // namespace mono::server
