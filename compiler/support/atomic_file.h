// Files that are either whole or absent: written to a temporary file beside the target,
// flushed to disk (fsync), then renamed over it. A full disk or a crash leaves the old file or
// none, never a truncated one.
#pragma once

#include <string>

namespace mono {

// Writes `size` bytes; false (with the reason in *error) if any step failed, in which case the
// temporary file is removed and `path` is untouched.
bool write_file_atomic(const std::string& path, const void* data, size_t size, std::string* error);
inline bool write_file_atomic(const std::string& path, const std::string& text, std::string* error) {
  return write_file_atomic(path, text.data(), text.size(), error);
}

}  // namespace mono
