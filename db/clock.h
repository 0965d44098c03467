// The time source of the tuning service's database. Injected, never global: the server
// passes a SystemClock, tests a FakeClock they move by hand (no sleeps).
#pragma once

#include <atomic>
#include <cstdint>

namespace mono::db {

class Clock {
 public:
  virtual ~Clock();
  // Milliseconds since the Unix epoch (or any fixed origin: only differences matter).
  virtual int64_t now_ms() const = 0;
};

// The wall clock.
class SystemClock : public Clock {
 public:
  int64_t now_ms() const override;
};

// A clock that moves only when told to. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1'700'000'000'000) : now_(start_ms) {}
  int64_t now_ms() const override { return now_.load(); }
  void set(int64_t ms) { now_.store(ms); }
  void advance(int64_t ms) { now_.fetch_add(ms); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace mono::db
