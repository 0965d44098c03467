#include "tuner_server/grpc_services.h"

#include "proto/transport.h"
#include "compiler/support/elapsed.h"
#include "compiler/support/error.h"
#include "compiler/tuning/merge.h"
#include "tuner_server/request_checks.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

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
  if (it == md.end() || !transport::same_secret(std::string_view(it->second.data(), it->second.size()), "Bearer " + token))
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
  metrics_->lease_latency(seconds_since(start));
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
  if (r.status().code() == absl::StatusCode::kInvalidArgument) metrics_->report_refused();
  return finish(r, reply);
}


grpc::Status TuningService::Submit(grpc::ServerContext* ctx, grpc::ServerReader<v1::SubmitRequest>* reader,
                                   v1::SubmitReply* reply) {
  if (auto s = check_token(ctx, token_); !s.ok()) return s;
  v1::SubmitRequest msg;
  if (!reader->Read(&msg) || !msg.has_header())
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "a submission starts with its header");
  const v1::SubmitHeader header = msg.header();
  if (auto s = check_submit_header(header); !s.ok())
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(s.message()));
  if (header.total_bytes() > limits_.max_total_bytes)
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "model too large: " + std::to_string(header.total_bytes()) + " bytes, the limit is " +
                            std::to_string(limits_.max_total_bytes));
  // Uploads in flight are bounded per client (its address, without the port) and in total.
  std::string client = ctx->peer();
  client = client.substr(0, client.rfind(':'));
  auto ticket = quota_.admit(client, data_dir_ + "/models");
  if (!ticket.ok()) return to_grpc(ticket.status());
  // A private staging folder per upload; the Upload removes it unless committed.
  static std::atomic<uint64_t> counter{0};
  const std::string staging = data_dir_ + "/staging/" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  Upload upload(staging, limits_, header.total_bytes());
  while (reader->Read(&msg)) {
    if (!msg.has_chunk()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "a second header in one submission");
    const v1::FileChunk& c = msg.chunk();
    if (auto s = upload.add_chunk(c.file_name(), c.offset(), c.data()); !s.ok()) return to_grpc(s);
  }
  if (ctx->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
  auto dir = upload.commit(data_dir_ + "/models");
  if (!dir.ok()) return to_grpc(dir.status());
  auto r = coordinator_->submit(header, *dir, upload.sha256());
  if (!r.ok()) {
    // A model stored by this upload and then refused goes again (a copy stored before stays:
    // another submission may use it).
    if (upload.stored_new()) {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
    }
    return to_grpc(r.status());
  }
  *reply = *r;
  return grpc::Status::OK;
}

grpc::Status TuningService::Watch(grpc::ServerContext* ctx, const v1::WatchRequest* req,
                                  grpc::ServerWriter<v1::Progress>* writer) {
  if (auto s = check_token(ctx, token_); !s.ok()) return s;
  std::string last;
  auto last_sent = std::chrono::steady_clock::now() - std::chrono::hours(1);
  while (!ctx->IsCancelled()) {
    auto p = coordinator_->progress(req->submission_id());
    if (!p.ok()) return to_grpc(p.status());
    // Send changes at once, and a keep-alive every few seconds.
    const std::string now = p->SerializeAsString();
    if (now != last || std::chrono::steady_clock::now() - last_sent > std::chrono::seconds(5)) {
      if (!writer->Write(*p)) return grpc::Status::OK;
      last = now;
      last_sent = std::chrono::steady_clock::now();
    }
    if (p->state() == v1::DONE || p->state() == v1::FAILED) return grpc::Status::OK;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // "done" reaches the client within 0.1 s
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled");
}

grpc::Status TuningService::FetchArtifact(grpc::ServerContext* ctx, const v1::FetchRequest* req,
                                          grpc::ServerWriter<v1::FileChunk>* writer) {
  if (auto s = check_token(ctx, token_); !s.ok()) return s;
  auto sub = store_->get_submission(req->submission_id());
  if (!sub.ok()) return to_grpc(sub.status());
  if (sub->state != db::SubmissionState::kDone || sub->artifact_dir.empty())
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "submission " + sub->id + " is " + db::to_string(sub->state) + ": no artifact yet");
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(sub->artifact_dir, ec); !ec && it != fs::end(it); it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path());
  if (ec) return grpc::Status(grpc::StatusCode::INTERNAL, "cannot read the artifact: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<char> buf(1 << 20);
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    v1::FileChunk c;
    c.set_file_name(fs::relative(f, sub->artifact_dir).generic_string());
    // At least one chunk per file, so that empty files arrive too.
    do {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      c.set_data(buf.data(), static_cast<size_t>(in.gcount()));
      if (!writer->Write(c)) return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
      c.set_offset(c.offset() + c.data().size());
    } while (in);
  }
  return grpc::Status::OK;
}

// JSON from a client, parsed with its nesting bounded (dumping or copying a value recurses).
static nlohmann::json parse_client_json(const std::string& text, const char* what) {
  constexpr int kMaxDepth = 64;
  return nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxDepth) user_error(what, " is nested deeper than ", kMaxDepth, " levels");
    return true;
  });
}

grpc::Status TuningService::TunedChoice(grpc::ServerContext* ctx, const v1::ChoiceRequest* req, v1::ChoiceReply* reply) {
  if (auto s = check_token(ctx, token_); !s.ok()) return s;
  // The request's size is bounded by the server's receive limit (server_main.cc, 16 MiB).
  try {
    const tuning::TuningSpace space = tuning::space_from_wire(parse_client_json(req->space_json(), "the tuning space"));
    auto fragment = [&] {
      nlohmann::json f = parse_client_json(req->fragment_json(), "the whole-model fragment");
      if (!f.is_object()) user_error("the whole-model fragment is not a JSON object");
      return f;
    };
    const tuning::ModelChoice m = tuning::model_choice(*store_, "the tuner server", req->gpu_kind(), space, fragment);
    reply->set_choice_json(tuning::model_choice_to_json(m).dump());
    return grpc::Status::OK;
  } catch (const nlohmann::json::exception& e) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string("not JSON: ") + e.what());
  } catch (const UserError& e) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, e.what());
  } catch (const std::exception& e) {  // never out of a gRPC handler: the server would abort
    return grpc::Status(grpc::StatusCode::INTERNAL, std::string("choosing the schedules failed: ") + e.what());
  }
}

}  // namespace mono::server
