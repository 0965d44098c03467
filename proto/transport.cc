#include "proto/transport.h"

#include <fstream>
#include <sstream>

#include "compiler/support/error.h"

namespace mono::transport {

const char kServerTlsUsage[] =
    "  --tls-cert FILE    serve gRPC over TLS with this certificate chain (PEM) ...\n"
    "  --tls-key FILE     ... and its private key (PEM)\n"
    "  --tls-ca FILE      mutual TLS: require client certificates signed by this CA (PEM)\n";
const char kClientTlsUsage[] =
    "  --tls-ca FILE      connect over TLS, trusting this CA (PEM; without it, the system's roots)\n"
    "  --tls-cert FILE    mutual TLS: this client certificate chain (PEM) ...\n"
    "  --tls-key FILE     ... and its private key (PEM)\n";

bool take_tls_flag(Flags& flags, const std::string& flag, TlsFiles* tls) {
  if (flag == "--tls-cert") tls->cert = flags.value(flag);
  else if (flag == "--tls-key") tls->key = flags.value(flag);
  else if (flag == "--tls-ca") tls->ca = flags.value(flag);
  else return false;
  return true;
}

namespace {

std::string read_pem(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error("cannot read the ", what, " '", path, "'");
  std::ostringstream s;
  s << in.rdbuf();
  const std::string pem = s.str();
  if (pem.find("-----BEGIN ") == std::string::npos) user_error("'", path, "' is not a PEM file (", what, ")");
  return pem;
}

void check_pair(const TlsFiles& tls) {
  if (tls.cert.empty() != tls.key.empty()) user_error("--tls-cert and --tls-key go together");
}

}  // namespace

std::shared_ptr<grpc::ServerCredentials> server_credentials(const TlsFiles& tls) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  check_pair(tls);
  if (tls.cert.empty()) user_error("a TLS server needs --tls-cert and --tls-key");
  grpc::SslServerCredentialsOptions o(tls.ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                                     : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!tls.ca.empty()) o.pem_root_certs = read_pem(tls.ca, "TLS CA certificate");
  o.pem_key_cert_pairs.push_back({read_pem(tls.key, "TLS private key"), read_pem(tls.cert, "TLS certificate")});
  return grpc::SslServerCredentials(o);
}

std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const TlsFiles& tls) {
  if (!tls.enabled()) return grpc::InsecureChannelCredentials();
  check_pair(tls);
  grpc::SslCredentialsOptions o;
  if (!tls.ca.empty()) o.pem_root_certs = read_pem(tls.ca, "TLS CA certificate");
  if (!tls.cert.empty()) {
    o.pem_cert_chain = read_pem(tls.cert, "TLS certificate");
    o.pem_private_key = read_pem(tls.key, "TLS private key");
  }
  return grpc::SslCredentials(o);
}

bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool is_loopback(const std::string& address) {
  std::string a = address;
  if (a.rfind("unix:", 0) == 0 || a.rfind("unix-abstract:", 0) == 0) return true;
  if (a.rfind("dns:", 0) == 0) a = a.substr(4);
  std::string host;
  if (!a.empty() && a[0] == '[') {
    const size_t end = a.find(']');
    host = end == std::string::npos ? a : a.substr(1, end - 1);
  } else {
    host = a.substr(0, a.rfind(':'));
  }
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace mono::transport
