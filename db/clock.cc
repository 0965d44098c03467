#include "db/clock.h"

#include <chrono>

namespace mono::db {

Clock::~Clock() = default;

int64_t SystemClock::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace mono::db
