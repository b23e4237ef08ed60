// The discrete-event cost model on hand-built schedules (every rule checked
// against arithmetic), and its sanity on real algorithms.
#include <cmath>

#include "model_helpers.h"

namespace braid::algo {
namespace {
using testing::fabric;
using testing::simulateAlgorithm;

constexpr uint8_t kTag = 1;

CostParams simple() {
  CostParams p;
  p.intra = p.inter = {2.0, 0.5};  // seconds: easy arithmetic
  p.gamma = 0.25;
  return p;
}

Prediction run(const std::vector<Schedule>& s, const CostParams& p) {
  std::vector<const Schedule*> ptrs;
  for (const Schedule& x : s) ptrs.push_back(&x);
  Prediction out;
  Status st = predictTime(ptrs, p, &out);
  EXPECT_TRUE(st.isOk()) << st.message();
  return out;
}

TEST(CostModel, OneMessageCostsAlphaPlusBytesBeta) {
  std::vector<Schedule> s(2);
  s[0].add(sendStep(1, {kInput, 0, 8}, kTag));
  s[1].add(recvStep(0, {kOutput, 0, 8}, kTag));
  Prediction p = run(s, simple());
  EXPECT_DOUBLE_EQ(p.seconds, 2.0 + 8 * 0.5);
  EXPECT_EQ(p.messages, 1u);
  EXPECT_EQ(p.bytes, 8u);
  EXPECT_EQ(p.criticalMessages, 1u);
  EXPECT_EQ(p.criticalBytes, 8u);
}

TEST(CostModel, ReductionAddsGammaAndSerializesOnTheExecutor) {
  std::vector<Schedule> s(2);
  s[0].add(sendStep(1, {kInput, 0, 8}, kTag));
  s[1].add(recvReduceStep(0, {kInput, 0, 8}, {kOutput, 0, 8}, DataType::kUint8, RedOp::kSum, kTag));
  s[1].add(copyStep({kInput, 0, 4}, {kOutput, 0, 4}));  // holds the executor first
  Prediction p = run(s, simple());
  // The copy runs [0, 1); the message lands at 6 and is reduced [6, 8).
  EXPECT_DOUBLE_EQ(p.seconds, 6.0 + 8 * 0.25);
  EXPECT_EQ(p.criticalSteps, 1u);
}

TEST(CostModel, LinksSerializeBytesPerDirection) {
  // Two messages out of rank 0 (to different peers) share its egress port;
  // two into rank 3 share its ingress port; opposite directions overlap.
  std::vector<Schedule> s(4);
  s[0].add(sendStep(1, {kInput, 0, 4}, kTag));
  s[0].add(sendStep(2, {kInput, 0, 4}, kTag));
  s[1].add(recvStep(0, {kOutput, 0, 4}, kTag));
  s[2].add(recvStep(0, {kOutput, 0, 4}, kTag));
  EXPECT_DOUBLE_EQ(run(s, simple()).seconds, 2 * (2.0 + 4 * 0.5));

  std::vector<Schedule> in(3);
  in[0].add(sendStep(2, {kInput, 0, 4}, kTag));
  in[1].add(sendStep(2, {kInput, 0, 4}, kTag));
  in[2].add(recvStep(0, {kOutput, 0, 4}, kTag));
  in[2].add(recvStep(1, {kOutput, 4, 4}, kTag));
  EXPECT_DOUBLE_EQ(run(in, simple()).seconds, 2 * (2.0 + 4 * 0.5));

  std::vector<Schedule> both(2);
  for (int r = 0; r < 2; ++r) {
    both[r].add(sendStep(1 - r, {kInput, 0, 4}, kTag));
    both[r].add(recvStep(1 - r, {kOutput, 0, 4}, kTag));
  }
  EXPECT_DOUBLE_EQ(run(both, simple()).seconds, 2.0 + 4 * 0.5);
}

TEST(CostModel, AMessageWaitsForItsReceiveAndDependencies) {
  // Rank 1 posts its receive only after a local copy of 40 bytes (10 s).
  std::vector<Schedule> s(2);
  s[0].add(sendStep(1, {kInput, 0, 8}, kTag));
  StepId copy = s[1].add(copyStep({kInput, 0, 40}, {kOutput, 0, 40}));
  StepId got = s[1].add(recvStep(0, {kOutput, 0, 8}, kTag), {copy});
  s[1].add(sendStep(0, {kOutput, 0, 8}, kTag), {got});
  s[0].add(recvStep(1, {kOutput, 0, 8}, kTag));
  Prediction p = run(s, simple());
  EXPECT_DOUBLE_EQ(p.seconds, 10.0 + 6.0 + 6.0);
  EXPECT_EQ(p.criticalSteps, 3u);  // copy, message, message
  EXPECT_EQ(p.criticalMessages, 2u);
  EXPECT_EQ(p.criticalBytes, 16u);
}

TEST(CostModel, HostsChooseTheLinkClass) {
  CostParams p = simple();
  p.inter = {10.0, 1.0};
  p.ranksPerHost = 2;
  std::vector<Schedule> s(4);
  s[0].add(sendStep(1, {kInput, 0, 4}, kTag));  // same host
  s[1].add(recvStep(0, {kOutput, 0, 4}, kTag));
  s[2].add(sendStep(1, {kInput, 0, 4}, kTag));  // across hosts, its own port class
  s[1].add(recvStep(2, {kOutput, 4, 4}, kTag));
  EXPECT_DOUBLE_EQ(run(s, p).seconds, 10.0 + 4 * 1.0);
}

// With a shared NIC, the two ranks of host 0 sending across queue on one
// port; without, each has its own. Traffic inside the host is not affected.
TEST(CostModel, ASharedNicQueuesTheCrossingsOfAHost) {
  CostParams p = simple();
  p.inter = {10.0, 1.0};
  p.ranksPerHost = 2;
  std::vector<Schedule> s(4);
  s[0].add(sendStep(2, {kInput, 0, 4}, kTag));
  s[2].add(recvStep(0, {kOutput, 0, 4}, kTag));
  s[1].add(sendStep(3, {kInput, 0, 4}, kTag));
  s[3].add(recvStep(1, {kOutput, 0, 4}, kTag));
  s[2].add(sendStep(3, {kInput, 0, 4}, kTag));  // inside host 1
  s[3].add(recvStep(2, {kOutput, 4, 4}, kTag));
  EXPECT_DOUBLE_EQ(run(s, p).seconds, 14.0) << "a port for every rank";
  p.sharedNic = true;
  EXPECT_DOUBLE_EQ(run(s, p).seconds, 28.0) << "one port for host 0's two crossings";
}

TEST(CostModel, DeadlockAndMismatchAreErrors) {
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    StepId got = s[r].add(recvStep(1 - r, {kOutput, 0, 4}, kTag));
    s[r].add(sendStep(1 - r, {kInput, 0, 4}, kTag), {got});
  }
  std::vector<const Schedule*> ptrs = {&s[0], &s[1]};
  Prediction out;
  Status st = predictTime(ptrs, simple(), &out);
  EXPECT_EQ(st.code(), Code::kInternalError);
  EXPECT_NE(st.message().find("stuck"), std::string::npos) << st.message();

  std::vector<Schedule> m(2);
  m[0].add(sendStep(1, {kInput, 0, 4}, kTag));
  m[1].add(recvStep(0, {kOutput, 0, 8}, kTag));
  ptrs = {&m[0], &m[1]};
  st = predictTime(ptrs, simple(), &out);
  EXPECT_EQ(st.code(), Code::kInternalError);
  EXPECT_NE(st.message().find("receives 8"), std::string::npos) << st.message();
}

// Latency-bound sizes favour few messages (rd), bandwidth-bound ones the
// bandwidth-optimal algorithms (ring, rhd), in both models.
TEST(CostModel, RegimesPickTheTextbookAlgorithm) {
  for (int n : {16, 64}) {
    ModelQuery small{Collective::kAllReduce, n, 8, 4, 128 << 10};
    ModelQuery large{Collective::kAllReduce, n, 64 << 20, 4, 1 << 20};
    double rdSmall = simulateAlgorithm(Collective::kAllReduce, "rd", small, fabric()).seconds;
    double ringSmall = simulateAlgorithm(Collective::kAllReduce, "ring", small, fabric()).seconds;
    double rhdSmall = simulateAlgorithm(Collective::kAllReduce, "rhd", small, fabric()).seconds;
    EXPECT_LT(rdSmall, ringSmall);
    EXPECT_LT(rdSmall, rhdSmall);
    double rdLarge = simulateAlgorithm(Collective::kAllReduce, "rd", large, fabric()).seconds;
    double ringLarge = simulateAlgorithm(Collective::kAllReduce, "ring", large, fabric()).seconds;
    double rhdLarge = simulateAlgorithm(Collective::kAllReduce, "rhd", large, fabric()).seconds;
    EXPECT_LT(std::min(ringLarge, rhdLarge) * 3, rdLarge) << "n=" << n;
  }
}

TEST(CostModel, MonotonicInBytes) {
  struct C {
    Collective c;
    const char* name;
  };
  for (C k :
       {C{Collective::kAllReduce, "ring"}, C{Collective::kAllReduce, "rd"}, C{Collective::kAllReduce, "rhd"},
        C{Collective::kAllGather, "ring"}, C{Collective::kReduceScatter, "ring"},
        C{Collective::kBroadcast, "chain"}, C{Collective::kReduce, "chain"},
        C{Collective::kAllToAll, "pairwise"}, C{Collective::kAllReduce, "tree"},
        C{Collective::kAllReduce, "hierarchical"}, C{Collective::kBroadcast, "binomial"},
        C{Collective::kReduce, "binomial"}, C{Collective::kAllGather, "rd"},
        C{Collective::kReduceScatter, "rh"}, C{Collective::kAllToAll, "bruck"}}) {
    for (int n : {5, 16}) {
      double lastSim = 0, lastForm = 0;
      for (size_t bytes = 4; bytes <= (size_t(8) << 20); bytes *= 4) {
        ModelQuery q{k.c, n, bytes, 4, 64 << 10};
        double sim = simulateAlgorithm(k.c, k.name, q, fabric()).seconds, form = 0;
        bool usesChunks;
        ASSERT_TRUE(closedFormTime(k.name, q, fabric(), &form, &usesChunks));
        EXPECT_GE(sim, lastSim) << k.name << " n=" << n << " bytes=" << bytes;
        EXPECT_GE(form, lastForm) << k.name << " n=" << n << " bytes=" << bytes;
        lastSim = sim, lastForm = form;
      }
    }
  }
}

}  // namespace
}  // namespace braid::algo
