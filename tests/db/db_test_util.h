// Helpers of the database tests: a temporary folder for file databases, a store on a fake
// clock, and short-hands for workers and jobs.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "db/clock.h"
#include "db/store.h"

namespace mono::db::testing {

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                       "/mono_db_test_XXXXXX";
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr) << "mkdtemp " << tmpl;
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::unique_ptr<Store> open_or_die(const std::string& path, const Clock* clock,
                                          StoreOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(path, clock, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

inline WorkerCaps gpu_caps(const std::string& gpu = "NVIDIA H100 80GB HBM3") {
  WorkerCaps c;
  c.gpu_name = gpu;
  c.sm_arch = 90;
  c.memory_bytes = int64_t{80} << 30;
  c.cuda_version = "12.4";
  c.driver_version = "550.54";
  c.gpus = 1;
  return c;
}

inline WorkerCaps compile_caps() {
  WorkerCaps c;
  c.compile_only = true;
  c.compile_threads = 8;
  return c;
}

inline NewJob job(const std::string& id, int64_t task_id, JobKind kind,
                  const std::string& gpu_kind = "", int max_attempts = 3) {
  NewJob j;
  j.id = id;
  j.task_id = task_id;
  j.kind = kind;
  j.gpu_kind = gpu_kind;
  j.payload = "{\"job\":\"" + id + "\"}";
  j.max_attempts = max_attempts;
  return j;
}

inline CandidateResult measured(int candidate, double median_us) {
  CandidateResult r;
  r.candidate = candidate;
  r.ok = true;
  r.samples_us = {median_us * 0.99, median_us, median_us * 1.01};
  r.median_us = median_us;
  r.spread = 0.02;
  r.registers = 96;
  return r;
}

inline CandidateResult failed(int candidate, FailureClass f, const std::string& reason) {
  CandidateResult r;
  r.candidate = candidate;
  r.ok = false;
  r.failure = f;
  r.reason = reason;
  return r;
}

}  // namespace mono::db::testing
