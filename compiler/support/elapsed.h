// Seconds elapsed on the steady clock: for logs and metrics of how long a step took.
#pragma once

#include <chrono>

namespace mono {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace mono
