// The command line of every Mono tool (mono-compile, mono-run, mono-submit, mono-worker,
// mono-tuner-server): flags read one by one, and one error convention. A wrong flag, a
// missing or bad value, or any other user error is one line "TOOL: error: MESSAGE" on stderr
// and exit status 2:
//   unknown flag '--x' (see --help)
//   --x needs a value
//   --x 'abc' is not a whole number
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace mono {

// Exit codes shared by the tools.
constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;  // ran, but outputs differ from the expected ones
constexpr int kExitError = 2;     // bad input, bad flags, or an internal error

// Runs `body` and returns its exit code; a UserError prints "TOOL: error: MESSAGE", anything
// else thrown "TOOL: internal error: MESSAGE"; both return kExitError.
int run_main(const char* tool, const std::function<int()>& body);

// Walks argv (without argv[0]): next() yields each argument in turn; value() and int_value()
// take the argument after the current flag as its value. Errors are UserErrors.
class Flags {
 public:
  Flags(int argc, char** argv) : args_(argv + 1, argv + argc) {}
  bool next(std::string* flag);
  std::string value(const std::string& flag);  // "--x needs a value"
  int int_value(const std::string& flag);      // ... or "--x 'abc' is not a whole number"

  // For an argument no flag took: "unknown flag '--x' (see --help)".
  [[noreturn]] static void unknown(const std::string& flag);

 private:
  std::vector<std::string> args_;
  size_t i_ = 0;
};

}  // namespace mono
