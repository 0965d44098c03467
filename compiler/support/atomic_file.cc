#include "compiler/support/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace mono {

bool write_file_atomic(const std::string& path, const void* data, size_t size, std::string* error) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  auto fail = [&](const char* step, int fd) {
    const int e = errno;
    if (fd >= 0) close(fd);
    unlink(tmp.c_str());
    if (error) *error = std::string(step) + " '" + tmp + "': " + std::strerror(e);
    return false;
  };
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create", -1);
  const char* p = static_cast<const char*>(data);
  for (size_t left = size; left > 0;) {
    const ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return fail("cannot write", fd);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) return fail("cannot flush", fd);
  if (close(fd) != 0) return fail("cannot close", -1);
  if (rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot rename", -1);
  return true;
}

namespace {

template <class Bytes>
bool read_whole(const std::string& path, Bytes* out) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  const std::streamoff size = in.tellg();
  if (size < 0) return false;
  out->resize(static_cast<size_t>(size));
  in.seekg(0);
  return size == 0 || static_cast<bool>(in.read(reinterpret_cast<char*>(out->data()), size));
}

}  // namespace

bool read_file_whole(const std::string& path, std::string* out) { return read_whole(path, out); }
bool read_file_whole(const std::string& path, std::vector<unsigned char>* out) { return read_whole(path, out); }

}  // namespace mono
