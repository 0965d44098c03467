// gRPC plumbing: authentication, status conversion, metrics; the logic is in the handlers.
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

#include "mono/v1/tuning.grpc.pb.h"
#include "tuner_server/coordinator.h"
#include "tuner_server/metrics.h"
#include "tuner_server/model_inbox.h"
#include "tuner_server/worker_handler.h"

namespace mono::server {

// Checks the "authorization: Bearer TOKEN" metadata when a token is configured.
grpc::Status check_token(const grpc::ServerContext* ctx, const std::string& token);
grpc::Status to_grpc(const absl::Status& s);

class WorkersService final : public v1::Workers::Service {
 public:
  WorkersService(WorkerHandler* handler, ServerMetrics* metrics, std::string token)
      : handler_(handler), metrics_(metrics), token_(std::move(token)) {}

  grpc::Status Register(grpc::ServerContext* ctx, const v1::RegisterRequest* req, v1::RegisterReply* reply) override;
  grpc::Status Lease(grpc::ServerContext* ctx, const v1::LeaseRequest* req, v1::LeaseReply* reply) override;
  grpc::Status Renew(grpc::ServerContext* ctx, const v1::RenewRequest* req, v1::RenewReply* reply) override;
  grpc::Status Report(grpc::ServerContext* ctx, const v1::ReportRequest* req, v1::ReportReply* reply) override;

 private:
  WorkerHandler* handler_;
  ServerMetrics* metrics_;
  std::string token_;
};

// Clients: submit a model (streamed), watch its progress, fetch its artifact.
class TuningService final : public v1::Tuning::Service {
 public:
  TuningService(Coordinator* coordinator, db::Store* store, std::string data_dir, InboxLimits limits, std::string token,
                UploadQuota::Limits quota = {})
      : coordinator_(coordinator),
        store_(store),
        data_dir_(std::move(data_dir)),
        limits_(limits),
        token_(std::move(token)),
        quota_(quota) {}

  grpc::Status Submit(grpc::ServerContext* ctx, grpc::ServerReader<v1::SubmitRequest>* reader,
                      v1::SubmitReply* reply) override;
  grpc::Status Watch(grpc::ServerContext* ctx, const v1::WatchRequest* req,
                     grpc::ServerWriter<v1::Progress>* writer) override;
  grpc::Status FetchArtifact(grpc::ServerContext* ctx, const v1::FetchRequest* req,
                             grpc::ServerWriter<v1::FileChunk>* writer) override;
  grpc::Status TunedChoice(grpc::ServerContext* ctx, const v1::ChoiceRequest* req, v1::ChoiceReply* reply) override;

 private:
  Coordinator* coordinator_;
  db::Store* store_;
  std::string data_dir_;
  InboxLimits limits_;
  std::string token_;
  UploadQuota quota_;
};

}  // namespace mono::server
