// Soak: a seeded random sequence of collectives (matrix.h's
// buildRandomSequence) in stretches of random length, each inline or on a
// stream (with random batches), on a communicator or on its twin of the same
// ranks in reverse order, every call checked as the matrix checks it.
//
// The matrix runs every case, but in a fixed order: small counts first, then
// large. Here every kind of call follows every other, at sizes on both sides
// of where the paths change, so a state one path leaves behind (the slots' op
// numbers and cells, a pulled input still read by a peer, a stream's queue,
// the executor's tags) meets every other path next. Each call's buffers come
// from braidMemAlloc on a random set of ranks, so peers read them through
// mappings and the others with process_vm_readv, in every mix.
//
// BRAID_SOAK_SEED, BRAID_SOAK_CASES and BRAID_SOAK_MAX_BYTES run another
// sequence, a longer one or larger calls (e.g. a night's soak:
// BRAID_SOAK_CASES=100000 with a fresh seed per run); a failure names all
// three and the case, and the same values replay the run. Other BRAID_*
// variables reach the ranks as they are (BRAID_TRANSPORT=tcp, BRAID_ALGO=...).
#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "data.h"
#include "harness.h"
#include "matrix.h"

namespace braid::itest {
namespace {

uint64_t soakSeed(uint64_t fallback) {
  const char* s = std::getenv("BRAID_SOAK_SEED");
  return s && *s ? std::strtoull(s, nullptr, 0) : fallback;
}

size_t soakCases(size_t fallback) {
  const char* s = std::getenv("BRAID_SOAK_CASES");
  return s && *s ? std::strtoull(s, nullptr, 0) : fallback;
}

size_t soakMaxBytes() {
  const char* s = std::getenv("BRAID_SOAK_MAX_BYTES");
  return s && *s ? std::strtoull(s, nullptr, 0) : SequenceOptions{}.maxBytes;
}

// Runs the sequence in stretches of 1-12 cases, each inline or on one stream
// (batches of 1 to the stretch's length), on the communicator or on its twin:
// the same ranks in the reverse order (braidCommSplit with key n-1-rank), which
// has its own slots, tags and tickets over the same connections. Every choice
// comes from the seed, alike on every rank.
void runStretches(const std::vector<Case>& cases, uint64_t seed, RankContext& ctx) {
  braidStream_t stream = nullptr;
  ASSERT_EQ(braidStreamCreate(&stream), braidSuccess) << braidGetLastError(nullptr);
  braidComm_t twin = nullptr;
  ASSERT_EQ(braidCommSplit(ctx.comm, 0, ctx.nranks - 1 - ctx.rank, &twin), braidSuccess)
      << braidGetLastError(ctx.comm);
  int twinRank = -1;
  ASSERT_EQ(braidCommUserRank(twin, &twinRank), braidSuccess);
  ASSERT_EQ(twinRank, ctx.nranks - 1 - ctx.rank);
  uint64_t state = seed ^ 0x7374726574636865ull;
  auto next = [&state](uint64_t below) { return mix(state++) % below; };
  bool ok = true;
  for (size_t start = 0; ok && start < cases.size();) {
    const size_t len = std::min<size_t>(cases.size() - start, 1 + next(12));
    const std::vector<Case> stretch(cases.begin() + static_cast<long>(start),
                                    cases.begin() + static_cast<long>(start + len));
    const bool onTwin = next(4) == 0;
    braidComm_t comm = onTwin ? twin : ctx.comm;
    const int rank = onTwin ? twinRank : ctx.rank;
    if (next(2) == 0)
      ok = runInline(stretch, comm, rank, ctx.nranks, ctx.shared);
    else
      ok = runOnStream(stretch, comm, rank, ctx.nranks, ctx.shared, 1 + next(len), nullptr, stream);
    start += len;
  }
  EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
  EXPECT_EQ(braidCommDestroy(twin), braidSuccess);
}

struct Soak {
  int nranks;
  uint64_t seed;
  size_t cases;
  int limitSeconds;
  // Runs in each rank before it initialises (environment of its own).
  std::function<void(int rank)> beforeInit;
};

void runSoak(const Soak& s) {
  const uint64_t seed = soakSeed(s.seed);
  SequenceOptions so;
  so.cases = soakCases(s.cases);
  so.maxBytes = soakMaxBytes();
  SCOPED_TRACE("BRAID_SOAK_SEED=" + std::to_string(seed) + " BRAID_SOAK_CASES=" + std::to_string(so.cases) +
               " BRAID_SOAK_MAX_BYTES=" + std::to_string(so.maxBytes) + " replays this run");
  RunOptions o;
  o.nranks = s.nranks;
  o.sharedBytes = 64;
  o.limitSeconds = s.limitSeconds;
  o.init = false;
  runRanks(o, [&](RankContext& ctx) {
    if (s.beforeInit) s.beforeInit(ctx.rank);
    braidConfig_t cfg = BRAID_CONFIG_INITIALIZER;
    cfg.timeoutMs = 30000;
    ASSERT_EQ(braidCommInitRankConfig(&ctx.comm, ctx.nranks, ctx.id, ctx.rank, &cfg), braidSuccess)
        << braidGetLastError(nullptr);
    runStretches(buildRandomSequence(ctx.nranks, seed, so), seed, ctx);
  });
}

// Three ranks on this host, with slots of 16 KiB and pulls from 4 KiB blocks,
// so that the sequence's sizes cross whole, chunked and pulled calls often.
TEST(Soak, ThreeRanksOnTheSlotsWithSmallSlots) {
  runSoak({3, 0x50414b31, 160, 120, [](int) {
             setenv("BRAID_SHM_SLOT_BYTES", "16384", 1);
             setenv("BRAID_SHM_PULL_BYTES", "4096", 1);
           }});
}

// Two ranks with the library's defaults: the sizes where its thresholds are.
TEST(Soak, TwoRanksWithTheDefaults) { runSoak({2, 0x50414b32, 160, 120, nullptr}); }

// Four ranks on two pretend hosts (rank r on host r % 2): shm inside a host,
// TCP across, the slots off (they need one host), the executor's algorithms
// on mixed transports.
TEST(Soak, FourRanksOnTwoPretendHosts) {
  runSoak({4, 0x50414b34, 120, 150,
           [](int rank) { setenv("BRAID_HOSTID", ("soak-host-" + std::to_string(rank % 2)).c_str(), 1); }});
}

// Five ranks on three pretend hosts of 2, 2 and 1 ranks (rank r on host
// r % 3): hierarchical algorithms with uneven hosts, a host of one.
TEST(Soak, FiveRanksOnThreeUnevenPretendHosts) {
  runSoak({5, 0x50414b35, 100, 150,
           [](int rank) { setenv("BRAID_HOSTID", ("soak-host-" + std::to_string(rank % 3)).c_str(), 1); }});
}

}  // namespace
}  // namespace braid::itest
