// The closed forms (what the tuner uses at 16,384 ranks) against the
// discrete-event model on the real schedules, N = 64..1024.
#include <cmath>
#include <string>

#include "model_helpers.h"

namespace braid::algo {
namespace {
using testing::fabric;
using testing::simulateAlgorithm;

struct Case {
  Collective c;
  const char* name;
  size_t bytes;
};

void expectAgreement(int n, int ranksPerHost, const std::vector<Case>& cases, double tolerance) {
  for (const Case& k : cases) {
    for (size_t chunk : {size_t(128) << 10, size_t(1) << 20}) {
      ModelQuery q{k.c, n, k.bytes, 4, chunk};
      double form = 0;
      bool usesChunks = false;
      ASSERT_TRUE(closedFormTime(k.name, q, fabric(ranksPerHost), &form, &usesChunks)) << k.name;
      Prediction sim = simulateAlgorithm(k.c, k.name, q, fabric(ranksPerHost));
      double tol = k.c == Collective::kBarrier && ranksPerHost > 1 ? 0.1 : tolerance;
      // Known gaps, open in the algorithms issue: the closed forms of pairwise
      // all-to-all and of halving-doubling assume every rank moves round by
      // round in step; the discrete-event model lets ports and chunk-level
      // dependencies (rhd waits only for the chunks it reads) interleave rounds,
      // and for these two it predicts up to 2x longer. Hold them to that bound
      // until the forms model it, so a larger drift still fails.
      if (k.c == Collective::kAllToAll || (k.c == Collective::kAllReduce && std::string(k.name) == "rhd"))
        tol = 0.55;
      EXPECT_NEAR(form / sim.seconds, 1.0, tol)
          << collectiveName(k.c) << ":" << k.name << " n=" << n << " ranks/host=" << ranksPerHost
          << " bytes=" << k.bytes << " chunk=" << chunk << ": closed form " << form * 1e6 << " us, simulated "
          << sim.seconds * 1e6 << " us";
      // 1,024 ranks: one chunk size, to keep each case within seconds.
      if (!usesChunks || k.bytes < (64u << 10) || n >= 1024) break;
    }
  }
}

const std::vector<Case> kEverything = {
    {Collective::kAllReduce, "ring", 8},           {Collective::kAllReduce, "ring", 1 << 20},
    {Collective::kAllReduce, "ring", 16 << 20},    {Collective::kAllReduce, "rd", 8},
    {Collective::kAllReduce, "rd", 1 << 20},       {Collective::kAllReduce, "rhd", 8},
    {Collective::kAllReduce, "rhd", 1 << 20},      {Collective::kAllReduce, "rhd", 16 << 20},
    {Collective::kReduceScatter, "ring", 8},       {Collective::kReduceScatter, "ring", 64 << 10},
    {Collective::kAllGather, "ring", 8},           {Collective::kAllGather, "ring", 256 << 10},
    {Collective::kBroadcast, "chain", 8},          {Collective::kBroadcast, "chain", 16 << 20},
    {Collective::kReduce, "chain", 1 << 20},       {Collective::kAllToAll, "pairwise", 64 << 10},
    {Collective::kBarrier, "dissemination", 0},
};

TEST(ClosedForms, AgreeWithSimulation64) { expectAgreement(64, 1, kEverything, 0.03); }
TEST(ClosedForms, AgreeWithSimulation96) { expectAgreement(96, 1, kEverything, 0.03); }
TEST(ClosedForms, AgreeWithSimulation256) { expectAgreement(256, 1, kEverything, 0.03); }
TEST(ClosedForms, AgreeWithSimulation64EightPerHost) { expectAgreement(64, 8, kEverything, 0.05); }

// 1,024 ranks: one ring of 4 M steps, and the cheaper schedules.
TEST(ClosedForms, AgreeWithSimulation1024Ring) {
  expectAgreement(1024, 1, {{Collective::kAllReduce, "ring", 1 << 20}}, 0.03);
}
TEST(ClosedForms, AgreeWithSimulation1024) {
  expectAgreement(1024, 1,
                  {{Collective::kAllReduce, "rd", 8},
                   {Collective::kAllReduce, "rd", 1 << 20},
                   {Collective::kAllReduce, "rhd", 8},
                   {Collective::kAllReduce, "rhd", 16 << 20},
                   {Collective::kBroadcast, "chain", 1 << 20},
                   {Collective::kReduce, "chain", 1 << 20},
                   {Collective::kBarrier, "dissemination", 0}},
                  0.03);
}
TEST(ClosedForms, AgreeWithSimulation1024EightPerHost) {
  expectAgreement(1024, 8,
                  {{Collective::kAllReduce, "rd", 1 << 20},
                   {Collective::kAllReduce, "rhd", 16 << 20},
                   {Collective::kAllGather, "ring", 8},
                   {Collective::kBroadcast, "chain", 1 << 20},
                   {Collective::kBarrier, "dissemination", 0}},
                  0.05);
}

TEST(ClosedForms, UnknownAlgorithmsHaveNone) {
  double t;
  bool u;
  EXPECT_FALSE(closedFormTime("nosuch", ModelQuery{}, fabric(), &t, &u));
  ModelQuery q;
  q.collective = Collective::kBroadcast;
  EXPECT_FALSE(closedFormTime("ring", q, fabric(), &t, &u)) << "ring is not a broadcast here";
}

}  // namespace
}  // namespace braid::algo
