// mono-tuner-server [--db FILE] [--listen ADDR] [--http ADDR] [--token-file FILE] [--[no-]worker-kernels]
//                   [--lease-seconds N] [--data-dir DIR] [--tls-cert F --tls-key F [--tls-ca F]]
//                   [--allow-no-token]
// The tuning service: SQLite state (WAL), the Tuning (clients) and Workers gRPC services,
// the coordinator that moves submissions on, lease expiry, and on http://ADDR/ the dashboard,
// its JSON API (/api/..., docs/dashboard.md) and Prometheus metrics (/metrics).
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "compiler/support/error.h"
#include "compiler/support/flags.h"
#include "db/clock.h"
#include "db/store.h"
#include "proto/transport.h"
#include "tuner_server/dashboard.h"
#include "tuner_server/grpc_services.h"
#include "tuner_server/http_server.h"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

const char kUsage[] =
    "usage: mono-tuner-server [--db FILE] [--listen ADDR] [--http ADDR] [--token-file FILE] [--lease-seconds N]\n"
    "                         [--data-dir DIR] [--tls-cert F --tls-key F [--tls-ca F]] [--allow-no-token]\n"
    "  --db FILE          SQLite database (default mono.db; created and migrated as needed)\n"
    "  --listen ADDR      gRPC address (default 127.0.0.1:50051)\n"
    "  --http ADDR        dashboard address (default 127.0.0.1:8080): / (dashboard), /api/ (JSON),\n"
    "                     /metrics (Prometheus), /healthz\n"
    "  --token-file FILE  require 'authorization: Bearer <token>' from workers and clients, and on\n"
    "                     every HTTP request but /healthz (browsers sign in at /login)\n"
    "  --allow-no-token   listen beyond loopback without a token (refused otherwise)\n"
    "  --worker-kernels   build artifacts from the kernels the workers compiled and timed (no second compile);\n"
    "                     a worker's kernel goes into the artifact as it sent it, so only where every holder\n"
    "                     of the token may put code into artifacts. Default: on when --listen is loopback\n"
    "  --no-worker-kernels  the server compiles every artifact's kernel itself\n"
    "  --lease-seconds N  lease length (default 30); workers renew every third of it\n"
    "  --data-dir DIR     uploaded models and artifacts (default: DB file name + '.data')\n";

int server_main(int argc, char** argv) {
  std::string db_path = "mono.db", listen = "127.0.0.1:50051", http = "127.0.0.1:8080", token_file, data_dir;
  int lease_seconds = 30;
  bool allow_no_token = false;
  int worker_kernels = -1;  // -1: on for a loopback --listen
  mono::transport::TlsFiles tls;
  mono::Flags flags(argc, argv);
  std::string flag;
  while (flags.next(&flag)) {
    if (flag == "--db") db_path = flags.value(flag);
    else if (flag == "--listen") listen = flags.value(flag);
    else if (flag == "--http") http = flags.value(flag);
    else if (flag == "--token-file") token_file = flags.value(flag);
    else if (flag == "--data-dir") data_dir = flags.value(flag);
    else if (flag == "--lease-seconds") lease_seconds = flags.int_value(flag);
    else if (flag == "--allow-no-token") allow_no_token = true;
    else if (flag == "--worker-kernels") worker_kernels = 1;
    else if (flag == "--no-worker-kernels") worker_kernels = 0;
    else if (mono::transport::take_tls_flag(flags, flag, &tls)) {
    } else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::fputs(mono::transport::kServerTlsUsage, stdout);
      return mono::kExitOk;
    } else mono::Flags::unknown(flag);
  }
  if (db_path.empty() || listen.empty() || http.empty())
    mono::user_error("--db, --listen and --http need a value (see --help)");
  if (lease_seconds < 3 || lease_seconds > 3600) mono::user_error("--lease-seconds must be 3 to 3600");
  std::string token;
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in || !std::getline(in, token) || token.empty()) mono::user_error("cannot read a token from '", token_file, "'");
  }
  // Beyond loopback, anyone who reaches the ports could submit models, report results and read
  // the dashboard: refused without a token unless asked for; a token without TLS travels in clear.
  for (const std::string& address : {listen, http}) {
    if (mono::transport::is_loopback(address)) continue;
    if (token.empty() && !allow_no_token)
      mono::user_error("refusing to listen on ", address, " (beyond loopback) without --token-file: anyone who reaches it could "
                       "submit models and report results (--allow-no-token accepts that)");
    if (address == listen && !tls.enabled())
      std::fprintf(stderr, "mono-tuner-server: WARNING: gRPC on %s is plaintext: the token and every model travel in clear "
                   "(use --tls-cert and --tls-key)\n", address.c_str());
    if (token.empty())
      std::fprintf(stderr, "mono-tuner-server: WARNING: %s is open to anyone who reaches it (no --token-file)\n", address.c_str());
  }
  auto credentials = mono::transport::server_credentials(tls);  // reads the PEM files now: a bad one fails before anything starts

  if (data_dir.empty()) data_dir = db_path + ".data";
  {
    std::error_code ec;
    std::filesystem::create_directories(data_dir, ec);
    if (ec) mono::user_error("cannot create --data-dir ", data_dir, ": ", ec.message());
    std::filesystem::remove_all(data_dir + "/staging", ec);  // uploads a crash interrupted
  }
  mono::db::SystemClock clock;
  auto store = mono::db::Store::Open(db_path, &clock);
  if (!store.ok()) mono::user_error(store.status().message());
  if ((*store)->created()) {
    std::fprintf(stderr, "mono-tuner-server: created a new, empty database %s\n", db_path.c_str());
    // Folders of an earlier database's models and artifacts: nothing refers to them now.
    size_t orphans = 0;
    for (const char* kind : {"/models", "/artifacts"}) {
      std::error_code ec;
      for (auto it = std::filesystem::directory_iterator(data_dir + kind, ec); !ec && it != std::filesystem::directory_iterator();
           it.increment(ec))
        ++orphans;
    }
    if (orphans > 0)
      std::fprintf(stderr, "mono-tuner-server: WARNING: %s holds %zu stored models and artifacts that no submission of the "
                   "new database refers to (orphaned by an earlier database?)\n", data_dir.c_str(), orphans);
  }

  mono::server::ServerMetrics metrics;
  mono::server::Dashboard dashboard(store->get(), &clock, {2LL * lease_seconds * 1000 + 30'000});
  auto web = mono::server::HttpServer::Start(http, &dashboard, metrics.registry(), token);
  if (!web.ok()) mono::user_error(web.status().message());

  mono::server::CoordinatorOptions coordinator_options;  // the defaults (CoordinatorOptions' comments)
  coordinator_options.data_dir = data_dir;
  mono::server::Coordinator coordinator(store->get(), &clock, coordinator_options);
  mono::server::WorkerHandlerOptions handler_options;
  handler_options.lease_seconds = lease_seconds;
  handler_options.heartbeat_seconds = std::max(1, lease_seconds / 3);
  handler_options.max_jobs_per_lease = 16;
  // Only local processes reach a loopback listener: they could as well write the artifacts.
  if (worker_kernels < 0) worker_kernels = mono::transport::is_loopback(listen) ? 1 : 0;
  if (worker_kernels)
    handler_options.on_kernel_image = [&coordinator](const std::string& job_id, const mono::v1::KernelImage& image) {
      coordinator.offer_kernel(job_id, image);
    };
  std::fprintf(stderr, "mono-tuner-server: artifacts %s\n",
               worker_kernels ? "are built from the kernels the workers compiled (--worker-kernels)"
                              : "are compiled by the server (--no-worker-kernels, the default beyond loopback)");
  mono::server::WorkerHandler workers_handler(store->get(), handler_options);
  mono::server::WorkersService workers(&workers_handler, &metrics, token);
  mono::server::TuningService tuning(&coordinator, store->get(), data_dir, {}, token);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, credentials, &port);
  builder.SetMaxReceiveMessageSize(16 << 20);
  builder.RegisterService(&workers);
  builder.RegisterService(&tuning);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) mono::user_error("cannot listen on ", listen);
  std::fprintf(stderr, "mono-tuner-server: listening on %s (gRPC%s), http://%s/ (dashboard, /api, /metrics), database %s (schema %d)\n",
               listen.c_str(), !tls.enabled() ? "" : tls.ca.empty() ? " over TLS" : " over mutual TLS", http.c_str(), db_path.c_str(),
               (*store)->schema_version().value_or(-1));

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // The coordinator runs on its own thread: building an artifact can take a while.
  std::thread coordinator_thread([&] {
    while (!g_stop) {
      coordinator.step();
      for (int i = 0; i < 5 && !g_stop; ++i)
        if (coordinator.wait_for_work(std::chrono::milliseconds(100))) break;  // a new submission: step at once
    }
  });
  // Housekeeping: expired leases back to the queue, gauges from the database, checkpoints.
  long ticks = 0;
  while (!g_stop) {
    if (auto n = (*store)->expire_leases(); n.ok() && *n > 0) {
      metrics.leases_expired(*n);
      std::fprintf(stderr, "mono-tuner-server: %d expired lease(s) returned to the queue\n", *n);
    }
    metrics.refresh(**store);
    if (++ticks % 60 == 0) (void)(*store)->checkpoint();  // about once a minute: a lost -wal file loses little
    for (int i = 0; i < 10 && !g_stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::fprintf(stderr, "mono-tuner-server: shutting down\n");
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  coordinator_thread.join();
  // Artifact builds in flight get a few seconds; one that takes longer is abandoned (its
  // submission stays merging and is built again at the next start; the database is
  // consistent at every commit), so SIGTERM stops the server within seconds.
  if (!coordinator.drain(std::chrono::seconds(5))) {
    std::fprintf(stderr, "mono-tuner-server: %d artifact build(s) abandoned; they run again at the next start\n",
                 coordinator.builds_in_flight());
    std::fflush(stderr);
    std::_Exit(mono::kExitOk);
  }
  return mono::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return mono::run_main("mono-tuner-server", [&] { return server_main(argc, argv); });
}
