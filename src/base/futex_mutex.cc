#include "base/futex_mutex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/cpu.h"

namespace braid {
namespace {

// Spins before sleeping: about a microsecond, longer than the critical
// sections this mutex guards, shorter than a futex sleep and wake.
constexpr int kSpins = 100;

}  // namespace

void FutexMutex::lockContended() {
  for (int i = 0; i < kSpins; ++i) {
    cpuRelax();
    uint32_t seen = kFree;
    if (state_.load(std::memory_order_relaxed) == kFree &&
        state_.compare_exchange_strong(seen, kLocked, std::memory_order_acquire, std::memory_order_relaxed))
      return;
  }
  // Mark the word "sleepers maybe" and sleep until it is free. Whoever takes it
  // from here keeps the mark, so its unlock wakes the next sleeper: at worst a
  // spurious wake, never a lost one.
  while (state_.exchange(kLockedWithSleepers, std::memory_order_acquire) != kFree)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAIT_PRIVATE, kLockedWithSleepers, nullptr,
            nullptr, 0);
}

void FutexMutex::wakeOne() {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace braid
