// braid-trace's findings on dumps written here: a hang with one rank an op
// behind, a failure, absent dumps, a slow rank (one host and several), ranks
// calling different collectives, and point-to-point ops that must not look
// like a missing rank. Each asserts the exact words a user reads.
#include <gtest/gtest.h>

#include "analyze.h"
#include "load.h"
#include "render_json.h"
#include "render_text.h"
#include "trace_dumps.h"

namespace braid::trace {
namespace {

using testing::completedAllReduces;
using testing::FakeOp;
using testing::FakeRank;
using testing::TempDir;

constexpr uint64_t kBase = 1'000'000'000'000;  // an arbitrary steady-clock origin

Report analyzeDir(const TempDir& dir) {
  Loaded loaded = loadDumps({dir.path()});
  EXPECT_EQ(loaded.error, "");
  return analyze(loaded.dumps);
}

std::string has(const std::string& text, const std::string& phrase) {
  return text.find(phrase) == std::string::npos ? "missing \"" + phrase + "\" in: " + text : "";
}

// Ranks 0-2 are inside all-reduce #1842; rank 3 finished #1841 and only queued
// #1842 (queued is not reached). The rings have wrapped (first ticket 1836).
TEST(BraidTrace, HangNamesTheRankThatNeverReachedTheOp) {
  TempDir dir;
  for (int rank = 0; rank < 4; ++rank) {
    FakeRank r{rank, 4, "node1", 1836, 0, completedAllReduces(1837, 5, kBase)};
    const uint64_t start = kBase + 50'000'000 + uint64_t(rank) * 1000;
    if (rank < 3)
      r.ops.push_back(FakeOp{"allreduce", 1842, "started", start, 0, ""});
    else
      r.ops.push_back(FakeOp{"allreduce", 0, "enqueued", start, 0, ""});
    r.nowNs = start + 12'000'000'000 - uint64_t(rank) * 500'000'000;
    dir.write(r);
  }
  Report report = analyzeDir(dir);
  EXPECT_EQ(summary(report),
            "4 ranks, 4 dumps from host node1. Ranks 0-2 are in allreduce #1842 (for up to 12.0 s); rank 3 "
            "last completed allreduce #1841. Rank 3 is missing from allreduce #1842: it last completed "
            "allreduce #1841. No rank stands out as slow: the latest, rank 0, entered the 5 ops every rank "
            "completed 0 ns after the first on average (start times, all dumps are from one host).");
  ASSERT_EQ(report.missing.size(), 1u);
  EXPECT_EQ(report.missing[0].rank, 3);
  EXPECT_EQ(report.ranks[3].queued, 1u);
  EXPECT_TRUE(report.absent.empty());
  const std::string table = renderText(report);
  EXPECT_EQ(has(table, "in allreduce #1842 for 12.0 s"), "");
  EXPECT_EQ(has(table, "idle"), "");
  auto json = toJson(report);
  EXPECT_EQ(json["missing"][0]["rank"], 3);
  EXPECT_EQ(json["missing"][0]["from"][0]["label"], "allreduce #1842");
  EXPECT_EQ(json["ranks"][0]["in"]["for_ns"], 12'000'000'000u);
}

// Rank 1's all-reduce #3 timed out; its next call failed at once without
// starting (the communicator had failed), which is an echo, not the cause.
TEST(BraidTrace, FailureIsQuotedWithItsErrorOnce) {
  TempDir dir;
  FakeRank r0{0, 2, "node1", 0, kBase + 60'000'000'000, completedAllReduces(1, 2, kBase)};
  r0.ops.push_back(FakeOp{"allreduce", 3, "started", kBase + 20'000'000, 0, ""});
  FakeRank r1{1, 2, "node1", 0, kBase + 60'000'000'000, completedAllReduces(1, 2, kBase)};
  const std::string error =
      "allreduce #3: rank 1 timed out after 30000 ms waiting to receive 4 KiB from rank 0";
  r1.ops.push_back(FakeOp{"allreduce", 3, "failed", kBase + 20'000'000, kBase + 50'020'000'000, error});
  r1.ops.push_back(FakeOp{"broadcast", 0, "failed", kBase + 50'030'000'000, kBase + 50'030'000'000,
                          "broadcast: the communicator failed earlier: " + error});
  dir.write(r0);
  dir.write(r1);
  Report report = analyzeDir(dir);
  const std::string text = summary(report);
  EXPECT_EQ(has(text, "Rank 0 is in allreduce #3 (for 60.0 s)."), "");
  // The message's own "allreduce #3: " is not repeated after the sentence's.
  EXPECT_EQ(has(text,
                " Rank 1 failed in allreduce #3: rank 1 timed out after 30000 ms waiting to receive 4 KiB "
                "from rank 0."),
            "");
  EXPECT_EQ(text.find("the communicator failed earlier"), std::string::npos) << text;
  EXPECT_EQ(text.find("missing"), std::string::npos) << text;  // both entered #3
  EXPECT_TRUE(report.ranks[1].stoppedByFailure);
  EXPECT_EQ(toJson(report)["ranks"][1]["failed"]["error"], error);
}

TEST(BraidTrace, AbsentDumpsAreListed) {
  TempDir dir;
  for (int rank : {0, 1, 2, 3, 4, 6})
    dir.write(FakeRank{rank, 8, "node1", 0, kBase, completedAllReduces(1, 2, kBase)});
  Report report = analyzeDir(dir);
  EXPECT_EQ(report.absent, (std::vector<int>{5, 7}));
  const std::string text = summary(report);
  EXPECT_EQ(has(text,
                "8 ranks, 6 dumps from host node1. No dump from ranks 5, 7. Ranks 0-4, 6 last completed "
                "allreduce #2."),
            "");
  EXPECT_EQ(has(text, "the 2 ops every rank with a dump completed"), "");
}

// One host: rank 2 enters every op 5 ms after the others.
TEST(BraidTrace, SlowRankOnOneHostFromStartTimes) {
  TempDir dir;
  for (int rank = 0; rank < 4; ++rank)
    dir.write(
        FakeRank{rank, 4, "node1", 0, kBase, completedAllReduces(1, 3, kBase, rank == 2 ? 5'000'000 : 0)});
  Report report = analyzeDir(dir);
  EXPECT_EQ(has(summary(report),
                "Rank 2 is the slowest: it entered the 3 ops every rank completed 5.0 ms after "
                "the first rank on average (start times, all dumps are from one host)."),
            "");
  ASSERT_TRUE(report.slowest);
  EXPECT_TRUE(report.slowest->notable);
  EXPECT_DOUBLE_EQ(*report.ranks[2].meanLateNs, 5e6);
  EXPECT_DOUBLE_EQ(*report.ranks[0].meanLateNs, 0);
}

// Three hosts whose clocks are hours apart: start times mean nothing, but the
// late rank spends 4 ms less in each op than the others (ends line up).
TEST(BraidTrace, SlowRankAcrossHostsFromDurations) {
  TempDir dir;
  for (int rank = 0; rank < 3; ++rank) {
    const uint64_t clock = kBase + uint64_t(rank) * 3'600'000'000'000;
    const uint64_t late = rank == 1 ? 4'000'000 : 0;
    dir.write(FakeRank{rank, 3, "node" + std::to_string(rank), 0, clock,
                       completedAllReduces(1, 4, clock, late, 6'000'000 - late)});
  }
  Report report = analyzeDir(dir);
  const std::string text = summary(report);
  EXPECT_EQ(has(text, "3 ranks, 3 dumps from hosts node0, node1 and node2."), "");
  EXPECT_EQ(has(text,
                "Rank 1 is the slowest: it entered the 4 ops every rank completed an estimated 4.0 ms "
                "after the first rank on average (from op durations, as the dumps come from 3 hosts "
                "whose clocks differ)."),
            "");
}

TEST(BraidTrace, SmallSkewNamesNoSlowRank) {
  TempDir dir;
  for (int rank = 0; rank < 2; ++rank)
    dir.write(FakeRank{rank, 2, "node1", 0, kBase, completedAllReduces(1, 2, kBase, rank == 1 ? 20'000 : 0)});
  EXPECT_EQ(has(summary(analyzeDir(dir)),
                "No rank stands out as slow: the latest, rank 1, entered the 2 ops "
                "every rank completed 20.0 us after the first on average"),
            "");
}

// After all-reduce #1, rank 0 called all-reduce where rank 1 called
// all-gather: both failed on the wire tags. Rank 2 never got that far. The
// tool says where the call orders part, and that only rank 2 is behind.
TEST(BraidTrace, DifferentCollectivesAtOneTicket) {
  TempDir dir;
  auto ops = [](const std::string& op, uint64_t seq) {
    return std::vector<FakeOp>{
        {"allreduce", 1, "completed", kBase, kBase + 100, ""},
        {op, seq, "failed", kBase + 200, kBase + 300, op + " #" + std::to_string(seq) + ": tag mismatch"}};
  };
  dir.write(FakeRank{0, 3, "node1", 0, kBase, ops("allreduce", 2)});
  dir.write(FakeRank{1, 3, "node1", 0, kBase, ops("allgather", 1)});
  dir.write(FakeRank{2, 3, "node1", 0, kBase, completedAllReduces(1, 1, kBase)});
  Report report = analyzeDir(dir);
  EXPECT_EQ(
      summary(report),
      "3 ranks, 3 dumps from host node1. Rank 2 last completed allreduce #1. Ranks called different "
      "collectives as their 2nd op on the communicator: allreduce #2 on rank 0 and allgather #1 on rank 1. "
      "Rank 2 is missing from "
      "allgather #1 and allreduce #2: it last completed allreduce #1. Rank 0 failed in allreduce #2: tag "
      "mismatch. Rank 1 failed in allgather #1: tag mismatch. No rank stands out as slow: the latest, "
      "rank 0, entered the 1 op every rank completed 0 ns after the first on average (start times, all "
      "dumps are from one host).");
  ASSERT_EQ(report.missing.size(), 1u);
  EXPECT_EQ(report.missing[0].rank, 2);
  ASSERT_TRUE(report.mismatch);
  EXPECT_EQ(report.mismatch->ticket, 1u);
}

// Rank 0 sent to two peers, ranks 1 and 2 received once: tickets differ, yet
// all-reduce #1 is the same op everywhere and nobody is missing from a send.
TEST(BraidTrace, PointToPointShiftsTicketsWithoutFalseFindings) {
  TempDir dir;
  std::vector<FakeOp> root = {{"sendrecv", 1, "completed", kBase, kBase + 10, ""},
                              {"sendrecv", 2, "completed", kBase + 20, kBase + 30, ""},
                              {"allreduce", 1, "started", kBase + 40, 0, ""}};
  dir.write(FakeRank{0, 3, "node1", 0, kBase + 100, root});
  for (int rank = 1; rank < 3; ++rank)
    dir.write(FakeRank{rank,
                       3,
                       "node1",
                       0,
                       kBase + 100,
                       {{"sendrecv", 1, "completed", kBase, kBase + 30, ""},
                        {"allreduce", 1, "started", kBase + 40, 0, ""}}});
  Report report = analyzeDir(dir);
  EXPECT_TRUE(report.missing.empty()) << summary(report);
  EXPECT_FALSE(report.mismatch) << summary(report);
  EXPECT_EQ(has(summary(report), "Ranks 0-2 are in allreduce #1 (for up to 60 ns)."), "");
}

// A rank whose ring wrapped past every all-gather has not necessarily missed
// them: its tickets show it went further.
TEST(BraidTrace, WrappedRingIsNotMistakenForAMissingRank) {
  TempDir dir;
  dir.write(FakeRank{0,
                     2,
                     "node1",
                     0,
                     kBase,
                     {{"allgather", 1, "completed", kBase, kBase + 10, ""},
                      {"allreduce", 1, "completed", kBase + 20, kBase + 30, ""}}});
  dir.write(FakeRank{1, 2, "node1", 1, kBase, {{"allreduce", 1, "completed", kBase + 20, kBase + 30, ""}}});
  EXPECT_TRUE(analyzeDir(dir).missing.empty());
}

}  // namespace
}  // namespace braid::trace
