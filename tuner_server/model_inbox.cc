#include "tuner_server/model_inbox.h"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

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

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
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
  if (!out) return absl::InternalError(absl::StrCat("cannot write the upload of '", file_name, "'"));
  it->second += data.size();
  received_ += data.size();
  return absl::OkStatus();
}

absl::StatusOr<std::string> Upload::commit(const std::string& models_root) {
  if (!sizes_.count("model.onnx")) return absl::InvalidArgumentError("the upload has no model.onnx");
  if (declared_ && received_ != declared_)
    return absl::InvalidArgumentError(absl::StrCat("upload incomplete: ", received_, " of ", declared_, " bytes"));
  // Identity: SHA-256 over every file's name and bytes, in name order.
  std::string all;
  for (const auto& [name, size] : sizes_) {
    std::ifstream in(staging_ + "/" + name, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() != size) return absl::InternalError(absl::StrCat("staged file '", name, "' has the wrong size"));
    all += absl::StrCat(name, "\n", size, "\n", sha256_hex(bytes), "\n");
  }
  sha_ = sha256_hex(all);
  const std::string dest = models_root + "/" + sha_;
  std::error_code ec;
  fs::create_directories(models_root, ec);
  if (fs::exists(dest)) {  // the same model was submitted before
    committed_ = false;      // the staging copy goes
    return dest;
  }
  fs::rename(staging_, dest, ec);  // atomic within one file system
  if (ec) return absl::InternalError(absl::StrCat("cannot store the model: ", ec.message()));
  committed_ = true;
  return dest;
}

}  // namespace mono::server
