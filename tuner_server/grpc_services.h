// gRPC plumbing: authentication, status conversion, metrics; the logic is in the handlers.
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

#include "mono/v1/tuning.grpc.pb.h"
#include "tuner_server/metrics.h"
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

}  // namespace mono::server
