// The real mono-tuner-server process on loopback, driven through its gRPC contract: token
// authentication, register/lease/report, and a kill -9 and restart that loses nothing (the
// state lives in SQLite; a reconnecting worker carries on with the same id).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "db/clock.h"
#include "db/store.h"
#include "mono/v1/tuning.grpc.pb.h"

namespace mono {
namespace {

namespace fs = std::filesystem;

class ServerProcess {
 public:
  ServerProcess(const std::string& db, int port, int http_port, const std::string& token_file) {
    pid_ = fork();
    if (pid_ == 0) {
      std::string bin = std::string(MONO_BINARY_DIR) + "/tuner_server/mono-tuner-server";
      std::string listen = "127.0.0.1:" + std::to_string(port), http = "127.0.0.1:" + std::to_string(http_port);
      execl(bin.c_str(), bin.c_str(), "--db", db.c_str(), "--listen", listen.c_str(), "--http", http.c_str(),
            "--token-file", token_file.c_str(), "--lease-seconds", "3", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~ServerProcess() { kill(SIGKILL); }
  void kill(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    int status;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

std::unique_ptr<v1::Workers::Stub> connect(int port) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return v1::Workers::NewStub(channel);
}

void authorize(grpc::ClientContext* ctx, const std::string& token) {
  ctx->AddMetadata("authorization", "Bearer " + token);
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
}

TEST(Loopback, AuthRegisterLeaseReportAndSurviveKill9) {
  const fs::path dir = fs::temp_directory_path() / ("mono_loop_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string db = (dir / "mono.db").string(), token_file = (dir / "token").string();
  std::ofstream(token_file) << "s3cret\n";
  const int port = 52000 + ::getpid() % 1000, http = port + 1000;
  // Jobs to lease: added straight to the database before the server starts.
  {
    db::SystemClock clock;
    auto store = db::Store::Open(db, &clock);
    ASSERT_TRUE(store.ok()) << store.status();
    for (int i = 0; i < 3; ++i) {
      db::NewJob j;
      j.id = "job" + std::to_string(i);
      j.payload = "{}";
      ASSERT_TRUE((*store)->add_job(j).ok());
    }
  }
  std::string worker_id;
  {
    ServerProcess server(db, port, http, token_file);
    auto stub = connect(port);
    // Without the token: refused.
    {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::RegisterRequest req;
      req.set_worker_name("w");
      req.mutable_capabilities()->set_compile_only(true);
      v1::RegisterReply reply;
      EXPECT_EQ(stub->Register(&ctx, req, &reply).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    }
    grpc::ClientContext ctx;
    authorize(&ctx, "s3cret");
    v1::RegisterRequest req;
    req.set_worker_name("w");
    req.mutable_capabilities()->set_compile_only(true);
    v1::RegisterReply reply;
    ASSERT_TRUE(stub->Register(&ctx, req, &reply).ok());
    worker_id = reply.worker_id();
    EXPECT_EQ(reply.lease_seconds(), 3);

    grpc::ClientContext lctx;
    authorize(&lctx, "s3cret");
    v1::LeaseRequest lreq;
    lreq.set_worker_id(worker_id);
    lreq.set_max_jobs(1);
    v1::LeaseReply lreply;
    ASSERT_TRUE(stub->Lease(&lctx, lreq, &lreply).ok());
    ASSERT_EQ(lreply.jobs_size(), 1);

    grpc::ClientContext rctx;
    authorize(&rctx, "s3cret");
    v1::ReportRequest rreq;
    rreq.set_worker_id(worker_id);
    rreq.set_job_id(lreply.jobs(0).job_id());
    auto* c = rreq.add_results();
    c->set_candidate(0);
    c->set_ok(true);
    v1::ReportReply rreply;
    ASSERT_TRUE(stub->Report(&rctx, rreq, &rreply).ok());
    EXPECT_TRUE(rreply.accepted());

    // Lease a second job and let the server die without a word.
    grpc::ClientContext l2;
    authorize(&l2, "s3cret");
    ASSERT_TRUE(stub->Lease(&l2, lreq, &lreply).ok());
    ASSERT_EQ(lreply.jobs_size(), 1);
    server.kill(SIGKILL);
  }
  {
    // Restarted: the finished job stays done, the leased one expires back to the queue, and
    // the reconnecting worker gets its old id.
    ServerProcess server(db, port, http, token_file);
    auto stub = connect(port);
    grpc::ClientContext ctx;
    authorize(&ctx, "s3cret");
    v1::RegisterRequest req;
    req.set_worker_name("w");
    req.mutable_capabilities()->set_compile_only(true);
    v1::RegisterReply reply;
    ASSERT_TRUE(stub->Register(&ctx, req, &reply).ok());
    EXPECT_EQ(reply.worker_id(), worker_id);
    std::this_thread::sleep_for(std::chrono::milliseconds(4500));  // > the 3 s lease
    int leased = 0;
    for (int attempt = 0; attempt < 5 && leased < 2; ++attempt) {
      grpc::ClientContext lctx;
      authorize(&lctx, "s3cret");
      v1::LeaseRequest lreq;
      lreq.set_worker_id(worker_id);
      lreq.set_max_jobs(4);
      v1::LeaseReply lreply;
      ASSERT_TRUE(stub->Lease(&lctx, lreq, &lreply).ok());
      leased += lreply.jobs_size();
      for (const v1::Job& j : lreply.jobs()) EXPECT_NE(j.job_id(), "job0") << "a finished job came back";
      if (leased < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    }
    EXPECT_EQ(leased, 2) << "the expired job and the never-leased one";
    server.kill(SIGTERM);
  }
  db::SystemClock clock;
  auto store = db::Store::Open(db, &clock);
  ASSERT_TRUE(store.ok());
  auto results = (*store)->job_results("job0");
  ASSERT_TRUE(results.ok());
  EXPECT_EQ(results->size(), 1u) << "exactly one result, not lost, not doubled";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mono
