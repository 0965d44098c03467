// The server's HTTP side, on its --http address: the dashboard (web/, compiled in), its
// JSON API (tuner_server/dashboard.h, docs/dashboard.md), Prometheus' /metrics and /healthz.
// With a token, every request but /healthz needs it: "Authorization: Bearer TOKEN" (API
// clients, Prometheus' scrape) or the HttpOnly cookie that the sign-in form at /login sets (a
// browser; GETs of pages without it are sent there). Without a token everything is open: bind
// --http to loopback or a trusted network. Slow clients time out after 5 s; 160 threads.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_server/dashboard.h"

namespace prometheus {
class Registry;
}

namespace mono::server {

class HttpServer {
 public:
  // Listens on `address` ("127.0.0.1:8080"; port 0 picks a free one). Unavailable when it
  // cannot listen there.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const std::string& address, Dashboard* dashboard,
                                                           std::shared_ptr<prometheus::Registry> metrics,
                                                           std::string token);
  ~HttpServer();
  int port() const { return port_; }

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace mono::server
