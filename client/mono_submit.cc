// mono-submit MODEL.onnx --server ADDR [--shape NAME=DIMS]... [--dtype fp16|fp32] [--gpu-kind NAME]
//             [--dry-run | --budget N] [--wait] [--out DIR] [--token-file FILE] [--name NAME]
//             [--tls-ca FILE [--tls-cert FILE --tls-key FILE]]
// Submits a model for tuning: uploads model.onnx and its external-data files in chunks, then
// (with --wait or --out) shows progress until the server has built the artifact, and writes
// it to DIR.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "client/cli.h"
#include "compiler/support/error.h"
#include "mono/v1/tuning.grpc.pb.h"
#include "proto/transport.h"
#include <onnx/onnx_pb.h>

namespace mono {
namespace {

namespace fs = std::filesystem;

const char kUsage[] =
    "usage: mono-submit MODEL.onnx --server ADDR [--shape NAME=DIMS]... [--dtype fp16|fp32] [--gpu-kind NAME]\n"
    "                   [--dry-run | --budget N] [--wait] [--out DIR] [--token-file FILE] [--name NAME]\n"
    "                   [--tls-ca FILE [--tls-cert FILE --tls-key FILE]]\n"
    "  --server ADDR      the tuner server (host:port)\n"
    "  --shape NAME=DIMS  bind a dynamic input, e.g. input_ids=1x128 (repeatable)\n"
    "  --dtype fp16|fp32  precision of the kernel (default fp16, fp32 accumulation)\n"
    "  --gpu-kind NAME    tune for this GPU kind (default: the kind of the registered GPU workers)\n"
    "  --dry-run          no GPU measurements: compile-only workers, cost-model choices; the\n"
    "                     artifact's manifest says that nothing was measured\n"
    "  --budget N         measure at most N candidates in all: every tuning task's default,\n"
    "                     then the cost model's next best for the tasks that weigh most\n"
    "                     (refused if N is below the model's number of tasks)\n"
    "  --wait             show progress until the artifact is built\n"
    "  --out DIR          wait, then write the artifact to DIR\n"
    "  --token-file FILE  send 'authorization: Bearer <token>'\n"
    "  --name NAME        the model's name on the server (default: its folder or file name)\n";

struct Options {
  std::string model, server, gpu_kind, out, token, name;
  transport::TlsFiles tls;
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  bool fp32 = false, dry_run = false, wait = false;
  int budget = 0;  // --budget: 0 = every candidate
};

void add_token(grpc::ClientContext* ctx, const Options& o) {
  if (!o.token.empty()) ctx->AddMetadata("authorization", "Bearer " + o.token);
}

// "cannot reach ..." for transport failures, the server's own message otherwise.
[[noreturn]] void rpc_error(const Options& o, const std::string& what, const grpc::Status& s) {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
    user_error("cannot reach the tuner server at ", o.server, " (", s.error_message(), ")");
  if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED)
    user_error("the tuner server refused the token (", s.error_message(), "): see --token-file");
  user_error(what, ": ", s.error_message());
}

// The files to upload: the model, and the external-data files its initializers name.
std::vector<std::pair<std::string, std::string>> model_files(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> files = {{"model.onnx", path}};
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error(path, ": cannot open the model");
  onnx::ModelProto m;
  if (!m.ParseFromIstream(&in)) user_error(path, ": not an ONNX model (the protobuf does not parse)");
  std::set<std::string> seen;
  const fs::path dir = fs::path(path).parent_path();
  for (const onnx::TensorProto& t : m.graph().initializer())
    for (const onnx::StringStringEntryProto& e : t.external_data())
      if (e.key() == "location" && seen.insert(e.value()).second) {
        if (e.value().find('/') != std::string::npos || e.value().empty() || e.value()[0] == '.')
          user_error(path, ": external data '", e.value(), "' is not a plain file name next to the model");
        const fs::path p = dir / e.value();
        if (!fs::exists(p)) user_error(path, ": external data file '", p.string(), "' is missing");
        files.push_back({e.value(), p.string()});
      }
  return files;
}

// One upload of the model; the server's status (reply filled on success).
grpc::Status upload(const Options& o, v1::Tuning::Stub& stub, v1::SubmitReply* reply_out) {
  const auto files = model_files(o.model);
  uint64_t total = 0;
  for (const auto& [name, p] : files) total += fs::file_size(p);
  grpc::ClientContext ctx;
  add_token(&ctx, o);
  v1::SubmitReply& reply = *reply_out;
  auto writer = stub.Submit(&ctx, &reply);
  v1::SubmitRequest req;
  v1::SubmitHeader* h = req.mutable_header();
  h->set_model_name(o.name);
  for (const auto& [input, dims] : o.shapes) {
    v1::ShapeBinding* b = h->add_shapes();
    b->set_input(input);
    for (int64_t d : dims) b->add_dims(d);
  }
  h->set_precision(o.fp32 ? v1::PRECISION_FP32 : v1::PRECISION_FP16);
  h->set_gpu_kind(o.gpu_kind);
  h->set_dry_run(o.dry_run);
  h->set_max_measurements(static_cast<uint32_t>(o.budget));
  h->set_total_bytes(total);
  bool open = writer->Write(req);
  std::vector<char> buf(1 << 20);
  for (const auto& [name, p] : files) {
    std::ifstream in(p, std::ios::binary);
    uint64_t offset = 0;
    while (open && in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      const std::streamsize n = in.gcount();
      if (n <= 0) break;
      v1::SubmitRequest c;
      c.mutable_chunk()->set_file_name(name);
      c.mutable_chunk()->set_offset(offset);
      c.mutable_chunk()->set_data(buf.data(), static_cast<size_t>(n));
      open = writer->Write(c);
      offset += static_cast<uint64_t>(n);
    }
  }
  writer->WritesDone();
  return writer->Finish();
}

// Submits, waiting while the server is at its limit of uploads in flight (RESOURCE_EXHAUSTED
// with "try again" or "in flight": a busy server, not a refusal) with growing, jittered pauses,
// for up to 30 minutes.
std::string submit(const Options& o, v1::Tuning::Stub& stub) {
  v1::SubmitReply reply;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(30);
  std::mt19937 rng(std::random_device{}());
  for (double pause = 1;; pause = std::min(pause * 2, 15.0)) {
    reply.Clear();
    const grpc::Status s = upload(o, stub, &reply);
    if (s.ok()) break;
    const bool busy = s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
                      (s.error_message().find("try again") != std::string::npos ||
                       s.error_message().find("in flight") != std::string::npos);
    if (!busy || std::chrono::steady_clock::now() > give_up) rpc_error(o, "the server did not accept the submission", s);
    const double wait = pause * std::uniform_real_distribution<double>(0.5, 1.0)(rng);
    std::fprintf(stderr, "server busy (%s): trying again in %.1f s\n", s.error_message().c_str(), wait);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
  std::fprintf(stderr, "submitted %s: submission %s, %d tuning tasks (%d already tuned), %lld new jobs\n",
               o.name.c_str(), reply.submission_id().c_str(), reply.groups_total(), reply.groups_reused(),
               static_cast<long long>(reply.jobs_created()));
  return reply.submission_id();
}

const char* state_name(v1::SubmissionState s) {
  switch (s) {
    case v1::QUEUED: return "queued";
    case v1::TUNING: return "tuning";
    case v1::MERGING: return "merging";
    case v1::DONE: return "done";
    case v1::FAILED: return "failed";
    default: return "?";
  }
}

std::string progress_line(const v1::Progress& p, bool dry_run) {
  char eta[32] = "ETA --";
  if (p.eta_seconds() >= 0) {
    const int s = static_cast<int>(p.eta_seconds());
    std::snprintf(eta, sizeof eta, "ETA %d:%02d", s / 60, s % 60);
  }
  char speed[48] = "";
  if (!dry_run && p.best_speedup() > 0) std::snprintf(speed, sizeof speed, "  best %.2fx vs default", p.best_speedup());
  char line[256];
  std::snprintf(line, sizeof line, "%-7s %d/%d groups  %lld compiled  %lld measured%s  %s", state_name(p.state()),
                p.groups_done(), p.groups_total(), static_cast<long long>(p.candidates_compiled()),
                static_cast<long long>(p.candidates_measured()), speed, eta);
  return line;
}

// Watches until done or failed, drawing a bar on a terminal and plain lines otherwise.
v1::Progress watch(const Options& o, v1::Tuning::Stub& stub, const std::string& id) {
  const bool tty = isatty(STDERR_FILENO);
  v1::Progress last;
  std::string last_line;
  for (int reconnects = 0;; ++reconnects) {
    grpc::ClientContext ctx;
    add_token(&ctx, o);
    v1::WatchRequest req;
    req.set_submission_id(id);
    auto reader = stub.Watch(&ctx, req);
    v1::Progress p;
    while (reader->Read(&p)) {
      last = p;
      const std::string line = progress_line(p, o.dry_run);
      if (tty) {
        const int width = 30;
        const int filled = p.groups_total() > 0 ? width * p.groups_done() / p.groups_total() : 0;
        std::fprintf(stderr, "\r[%s%s] %s\033[K", std::string(filled, '#').c_str(),
                     std::string(width - filled, '.').c_str(), line.c_str());
      } else if (line.substr(0, line.find("ETA")) != last_line.substr(0, last_line.find("ETA"))) {
        std::fprintf(stderr, "%s\n", line.c_str());
      }
      last_line = line;
      if (p.state() == v1::DONE || p.state() == v1::FAILED) break;
    }
    grpc::Status s = reader->Finish();
    if (last.state() == v1::DONE || last.state() == v1::FAILED) break;
    if (!s.ok() && s.error_code() != grpc::StatusCode::UNAVAILABLE) rpc_error(o, "watching " + id, s);
    // The server restarted: it resumes the submission; reconnect.
    if (reconnects == 0 || reconnects % 10 == 0)
      std::fprintf(stderr, "%sserver unreachable (%s); reconnecting...\n", tty ? "\n" : "", s.error_message().c_str());
    if (reconnects > 600) user_error("lost the tuner server at ", o.server, " for too long; submission ", id, " goes on there");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (tty) std::fputc('\n', stderr);
  return last;
}

void fetch(const Options& o, v1::Tuning::Stub& stub, const std::string& id) {
  grpc::ClientContext ctx;
  add_token(&ctx, o);
  v1::FetchRequest req;
  req.set_submission_id(id);
  auto reader = stub.FetchArtifact(&ctx, req);
  const fs::path out(o.out);
  fs::create_directories(out);
  std::map<std::string, std::unique_ptr<std::ofstream>> open;
  v1::FileChunk c;
  while (reader->Read(&c)) {
    const fs::path rel(c.file_name());
    // Only plain relative paths inside DIR.
    bool safe = !rel.empty() && rel.is_relative();
    for (const auto& part : rel) safe = safe && part != ".." && part != ".";
    if (!safe) user_error("the server sent a bad file name '", c.file_name(), "'");
    auto& f = open[c.file_name()];
    if (!f) {
      fs::create_directories((out / rel).parent_path());
      f = std::make_unique<std::ofstream>(out / rel, std::ios::binary | std::ios::trunc);
      if (!*f) user_error("cannot write ", (out / rel).string());
    }
    f->write(c.data().data(), static_cast<std::streamsize>(c.data().size()));
  }
  grpc::Status s = reader->Finish();
  if (!s.ok()) rpc_error(o, "fetching the artifact", s);
  for (auto& [name, f] : open) f->close();
  std::fprintf(stderr, "wrote %s (%zu files)\n", o.out.c_str(), open.size());
  // What the manifest says about tuning.
  std::ifstream in(out / "manifest.json");
  nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
  if (m.is_discarded() || !m.contains("tuning")) return;
  const nlohmann::json& t = m["tuning"];
  if (!t.value("measured", false)) {
    std::fprintf(stderr, "note: %s\n", t.value("note", "nothing was measured").c_str());
  } else {
    if (t.contains("tuned_us") && t.contains("default_us"))
      std::fprintf(stderr, "tuned kernel %.1f us vs untuned default %.1f us (%.2fx), measured on %s\n",
                   t["tuned_us"].get<double>(), t["default_us"].get<double>(),
                   t["default_us"].get<double>() / t["tuned_us"].get<double>(), t.value("gpu_kind", "?").c_str());
    if (t.contains("note")) std::fprintf(stderr, "note: %s\n", t["note"].get<std::string>().c_str());
  }
  std::fprintf(stderr, "%d groups tuned, %d at their default schedule\n", t.value("groups_tuned", 0),
               t.value("groups_default", 0));
}

int submit_main(int argc, char** argv) {
  Options o;
  Flags args(argc, argv);
  std::string flag, token_file;
  while (args.next(&flag)) {
    if (flag == "--server") o.server = args.value(flag);
    else if (flag == "--shape") {
      const std::string v = args.value(flag);
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) user_error("--shape ", v, ": expected NAME=DIMS, e.g. input_ids=1x128");
      std::vector<int64_t> dims;
      std::stringstream ss(v.substr(eq + 1));
      for (std::string d; std::getline(ss, d, 'x');) {
        if (d.empty() || !std::all_of(d.begin(), d.end(), ::isdigit)) user_error("--shape ", v, ": bad dimension '", d, "'");
        dims.push_back(std::stoll(d));
      }
      o.shapes.push_back({v.substr(0, eq), dims});
    } else if (flag == "--dtype") {
      const std::string d = args.value(flag);
      if (d != "fp16" && d != "fp32") user_error("--dtype ", d, " is not one of: fp16, fp32");
      o.fp32 = d == "fp32";
    } else if (flag == "--gpu-kind") o.gpu_kind = args.value(flag);
    else if (flag == "--dry-run") o.dry_run = true;
    else if (flag == "--budget") {
      o.budget = args.int_value(flag);
      if (o.budget < 1 || o.budget > 100000000) user_error("--budget ", o.budget, " is not in 1..100000000");
    }
    else if (flag == "--wait") o.wait = true;
    else if (flag == "--out") o.out = args.value(flag);
    else if (flag == "--token-file") token_file = args.value(flag);
    else if (flag == "--name") o.name = args.value(flag);
    else if (transport::take_tls_flag(args, flag, &o.tls)) {
    } else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::fputs(transport::kClientTlsUsage, stdout);
      return kExitOk;
    } else cli::take_model_argument(flag, &o.model);
  }
  cli::require_model(o.model);
  if (o.server.empty()) user_error("--server ADDR is required (the tuner server, e.g. 127.0.0.1:50051)");
  if (o.dry_run && o.budget > 0) user_error("--budget caps measurements; a --dry-run measures nothing");
  if (fs::is_directory(o.model)) o.model += "/model.onnx";
  if (!fs::exists(o.model)) user_error(o.model, ": no such file");
  if (o.name.empty()) o.name = model_label(o.model);
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in || !std::getline(in, o.token) || o.token.empty()) user_error("cannot read a token from '", token_file, "'");
  }
  grpc::ChannelArguments ca;
  ca.SetMaxReceiveMessageSize(64 << 20);
  auto channel = grpc::CreateCustomChannel(o.server, transport::channel_credentials(o.tls), ca);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10)))
    user_error("cannot reach the tuner server at ", o.server, " (no connection within 10 s)");
  auto stub = v1::Tuning::NewStub(channel);
  const std::string id = submit(o, *stub);
  std::printf("%s\n", id.c_str());
  if (!o.wait && o.out.empty()) return kExitOk;
  const v1::Progress last = watch(o, *stub, id);
  if (last.state() == v1::FAILED) user_error("submission ", id, " failed: ", last.message());
  if (!o.out.empty()) fetch(o, *stub, id);
  return kExitOk;
}

}  // namespace
}  // namespace mono

int main(int argc, char** argv) {
  return mono::run_main("mono-submit", [&] { return mono::submit_main(argc, argv); });
}
