// Doorbell: one futex word per transport instance, in a small shared segment
// that every peer connected to this process maps. A peer that made progress
// possible for us (wrote into a ring we read, freed space in or acknowledged a
// pull on a ring we write) rings it; wait() sleeps on it. One word per process
// because a thread can sleep on only one futex at a time.
//
// Lost-wakeup freedom (Dekker style, both sides sequentially consistent):
//   ringer: publish ring state; fence; if waiters > 0 { bell++; FUTEX_WAKE }
//   waiter: waiters++; v = bell; if (!ready()) FUTEX_WAIT(bell, v); waiters--
// If the ringer saw waiters == 0, its publication precedes the waiter's
// ready() check; otherwise the bell changes after v was read or the wake finds
// the sleeper. The ringer makes no syscall and no shared write unless someone
// sleeps, so the fast path stays syscall-free.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace braid::shm {

struct alignas(64) DoorbellPage {
  std::atomic<uint32_t> bell{0};
  std::atomic<uint32_t> waiters{0};
  // The copies this process may make, over all its connections: CMA sends
  // not yet copied, and receives that could take a CMA message not yet
  // done. A sender deciding whether to push reads its own and the
  // receiver's (ShmSendComm::tryPush): the end with fewer copies ahead makes
  // this one. A line of their own: they change per large message, the bell
  // per wait.
  alignas(64) std::atomic<int32_t> pendingSends{0};
  std::atomic<int32_t> pendingRecvs{0};
  // Set while this process copies or reduces locally (Transport::noteLocalWork)
  // and tests no transfer: a sender with as many copies ahead pushes then.
  std::atomic<uint32_t> busy{0};
};
constexpr size_t kDoorbellBytes = 4096;
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// Called by a peer after publishing ring state.
void ringDoorbell(DoorbellPage* page);

// The futex calls on a word that other processes map (not FUTEX_PRIVATE_FLAG).
// futexWait sleeps while *word == expected, at most timeoutMs (> 0); it
// returns on a wake, a changed value, a signal or the timeout alike.
void futexWait(std::atomic<uint32_t>* word, uint32_t expected, int timeoutMs);
void futexWakeAll(std::atomic<uint32_t>* word);

// Spins up to spinUs on ready(), then sleeps on the bell until ready(), a ring,
// or timeoutMs. Returns whether ready() held (a spurious false is allowed).
bool waitDoorbell(DoorbellPage* page, const std::function<bool()>& ready, int spinUs, int timeoutMs);

}  // namespace braid::shm
