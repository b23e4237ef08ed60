// SegmentedQueue: a FIFO between one producer and one consumer thread, held in
// fixed-size segments that are recycled, with no lock on either side.
//
// For a stream's queue of work. A caller queuing collectives back to back and
// the worker running them used to share a mutex per item; on this 2-core VM
// the two fought for it (futex waits and wakes on both sides), and a one-rank
// stream cost 1 us an op against 0.25 inline. Here the producer publishes an
// item with one store of its count and the consumer retires it with another,
// so each side writes its own cache line and reads the other's.
//
// Segments, not a ring: a burst (a training step queues thousands of
// collectives, then waits) allocates segments and moves nothing already
// queued, and an item stays where it was built until it is popped, so the
// consumer runs it in place. A drained segment goes back to the producer
// through a lock-free stack; the producer keeps as many spares as the last
// burst used (at least kSpareSegments), so a burst the size of the one before
// allocates nothing and does not page-fault fresh heap in again (a 50000-op
// burst is 8 MB of new pages otherwise, each first touch a fault, which cost
// a one-core stream about 0.2 us an op). After a smaller burst the spares
// shrink to its size, so one huge burst does not pin its memory for good.
//
// Threads: emplace() is the producer's (several producers serialize among
// themselves, e.g. with a mutex the consumer never takes); front() and pop()
// are the consumer's; pushed() and popped() may be read by anyone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace braid {

template <typename T, size_t kSegmentItems = 32, size_t kSpareSegments = 64>
class SegmentedQueue {
  static_assert(kSegmentItems > 0);

 public:
  SegmentedQueue() : head_(new Segment), tail_(head_) { ++segmentsInUse_; }
  // Only once both threads are done with the queue.
  ~SegmentedQueue() {
    while (front() != nullptr) pop();
    for (Segment* s = head_; s != nullptr;) {  // a loop, so a long chain costs no recursion
      Segment* next = s->next;
      delete s;
      s = next;
    }
    takeReturned();
    for (Segment* s : spare_) delete s;
  }
  SegmentedQueue(const SegmentedQueue&) = delete;
  SegmentedQueue& operator=(const SegmentedQueue&) = delete;

  // Items published so far, and items popped so far: the queue holds the
  // difference. Sequentially consistent loads (on x86 as cheap as acquire
  // ones), for the handshakes emplace() and pop() describe.
  uint64_t pushed() const { return pushed_.load(std::memory_order_seq_cst); }
  uint64_t popped() const { return popped_.load(std::memory_order_seq_cst); }

  // Producer. Constructs the new item in place from `args` (no temporary to
  // move) and publishes it; returns the count pushed so far. The store is
  // sequentially consistent so that a producer that then checks whether the
  // consumer sleeps, against a consumer that announced its sleep and then
  // checks pushed(), cannot both miss the other.
  template <typename... Args>
  uint64_t emplace(Args&&... args) {
    if (tailPos_ == kSegmentItems) {
      Segment* fresh = takeSegment();
      tail_->next = fresh;  // published with the item below, before the consumer needs it
      tail_ = fresh;
      tailPos_ = 0;
    }
    // The slot counts as used only once its item is built: a constructor that
    // throws leaves the queue as it was.
    new (tail_->at(tailPos_)) T(std::forward<Args>(args)...);
    ++tailPos_;
    const uint64_t count = pushedByProducer_ + 1;
    pushedByProducer_ = count;
    pushed_.store(count, std::memory_order_seq_cst);
    return count;
  }
  void push(T&& item) { emplace(std::move(item)); }

  // Consumer. The oldest item, in place, or null when none is published. It
  // stays where it is until pop(), whatever is pushed meanwhile.
  T* front() {
    // The producer's count is read again only when the items it last showed
    // are used up: while the consumer is behind, it does not pull the line
    // the producer writes on every push.
    if (poppedByConsumer_ == pushedSeen_) {
      pushedSeen_ = pushed_.load(std::memory_order_acquire);
      if (poppedByConsumer_ == pushedSeen_) return nullptr;
    }
    if (headPos_ == kSegmentItems) {
      // This segment is spent and the next item is published, so the link
      // to its segment is written and visible.
      Segment* spent = head_;
      head_ = spent->next;
      headPos_ = 0;
      giveBack(spent);
    }
    return std::launder(reinterpret_cast<T*>(head_->at(headPos_)));
  }

  // Consumer. Destroys the oldest item (front() must have returned it) and
  // counts it popped, with a sequentially consistent store for the same
  // reason as emplace's: a waiter announces itself, then reads popped().
  void pop() {
    std::launder(reinterpret_cast<T*>(head_->at(headPos_)))->~T();
    ++headPos_;
    popped_.store(++poppedByConsumer_, std::memory_order_seq_cst);
  }

  // Segments the producer has allocated (for tests).
  size_t segmentsAllocated() const { return segmentsAllocated_; }

 private:
  // Raw storage: an item is constructed by emplace and destroyed by pop, so a
  // slot costs nothing between uses (no default-constructed T to overwrite).
  struct Segment {
    alignas(T) unsigned char storage[kSegmentItems * sizeof(T)];
    // The chain's link (written by the producer before it publishes the
    // first item of the next segment), or the returned stack's.
    Segment* next = nullptr;
    void* at(size_t i) { return storage + i * sizeof(T); }
  };

  // Producer. A spare, else one the consumer gave back, else a new one.
  Segment* takeSegment() {
    takeReturned();
    if (segmentsInUse_ == 1) endBurst();  // the consumer is in the tail: the queue drained
    Segment* s;
    if (spare_.empty()) {
      s = new Segment;  // storage left uninitialised
      ++segmentsAllocated_;
    } else {
      s = spare_.back();
      spare_.pop_back();
    }
    s->next = nullptr;
    if (++segmentsInUse_ > burstSegments_) burstSegments_ = segmentsInUse_;
    return s;
  }
  // Producer. Moves what the consumer gave back into the spares. The stack is
  // taken whole, so its one popper meets no ABA.
  void takeReturned() {
    for (Segment* s = returned_.exchange(nullptr, std::memory_order_acquire); s != nullptr;) {
      Segment* next = s->next;
      spare_.push_back(s);
      --segmentsInUse_;
      s = next;
    }
  }
  // Producer. Spares kept whatever the count while a burst drains; trimmed
  // to what that burst used once it has.
  void endBurst() {
    const size_t keep = burstSegments_ > kSpareSegments ? burstSegments_ : kSpareSegments;
    while (spare_.size() > keep) {
      delete spare_.back();
      spare_.pop_back();
    }
    burstSegments_ = segmentsInUse_;
  }
  // Consumer. Hands a spent segment back to the producer.
  void giveBack(Segment* s) {
    s->next = returned_.load(std::memory_order_relaxed);
    while (
        !returned_.compare_exchange_weak(s->next, s, std::memory_order_release, std::memory_order_relaxed)) {
    }
  }

  // The consumer's side: each on its own cache line, apart from the producer's.
  alignas(64) Segment* head_;
  size_t headPos_ = 0;
  uint64_t poppedByConsumer_ = 0;
  uint64_t pushedSeen_ = 0;  // pushed_ when the consumer last read it
  alignas(64) std::atomic<uint64_t> popped_{0};
  // The producer's side.
  alignas(64) Segment* tail_;
  size_t tailPos_ = 0;
  uint64_t pushedByProducer_ = 0;
  size_t segmentsInUse_ = 0;  // in the chain or not yet taken back from returned_
  size_t burstSegments_ = 0;  // the most in use since the queue last drained
  size_t segmentsAllocated_ = 1;
  std::vector<Segment*> spare_;
  alignas(64) std::atomic<uint64_t> pushed_{0};
  alignas(64) std::atomic<Segment*> returned_{nullptr};
};

}  // namespace braid
