// SegmentedQueue: FIFO order across segment boundaries, recycling, destruction
// of long chains, and one producer and one consumer thread without a lock.
#include "base/segmented_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>

namespace braid {
namespace {

TEST(SegmentedQueue, MatchesADequeUnderRandomPushesAndPops) {
  SegmentedQueue<std::unique_ptr<int>, 4, 2> q;  // tiny segments: every path is crossed often
  std::deque<int> reference;
  std::mt19937 rng(7);
  int next = 0;
  for (int step = 0; step < 20000; ++step) {
    // Bursts of pushes, then drains: the queue empties and refills many times.
    const bool filling = (step / 500) % 2 == 0;
    const bool push = reference.empty() || (filling ? rng() % 4 != 0 : rng() % 4 == 0);
    if (push) {
      const uint64_t count = q.emplace(std::make_unique<int>(next));
      EXPECT_EQ(count, q.pushed());
      reference.push_back(next++);
    } else {
      std::unique_ptr<int>* front = q.front();
      ASSERT_NE(front, nullptr);
      ASSERT_NE(*front, nullptr);
      EXPECT_EQ(**front, reference.front());
      q.pop();
      reference.pop_front();
    }
    ASSERT_EQ(q.pushed() - q.popped(), reference.size());
    ASSERT_EQ(q.front() == nullptr, reference.empty());
  }
}

TEST(SegmentedQueue, PopAndDestructionReleaseWhatItemsHeld) {
  auto shared = std::make_shared<int>(1);
  {
    SegmentedQueue<std::shared_ptr<int>, 4, 2> q;
    for (int i = 0; i < 10; ++i) q.push(std::shared_ptr<int>(shared));
    EXPECT_EQ(shared.use_count(), 11);
    for (int i = 0; i < 3; ++i) {
      ASSERT_NE(q.front(), nullptr);
      q.pop();
    }
    EXPECT_EQ(shared.use_count(), 8);  // nothing kept alive by spare or partly used segments
  }
  EXPECT_EQ(shared.use_count(), 1);  // the queue's destructor destroyed the other 7
}

TEST(SegmentedQueue, FrontStaysPutWhilePushesAddSegments) {
  SegmentedQueue<int, 2, 0> q;
  q.push(1);
  int* first = q.front();
  for (int i = 2; i < 100; ++i) q.push(int{i});
  EXPECT_EQ(first, q.front());
  EXPECT_EQ(*first, 1);
}

// Segments come back to the producer: a burst like the one before allocates
// nothing; after smaller bursts the spares shrink to what those used, though
// never below the floor.
TEST(SegmentedQueue, ARepeatedBurstAllocatesNothingAndSparesShrinkAfterSmallerOnes) {
  SegmentedQueue<int, 4, 2> q;
  auto burst = [&](int items) {
    for (int i = 0; i < items; ++i) q.push(int{i});
    for (int i = 0; i < items; ++i) {
      ASSERT_NE(q.front(), nullptr);
      ASSERT_EQ(*q.front(), i);
      q.pop();
    }
  };
  burst(40);  // 10 segments, and the one the consumer still sits in when the next burst starts
  burst(40);
  const size_t allocated = q.segmentsAllocated();
  EXPECT_GE(allocated, 10u);
  burst(40);  // the same burst again takes only recycled segments
  EXPECT_EQ(q.segmentsAllocated(), allocated);
  burst(12);
  burst(12);  // the spares are trimmed to what a 12-item burst used...
  burst(40);  // ...so a big burst allocates again
  EXPECT_GT(q.segmentsAllocated(), allocated);
  burst(9);
  const size_t afterNine = q.segmentsAllocated();
  for (int i = 0; i < 4; ++i) burst(1);  // one-item bursts trim to the floor of 2 spares, no lower
  burst(9);
  EXPECT_EQ(q.segmentsAllocated(), afterNine);
}

// An item whose constructor throws takes no place in the queue, also when it
// was to open a new segment: the items around it come out in order.
TEST(SegmentedQueue, AThrowingConstructorLeavesTheQueueAsItWas) {
  struct Picky {
    explicit Picky(int v) : value(v) {
      if (v < 0) throw std::runtime_error("refused");
    }
    int value;
  };
  SegmentedQueue<Picky, 2, 1> q;
  int expected = 0;
  for (int i = 0; i < 9; ++i) {
    q.emplace(i);
    EXPECT_THROW(q.emplace(-1), std::runtime_error);
  }
  EXPECT_EQ(q.pushed(), 9u);
  for (Picky* item = q.front(); item != nullptr; item = q.front()) {
    EXPECT_EQ(item->value, expected++);
    q.pop();
  }
  EXPECT_EQ(expected, 9);
}

TEST(SegmentedQueue, DestroysALongChainWithoutRecursingThroughIt) {
  auto q = std::make_unique<SegmentedQueue<int, 1, 0>>();
  for (int i = 0; i < 1000000; ++i) q->push(int{i});  // a million one-item segments
  q.reset();
}

// The stream's use: one thread pushes, another pops, with no lock between
// them. Every item arrives once, in order, with what was written into it
// before it was pushed; segments go back and forth many times. (Run under
// TSan in CI, which checks the handshake as well.)
TEST(SegmentedQueue, OneProducerAndOneConsumerThreadKeepOrderAndContent) {
  struct Item {
    uint64_t seq;
    uint64_t check;
  };
  SegmentedQueue<Item, 8, 2> q;
  constexpr uint64_t kItems = 200000;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kItems; ++i) {
      q.emplace(Item{i, i * 2654435761u});
      if (i % 1000 == 0) std::this_thread::yield();  // let the consumer drain: bursts of all sizes
    }
  });
  uint64_t expected = 0;
  while (expected < kItems) {
    Item* item = q.front();
    if (item == nullptr) {
      std::this_thread::yield();
      continue;
    }
    ASSERT_EQ(item->seq, expected);
    ASSERT_EQ(item->check, expected * 2654435761u);
    q.pop();
    ++expected;
  }
  producer.join();
  EXPECT_EQ(q.front(), nullptr);
  EXPECT_EQ(q.popped(), kItems);
}

}  // namespace
}  // namespace braid
