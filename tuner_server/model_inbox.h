// Receives a submitted model (model.onnx plus external-data files) streamed in chunks, and
// stores it under ROOT/models/<sha256>/ only once it is complete: a bad, oversize or
// interrupted upload leaves nothing behind, and a model already stored is reused. Files are
// hashed as their chunks arrive (a commit reads nothing back into memory) and fsynced before
// the folder is renamed into place. UploadQuota bounds the uploads in flight, per client and
// in total, and the bytes stored.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"

namespace mono::server {

struct InboxLimits {
  uint64_t max_total_bytes = uint64_t{4} << 30;  // all files of one submission
  int max_files = 64;
  uint64_t max_chunk_bytes = 4 << 20;
};

// Admission of uploads: at most `per_client` at once from one client (its address) and
// `total` at once in all (each holds a server thread while it streams), and no new model once
// the stored ones take `max_stored_bytes`.
class UploadQuota {
 public:
  struct Limits {
    int per_client = 4;
    int total = 32;
    uint64_t max_stored_bytes = uint64_t{200} << 30;
    std::chrono::milliseconds measure_every{30'000};  // the stored bytes are walked this often at most
  };
  explicit UploadQuota(Limits limits) : limits_(limits) {}
  // A ticket while the upload runs; ResourceExhausted naming the limit when over one.
  class Ticket;
  absl::StatusOr<std::unique_ptr<Ticket>> admit(const std::string& client, const std::string& models_root);

 private:
  void release(const std::string& client);
  uint64_t stored_bytes(const std::string& models_root);
  Limits limits_;
  std::mutex mu_;
  std::map<std::string, int> by_client_;
  int total_ = 0;
  uint64_t stored_bytes_ = 0;                        // models_root's size as last measured ...
  std::chrono::steady_clock::time_point stored_at_;  // ... then
  std::string stored_root_;
};

class UploadQuota::Ticket {
 public:
  Ticket(UploadQuota* q, std::string client) : q_(q), client_(std::move(client)) {}
  ~Ticket() { q_->release(client_); }
  Ticket(const Ticket&) = delete;
  Ticket& operator=(const Ticket&) = delete;

 private:
  UploadQuota* q_;
  std::string client_;
};

// One upload in progress; files land in a private staging folder.
class Upload {
 public:
  Upload(std::string staging_dir, InboxLimits limits, uint64_t declared_total);
  ~Upload();  // removes the staging folder unless committed
  Upload(const Upload&) = delete;
  Upload& operator=(const Upload&) = delete;

  // Appends a chunk; chunks of a file arrive in order (offset = bytes received so far).
  absl::Status add_chunk(const std::string& file_name, uint64_t offset, const std::string& data);
  // Checks completeness and moves the files to ROOT/models/<sha256 of all files>/; returns
  // that folder. Reuses an identical model stored before.
  absl::StatusOr<std::string> commit(const std::string& models_root);
  // After commit: whether this upload stored the folder (false: an identical model was there).
  bool stored_new() const { return committed_; }

  uint64_t received_bytes() const { return received_; }
  const std::string& sha256() const { return sha_; }

 private:
  std::string staging_;
  InboxLimits limits_;
  uint64_t declared_;
  uint64_t received_ = 0;
  std::map<std::string, uint64_t> sizes_;
  struct Hasher;
  std::map<std::string, std::unique_ptr<Hasher>> hashes_;  // per file, fed as chunks arrive
  std::string sha_;
  bool committed_ = false;
};

// A file name a submission may use: plain, no folders, no hidden files, [A-Za-z0-9._-].
bool is_safe_file_name(const std::string& name);

// SHA-256 of a byte string, lower-case hex (for model identities).
std::string sha256_hex(const std::string& bytes);

}  // namespace mono::server
