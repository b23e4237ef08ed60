// The flight recorder keeps each ticket's record in the ticket's place, so
// that an op recorded late (a stream's op, recorded when its worker reaches
// it) sits in issue order beside ops run inline meanwhile.
#include "core/flight_recorder.h"

#include <gtest/gtest.h>

#include <vector>

namespace braid::core {
namespace {

std::vector<uint64_t> ticketsOf(const FlightRecorder& r) {
  std::vector<uint64_t> out;
  for (const OpRecord& op : r.snapshot()) out.push_back(op.ticket);
  return out;
}

TEST(FlightRecorder, ListsRecordsInTicketOrderWhateverTheOrderTheyCameIn) {
  FlightRecorder r(8);
  r.enqueued(1, 100).count = 11;
  r.enqueued(0, 200).count = 10;
  EXPECT_EQ(ticketsOf(r), (std::vector<uint64_t>{0, 1}));
  r.started(0, 1, 64, 300);
  r.finished(0, Status::ok());
  const std::vector<OpRecord> ops = r.snapshot();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].count, 10u);
  EXPECT_EQ(ops[0].state, OpState::kCompleted);
  EXPECT_EQ(ops[0].enqueuedNs, 200u);
  EXPECT_EQ(ops[1].state, OpState::kEnqueued);
}

TEST(FlightRecorder, LeavesOutTicketsNotRecordedYet) {
  FlightRecorder r(8);
  r.enqueued(0, 1);
  r.enqueued(3, 1);  // 1 and 2 are queued on a stream, not reached yet
  EXPECT_EQ(ticketsOf(r), (std::vector<uint64_t>{0, 3}));
  r.finished(2, Status::ok());  // no record: nothing happens
  EXPECT_EQ(ticketsOf(r), (std::vector<uint64_t>{0, 3}));
  r.enqueued(2, 1);
  EXPECT_EQ(ticketsOf(r), (std::vector<uint64_t>{0, 2, 3}));
}

TEST(FlightRecorder, KeepsTheLastCapacityTickets) {
  FlightRecorder r(4);
  for (uint64_t t = 0; t < 10; ++t) r.enqueued(t, t);
  EXPECT_EQ(ticketsOf(r), (std::vector<uint64_t>{6, 7, 8, 9}));
  r.started(5, 1, 0, 0);  // overwritten by 9: not found, nothing changes
  for (const OpRecord& op : r.snapshot()) EXPECT_EQ(op.state, OpState::kEnqueued);
}

TEST(FlightRecorder, ACapacityNotAPowerOfTwoWorksTheSame) {
  FlightRecorder r(3);
  for (uint64_t t : {1, 0, 2, 4, 3}) r.enqueued(t, t);
  EXPECT_EQ(ticketsOf(r), (std::vector<uint64_t>{2, 3, 4}));
}

}  // namespace
}  // namespace braid::core
