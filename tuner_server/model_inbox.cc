#include "tuner_server/model_inbox.h"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"

namespace mono::server {

namespace fs = std::filesystem;

bool is_safe_file_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.') return false;
  for (char c : name)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

static std::string hex_of(const unsigned char* digest, unsigned int len) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  return hex_of(digest, len);
}

// SHA-256 fed piece by piece.
struct Upload::Hasher {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  Hasher() { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
  ~Hasher() { EVP_MD_CTX_free(ctx); }
  void add(const std::string& data) { EVP_DigestUpdate(ctx, data.data(), data.size()); }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx, digest, &len);
    return hex_of(digest, len);
  }
};

// fsync of a file or folder: what a rename publishes is on disk first.
static bool sync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

absl::StatusOr<std::unique_ptr<UploadQuota::Ticket>> UploadQuota::admit(const std::string& client,
                                                                         const std::string& models_root) {
  const uint64_t stored = stored_bytes(models_root);
  if (stored >= limits_.max_stored_bytes)
    return absl::ResourceExhaustedError(absl::StrCat("the server's model storage is full (", stored, " bytes of ",
                                                     limits_.max_stored_bytes, "): ask its operator"));
  std::lock_guard<std::mutex> lock(mu_);
  if (total_ >= limits_.total)
    return absl::ResourceExhaustedError(absl::StrCat("the server takes ", limits_.total, " uploads at once: try again shortly"));
  int& mine = by_client_[client];
  if (mine >= limits_.per_client) {
    return absl::ResourceExhaustedError(
        absl::StrCat("this client already has ", mine, " uploads in flight (the limit is ", limits_.per_client, ")"));
  }
  ++mine;
  ++total_;
  return std::make_unique<Ticket>(this, client);
}

// Measured by walking models_root, at most every Limits::measure_every (not once per upload).
uint64_t UploadQuota::stored_bytes(const std::string& models_root) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stored_root_ == models_root && now - stored_at_ < limits_.measure_every) return stored_bytes_;
  }
  uint64_t bytes = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(models_root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  std::lock_guard<std::mutex> lock(mu_);
  stored_bytes_ = bytes;
  stored_at_ = now;
  stored_root_ = models_root;
  return bytes;
}

void UploadQuota::release(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  --total_;
  if (--by_client_[client] <= 0) by_client_.erase(client);
}

Upload::Upload(std::string staging_dir, InboxLimits limits, uint64_t declared_total)
    : staging_(std::move(staging_dir)), limits_(limits), declared_(declared_total) {
  std::error_code ec;
  fs::create_directories(staging_, ec);
}

Upload::~Upload() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

absl::Status Upload::add_chunk(const std::string& file_name, uint64_t offset, const std::string& data) {
  if (!is_safe_file_name(file_name))
    return absl::InvalidArgumentError(absl::StrCat("file name '", file_name, "' is not allowed (plain names of [A-Za-z0-9._-] only)"));
  if (data.size() > limits_.max_chunk_bytes)
    return absl::InvalidArgumentError(absl::StrCat("chunk of ", data.size(), " bytes exceeds the limit of ", limits_.max_chunk_bytes));
  auto it = sizes_.find(file_name);
  if (it == sizes_.end()) {
    if (static_cast<int>(sizes_.size()) >= limits_.max_files)
      return absl::InvalidArgumentError(absl::StrCat("more than ", limits_.max_files, " files in one submission"));
    it = sizes_.emplace(file_name, 0).first;
  }
  if (offset != it->second)
    return absl::InvalidArgumentError(absl::StrCat("chunk of '", file_name, "' at offset ", offset, ", expected ", it->second));
  if (received_ + data.size() > limits_.max_total_bytes || (declared_ && received_ + data.size() > declared_))
    return absl::ResourceExhaustedError(absl::StrCat("upload exceeds ", declared_ && declared_ < limits_.max_total_bytes ? "its declared size of " : "the limit of ",
                                                     declared_ && declared_ < limits_.max_total_bytes ? declared_ : limits_.max_total_bytes, " bytes"));
  std::ofstream out(staging_ + "/" + file_name, std::ios::binary | std::ios::app);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.flush();
  if (!out) return absl::ResourceExhaustedError(absl::StrCat("cannot write the upload of '", file_name, "' (disk full?)"));
  auto& hasher = hashes_[file_name];
  if (!hasher) hasher = std::make_unique<Hasher>();
  hasher->add(data);
  it->second += data.size();
  received_ += data.size();
  return absl::OkStatus();
}

absl::StatusOr<std::string> Upload::commit(const std::string& models_root) {
  if (!sizes_.count("model.onnx")) return absl::InvalidArgumentError("the upload has no model.onnx");
  if (declared_ && received_ != declared_)
    return absl::InvalidArgumentError(absl::StrCat("upload incomplete: ", received_, " of ", declared_, " bytes"));
  // Identity: SHA-256 over every file's name, size and SHA-256, in name order (the files'
  // hashes were taken as their chunks arrived). Each file is on disk before the rename.
  std::string all;
  for (const auto& [name, size] : sizes_) {
    const std::string path = staging_ + "/" + name;
    std::error_code ec;
    if (fs::file_size(path, ec) != size || ec)
      return absl::InternalError(absl::StrCat("staged file '", name, "' has the wrong size"));
    if (!sync_path(path)) return absl::ResourceExhaustedError(absl::StrCat("cannot sync the upload of '", name, "'"));
    auto& hasher = hashes_[name];
    if (!hasher) hasher = std::make_unique<Hasher>();  // an empty file
    all += absl::StrCat(name, "\n", size, "\n", hasher->hex(), "\n");
  }
  (void)sync_path(staging_);
  sha_ = sha256_hex(all);
  const std::string dest = models_root + "/" + sha_;
  std::error_code ec;
  fs::create_directories(models_root, ec);
  if (fs::exists(dest)) {  // the same model was submitted before
    committed_ = false;      // the staging copy goes
    return dest;
  }
  fs::rename(staging_, dest, ec);  // atomic within one file system
  if (ec && fs::exists(dest)) {     // an identical upload committed first, meanwhile
    committed_ = false;
    return dest;
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot store the model: ", ec.message()));
  (void)sync_path(models_root);
  committed_ = true;
  return dest;
}

}  // namespace mono::server
