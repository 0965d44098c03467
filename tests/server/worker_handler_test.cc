// The Workers service logic against a real (in-memory) store and a fake clock.
#include "tuner_server/worker_handler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

#include "db/clock.h"
#include "proto/failure_class.h"
#include "tuner_server/request_checks.h"

namespace mono::server {
namespace {

class WorkerHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = db::Store::Open(":memory:", &clock_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    handler_ = std::make_unique<WorkerHandler>(store_.get(), WorkerHandlerOptions{30, 10, 4, 1000});
  }
  std::string register_worker(const std::string& name, bool compile_only) {
    v1::RegisterRequest r;
    r.set_worker_name(name);
    r.mutable_capabilities()->set_compile_only(compile_only);
    if (!compile_only) r.mutable_capabilities()->set_gpu_name("NVIDIA H100 80GB HBM3");
    auto reply = handler_->Register(r);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? reply->worker_id() : "";
  }
  void add_job(const std::string& id, const std::string& payload = "{}",
                       db::JobKind kind = db::JobKind::kCompile) {
    db::NewJob j;
    j.id = id;
    j.kind = kind;
    j.payload = payload;
    auto created = store_->add_job(j);
    ASSERT_TRUE(created.ok()) << created.status();
  }
  absl::StatusOr<v1::LeaseReply> lease(const std::string& worker) {
    v1::LeaseRequest lr;
    lr.set_worker_id(worker);
    return handler_->Lease(lr);
  }
  // A report of `worker` on `job`, results to be added.
  static v1::ReportRequest report_of(const std::string& worker, const std::string& job) {
    v1::ReportRequest rep;
    rep.set_worker_id(worker);
    rep.set_job_id(job);
    return rep;
  }
  db::FakeClock clock_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<WorkerHandler> handler_;
};

TEST_F(WorkerHandlerTest, RegisterValidatesAndReconnectingWorkersKeepTheirId) {
  v1::RegisterRequest bad;
  EXPECT_EQ(handler_->Register(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad.set_worker_name("gpu-box");  // not compile-only, but no GPU named
  EXPECT_EQ(handler_->Register(bad).status().code(), absl::StatusCode::kInvalidArgument);
  std::string a = register_worker("w1", true);
  EXPECT_EQ(register_worker("w1", true), a);
  EXPECT_NE(register_worker("w2", false), a);
}

TEST_F(WorkerHandlerTest, LeaseRenewReportAndDuplicateReport) {
  std::string w = register_worker("w1", true);
  for (int i = 0; i < 6; ++i) add_job("job" + std::to_string(i));
  v1::LeaseRequest lr;
  lr.set_worker_id(w);
  lr.set_max_jobs(100);  // capped by the server
  auto leased = handler_->Lease(lr);
  ASSERT_TRUE(leased.ok()) << leased.status();
  ASSERT_EQ(leased->jobs_size(), 4);
  EXPECT_EQ(leased->lease_seconds(), 30);
  EXPECT_EQ(leased->jobs(0).kind(), v1::COMPILE);

  v1::RenewRequest rr;
  rr.set_worker_id(w);
  rr.add_job_ids(leased->jobs(0).job_id());
  rr.add_job_ids("no-such-job");
  auto renewed = handler_->Renew(rr);
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(renewed->renewed_size(), 1);
  EXPECT_EQ(renewed->lost_size(), 1);

  v1::ReportRequest rep;
  rep.set_worker_id(w);
  rep.set_job_id(leased->jobs(0).job_id());
  auto* c = rep.add_results();
  c->set_candidate(0);
  c->set_ok(true);
  c->set_registers(96);
  auto* f = rep.add_results();
  f->set_candidate(1);
  f->set_failure(v1::COMPILE_ERROR);
  f->set_reason("too many resources");
  auto first = handler_->Report(rep);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->accepted());
  auto again = handler_->Report(rep);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->accepted()) << "a duplicate report changes nothing";
  auto rows = store_->job_results(leased->jobs(0).job_id());
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 2u);
}

TEST_F(WorkerHandlerTest, RejectsUnknownWorkersAndContradictoryResults) {
  v1::LeaseRequest lr;
  lr.set_worker_id("nobody");
  EXPECT_EQ(handler_->Lease(lr).status().code(), absl::StatusCode::kNotFound);
  std::string w = register_worker("w1", true);
  add_job("j");
  lr.set_worker_id(w);
  auto leased = handler_->Lease(lr);
  ASSERT_TRUE(leased.ok());
  v1::ReportRequest rep = report_of(w, "j");
  auto* c = rep.add_results();
  c->set_ok(true);
  c->set_failure(v1::TIMEOUT);
  EXPECT_EQ(handler_->Report(rep).status().code(), absl::StatusCode::kInvalidArgument);
  c->set_ok(false);
  c->set_failure(v1::WORKER_LOST);
  EXPECT_EQ(handler_->Report(rep).status().code(), absl::StatusCode::kInvalidArgument);
}

// Issue 22, finding 3: negative or non-finite timings, indices the job does not have, repeated
// candidates and oversized strings are refused before anything is stored.
TEST_F(WorkerHandlerTest, ReportsAreCheckedAgainstTheirJob) {
  std::string w = register_worker("w1", true);
  add_job("j", R"({"kind":"measure","candidates":[{"index":0},{"index":1}]})");
  ASSERT_TRUE(lease(w).ok());
  auto report = [&](const std::function<void(v1::ReportRequest*)>& spoil) {
    v1::ReportRequest rep = report_of(w, "j");
    auto* c = rep.add_results();
    c->set_candidate(0);
    c->set_ok(true);
    c->add_samples_us(12.5);
    c->add_samples_us(12.7);
    c->set_median_us(12.6);
    c->set_spread(0.016);
    spoil(&rep);
    return handler_->Report(rep);
  };
  const double kNaN = std::nan(""), kInf = INFINITY;
  struct Bad {
    const char* what;
    std::function<void(v1::ReportRequest*)> spoil;
  };
  const std::vector<Bad> bad = {
      {"not one of", [](v1::ReportRequest* r) { r->mutable_results(0)->set_candidate(7); }},
      {"not one of", [](v1::ReportRequest* r) { r->mutable_results(0)->set_candidate(-1); }},
      {"twice", [](v1::ReportRequest* r) { *r->add_results() = r->results(0); }},
      {"not a time", [](v1::ReportRequest* r) { r->mutable_results(0)->set_samples_us(0, -1002); }},
      {"not a time", [=](v1::ReportRequest* r) { r->mutable_results(0)->set_samples_us(1, kNaN); }},
      {"not a time", [=](v1::ReportRequest* r) { r->mutable_results(0)->set_median_us(kInf); }},
      {"not a time", [](v1::ReportRequest* r) { r->mutable_results(0)->set_median_us(0); }},
      {"spread", [=](v1::ReportRequest* r) { r->mutable_results(0)->set_spread(kNaN); }},
      {"registers", [](v1::ReportRequest* r) { r->mutable_results(0)->set_registers(100000); }},
      {"samples", [](v1::ReportRequest* r) {
         for (int i = 0; i < 2000; ++i) r->mutable_results(0)->add_samples_us(1);
       }},
      {"environment string", [](v1::ReportRequest* r) { r->mutable_environment()->set_driver_version(std::string(4096, 'x')); }},
      {"only whole-kernel jobs", [](v1::ReportRequest* r) {
         r->mutable_kernel_image()->set_key("0123456789abcdef");
         r->mutable_kernel_image()->set_cubin("cubin");
       }},
  };
  for (const Bad& b : bad) {
    auto r = report(b.spoil);
    ASSERT_FALSE(r.ok()) << b.what;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(r.status().message()).find(b.what), std::string::npos) << r.status();
  }
  auto rows = store_->job_results("j");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 0u) << "nothing of a refused report is stored";
  auto good = report([](v1::ReportRequest*) {});
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->accepted());
}

// A whole-kernel job's report may carry the compile of a configuration it timed (KernelImage):
// the handler hands it on (to the coordinator) before storing the report; an image of an
// untimed configuration, without a cubin or with a malformed key is refused with the report.
TEST_F(WorkerHandlerTest, AWholeKernelReportsKernelImageIsHandedOn) {
  std::vector<std::pair<std::string, std::string>> handed;  // job id, key
  WorkerHandlerOptions o{30, 10, 4, 1000};
  o.on_kernel_image = [&](const std::string& job, const v1::KernelImage& k) { handed.emplace_back(job, k.key()); };
  handler_ = std::make_unique<WorkerHandler>(store_.get(), o);
  std::string w = register_worker("gpu", false);
  add_job("w1", R"({"kind":"whole_kernel","configs":[{"index":0},{"index":1}]})", db::JobKind::kWholeKernel);
  ASSERT_TRUE(lease(w).ok());
  auto report = [&](const std::function<void(v1::KernelImage*)>& image) {
    v1::ReportRequest rep = report_of(w, "w1");
    for (int i = 0; i < 2; ++i) {
      auto* c = rep.add_results();
      c->set_candidate(i);
      c->set_ok(i == 1);
      if (i == 1) {
        c->add_samples_us(400.0);
        c->set_median_us(400.0);
      } else {
        c->set_failure(v1::COMPILE_ERROR);
      }
    }
    v1::KernelImage* k = rep.mutable_kernel_image();
    k->set_candidate(1);
    k->set_key("00112233445566ff");
    k->set_cubin("cubin bytes");
    image(k);
    return handler_->Report(rep);
  };
  for (const auto& [what, spoil] : std::vector<std::pair<std::string, std::function<void(v1::KernelImage*)>>>{
           {"does not time", [](v1::KernelImage* k) { k->set_candidate(0); }},
           {"no cubin", [](v1::KernelImage* k) { k->clear_cubin(); }},
           {"at most", [](v1::KernelImage* k) { k->set_cubin(std::string((size_t{12} << 20) + 1, 'c')); }},
           {"16 lowercase hex digits", [](v1::KernelImage* k) { k->set_key("00112233445566FF"); }},
           {"16 lowercase hex digits", [](v1::KernelImage* k) { k->set_key("../../etc/passwd"); }}}) {
    auto r = report(spoil);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_NE(std::string(r.status().message()).find(what), std::string::npos) << r.status();
  }
  EXPECT_TRUE(handed.empty());
  // A worker that does not hold the job's lease: its report is not stored, its image not taken.
  const std::string holder = w;
  w = register_worker("other", false);
  auto stale = report([](v1::KernelImage*) {});
  EXPECT_TRUE(!stale.ok() || !stale->accepted());
  EXPECT_TRUE(handed.empty());
  w = holder;
  auto good = report([](v1::KernelImage*) {});
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->accepted());
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(handed[0].first, "w1");
  EXPECT_EQ(handed[0].second, "00112233445566ff");
  // Once the job is done, a repeated report (late, duplicate) hands nothing on.
  auto again = report([](v1::KernelImage*) {});
  EXPECT_TRUE(!again.ok() || !again->accepted());
  EXPECT_EQ(handed.size(), 1u);
  // Nor does a report for a job the server does not have.
  v1::ReportRequest unknown;
  unknown.set_worker_id(w);
  unknown.set_job_id("no-such-job");
  unknown.mutable_kernel_image()->set_key("00112233445566ff");
  unknown.mutable_kernel_image()->set_cubin("cubin bytes");
  auto unknown_reply = handler_->Report(unknown);
  EXPECT_TRUE(!unknown_reply.ok() || !unknown_reply->accepted());
  EXPECT_EQ(handed.size(), 1u);
}

// A worker whose reports are refused three times in a row gets no more work and its reports
// are refused (it would poison every model that reuses its results); a good report in between
// resets the count, and other workers carry on.
TEST_F(WorkerHandlerTest, RepeatedlyRefusedWorkerIsQuarantined) {
  handler_ = std::make_unique<WorkerHandler>(store_.get(), WorkerHandlerOptions{30, 10, 4, 3});
  const std::string bad = register_worker("bad", true), good = register_worker("good", true);
  add_job("j1", R"({"kind":"measure","candidates":[{"index":0}]})");
  add_job("j2", R"({"kind":"measure","candidates":[{"index":0}]})");
  ASSERT_TRUE(lease(bad).ok());
  auto report = [&](const std::string& job, double us) {
    v1::ReportRequest rep = report_of(bad, job);
    auto* c = rep.add_results();
    c->set_candidate(0);
    c->set_ok(true);
    c->add_samples_us(us);
    c->set_median_us(us);
    return handler_->Report(rep);
  };
  EXPECT_EQ(report("j1", -5).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(report("j1", -5).status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(report("j1", 10).ok());  // a good one resets the count
  EXPECT_FALSE(handler_->quarantined(bad));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(report("j2", -5).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(handler_->quarantined(bad));
  auto r = report("j2", 10);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(std::string(r.status().message()).find("is quarantined"), std::string::npos) << r.status();
  EXPECT_EQ(lease(bad).status().code(), absl::StatusCode::kPermissionDenied);
  auto leased = lease(good);
  ASSERT_TRUE(leased.ok()) << leased.status();
  EXPECT_FALSE(handler_->quarantined(good));
}

// Issue 22, finding 9: a submission's names are bounded and free of control bytes.
TEST(SubmitHeader, NamesAreBoundedAndPrintable) {
  v1::SubmitHeader h;
  h.set_model_name("bert-base");
  auto* b = h.add_shapes();
  b->set_input("input_ids");
  b->add_dims(1);
  b->add_dims(128);
  EXPECT_TRUE(check_submit_header(h).ok());
  v1::SubmitHeader bad = h;
  bad.set_model_name(std::string(201, 'x'));
  EXPECT_NE(check_submit_header(bad).message().find("model_name must be 1 to 200"), std::string::npos);
  bad.set_model_name(std::string("bert\0base", 9));
  EXPECT_NE(check_submit_header(bad).message().find("control byte (0)"), std::string::npos);
  bad = h;
  bad.set_gpu_kind("H100\n");
  EXPECT_NE(check_submit_header(bad).message().find("gpu_kind"), std::string::npos);
  bad = h;
  bad.mutable_shapes(0)->set_dims(0, 0);
  EXPECT_NE(check_submit_header(bad).message().find("not >= 1"), std::string::npos);
  bad = h;
  bad.mutable_shapes(0)->set_input("");
  EXPECT_EQ(check_submit_header(bad).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(WorkerHandlerTest, WorkerFailureRequeuesForAnotherWorker) {
  std::string a = register_worker("a", true);
  std::string b = register_worker("b", true);
  add_job("j");
  v1::LeaseRequest lr;
  lr.set_worker_id(a);
  auto la = handler_->Lease(lr);
  ASSERT_TRUE(la.ok());
  ASSERT_EQ(la->jobs_size(), 1);
  v1::ReportRequest fail;
  fail.set_worker_id(a);
  fail.set_job_id("j");
  fail.set_worker_failure(true);
  fail.set_worker_failure_reason("GPU fell off the bus");
  auto r = handler_->Report(fail);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->accepted());
  lr.set_worker_id(b);
  auto lb = handler_->Lease(lr);
  ASSERT_TRUE(lb.ok());
  ASSERT_EQ(lb->jobs_size(), 1);
  EXPECT_EQ(lb->jobs(0).job_id(), "j");
  EXPECT_EQ(lb->jobs(0).attempt(), 2);
}

// One list of failure classes (db/failure_class.h): each maps to the contract's enum value of
// the same name and back.
TEST(FailureClasses, MapOneToOneOntoTheContract) {
  for (const char* name : db::kFailureClasses) {
    db::FailureClass f = db::FailureClass::kWorkerLost;
    ASSERT_TRUE(db::parse(name, &f)) << name;
    EXPECT_STREQ(db::to_string(f), name);
    const v1::FailureClass p = failure_to_proto(f);
    EXPECT_EQ(failure_from_proto(p), f) << name;
    std::string proto_name = v1::FailureClass_Name(p);
    std::transform(proto_name.begin(), proto_name.end(), proto_name.begin(), [](unsigned char c) { return std::tolower(c); });
    EXPECT_EQ(proto_name, f == db::FailureClass::kNone ? "failure_class_unspecified" : name);
  }
  EXPECT_EQ(failure_from_proto(static_cast<v1::FailureClass>(99)), db::FailureClass::kNone);
}

}  // namespace
}  // namespace mono::server
