// Two kinds of failure: the user's (a bad model, an unsupported op, a wrong flag) and
// ours (a broken invariant). Both are exceptions inside the compiler; the command-line
// tools turn them into one line on stderr and a non-zero exit.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace mono {

// Concatenates anything streamable into one string.
template <typename... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

// The model or the command line is at fault. The message names what is wrong.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& msg) : std::runtime_error(msg) {}
};

// Mono is at fault: an invariant did not hold.
class InternalError : public std::runtime_error {
 public:
  explicit InternalError(const std::string& msg) : std::runtime_error(msg) {}
};

template <typename... Args>
[[noreturn]] void user_error(Args&&... args) {
  throw UserError(str_cat(std::forward<Args>(args)...));
}

[[noreturn]] void internal_error_at(const char* file, int line, const std::string& msg);

}  // namespace mono

// MONO_CHECK(cond, message parts...): an internal invariant; at least one message part.
#define MONO_CHECK(cond, ...)                                                              \
  do {                                                                                     \
    if (!(cond))                                                                           \
      ::mono::internal_error_at(__FILE__, __LINE__,                                        \
                                ::mono::str_cat("check failed: " #cond ": ", __VA_ARGS__)); \
  } while (0)
