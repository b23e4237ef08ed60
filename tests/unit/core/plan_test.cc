// Plans (the executor's prepared form of a schedule) and the communicator's
// plan cache: what a repeated collective reuses instead of rebuilding.
#include "core/plan.h"

#include <gtest/gtest.h>

#include "algorithms/registry.h"
#include "core/plan_cache.h"

namespace braid::core {
namespace {

using algo::Region;
using algo::StepId;

std::shared_ptr<const Plan> planOf(algo::Schedule s, int nranks, int rank) {
  std::shared_ptr<const Plan> plan;
  Status st = makePlan(std::move(s), "test", nranks, rank, &plan);
  EXPECT_TRUE(st.isOk()) << st.message();
  return plan;
}

TEST(Plan, IndexesDependentsRootsAndChannelsInScheduleOrder) {
  // Rank 0 of 3: send to 1, receive from 2, receive-reduce from 1, copy after both receives.
  algo::Schedule s;
  const uint8_t tag = 1;
  StepId send = s.add(algo::sendStep(1, {algo::kInput, 0, 8}, tag));
  StepId recv = s.add(algo::recvStep(2, {algo::kOutput, 0, 8}, tag));
  StepId rr = s.add(algo::recvReduceStep(1, {algo::kOutput, 0, 8}, {algo::kOutput, 0, 8}, DataType::kFloat32,
                                         RedOp::kSum, tag),
                    {recv});
  StepId copy = s.add(algo::copyStep({algo::kOutput, 0, 8}, {algo::kOutput, 8, 8}), {rr, send});
  s.add(algo::sendStep(1, {algo::kOutput, 8, 8}, tag), {copy});
  auto plan = planOf(std::move(s), 3, 0);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->peerCount(), 3u);
  EXPECT_EQ(plan->roots, (std::vector<StepId>{send, recv}));
  // Sends to rank 1: steps 0 and 4, in order; receives from 1: step 2; from 2: step 1.
  EXPECT_EQ(std::vector<StepId>(plan->sendQueue.begin() + plan->sendBegin[1],
                                plan->sendQueue.begin() + plan->sendBegin[2]),
            (std::vector<StepId>{0, 4}));
  EXPECT_EQ(plan->sendBegin[1] - plan->sendBegin[0], 0u);
  EXPECT_EQ(plan->recvQueue[plan->recvBegin[1]], 2u);
  EXPECT_EQ(plan->recvQueue[plan->recvBegin[2]], 1u);
  // Who waits on the receive: the recv-reduce; on the copy: the last send.
  EXPECT_EQ(plan->dependentsBegin[recv + 1] - plan->dependentsBegin[recv], 1u);
  EXPECT_EQ(plan->dependents[plan->dependentsBegin[recv]], rr);
  EXPECT_EQ(plan->dependents[plan->dependentsBegin[copy]], 4u);
  EXPECT_EQ(plan->bytesMoved, 8u * 4);
}

TEST(Plan, RejectsStepsThatNameNoValidPeer) {
  for (int peer : {-1, 0, 4}) {
    algo::Schedule s;
    s.add(algo::sendStep(peer, {algo::kInput, 0, 8}, 1));
    std::shared_ptr<const Plan> plan;
    Status st = makePlan(std::move(s), "bad", 4, 0, &plan);
    EXPECT_EQ(st.code(), Code::kInternalError) << peer;
    EXPECT_NE(st.message().find("names peer " + std::to_string(peer)), std::string::npos) << st.message();
    EXPECT_EQ(plan, nullptr);
  }
}

TEST(Plan, EveryRegisteredAlgorithmGivesAPlanOnEveryRank) {
  // The plans of real schedules: every comm step lands in exactly one channel
  // and every step is a root or some step's dependent.
  for (const algo::Algorithm& a : algo::registeredAlgorithms()) {
    for (int n : {2, 3, 5, 8}) {
      for (int r = 0; r < n; ++r) {
        algo::CollectiveArgs args;
        args.collective = a.collective;
        args.nranks = n;
        args.rank = r;
        args.count = 1000;
        args.dtype = DataType::kFloat32;
        args.chunkBytes = 1024;
        if (a.collective == algo::Collective::kAllToAllv) {
          args.sendCounts.assign(n, 3);
          args.recvCounts.assign(n, 3);
          for (int p = 0; p < n; ++p) args.sendDispls.push_back(3 * p), args.recvDispls.push_back(3 * p);
        }
        algo::Schedule s;
        if (!a.build(args, &s).isOk()) continue;  // not for this rank count (e.g. powers of two only)
        auto plan = planOf(std::move(s), n, r);
        ASSERT_NE(plan, nullptr) << a.name << " n=" << n << " r=" << r;
        size_t comm = 0;
        for (const algo::Step& st : plan->schedule.steps) comm += st.peer >= 0;
        EXPECT_EQ(plan->sendQueue.size() + plan->recvQueue.size(), comm) << a.name;
        std::vector<int> reached(plan->schedule.steps.size(), 0);
        for (StepId id : plan->roots) reached[id]++;
        for (StepId id : plan->dependents) reached[id]++;
        for (size_t i = 0; i < reached.size(); ++i)
          EXPECT_EQ(reached[i], std::max<int>(1, plan->schedule.steps[i].depCount))
              << a.name << " step " << i;
      }
    }
  }
}

PlanKey keyFor(uint64_t count) {
  PlanKey k;
  k.collective = 1;
  k.count = count;
  return k;
}

std::shared_ptr<const Plan> planWithSteps(size_t steps) {
  auto p = std::make_shared<Plan>();
  p->schedule.steps.resize(steps);
  return p;
}

TEST(PlanCache, FindsWhatWasInsertedAndKeysDifferInEveryField) {
  PlanCache cache;
  auto plan = planWithSteps(3);
  cache.insert(keyFor(10), plan);
  EXPECT_EQ(cache.find(keyFor(10)), plan);
  EXPECT_EQ(cache.find(keyFor(11)), nullptr);
  PlanKey k = keyFor(10);
  for (int field = 0; field < 8; ++field) {
    PlanKey other = k;
    switch (field) {
      case 0:
        other.collective = 2;
        break;
      case 1:
        other.dtype = 3;
        break;
      case 2:
        other.op = 1;
        break;
      case 3:
        other.variant = 1;
        break;
      case 4:
        other.rootOrPeer = 0;
        break;
      case 5:
        other.codecBlock = 64;
        break;
      case 6:
        other.codecScaleBits = 0x3f800000;
        break;
      case 7:
        other.codecHost = 9;
        break;
    }
    EXPECT_EQ(cache.find(other), nullptr) << "field " << field;
  }
}

TEST(PlanCache, EvictsTheLeastRecentlyUsedBeyondItsBounds) {
  PlanCache cache;
  for (uint64_t i = 0; i < PlanCache::kMaxEntries; ++i) cache.insert(keyFor(i), planWithSteps(1));
  ASSERT_NE(cache.find(keyFor(0)), nullptr);  // now the most recent
  cache.insert(keyFor(1000), planWithSteps(1));
  EXPECT_EQ(cache.size(), PlanCache::kMaxEntries);
  EXPECT_NE(cache.find(keyFor(0)), nullptr);
  EXPECT_EQ(cache.find(keyFor(1)), nullptr) << "the least recently used entry should have gone";
  // Steps: a plan holding most of the bound pushes the others out.
  cache.insert(keyFor(2000), planWithSteps(PlanCache::kMaxSteps - 10));
  EXPECT_NE(cache.find(keyFor(2000)), nullptr);
  EXPECT_LE(cache.size(), 11u);
  // A plan larger than the bound is not kept at all (and evicts nothing).
  cache.insert(keyFor(3000), planWithSteps(PlanCache::kMaxSteps + 1));
  EXPECT_EQ(cache.find(keyFor(3000)), nullptr);
  EXPECT_NE(cache.find(keyFor(2000)), nullptr);
}

}  // namespace
}  // namespace braid::core
