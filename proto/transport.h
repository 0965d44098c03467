// How the service's gRPC connections are secured: TLS credentials from PEM files (server,
// worker and mono-submit alike), the bearer-token comparison, and what counts as loopback.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include "compiler/support/flags.h"

namespace mono::transport {

// --tls-cert FILE, --tls-key FILE, --tls-ca FILE (PEM).
//   Server: cert + key are its identity; ca makes TLS mutual (every client must present a
//   certificate signed by it).
//   Client: ca is the root it trusts (the system's roots without it); cert + key its own
//   identity for mutual TLS. Any of the three turns TLS on.
struct TlsFiles {
  std::string cert, key, ca;
  bool enabled() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

// Takes --tls-cert / --tls-key / --tls-ca (and their values) from `flags`: true if `flag` was one.
bool take_tls_flag(Flags& flags, const std::string& flag, TlsFiles* tls);

// The usage lines of the three flags, for a server or for a client.
extern const char kServerTlsUsage[];
extern const char kClientTlsUsage[];

// Credentials from the files (read now; a missing or unreadable file, or a cert without its
// key, is a user error naming it); insecure ones when TLS is off.
std::shared_ptr<grpc::ServerCredentials> server_credentials(const TlsFiles& tls);
std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const TlsFiles& tls);

// a == b in time that depends on the lengths only (a token check must not leak a prefix).
bool same_secret(std::string_view a, std::string_view b);

// Whether a listening address (HOST:PORT, [V6]:PORT, unix:PATH) reaches only this machine.
bool is_loopback(const std::string& address);

}  // namespace mono::transport
