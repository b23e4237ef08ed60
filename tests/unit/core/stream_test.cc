// Streams run work in order on their own thread; events mark points in them.
#include "core/stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace braid::core {
namespace {

TEST(Stream, RunsInOrderAndSynchronizeWaits) {
  Stream s;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) s.enqueue([&order, i] { order.push_back(i); return Status::ok(); });
  ASSERT_TRUE(s.synchronize().isOk());
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_TRUE(s.query().isOk());
}

// Items queued while the worker is blocked span many of the queue's segments,
// starting mid-segment; they still run once each, in order, and a second
// burst runs on recycled segments.
TEST(Stream, KeepsOrderAcrossManySegmentsAndRecycledOnes) {
  Stream s;
  std::vector<int> order;
  for (int round = 0; round < 2; ++round) {
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    // Start the burst off a segment boundary.
    for (int i = 0; i < 40; ++i)
      s.enqueue([&order, i] {
        order.push_back(i);
        return Status::ok();
      });
    ASSERT_TRUE(s.synchronize().isOk());
    s.enqueue([gate] {
      gate.wait();
      return Status::ok();
    });
    for (int i = 40; i < 10000; ++i)
      s.enqueue([&order, i] {
        order.push_back(i);
        return Status::ok();
      });
    release.set_value();
    ASSERT_TRUE(s.synchronize().isOk());
    ASSERT_EQ(order.size(), 10000u) << "round " << round;
    for (int i = 0; i < 10000; ++i) ASSERT_EQ(order[i], i) << "round " << round;
    order.clear();
  }
}

// A caller that queues faster than the worker runs waits for room: no item
// finds more than the bound queued ahead of it. Each item spins 20 us, so an
// unbounded caller would queue all 300 within the first few.
TEST(Stream, CallerWaitsForRoomWhileTheWorkerMoves) {
  constexpr uint64_t kBound = 16;
  Stream s(Stream::Limits{kBound, /*stalledWaitMs=*/60000});
  std::atomic<uint64_t> queued{0};
  uint64_t deepest = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    s.enqueue([&queued, &deepest, i] {
      deepest = std::max(deepest, queued.load() - i);
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
      return Status::ok();
    });
    queued.fetch_add(1);
  }
  ASSERT_TRUE(s.synchronize().isOk());
  EXPECT_GE(deepest, kBound / 2) << "the caller never got ahead: the bound was not exercised";
  EXPECT_LE(deepest, kBound);
}

// A queued item that waits for something its caller does only after queuing
// past the bound (as a collective whose peer waits on this caller's later
// inline call) does not deadlock the caller: once the worker has run nothing
// for stalledWaitMs the queue grows, and everything runs in order.
TEST(Stream, CallerQueuesPastTheBoundWhenTheWorkerIsHeldUp) {
  Stream s(Stream::Limits{8, /*stalledWaitMs=*/5});
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::vector<int> order;
  s.enqueue([gate] {
    gate.wait();
    return Status::ok();
  });
  for (int i = 0; i < 100; ++i)
    s.enqueue([&order, i] {
      order.push_back(i);
      return Status::ok();
    });
  release.set_value();  // reached only if the caller did not wait for room for good
  ASSERT_TRUE(s.synchronize().isOk());
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(Stream, QueryIsInProgressWhileWorkIsBlocked) {
  Stream s;
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  s.enqueue([gate] { gate.wait(); return Status::ok(); });
  EXPECT_EQ(s.query().code(), Code::kInProgress);
  Event e;
  e.record(s);
  EXPECT_FALSE(e.reached());
  release.set_value();
  e.synchronize();
  EXPECT_TRUE(e.reached());
  EXPECT_TRUE(s.synchronize().isOk());
}

TEST(Stream, FirstErrorIsReportedOnceAndLaterWorkStillRuns) {
  Stream s;
  std::atomic<int> ran{0};
  s.enqueue([] { return invalidArgument("first"); });
  s.enqueue([] { return internalError("second"); });
  s.enqueue([&] { ran++; return Status::ok(); });
  Status st = s.synchronize();
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.message(), "first");
  EXPECT_EQ(ran.load(), 1);
  EXPECT_TRUE(s.synchronize().isOk());
}

// Callers on several threads queue on one stream and synchronize whenever
// they like: each synchronize returns only once the caller's own earlier work
// has run, however the others' pushes interleave, and none is left waiting
// (a synchronizer waits for a mark, and the worker wakes it there).
TEST(Stream, SynchronizeFromSeveralThreadsWaitsForEachCallersOwnWork) {
  Stream s;
  constexpr int kThreads = 4, kRounds = 200, kPerRound = 7;
  std::atomic<int> done[kThreads] = {};
  std::vector<std::thread> callers;
  for (int t = 0; t < kThreads; ++t)
    callers.emplace_back([&, t] {
      for (int round = 1; round <= kRounds; ++round) {
        for (int i = 0; i < kPerRound; ++i)
          s.enqueue([&done, t] {
            done[t].fetch_add(1);
            return Status::ok();
          });
        EXPECT_TRUE(s.synchronize().isOk());
        EXPECT_EQ(done[t].load(), round * kPerRound);
      }
    });
  for (std::thread& c : callers) c.join();
  EXPECT_TRUE(s.query().isOk());
}

TEST(Event, NeverRecordedCountsAsReached) {
  Event e;
  EXPECT_TRUE(e.reached());
  e.synchronize();
}

TEST(Stream, DestructorDrainsQueuedWork) {
  std::atomic<int> ran{0};
  {
    Stream s;
    for (int i = 0; i < 10; ++i) s.enqueue([&] { ran++; return Status::ok(); });
  }
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace braid::core
