#include "transports/shm/doorbell.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

#include "base/cpu.h"
#include "base/deadline.h"

namespace braid::shm {
namespace {

// Shared (not FUTEX_PRIVATE_FLAG): the word lives in a mapping other processes share.
long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

}  // namespace

void futexWait(std::atomic<uint32_t>* word, uint32_t expected, int timeoutMs) {
  timespec ts{timeoutMs / 1000, static_cast<long>(timeoutMs % 1000) * 1000000L};
  futex(word, FUTEX_WAIT, expected, &ts);  // EAGAIN, EINTR, ETIMEDOUT: the caller re-checks
}

void futexWakeAll(std::atomic<uint32_t>* word) { futex(word, FUTEX_WAKE, INT_MAX, nullptr); }

void ringDoorbell(DoorbellPage* page) {
  // A read-modify-write of `waiters` instead of a fence (ThreadSanitizer does not
  // model fences): the sleeper announces itself with an RMW on the same word,
  // so either it comes first and this sees it, or this comes first and the
  // sleeper's RMW synchronises with it and its ready() check sees the data.
  if (page->waiters.fetch_add(0, std::memory_order_seq_cst) == 0) return;
  page->bell.fetch_add(1, std::memory_order_seq_cst);
  futexWakeAll(&page->bell);
}

bool waitDoorbell(DoorbellPage* page, const std::function<bool()>& ready, int spinUs, int timeoutMs) {
  if (ready()) return true;
  if (spinUs > 0) {
    uint64_t until = nowNs() + static_cast<uint64_t>(spinUs) * 1000;
    for (unsigned i = 1;; ++i) {
      cpuRelax();
      if (ready()) return true;
      if (i % 64 == 0) {
        if (nowNs() >= until) break;
        // Oversubscribed, the peer may need this very core: let it run. On an
        // idle core sched_yield returns at once.
        sched_yield();
      }
    }
  }
  if (timeoutMs <= 0) return false;
  page->waiters.fetch_add(1, std::memory_order_seq_cst);
  uint32_t v = page->bell.load(std::memory_order_seq_cst);
  bool now = ready();
  if (!now) futexWait(&page->bell, v, timeoutMs);  // rung meanwhile, a signal, the timeout: all just return
  page->waiters.fetch_sub(1, std::memory_order_seq_cst);
  return now || ready();
}

}  // namespace braid::shm
