#include "tuner_server/grpc_services.h"

#include <chrono>

namespace mono::server {

grpc::Status to_grpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  // absl and gRPC share the canonical code numbers.
  return grpc::Status(static_cast<grpc::StatusCode>(static_cast<int>(s.code())), std::string(s.message()));
}

grpc::Status check_token(const grpc::ServerContext* ctx, const std::string& token) {
  if (token.empty()) return grpc::Status::OK;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end() || std::string(it->second.data(), it->second.size()) != "Bearer " + token)
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing or wrong token");
  return grpc::Status::OK;
}

template <typename Reply>
static grpc::Status finish(const absl::StatusOr<Reply>& r, Reply* out) {
  if (!r.ok()) return to_grpc(r.status());
  *out = *r;
  return grpc::Status::OK;
}

grpc::Status WorkersService::Register(grpc::ServerContext* ctx, const v1::RegisterRequest* req, v1::RegisterReply* reply) {
  if (auto s = check_token(ctx, token_); !s.ok()) return s;
  return finish(handler_->Register(*req), reply);
}

grpc::Status WorkersService::Lease(grpc::ServerContext* ctx, const v1::LeaseRequest* req, v1::LeaseReply* reply) {
  if (auto s = check_token(ctx, token_); !s.ok()) return s;
  auto start = std::chrono::steady_clock::now();
  auto r = handler_->Lease(*req);
  metrics_->lease_latency(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (r.ok()) metrics_->lease_granted(r->jobs_size());
  return finish(r, reply);
}

grpc::Status WorkersService::Renew(grpc::ServerContext* ctx, const v1::RenewRequest* req, v1::RenewReply* reply) {
  if (auto s = check_token(ctx, token_); !s.ok()) return s;
  return finish(handler_->Renew(*req), reply);
}

grpc::Status WorkersService::Report(grpc::ServerContext* ctx, const v1::ReportRequest* req, v1::ReportReply* reply) {
  if (auto s = check_token(ctx, token_); !s.ok()) return s;
  auto r = handler_->Report(*req);
  if (r.ok()) metrics_->report(r->accepted());
  return finish(r, reply);
}

}  // namespace mono::server
