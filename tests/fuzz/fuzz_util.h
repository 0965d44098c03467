// Shared by the libFuzzer harnesses (tests/fuzz/README.md): a private scratch file for inputs
// that an entry point reads from disk, and the rule that decides a finding. A UserError (one
// clear line about bad input) is the correct answer to garbage; anything else that escapes —
// an InternalError, another exception, a sanitizer report, a hang — is a finding.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/support/error.h"

namespace mono::fuzz {

// A path in $TMPDIR private to this process, rewritten with `data` on each call.
inline const std::string& scratch(const char* name, const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    const char* t = getenv("TMPDIR");
    std::string d = std::string(t && *t ? t : "/tmp") + "/mono_fuzz_" + std::to_string(::getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  static std::string path;
  path = dir + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs `body`; a UserError is the expected outcome for bad input and is swallowed.
template <typename F>
void expect_clean(F&& body) {
  try {
    body();
  } catch (const UserError&) {
  }
}

}  // namespace mono::fuzz
