// The closed forms (what the tuner uses at 16,384 ranks) against the
// discrete-event model on the real schedules, N = 64..1024.
#include <cmath>
#include <cstdio>
#include <map>
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

bool is(const Case& k, Collective c, const char* name) { return k.c == c && std::string(k.name) == name; }

// Known gaps, open in the algorithms issue: where the discrete-event model
// lets ports, the executor and chunk-level dependencies interleave in ways a
// closed form does not follow, the form is held to a measured bound (the
// largest |form/sim - 1| seen over the N and layouts below, rounded up) so
// that a larger drift still fails. Each bound covers only the cases its gap
// applies to; elsewhere the file's tolerance holds. 0: no known gap.
double knownGap(const Case& k, const ModelQuery& q, int ranksPerHost, bool sharedNic) {
  const bool pow2 = (q.nranks & (q.nranks - 1)) == 0, spread = ranksPerHost > 1;
  const bool pipelined = q.bytes * q.nranks / 2 > q.chunkBytes;
  if (sharedNic) {
    // A host's ranks queue their crossings on its one port. Measured at 64
    // and 96 ranks, 8 a host (the SharedNic cases below):
    // - the double binary tree, pipelined: the greedy slot over the hosts'
    //   ports (closed_forms_trees.cc) is 1.30 to 1.32 of the model; the
    //   busiest port alone would be 0.73. A lone chunk: 0.89 to 0.94.
    if (is(k, Collective::kAllReduce, "tree")) return q.bytes / 2 > q.chunkBytes ? 0.35 : 0.12;
    // - recursive doubling when N is not a power of two: the folded ranks'
    //   rounds drift apart on the queues: 0.935.
    if (is(k, Collective::kAllReduce, "rd") && !pow2) return 0.08;
    // - the log-round all-gather and reduce-scatter interleave their queued
    //   rounds where the forms add them up: rd all-gather down to 0.72 when N
    //   is not a power of two; rh up to 1.07 unpipelined, down to 0.81 pipelined.
    if (is(k, Collective::kAllGather, "rd") && !pow2) return 0.30;
    if (is(k, Collective::kReduceScatter, "rh")) return pipelined ? 0.20 : 0.08;
  }
  // Halving-doubling: the form assumes every rank moves round by round in
  // step; the model lets ports and chunk-level dependencies (rhd waits only
  // for the chunks it reads) interleave rounds, and predicts up to 2x longer.
  if (is(k, Collective::kAllReduce, "rhd")) return 0.55;
  // Pairwise all-to-all with several ranks a host, each with its own network
  // port: the form takes the busiest port's load; the model's rounds drift
  // and it is up to 1.11 of that (exact with one rank a host or a shared NIC).
  if (is(k, Collective::kAllToAll, "pairwise") && spread && !sharedNic) return 0.15;
  // Double binary tree, pipelined (more than one chunk per half): the form
  // charges each slot the greedy bound on its messages (7 t(c) on one host)
  // or the executor's two reductions after the first child's flood
  // (closed_forms_trees.cc), which the model's steady state comes close to
  // without following exactly. Measured: 1.04 to 1.09 with one rank per
  // host, 0.90 to 1.21 with 8 (0.86 to 1.22 with reductions at 5 to 40
  // GB/s; up to 1.37 at 4 ranks and 1.30 at 65, not tested here). A lone
  // chunk is exact on the N tested; where the two trees' messages meet at a
  // port it can be a hop short (-4% at N = 100; -5% to -12% at N = 7..65
  // when the last host is partly filled).
  if (is(k, Collective::kAllReduce, "tree") && q.bytes / 2 > q.chunkBytes) return spread ? 0.25 : 0.10;
  // Binomial reduce, pipelined: the form charges the first chunk the chain
  // through the root's children and each further one the root's busiest
  // resource. The executor serves reductions first come, first served, so
  // the first child's chunks (sent eagerly) queue ahead of the others' and
  // the root drains its children more one after another than in parallel;
  // with reductions slower than the links the model is slower than any one
  // resource. Where a port binds and N is small the chain overlaps more than
  // the form says. Measured 0.93 to 1.075 with one rank per host (256 ranks,
  // 16 MiB in 1 MiB chunks; 64 ranks, 1 MiB in 128 KiB), 0.74 to 1.0 with 8
  // (256 ranks, 16 MiB), and up to 1.15 at 16 ranks (not tested here).
  if (is(k, Collective::kReduce, "binomial") && q.bytes > q.chunkBytes) return spread ? 0.30 : 0.10;
  // Recursive-doubling all-gather when N is not a power of two: every
  // receive is posted at once, and where a rank's partners run unevenly (a
  // wrapped range costs a second message) a later round's message can take
  // its ingress port before the current round's; the form keeps each rank's
  // messages in round order. Exact from 64 KiB blocks; measured down to 0.77
  // at 4 KiB (96 ranks).
  if (is(k, Collective::kAllGather, "rd") && !pow2) return 0.25;
  // Recursive-halving reduce-scatter, pipelined: rounds overlap through
  // chunk-level dependencies where the form adds them up: up to 1.09 with a
  // power of two. When N is not one, a folding rank's fold, every round it
  // runs meanwhile on the head of the vector and the tail it then hands its
  // first partner share its ingress port and executor: down to 0.675 at 96
  // ranks (and 0.58 at 127, not tested here); 0.96 to 1.14 with 8 per host.
  if (is(k, Collective::kReduceScatter, "rh") && pipelined) return pow2 ? 0.10 : (spread ? 0.15 : 0.35);
  return 0;
}

void expectAgreement(int n, int ranksPerHost, const std::vector<Case>& cases, double tolerance,
                     bool sharedNic = false) {
  std::map<std::string, double> worst;  // the largest |form/sim - 1| per algorithm, printed for the record
  for (const Case& k : cases) {
    for (size_t chunk : {size_t(128) << 10, size_t(1) << 20}) {
      ModelQuery q{k.c, n, k.bytes, 4, chunk};
      double form = 0;
      bool usesChunks = false;
      CostParams p = fabric(ranksPerHost);
      p.sharedNic = sharedNic;
      ASSERT_TRUE(closedFormTime(k.name, q, p, &form, &usesChunks)) << k.name;
      Prediction sim = simulateAlgorithm(k.c, k.name, q, p);
      double tol = k.c == Collective::kBarrier && ranksPerHost > 1 ? 0.1 : tolerance;
      if (double gap = knownGap(k, q, ranksPerHost, sharedNic); gap > 0) tol = gap;
      EXPECT_NEAR(form / sim.seconds, 1.0, tol)
          << collectiveName(k.c) << ":" << k.name << " n=" << n << " ranks/host=" << ranksPerHost
          << (sharedNic ? " shared NIC" : "") << " bytes=" << k.bytes << " chunk=" << chunk
          << ": closed form " << form * 1e6 << " us, simulated " << sim.seconds * 1e6 << " us";
      double& w = worst[std::string(collectiveName(k.c)) + ":" + k.name];
      w = std::max(w, std::fabs(form / sim.seconds - 1));
      // 1,024 ranks: one chunk size, to keep each case within seconds.
      if (!usesChunks || k.bytes < (64u << 10) || n >= 1024) break;
    }
  }
  for (const auto& [name, w] : worst)
    std::printf("agreement n=%d ranks/host=%d%s %-26s max |form/sim - 1| = %.4f\n", n, ranksPerHost,
                sharedNic ? " shared NIC" : "", name.c_str(), w);
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

// Trees, the hierarchy and the log-round schedules (also run with 8 ranks
// per host at every N: their links differ round by round or edge by edge).
const std::vector<Case> kTreesAndRounds = {
    {Collective::kAllReduce, "tree", 8},
    {Collective::kAllReduce, "tree", 1 << 20},
    {Collective::kAllReduce, "tree", 16 << 20},
    {Collective::kAllReduce, "hierarchical", 8},
    {Collective::kAllReduce, "hierarchical", 1 << 20},
    {Collective::kAllReduce, "hierarchical", 16 << 20},
    {Collective::kAllGather, "hierarchical", 8},
    {Collective::kAllGather, "hierarchical", 64 << 10},
    {Collective::kAllGather, "hierarchical", 1 << 20},
    {Collective::kBroadcast, "binomial", 8},
    {Collective::kBroadcast, "binomial", 16 << 20},
    {Collective::kReduce, "binomial", 8},
    {Collective::kReduce, "binomial", 1 << 20},
    {Collective::kReduce, "binomial", 16 << 20},
    {Collective::kAllGather, "rd", 8},
    {Collective::kAllGather, "rd", 4 << 10},
    {Collective::kAllGather, "rd", 256 << 10},
    {Collective::kReduceScatter, "rh", 8},
    {Collective::kReduceScatter, "rh", 4 << 10},
    {Collective::kReduceScatter, "rh", 64 << 10},
    {Collective::kAllToAll, "bruck", 8},
    {Collective::kAllToAll, "bruck", 1 << 10},
    {Collective::kAllToAll, "bruck", 64 << 10},
};

TEST(ClosedForms, AgreeWithSimulation64) { expectAgreement(64, 1, kEverything, 0.03); }
TEST(ClosedForms, AgreeWithSimulation96) { expectAgreement(96, 1, kEverything, 0.03); }
TEST(ClosedForms, AgreeWithSimulation256) { expectAgreement(256, 1, kEverything, 0.03); }
TEST(ClosedForms, AgreeWithSimulation64EightPerHost) { expectAgreement(64, 8, kEverything, 0.05); }

TEST(ClosedForms, AgreeWithSimulation64SharedNic) { expectAgreement(64, 8, kEverything, 0.05, true); }
TEST(ClosedForms, AgreeWithSimulation96SharedNic) { expectAgreement(96, 8, kEverything, 0.05, true); }
TEST(ClosedForms, TreesAndRoundsAgree64SharedNic) { expectAgreement(64, 8, kTreesAndRounds, 0.05, true); }
TEST(ClosedForms, TreesAndRoundsAgree96SharedNic) { expectAgreement(96, 8, kTreesAndRounds, 0.05, true); }

TEST(ClosedForms, TreesAndRoundsAgree64) { expectAgreement(64, 1, kTreesAndRounds, 0.03); }
TEST(ClosedForms, TreesAndRoundsAgree96) { expectAgreement(96, 1, kTreesAndRounds, 0.03); }
TEST(ClosedForms, TreesAndRoundsAgree256) { expectAgreement(256, 1, kTreesAndRounds, 0.03); }
TEST(ClosedForms, TreesAndRoundsAgree64EightPerHost) { expectAgreement(64, 8, kTreesAndRounds, 0.05); }
TEST(ClosedForms, TreesAndRoundsAgree96EightPerHost) { expectAgreement(96, 8, kTreesAndRounds, 0.05); }
TEST(ClosedForms, TreesAndRoundsAgree256EightPerHost) { expectAgreement(256, 8, kTreesAndRounds, 0.05); }

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
// Bruck's schedules hold O(N log N) steps per rank: at 1,024 ranks one case
// takes seconds, so only the one that crosses both kinds of link.
TEST(ClosedForms, TreesAndRoundsAgree1024) {
  expectAgreement(1024, 1,
                  {{Collective::kAllReduce, "tree", 8},
                   {Collective::kAllReduce, "tree", 1 << 20},
                   {Collective::kAllReduce, "hierarchical", 8},
                   {Collective::kBroadcast, "binomial", 16 << 20},
                   {Collective::kReduce, "binomial", 8},
                   {Collective::kReduce, "binomial", 1 << 20},
                   {Collective::kAllGather, "rd", 8},
                   {Collective::kReduceScatter, "rh", 8},
                   {Collective::kReduceScatter, "rh", 4 << 10}},
                  0.03);
}
TEST(ClosedForms, TreesAndRoundsAgree1024EightPerHost) {
  expectAgreement(1024, 8,
                  {{Collective::kAllReduce, "tree", 64 << 10},
                   {Collective::kAllReduce, "tree", 16 << 20},
                   {Collective::kAllReduce, "hierarchical", 1 << 20},
                   {Collective::kAllReduce, "hierarchical", 16 << 20},
                   {Collective::kBroadcast, "binomial", 1 << 20},
                   {Collective::kReduce, "binomial", 1 << 20},
                   {Collective::kAllGather, "rd", 64 << 10},
                   {Collective::kReduceScatter, "rh", 64 << 10},
                   {Collective::kAllToAll, "bruck", 1 << 10}},
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
