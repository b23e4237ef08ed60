// SegmentedQueue: a FIFO held in fixed-size segments that are recycled.
//
// For queues that see bursts (a training step queues thousands of
// collectives on a stream, then waits): a burst allocates segments and moves
// nothing already queued, unlike a ring that doubles. Drained segments are
// kept as spares, as many as the last burst used (at least kSpareSegments),
// so a burst the size of the one before allocates nothing: steady streaming
// makes no cross-thread malloc/free (which a std::deque does with its nodes)
// and a repeated burst does not page-fault fresh heap in again (a 50000-op
// burst is 8 MB of new pages otherwise, each first touch a fault, which cost
// a one-core stream about 0.2 us an op). After a smaller burst the spares
// shrink to its size, so one huge burst does not pin its memory for good.
// Not thread-safe: the owner locks.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace braid {

template <typename T, size_t kSegmentItems = 32, size_t kSpareSegments = 64>
class SegmentedQueue {
 public:
  SegmentedQueue() = default;
  // Popping everything releases every segment of the chain one by one (pop
  // recycles each as it empties), so no long chain is left to recurse through.
  ~SegmentedQueue() {
    while (!empty()) pop();
  }
  SegmentedQueue(const SegmentedQueue&) = delete;
  SegmentedQueue& operator=(const SegmentedQueue&) = delete;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  void push(T&& item) { emplace(std::move(item)); }

  // Constructs the new item in place from `args` (no temporary to move).
  template <typename... Args>
  void emplace(Args&&... args) {
    if (!tail_ || tailPos_ == kSegmentItems) {
      std::unique_ptr<Segment> fresh = takeSegment();
      if (++chainSegments_ > burstSegments_) burstSegments_ = chainSegments_;
      Segment* raw = fresh.get();
      if (tail_)
        tail_->next = std::move(fresh);
      else
        head_ = std::move(fresh);
      tail_ = raw;
      tailPos_ = 0;
    }
    new (tail_->at(tailPos_++)) T(std::forward<Args>(args)...);
    ++size_;
  }

  // The oldest item, in place: it stays where it is until pop(), whatever is
  // pushed meanwhile (segments never move), so a consumer may use it without
  // holding the owner's lock. The queue must not be empty.
  T& front() { return *std::launder(reinterpret_cast<T*>(head_->at(headPos_))); }

  // Destroys the oldest item. The queue must not be empty.
  void pop() {
    front().~T();
    ++headPos_;
    --size_;
    if (headPos_ == kSegmentItems || size_ == 0) {
      // Done with this segment; or the queue is empty, and then this segment
      // is also the tail (every segment after the head holds an item).
      std::unique_ptr<Segment> done = std::move(head_);
      head_ = std::move(done->next);
      if (!head_) tail_ = nullptr;
      headPos_ = 0;
      --chainSegments_;
      recycle(std::move(done));
      if (size_ == 0) endBurst();
    }
  }

  // Spare segments kept now (for tests).
  size_t spareSegments() const { return spare_.size(); }

 private:
  // Raw storage: an item is constructed by push and destroyed by pop, so a
  // slot costs nothing between uses (no default-constructed T to overwrite).
  struct Segment {
    alignas(T) unsigned char storage[kSegmentItems * sizeof(T)];
    std::unique_ptr<Segment> next;
    void* at(size_t i) { return storage + i * sizeof(T); }
  };

  std::unique_ptr<Segment> takeSegment() {
    if (spare_.empty()) return std::unique_ptr<Segment>(new Segment);  // storage left uninitialised
    std::unique_ptr<Segment> s = std::move(spare_.back());
    spare_.pop_back();
    return s;
  }
  // Kept whatever the count while a burst drains; endBurst trims.
  void recycle(std::unique_ptr<Segment> s) {
    s->next.reset();
    spare_.push_back(std::move(s));
  }
  void endBurst() {
    const size_t keep = burstSegments_ > kSpareSegments ? burstSegments_ : kSpareSegments;
    if (spare_.size() > keep) spare_.resize(keep);
    burstSegments_ = 0;
  }

  std::unique_ptr<Segment> head_;  // owns the chain of segments
  Segment* tail_ = nullptr;
  size_t headPos_ = 0, tailPos_ = 0, size_ = 0;
  size_t chainSegments_ = 0;  // segments in the chain now
  size_t burstSegments_ = 0;  // the most in the chain since the queue was last empty
  std::vector<std::unique_ptr<Segment>> spare_;
};

}  // namespace braid
