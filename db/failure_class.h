// Why a candidate or a job failed (DESIGN §6, "Failure classes"): the one list, with its one
// pair of name functions. The lower-case names are stored in the database and are the label
// values of the failure metrics (deploy/, tests/deploy/deploy_checks/contract.py), so they
// never change. The contract's enum mono.v1.FailureClass maps one to one
// (proto/failure_class.h). Header-only, so that the worker, which has no database, uses the
// same list.
#pragma once

#include <cstddef>
#include <string_view>

namespace mono::db {

// kNone for success. Only kWorkerLost is the worker's fault (retried elsewhere); the others
// are properties of the candidate and are final.
enum class FailureClass {
  kNone,
  kCompileError,
  kResourceError,
  kLaunchError,
  kTimeout,
  kWrongAnswer,
  kWorkerLost,
};

// Indexed by the enum's value.
inline constexpr const char* kFailureClasses[] = {"",        "compile_error", "resource_error",
                                                  "launch_error", "timeout", "wrong_answer",
                                                  "worker_lost"};
static_assert(sizeof(kFailureClasses) / sizeof(kFailureClasses[0]) == static_cast<size_t>(FailureClass::kWorkerLost) + 1,
              "one name per failure class");

// "" | "compile_error" | "resource_error" | "launch_error" | "timeout" | "wrong_answer" | "worker_lost"
inline const char* to_string(FailureClass f) { return kFailureClasses[static_cast<int>(f)]; }

// False when the name is unknown (the output is left alone).
inline bool parse(std::string_view s, FailureClass* out) {
  for (size_t i = 0; i < sizeof(kFailureClasses) / sizeof(kFailureClasses[0]); ++i) {
    if (s == kFailureClasses[i]) {
      *out = static_cast<FailureClass>(i);
      return true;
    }
  }
  return false;
}

}  // namespace mono::db
