// SegmentedQueue: a FIFO held in fixed-size segments that are recycled.
//
// For queues that see bursts (a training step queues thousands of
// collectives on a stream, then waits): a burst allocates segments and moves
// nothing already queued, unlike a ring that doubles; and once drained, up
// to kSpareSegments segments are kept, so steady streaming allocates nothing,
// even when one thread pushes and another pops (which a std::deque turns into
// cross-thread malloc/free of its nodes). Not thread-safe: the owner locks.
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

  void push(T&& item) {
    if (!tail_ || tailPos_ == kSegmentItems) {
      std::unique_ptr<Segment> fresh = takeSegment();
      Segment* raw = fresh.get();
      if (tail_)
        tail_->next = std::move(fresh);
      else
        head_ = std::move(fresh);
      tail_ = raw;
      tailPos_ = 0;
    }
    new (tail_->at(tailPos_++)) T(std::move(item));
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
      recycle(std::move(done));
    }
  }

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
  void recycle(std::unique_ptr<Segment> s) {
    s->next.reset();
    if (spare_.size() < kSpareSegments) spare_.push_back(std::move(s));
  }

  std::unique_ptr<Segment> head_;  // owns the chain of segments
  Segment* tail_ = nullptr;
  size_t headPos_ = 0, tailPos_ = 0, size_ = 0;
  std::vector<std::unique_ptr<Segment>> spare_;
};

}  // namespace braid
