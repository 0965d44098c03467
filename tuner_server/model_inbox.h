// Receives a submitted model (model.onnx plus external-data files) streamed in chunks, and
// stores it under ROOT/models/<sha256>/ only once it is complete and loads: a bad, oversize
// or interrupted upload leaves nothing behind, and a model already stored is reused.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace mono::server {

struct InboxLimits {
  uint64_t max_total_bytes = uint64_t{4} << 30;  // all files of one submission
  int max_files = 64;
  uint64_t max_chunk_bytes = 4 << 20;
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

  uint64_t received_bytes() const { return received_; }
  const std::string& sha256() const { return sha_; }

 private:
  std::string staging_;
  InboxLimits limits_;
  uint64_t declared_;
  uint64_t received_ = 0;
  std::map<std::string, uint64_t> sizes_;
  std::string sha_;
  bool committed_ = false;
};

// A file name a submission may use: plain, no folders, no hidden files, [A-Za-z0-9._-].
bool is_safe_file_name(const std::string& name);

// SHA-256 of a byte string, lower-case hex (for model identities).
std::string sha256_hex(const std::string& bytes);

}  // namespace mono::server
