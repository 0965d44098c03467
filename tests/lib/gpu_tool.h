// What the GPU test tools (gpu_conformance, difftest) share: the --dtype flag's value and the
// loop that runs their jobs on every core (one GPU, so each job takes the GPU mutex itself).
#pragma once

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "compiler/codegen/settings.h"
#include "compiler/support/error.h"

namespace mono::test {

// fp32, fp16 or both.
inline std::vector<Precision> precisions_flag(const std::string& v) {
  if (v == "fp32") return {Precision::kF32};
  if (v == "fp16") return {Precision::kF16};
  if (v == "both") return {Precision::kF32, Precision::kF16};
  user_error("--dtype ", v, " is not one of: fp32, fp16, both");
}

inline const char* precision_name(Precision p) { return p == Precision::kF16 ? "fp16" : "fp32"; }

// Calls job(i) for i in [0, n) on `threads` threads, each taking the next index.
template <class F>
void run_parallel(size_t n, int threads, F job) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t)
    pool.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) job(i);
    });
  for (std::thread& t : pool) t.join();
}

}  // namespace mono::test
