// FutexMutex: a mutex in one word (mutex 3 of Drepper's "Futexes Are
// Tricky"). Taking and releasing it uncontended is one atomic instruction
// each, where pthread_mutex_lock / unlock cost ~30 instructions per call; a
// communicator takes its mutex twice for every collective. Contended, it
// spins briefly (the holder's critical sections are short) and then sleeps
// on the futex. Lockable: use it with std::unique_lock / std::lock_guard and
// std::condition_variable_any. Process-private (FUTEX_PRIVATE_FLAG).
#pragma once

#include <atomic>
#include <cstdint>

namespace braid {

class FutexMutex {
 public:
  FutexMutex() = default;
  FutexMutex(const FutexMutex&) = delete;
  FutexMutex& operator=(const FutexMutex&) = delete;

  void lock() {
    uint32_t seen = kFree;
    if (!state_.compare_exchange_strong(seen, kLocked, std::memory_order_acquire, std::memory_order_relaxed))
      lockContended();
  }
  bool try_lock() {
    uint32_t seen = kFree;
    return state_.compare_exchange_strong(seen, kLocked, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void unlock() {
    if (state_.exchange(kFree, std::memory_order_release) == kLockedWithSleepers) wakeOne();
  }

 private:
  static constexpr uint32_t kFree = 0, kLocked = 1, kLockedWithSleepers = 2;
  void lockContended();
  void wakeOne();

  std::atomic<uint32_t> state_{kFree};
};

}  // namespace braid
