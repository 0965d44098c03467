#include "tuner_server/http_server.h"

#include <CivetServer.h>
#include <civetweb.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "proto/transport.h"
#include "tuner_server/web_assets.h"

namespace mono::server {

namespace {

constexpr size_t kMaxBody = 64 << 10;

// The browser's way in when the server has a token: a form that posts it to /login, which
// sets it as an HttpOnly cookie (kept out of URLs and of the page's scripts).
const char kLoginPage[] =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>Mono tuner: sign in</title></head>"
    "<body style=\"font-family:sans-serif;margin:3em\"><h1>Mono tuner</h1>"
    "<p>This server needs its token (the one in its --token-file).</p>%s"
    "<form method=\"post\" action=\"/login\"><input type=\"password\" name=\"token\" autofocus "
    "size=\"48\"> <button type=\"submit\">Sign in</button></form></body></html>";

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 303: return "See Other";
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
    if (path == "/healthz") {  // the probes' path: open, and cheap
      send(conn, 200, "text/plain", "ok\n");
      return true;
    }
    if (path == "/login") {
      send_login(conn, 200, "");
      return true;
    }
    if (!authorized(conn)) {
      if (path.rfind("/api/", 0) == 0 || path == "/metrics") {
        send_error(conn, 401, "missing or wrong token: send 'Authorization: Bearer TOKEN'");
      } else {  // a browser: to the sign-in form
        mg_printf(conn, "HTTP/1.1 303 See Other\r\nLocation: /login\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      }
      return true;
    }
    if (path == "/metrics") {
      const std::string text = prometheus::TextSerializer().Serialize(metrics_->Collect());
      send(conn, 200, "text/plain; version=0.0.4; charset=utf-8", text);
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
    if (path != "/api/baselines" && path != "/login") {
      send_error(conn, 404, "no such API: POST is accepted on /api/baselines (and /login) only");
      return true;
    }
    std::string body;
    if (!read_body(conn, &body)) {
      send_error(conn, 413, "the body is larger than 64 KiB");
      return true;
    }
    if (path == "/login") return login(conn, body);
    if (!authorized(conn)) {
      send_error(conn, 401, "missing or wrong token: send 'Authorization: Bearer TOKEN'");
      return true;
    }
    const absl::Status st = dashboard_->record_baseline(body);
    if (st.ok()) {
      send_json(conn, 200, {{"ok", true}});
    } else {
      send_error(conn, http_status(st), std::string(st.message()));
    }
    return true;
  }

  // With a token, every request but /healthz and /login carries it: as 'Authorization: Bearer
  // TOKEN' (API clients, Prometheus) or as the cookie /login sets (a browser).
  bool authorized(mg_connection* conn) const {
    if (token_.empty()) return true;
    if (const char* auth = mg_get_header(conn, "Authorization"))
      if (transport::same_secret(auth, "Bearer " + token_)) return true;
    if (const char* cookies = mg_get_header(conn, "Cookie")) {
      std::vector<char> value(token_.size() + 2);
      const int n = mg_get_cookie(cookies, "mono_token", value.data(), value.size());
      if (n >= 0 && transport::same_secret(std::string_view(value.data(), static_cast<size_t>(n)), token_)) return true;
    }
    return false;
  }

  void send_login(mg_connection* conn, int status, const char* message) {
    char page[sizeof kLoginPage + 128];
    std::snprintf(page, sizeof page, kLoginPage, message);
    send(conn, status, "text/html; charset=utf-8", page);
  }

  bool login(mg_connection* conn, const std::string& body) {
    std::vector<char> value(body.size() + 1);
    const int n = mg_get_var(body.data(), body.size(), "token", value.data(), value.size());
    if (token_.empty() || n < 0 || !transport::same_secret(std::string_view(value.data(), static_cast<size_t>(n)), token_)) {
      send_login(conn, 401, token_.empty() ? "<p>This server has no token: nothing to sign in to.</p>"
                                          : "<p><b>Wrong token.</b></p>");
      return true;
    }
    mg_printf(conn,
              "HTTP/1.1 303 See Other\r\nLocation: /\r\nSet-Cookie: mono_token=%s; Path=/; HttpOnly; SameSite=Strict\r\n"
              "Content-Length: 0\r\nConnection: close\r\n\r\n",
              token_.c_str());
    return true;
  }

  // At most kMaxBody bytes; false when there are more.
  static bool read_body(mg_connection* conn, std::string* body) {
    char buf[4096];
    int n;
    while ((n = mg_read(conn, buf, sizeof buf)) > 0) {
      body->append(buf, static_cast<size_t>(n));
      if (body->size() > kMaxBody) return false;
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
  // Slow or idle clients hold a thread each until their timeout: enough threads that 100 of
  // them leave the probes (/healthz, /metrics) answered at once, and a short timeout.
  const std::vector<std::string> options = {"listening_ports", address, "num_threads", "160",
                                            "request_timeout_ms", "5000", "enable_keep_alive", "no"};
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
