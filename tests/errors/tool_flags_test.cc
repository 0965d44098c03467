// The command line of all five tools goes through one parser (compiler/support/flags.h): the
// same wording for the same mistake, one line "TOOL: error: ..." on stderr, exit code 2. The
// flag parser on its own, then every tool as a process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/support/error.h"
#include "compiler/support/flags.h"
#include "proto/transport.h"

namespace mono {
namespace {

namespace fs = std::filesystem;

// Flags over a command line given as words (argv[0] included).
struct Argv {
  explicit Argv(std::vector<std::string> words) : words_(std::move(words)) {
    for (std::string& w : words_) ptrs_.push_back(w.data());
  }
  int argc() const { return static_cast<int>(ptrs_.size()); }
  char** argv() { return ptrs_.data(); }
  std::vector<std::string> words_;
  std::vector<char*> ptrs_;
};

std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Flags, WalksFlagsAndValues) {
  Argv a({"tool", "--name", "x", "--n", "42", "model.onnx", "--on"});
  Flags flags(a.argc(), a.argv());
  std::string flag;
  ASSERT_TRUE(flags.next(&flag));
  EXPECT_EQ(flag, "--name");
  EXPECT_EQ(flags.value(flag), "x");
  ASSERT_TRUE(flags.next(&flag));
  EXPECT_EQ(flags.int_value(flag), 42);
  ASSERT_TRUE(flags.next(&flag));
  EXPECT_EQ(flag, "model.onnx");
  ASSERT_TRUE(flags.next(&flag));
  EXPECT_EQ(flag, "--on");
  EXPECT_FALSE(flags.next(&flag));
}

TEST(Flags, ErrorsSayWhatIsWrong) {
  Argv missing({"tool", "--server"});
  Flags m(missing.argc(), missing.argv());
  std::string flag;
  m.next(&flag);
  EXPECT_EQ(user_error_of([&] { m.value(flag); }), "--server needs a value");
  for (const char* bad : {"abc", "4x", "", "99999999999"}) {
    Argv a({"tool", "--n", bad});
    Flags f(a.argc(), a.argv());
    f.next(&flag);
    EXPECT_EQ(user_error_of([&] { f.int_value(flag); }), str_cat("--n '", bad, "' is not a whole number"));
  }
  EXPECT_EQ(user_error_of([] { Flags::unknown("--x"); }), "unknown flag '--x' (see --help)");
}

TEST(Flags, RunMainPrintsOneLineAndExitsTwo) {
  testing::internal::CaptureStderr();
  const int rc = run_main("tool", [] () -> int { user_error("--x needs a value"); });
  EXPECT_EQ(rc, kExitError);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: error: --x needs a value\n");
  EXPECT_EQ(run_main("tool", [] { return kExitMismatch; }), kExitMismatch);
}

struct Outcome {
  int exit_code = -1;
  std::string err;
};

Outcome run(const std::string& cmd) {
  const fs::path err_file = fs::temp_directory_path() / ("mono_flags_err_" + std::to_string(::getpid()));
  const int status = std::system((cmd + " >/dev/null 2>" + err_file.string()).c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  o.err = ss.str();
  fs::remove(err_file);
  return o;
}

const char* kTools[][2] = {{"client", "mono-compile"},   {"client", "mono-run"},
                           {"client", "mono-submit"},    {"gpu_worker", "mono-worker"},
                           {"tuner_server", "mono-tuner-server"}};

void expect_error(const std::string& folder, const std::string& tool, const std::string& args,
                  const std::string& message) {
  const Outcome o = run(std::string(MONO_BINARY_DIR) + "/" + folder + "/" + tool + " " + args);
  EXPECT_EQ(o.exit_code, kExitError) << tool << " " << args << ": " << o.err;
  EXPECT_EQ(o.err, tool + ": error: " + message + "\n") << tool << " " << args;
}

TEST(ToolFlags, UnknownFlagAndMissingValueReadTheSameEverywhere) {
  for (const auto& [folder, tool] : kTools) {
    expect_error(folder, tool, "--bogus", "unknown flag '--bogus' (see --help)");
    // A flag that takes a value, given last (after the model for the client tools).
    const std::string name = tool;
    const bool daemon = std::string(folder) != "client";
    const std::string valued = name == "mono-tuner-server"                       ? "--db"
                               : name == "mono-worker" || name == "mono-submit" ? "--server"
                                                                                : "--shape";
    expect_error(folder, tool, (daemon ? "" : "model.onnx ") + valued, valued + " needs a value");
  }
}

TEST(ToolFlags, DaemonsCheckTheirValues) {
  expect_error("gpu_worker", "mono-worker", "", "--server ADDR is required (see --help)");
  expect_error("gpu_worker", "mono-worker", "--server x --compile-threads four",
               "--compile-threads 'four' is not a whole number");
  expect_error("gpu_worker", "mono-worker", "--server x --compile-threads 0", "--compile-threads must be at least 1");
  expect_error("gpu_worker", "mono-worker", "--server x --compile-only --gpus 0",
               "--gpus and --compile-only exclude each other");
  expect_error("tuner_server", "mono-tuner-server", "--lease-seconds soon", "--lease-seconds 'soon' is not a whole number");
  expect_error("tuner_server", "mono-tuner-server", "--lease-seconds 1", "--lease-seconds must be 3 to 3600");
  expect_error("tuner_server", "mono-tuner-server", "--token-file /nonexistent/token",
               "cannot read a token from '/nonexistent/token'");
}

// Beyond loopback without a token: refused (before anything is created); TLS files are read at
// start, and a certificate needs its key.
TEST(ToolFlags, ServerRefusesOpenListeningAndBadTls) {
  const fs::path db = fs::temp_directory_path() / ("mono_open_" + std::to_string(::getpid()) + ".db");
  for (const char* where : {"--listen 0.0.0.0:0", "--http 0.0.0.0:0", "--listen [::]:0"}) {
    const std::string address = std::string(where).substr(std::string(where).find(' ') + 1);
    expect_error("tuner_server", "mono-tuner-server", std::string("--db ") + db.string() + " " + where,
                 "refusing to listen on " + address + " (beyond loopback) without --token-file: anyone who reaches it "
                 "could submit models and report results (--allow-no-token accepts that)");
  }
  EXPECT_FALSE(fs::exists(db));
  expect_error("tuner_server", "mono-tuner-server", "--tls-cert /nonexistent/cert.pem",
               "--tls-cert and --tls-key go together");
  expect_error("tuner_server", "mono-tuner-server", "--tls-cert /nonexistent/cert.pem --tls-key /nonexistent/key.pem",
               "cannot read the TLS private key '/nonexistent/key.pem'");
  expect_error("tuner_server", "mono-tuner-server", "--tls-ca /nonexistent/ca.pem", "a TLS server needs --tls-cert and --tls-key");
  const std::string model = std::string(MONO_SOURCE_DIR) + "/tests/data/models/tiny-resnet-opset17/model.onnx";
  expect_error("client", "mono-submit", model + " --server 127.0.0.1:1 --tls-key /nonexistent/key.pem",
               "--tls-cert and --tls-key go together");
  const fs::path not_pem = fs::temp_directory_path() / ("mono_not_pem_" + std::to_string(::getpid()));
  std::ofstream(not_pem) << "not a certificate\n";
  expect_error("client", "mono-submit", model + " --server 127.0.0.1:1 --tls-ca " + not_pem.string(),
               "'" + not_pem.string() + "' is not a PEM file (TLS CA certificate)");
  fs::remove(not_pem);
  expect_error("client", "mono-submit", model + " --server 127.0.0.1:1 --budget 0", "--budget 0 is not in 1..100000000");
  expect_error("client", "mono-submit", model + " --server 127.0.0.1:1 --budget 50 --dry-run",
               "--budget caps measurements; a --dry-run measures nothing");
}

TEST(Transport, SecretsCompareWholeAndLoopbackIsRecognised) {
  EXPECT_TRUE(transport::same_secret("Bearer abc", "Bearer abc"));
  EXPECT_FALSE(transport::same_secret("Bearer abc", "Bearer abd"));
  EXPECT_FALSE(transport::same_secret("Bearer ab", "Bearer abc"));
  EXPECT_FALSE(transport::same_secret("", "x"));
  EXPECT_FALSE(transport::same_secret(std::string("a\0b", 3), "a"));
  for (const char* a : {"127.0.0.1:50051", "localhost:8080", "[::1]:50051", "unix:/run/mono.sock", "127.1.2.3:1"})
    EXPECT_TRUE(transport::is_loopback(a)) << a;
  for (const char* a : {"0.0.0.0:50051", "[::]:50051", "10.0.0.5:8080", "mono.example:443", ":8080"})
    EXPECT_FALSE(transport::is_loopback(a)) << a;
}

// --verify: mono-run needs --gpu and the model (not an artifact); mono-compile --out records
// the verification in the manifest, or why none was made.
TEST(ToolFlags, VerificationIsAskedForAndRecorded) {
  const std::string model = std::string(MONO_SOURCE_DIR) + "/tests/data/models/tiny-resnet-opset17/model.onnx";
  expect_error("client", "mono-run", model + " --verify", "--verify needs --gpu (it compares the GPU kernel with the CPU reference)");
  const fs::path out = fs::temp_directory_path() / ("mono_verify_artifact_" + std::to_string(::getpid()));
  const Outcome compiled = run(std::string(MONO_BINARY_DIR) + "/client/mono-compile " + model + " --out " + out.string());
  ASSERT_EQ(compiled.exit_code, kExitOk) << compiled.err;
  expect_error("client", "mono-run", out.string() + " --verify",
               "--verify needs the model for the CPU reference: mono-run MODEL.onnx --gpu --verify (an artifact's "
               "manifest records the verification mono-compile made)");
  std::ifstream in(out / "manifest.json");
  std::stringstream manifest;
  manifest << in.rdbuf();
  if (manifest.str().find("\"verified\": true") != std::string::npos) {
    EXPECT_NE(manifest.str().find("\"ok\": true"), std::string::npos) << manifest.str();  // a GPU here: it passed
  } else {
    EXPECT_NE(manifest.str().find("\"reason\": \"no GPU where it was compiled"), std::string::npos) << manifest.str();
  }
  const Outcome skipped =
      run(std::string(MONO_BINARY_DIR) + "/client/mono-compile " + model + " --no-verify --out " + out.string());
  ASSERT_EQ(skipped.exit_code, kExitOk) << skipped.err;
  std::ifstream in2(out / "manifest.json");
  std::stringstream manifest2;
  manifest2 << in2.rdbuf();
  EXPECT_NE(manifest2.str().find("\"reason\": \"--no-verify\""), std::string::npos) << manifest2.str();
  fs::remove_all(out);
}

TEST(ToolFlags, HelpExitsZero) {
  for (const auto& [folder, tool] : kTools) {
    const Outcome o = run(std::string(MONO_BINARY_DIR) + "/" + folder + "/" + tool + " --help");
    EXPECT_EQ(o.exit_code, kExitOk) << tool << ": " << o.err;
  }
}

}  // namespace
}  // namespace mono
