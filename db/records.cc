#include "db/records.h"

#include <nlohmann/json.hpp>

namespace mono::db {

namespace {

template <typename E, size_t N>
bool parse_name(std::string_view s, const char* const (&names)[N], E* out) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) {
      *out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

// Indexed by the enum's value.
constexpr const char* kSubmissionStates[] = {"queued", "tuning", "merging", "done", "failed"};
constexpr const char* kJobKinds[] = {"compile", "measure", "whole_kernel"};
constexpr const char* kJobStates[] = {"queued", "leased", "done", "failed"};

}  // namespace

const char* to_string(SubmissionState s) { return kSubmissionStates[static_cast<int>(s)]; }
const char* to_string(JobKind k) { return kJobKinds[static_cast<int>(k)]; }
const char* to_string(JobState s) { return kJobStates[static_cast<int>(s)]; }

bool parse(std::string_view s, SubmissionState* out) { return parse_name(s, kSubmissionStates, out); }
bool parse(std::string_view s, JobKind* out) { return parse_name(s, kJobKinds, out); }
bool parse(std::string_view s, JobState* out) { return parse_name(s, kJobStates, out); }

std::string to_json(const Environment& env) {
  nlohmann::json j = {
      {"gpu_name", env.gpu_name},
      {"sm_clock_mhz", env.sm_clock_mhz},
      {"mem_clock_mhz", env.mem_clock_mhz},
      {"driver_version", env.driver_version},
      {"cuda_version", env.cuda_version},
      {"codegen_version", env.codegen_version},
  };
  return j.dump();
}

Environment environment_from_json(std::string_view json) {
  Environment env;
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return env;
  try {
    env.gpu_name = j.value("gpu_name", "");
    env.sm_clock_mhz = j.value("sm_clock_mhz", 0);
    env.mem_clock_mhz = j.value("mem_clock_mhz", 0);
    env.driver_version = j.value("driver_version", "");
    env.cuda_version = j.value("cuda_version", "");
    env.codegen_version = j.value("codegen_version", "");
  } catch (const nlohmann::json::exception&) {
    return Environment{};  // a field of the wrong type
  }
  return env;
}

}  // namespace mono::db
