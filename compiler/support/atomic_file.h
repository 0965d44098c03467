// Files that are either whole or absent: written to a temporary file beside the target,
// flushed to disk (fsync), then renamed over it. A full disk or a crash leaves the old file or
// none, never a truncated one. And files read whole.
#pragma once

#include <string>
#include <vector>

namespace mono {

// Writes `size` bytes; false (with the reason in *error) if any step failed, in which case the
// temporary file is removed and `path` is untouched.
bool write_file_atomic(const std::string& path, const void* data, size_t size, std::string* error);
inline bool write_file_atomic(const std::string& path, const std::string& text, std::string* error) {
  return write_file_atomic(path, text.data(), text.size(), error);
}

// Reads a regular file whole into *out, in one read of its size (not a byte-by-byte stream
// iterator: a 250 MB weights.bin took 0.8 s that way, bench/RESULTS.md session 7, run97); false
// if it is absent, not a regular file, or cannot be read.
bool read_file_whole(const std::string& path, std::string* out);
bool read_file_whole(const std::string& path, std::vector<unsigned char>* out);

}  // namespace mono
