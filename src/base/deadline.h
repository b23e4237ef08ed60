// Deadline: a point on the monotonic clock after which a wait must give up.
// Every blocking wait in braid takes one, so nothing can hang forever.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace braid {

using Clock = std::chrono::steady_clock;

class Deadline {
 public:
  // timeoutMs < 0 means "never" (only for tests and internal loops that are
  // bounded some other way).
  explicit Deadline(int64_t timeoutMs) : Deadline(timeoutMs, Clock::now()) {}
  // Counting from `start`, a clock reading the caller already has.
  Deadline(int64_t timeoutMs, Clock::time_point start)
      : infinite_(timeoutMs < 0), at_(start + std::chrono::milliseconds(timeoutMs < 0 ? 0 : timeoutMs)) {}
  static Deadline never() { return Deadline(-1); }

  bool expired() const { return !infinite_ && Clock::now() >= at_; }
  // Milliseconds left, clamped to [0, cap]; cap when infinite. Suits poll().
  int remainingMs(int cap = 1000) const {
    if (infinite_) return cap;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
    if (left < 0) return 0;
    return left > cap ? cap : static_cast<int>(left);
  }

 private:
  bool infinite_;
  Clock::time_point at_;
};

inline uint64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// The same monotonic clock at its tick's resolution (CLOCK_MONOTONIC_COARSE:
// 1-4 ms behind at most, never ahead): a few ns to read where Clock::now()
// costs ~25 on a VM. For what counts milliseconds on the path of every op:
// the flight recorder's stamps and the op's deadline.
inline Clock::time_point coarseNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(ts.tv_sec) +
                                                                       std::chrono::nanoseconds(ts.tv_nsec)));
}
inline uint64_t coarseNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(coarseNow().time_since_epoch()).count();
}

}  // namespace braid
