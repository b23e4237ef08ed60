// SegmentedQueue: FIFO order across segment boundaries, recycling, and
// destruction of long chains.
#include "base/segmented_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>

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
      q.push(std::make_unique<int>(next));
      reference.push_back(next++);
    } else {
      ASSERT_NE(q.front(), nullptr);
      EXPECT_EQ(*q.front(), reference.front());
      q.pop();
      reference.pop_front();
    }
    ASSERT_EQ(q.size(), reference.size());
    ASSERT_EQ(q.empty(), reference.empty());
  }
}

TEST(SegmentedQueue, PopAndDestructionReleaseWhatItemsHeld) {
  auto shared = std::make_shared<int>(1);
  {
    SegmentedQueue<std::shared_ptr<int>, 4, 2> q;
    for (int i = 0; i < 10; ++i) q.push(std::shared_ptr<int>(shared));
    EXPECT_EQ(shared.use_count(), 11);
    for (int i = 0; i < 3; ++i) q.pop();
    EXPECT_EQ(shared.use_count(), 8);  // nothing kept alive by spare or partly used segments
  }
  EXPECT_EQ(shared.use_count(), 1);  // the queue's destructor destroyed the other 7
}

TEST(SegmentedQueue, FrontStaysPutWhilePushesAddSegments) {
  SegmentedQueue<int, 2, 0> q;
  q.push(1);
  int* first = &q.front();
  for (int i = 2; i < 100; ++i) q.push(int{i});
  EXPECT_EQ(first, &q.front());
  EXPECT_EQ(*first, 1);
}

TEST(SegmentedQueue, KeepsAsManySparesAsTheLastBurstUsed) {
  SegmentedQueue<int, 4, 2> q;
  auto burst = [&](int items) {
    for (int i = 0; i < items; ++i) q.push(int{i});
    for (int i = 0; i < items; ++i) {
      ASSERT_EQ(q.front(), i);
      q.pop();
    }
  };
  burst(40);  // 10 segments
  EXPECT_EQ(q.spareSegments(), 10u);
  burst(40);  // the same burst again takes only spares
  EXPECT_EQ(q.spareSegments(), 10u);
  burst(12);  // a smaller burst: the spares shrink to its 3 segments
  EXPECT_EQ(q.spareSegments(), 3u);
  burst(1);  // never below the floor of 2
  EXPECT_EQ(q.spareSegments(), 2u);
}

TEST(SegmentedQueue, DestroysALongChainWithoutRecursingThroughIt) {
  auto q = std::make_unique<SegmentedQueue<int, 1, 0>>();
  for (int i = 0; i < 1000000; ++i) q->push(int{i});  // a million one-item segments
  q.reset();
}

}  // namespace
}  // namespace braid
