#include "tuner_server/http_server.h"

#include <CivetServer.h>
#include <civetweb.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "tuner_server/web_assets.h"

namespace mono::server {

namespace {

constexpr size_t kMaxBody = 64 << 10;

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    default: return "Internal Server Error";
  }
}

void send(mg_connection* conn, int status, const char* type, std::string_view body, bool cache = false) {
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: %s\r\n"
            "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
            status, reason_phrase(status), type, body.size(), cache ? "max-age=60" : "no-store");
  mg_write(conn, body.data(), body.size());
}

void send_json(mg_connection* conn, int status, const nlohmann::json& body) {
  send(conn, status, "application/json", body.dump());
}

void send_error(mg_connection* conn, int status, const std::string& message) {
  send_json(conn, status, {{"error", message}});
}

int http_status(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kInvalidArgument: return 400;
    default: return 500;
  }
}

void reply(mg_connection* conn, const absl::StatusOr<nlohmann::json>& r) {
  if (r.ok()) {
    send_json(conn, 200, *r);
  } else {
    send_error(conn, http_status(r.status()), std::string(r.status().message()));
  }
}

// "/api/submissions/ID/part" -> {"submissions", "ID", "part"}
std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

class Handler : public CivetHandler {
 public:
  Handler(Dashboard* dashboard, std::shared_ptr<prometheus::Registry> metrics, std::string token)
      : dashboard_(dashboard), metrics_(std::move(metrics)), token_(std::move(token)) {}

  bool handleGet(CivetServer*, mg_connection* conn) override {
    const std::string_view path = mg_get_request_info(conn)->local_uri;
    if (path == "/metrics") {
      const std::string text = prometheus::TextSerializer().Serialize(metrics_->Collect());
      send(conn, 200, "text/plain; version=0.0.4; charset=utf-8", text);
      return true;
    }
    if (path == "/healthz") {
      send(conn, 200, "text/plain", "ok\n");
      return true;
    }
    if (path.rfind("/api/", 0) == 0) {
      api_get(conn, split_path(path.substr(4)));
      return true;
    }
    const WebAsset* a = find_web_asset(path == "/" ? "/index.html" : path);
    if (!a) {
      send(conn, 404, "text/plain", "not found: the dashboard is at /, its JSON API under /api/ (docs/dashboard.md)\n");
      return true;
    }
    send(conn, 200, a->content_type, std::string_view(reinterpret_cast<const char*>(a->data), a->size), true);
    return true;
  }

  bool handlePost(CivetServer*, mg_connection* conn) override {
    const std::string_view path = mg_get_request_info(conn)->local_uri;
    if (path != "/api/baselines") {
      send_error(conn, 404, "no such API: POST is accepted on /api/baselines only");
      return true;
    }
    if (!token_.empty()) {
      const char* auth = mg_get_header(conn, "Authorization");
      if (!auth || std::string_view(auth) != "Bearer " + token_) {
        send_error(conn, 401, "missing or wrong token: send 'Authorization: Bearer TOKEN'");
        return true;
      }
    }
    std::string body;
    char buf[4096];
    int n;
    while ((n = mg_read(conn, buf, sizeof buf)) > 0) {
      body.append(buf, static_cast<size_t>(n));
      if (body.size() > kMaxBody) {
        send_error(conn, 413, "the body is larger than 64 KiB");
        return true;
      }
    }
    const absl::Status st = dashboard_->record_baseline(body);
    if (st.ok()) {
      send_json(conn, 200, {{"ok", true}});
    } else {
      send_error(conn, http_status(st), std::string(st.message()));
    }
    return true;
  }

 private:
  void api_get(mg_connection* conn, const std::vector<std::string>& p) {
    if (p.size() == 1 && p[0] == "overview") return reply(conn, dashboard_->overview());
    if (p.size() == 1 && p[0] == "workers") return reply(conn, dashboard_->workers());
    if (p.size() == 1 && p[0] == "submissions") return reply(conn, dashboard_->submissions());
    if (p.size() == 2 && p[0] == "submissions") return reply(conn, dashboard_->submission(p[1]));
    if (p.size() == 3 && p[0] == "submissions" && (p[2] == "timeline" || p[2] == "groups"))
      return reply(conn, dashboard_->submission(p[1], p[2]));
    send_error(conn, 404, "no such API (see docs/dashboard.md)");
  }

  Dashboard* dashboard_;
  std::shared_ptr<prometheus::Registry> metrics_;
  std::string token_;
};

}  // namespace

struct HttpServer::Impl {
  std::unique_ptr<Handler> handler;
  std::unique_ptr<CivetServer> server;
};

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, Dashboard* dashboard,
                                                              std::shared_ptr<prometheus::Registry> metrics,
                                                              std::string token) {
  auto impl = std::make_unique<Impl>();
  impl->handler = std::make_unique<Handler>(dashboard, std::move(metrics), std::move(token));
  const std::vector<std::string> options = {"listening_ports", address, "num_threads", "8",
                                            "request_timeout_ms", "10000"};
  try {
    impl->server = std::make_unique<CivetServer>(options);
  } catch (const CivetException& e) {
    return absl::UnavailableError("cannot listen on " + address + ": " + e.what());
  }
  impl->server->addHandler("/", impl->handler.get());
  const std::vector<int> ports = impl->server->getListeningPorts();
  const int port = ports.empty() ? 0 : ports.front();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl), port));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl, int port) : impl_(std::move(impl)), port_(port) {}

HttpServer::~HttpServer() {
  if (impl_ && impl_->server) impl_->server->close();
}

}  // namespace mono::server
