#include "compiler/support/flags.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "compiler/support/error.h"

namespace mono {

int run_main(const char* tool, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UserError& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
  } catch (const InternalError& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", tool, e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", tool);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", tool, e.what());
  }
  return kExitError;
}

bool Flags::next(std::string* flag) {
  if (i_ >= args_.size()) return false;
  *flag = args_[i_++];
  return true;
}

std::string Flags::value(const std::string& flag) {
  if (i_ >= args_.size()) user_error(flag, " needs a value");
  return args_[i_++];
}

int Flags::int_value(const std::string& flag) {
  const std::string v = value(flag);
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || errno == ERANGE || n < INT_MIN || n > INT_MAX)
    user_error(flag, " '", v, "' is not a whole number");
  return static_cast<int>(n);
}

void Flags::unknown(const std::string& flag) { user_error("unknown flag '", flag, "' (see --help)"); }

}  // namespace mono
