// Small collectives on shared slots (core/slot_collectives.h), with threads
// standing in for ranks over one in-process area: every collective x dtype x
// op x rank count against a reference folded straight from the inputs, slots
// reused over long runs of mixed ops, and the failure paths (ranks that call
// different collectives, a halted op, a rank that never comes).
#include "core/slot_collectives.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/shareable_memory.h"
#include "kernels/reduce.h"

namespace braid::core {
namespace {

using algo::Collective;

constexpr size_t kSlotBytes = 2048;
// Whole ops up to 256 bytes a rank go through the cells, larger ones through
// the slots: the matrix runs both lanes.
constexpr size_t kCellBytes = 256;

// One op as every rank calls it; inputs and outputs per rank.
struct Case {
  Collective collective = Collective::kAllReduce;
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;
  size_t count = 0;
  int root = 0;
  bool preMultiply = false;  // PreMulSum: rank r's scalar is preMulScalar(dtype, r)
};

size_t inputBytes(const Case& c, int n) {
  const size_t block = c.count * dataTypeSize(c.dtype);
  const bool blocks = c.collective == Collective::kReduceScatter || c.collective == Collective::kAllToAll ||
                      c.collective == Collective::kScatter;
  return blocks ? block * n : block;
}
size_t outputBytes(const Case& c, int n) {
  const size_t block = c.count * dataTypeSize(c.dtype);
  const bool blocks = c.collective == Collective::kAllGather || c.collective == Collective::kAllToAll ||
                      c.collective == Collective::kGather;
  return blocks ? block * n : block;
}

// Small integers, exact in every type. The reference folds with the same
// kernels (tested on their own), so what this checks is the slots' plumbing:
// the right slots, blocks, order, op and Avg's division.
// v in 0..4 as a value of dtype, in its bytes.
std::vector<char> smallValue(DataType dtype, int v) {
  std::vector<char> one(dataTypeSize(dtype));
  {
    switch (dtype) {
      case DataType::kFloat32: {
        float f = static_cast<float>(v);
        std::memcpy(one.data(), &f, 4);
        break;
      }
      case DataType::kFloat64: {
        double d = v;
        std::memcpy(one.data(), &d, 8);
        break;
      }
      case DataType::kFloat16: {
        uint16_t h[] = {0x0000, 0x3c00, 0x4000, 0x4200, 0x4400};
        std::memcpy(one.data(), &h[v], 2);
        break;
      }
      case DataType::kBfloat16: {
        uint16_t b[] = {0x0000, 0x3f80, 0x4000, 0x4040, 0x4080};
        std::memcpy(one.data(), &b[v], 2);
        break;
      }
      case DataType::kFloat8e4m3: {
        uint8_t e[] = {0x00, 0x38, 0x40, 0x44, 0x48};
        one[0] = static_cast<char>(e[v]);
        break;
      }
      case DataType::kFloat8e5m2: {
        uint8_t e[] = {0x00, 0x3c, 0x40, 0x42, 0x44};
        one[0] = static_cast<char>(e[v]);
        break;
      }
      default: {
        int64_t x = v;
        std::memcpy(one.data(), &x, one.size());
        break;
      }  // little-endian integers
    }
  }
  return one;
}

std::vector<char> makeInput(const Case& c, int n, int rank, std::mt19937& rng) {
  std::vector<char> out(inputBytes(c, n));
  const size_t es = dataTypeSize(c.dtype);
  for (size_t i = 0; i < out.size() / es; ++i) {
    const int v = static_cast<int>(rng() % 4) + (rank & 1);  // 0..4, written in the element type
    std::memcpy(out.data() + i * es, smallValue(c.dtype, v).data(), es);
  }
  return out;
}

// Every rank's input to every case: inputs[case][rank], from `seed`.
std::vector<std::vector<std::vector<char>>> makeInputs(const std::vector<Case>& cases, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<std::vector<char>>> inputs(cases.size());
  for (size_t i = 0; i < cases.size(); ++i)
    for (int r = 0; r < n; ++r) inputs[i].push_back(makeInput(cases[i], n, r, rng));
  return inputs;
}

// Rank r's PreMulSum scalar: 2, 3, 0, 1, 2, ... in the element type.
uint64_t preMulScalar(DataType dtype, int rank) {
  uint64_t bits = 0;
  const std::vector<char> v = smallValue(dtype, (rank + 2) % 4);
  std::memcpy(&bits, v.data(), v.size());
  return bits;
}

// What rank `rank` must hold after the op, computed from all inputs directly.
std::vector<char> reference(const Case& c, int n, int rank, const std::vector<std::vector<char>>& in) {
  const size_t block = c.count * dataTypeSize(c.dtype);
  std::vector<char> out(outputBytes(c, n));
  auto fold = [&](size_t offset) {
    if (block == 0) return;
    std::vector<char> scaled(block);
    auto input = [&](int r) {  // rank r's block at offset, pre-multiplied where asked
      if (!c.preMultiply) return in[r].data() + offset;
      kernels::scaleBy(scaled.data(), in[r].data() + offset, c.count, c.dtype, preMulScalar(c.dtype, r));
      return static_cast<const char*>(scaled.data());
    };
    std::memcpy(out.data(), input(0), block);
    for (int r = 1; r < n; ++r) kernels::reduce(out.data(), out.data(), input(r), c.count, c.dtype, c.op);
    if (c.op == RedOp::kAvg) kernels::divideBy(out.data(), c.count, c.dtype, static_cast<uint64_t>(n));
  };
  switch (c.collective) {
    case Collective::kAllReduce:
      fold(0);
      break;
    case Collective::kReduce:
      if (rank == c.root) fold(0);
      break;
    case Collective::kBroadcast:
      if (block) std::memcpy(out.data(), in[c.root].data(), block);
      break;
    case Collective::kAllGather:
      for (int r = 0; r < n; ++r)
        if (block) std::memcpy(out.data() + r * block, in[r].data(), block);
      break;
    case Collective::kReduceScatter:
      fold(rank * block);
      break;
    case Collective::kAllToAll:
      for (int r = 0; r < n; ++r)
        if (block) std::memcpy(out.data() + r * block, in[r].data() + rank * block, block);
      break;
    case Collective::kGather:
      for (int r = 0; r < n && rank == c.root; ++r)
        if (block) std::memcpy(out.data() + r * block, in[r].data(), block);
      break;
    case Collective::kScatter:
      if (block) std::memcpy(out.data(), in[c.root].data() + rank * block, block);
      break;
    default:
      break;
  }
  return out;
}

// All-to-all blocks from 1 KiB are pulled where a test turns pulls on.
constexpr HostSlots::PullWindow kPulls{1024, SIZE_MAX}, kNoPulls{0, 0};

SlotPath pathOf(const Case& c, int n, HostSlots::PullWindow pulls = kNoPulls) {
  algo::CollectiveArgs a;
  a.collective = c.collective;
  a.nranks = n;
  a.count = c.count;
  a.dtype = c.dtype;
  a.op = c.op;
  a.root = c.root;
  return slotPath(a, kSlotBytes, pulls);
}

struct Rank {
  std::unique_ptr<HostSlots> slots;
  std::atomic<bool> halted{false};
  uint32_t opNumber = 0;
  ExecutionContext ctx;
};

class SlotGroup {
 public:
  // streamOutput: chunked calls write their outputs with streaming stores;
  // pulls: which all-to-alls are pulled.
  explicit SlotGroup(int n, int timeoutMs = 20000, bool streamOutput = false,
                     HostSlots::PullWindow pulls = kNoPulls)
      : n_(n),
        streamOutput_(streamOutput),
        pulls_(pulls),
        area_(HostSlots::makePrivateArea(n, kSlotBytes, kCellBytes)) {
    for (int r = 0; r < n; ++r) {
      auto rank = std::make_unique<Rank>();
      rank->slots = std::make_unique<HostSlots>(area_, n, r, kSlotBytes, kCellBytes);
      if (pulls.on()) rank->slots->allowPullsWithinThisProcess(pulls);
      rank->ctx.halted = &rank->halted;
      rank->ctx.haltReasonFn = [](const void*) { return abortedError("halted by the test"); };
      rank->ctx.timeoutMs = timeoutMs;
      // More threads than cores here: yield while waiting, as an oversubscribed rank does.
      rank->ctx.spinNs = 1000000;
      rank->ctx.yieldWhileSpinning = true;
      rank->ctx.opKind = "op";
      ranks_.push_back(std::move(rank));
    }
  }
  Rank& rank(int r) { return *ranks_[r]; }

  Status call(int r, const Case& c, const void* in, void* out) {
    Rank& me = *ranks_[r];
    SlotCall call{c.collective, c.dtype, c.op, c.count, c.root, in, out, pathOf(c, n_, pulls_), me.ctx.opSeq};
    call.preMultiply = c.preMultiply;
    if (c.preMultiply) call.preMulScalar = preMulScalar(c.dtype, r);
    call.streamOutput = streamOutput_;
    me.slots->announce(call.ticket, slotSignature(call), call.count);
    me.ctx.opSeq++;
    me.ctx.startedAt = Clock::now();
    me.ctx.suspect = -1;
    return runOnSlots(*me.slots, &me.opNumber, call, me.ctx);
  }

  // Every rank runs body(rank) on a thread of its own.
  void parallel(const std::function<void(int)>& body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n_; ++r) threads.emplace_back(body, r);
    for (auto& t : threads) t.join();
  }

 private:
  int n_;
  bool streamOutput_;
  HostSlots::PullWindow pulls_;
  std::shared_ptr<void> area_;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

// Every case that runs on slots of kSlotBytes: whole up to 2 KiB per rank,
// all-reduces, reduces, all-gathers, reduce-scatters, broadcasts and
// all-to-alls in chunks beyond (3000 elements: 2 to 12 chunks by type, more pieces for a
// reduce-scatter or an all-to-all), or those all-to-alls pulled where pulls
// are on (3000 elements make blocks past kPulls' 1 KiB in every type).
std::vector<Case> everyCase(int n) {
  std::vector<Case> cases;
  const Collective reducing[] = {Collective::kAllReduce, Collective::kReduce, Collective::kReduceScatter};
  const Collective moving[] = {Collective::kBroadcast, Collective::kAllGather, Collective::kAllToAll,
                               Collective::kGather, Collective::kScatter};
  for (int t = 0; t < kNumDataTypes; ++t)
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{31}, size_t{3000}}) {
      const auto dtype = static_cast<DataType>(t);
      for (Collective c : reducing) {
        for (int op = 0; op < kNumRedOps; ++op)
          cases.push_back({c, dtype, static_cast<RedOp>(op), count, static_cast<int>(count % n)});
        cases.push_back({c, dtype, RedOp::kSum, count, static_cast<int>(count % n), true});
      }
      for (Collective c : moving)
        cases.push_back({c, dtype, RedOp::kSum, count, static_cast<int>((count + t) % n)});
    }
  cases.push_back({Collective::kBarrier, DataType::kUint8, RedOp::kSum, 0, 0});
  std::erase_if(cases, [n](const Case& c) { return pathOf(c, n) == SlotPath::kNone; });
  return cases;
}

// Rank count, whether outputs are written with streaming stores, and
// whether large all-to-alls are pulled.
class SlotCollectives : public ::testing::TestWithParam<std::tuple<int, bool, bool>> {};

// Every case in a row on the same slots, so each slot is reused hundreds of
// times, by ops of every shape, with ranks drifting apart (some do random
// extra work between ops).
TEST_P(SlotCollectives, EveryCollectiveDtypeAndOpMatchesTheReference) {
  // Not a structured binding: clang 14 (the sanitizer builds) cannot capture one in a lambda.
  const int n = std::get<0>(GetParam());
  const bool streamOutput = std::get<1>(GetParam());
  const std::vector<Case> cases = everyCase(n);
  SlotGroup group(n, 20000, streamOutput, std::get<2>(GetParam()) ? kPulls : kNoPulls);
  const auto inputs = makeInputs(cases, n, 1234 + n);

  std::vector<std::string> failures(n);
  group.parallel([&](int r) {
    std::mt19937 jitter(r);
    for (size_t i = 0; i < cases.size() && failures[r].empty(); ++i) {
      const Case& c = cases[i];
      std::vector<char> out(outputBytes(c, n), 0x5a);
      // Off the root these are NULL (braid.h allows it), so a read or write there crashes.
      const bool noOutput =
          (c.collective == Collective::kReduce || c.collective == Collective::kGather) && r != c.root;
      const bool noInput = c.collective == Collective::kScatter && r != c.root;
      Status st = group.call(r, c, noInput ? nullptr : inputs[i][r].data(), noOutput ? nullptr : out.data());
      if (!st.isOk()) {
        failures[r] = "case " + std::to_string(i) + ": " + st.message();
        break;
      }
      if (!noOutput && out != reference(c, n, r, inputs[i]))
        failures[r] =
            "case " + std::to_string(i) + " (" +
            describeSlotSignature(slotSignature({c.collective, c.dtype, c.op, c.count, c.root, nullptr,
                                                 nullptr, SlotPath::kWhole, 0, c.preMultiply})) +
            "): wrong output";
      std::atomic<unsigned> spin{
          static_cast<unsigned>(jitter() % 2000)};  // an atomic, so the busy loop is not optimised away
      while (spin.fetch_sub(1, std::memory_order_relaxed) > 0) {
      }
    }
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
}

// N2, N2_streaming, N2_pulled, N2_streaming_pulled, ...
std::string matrixName(const ::testing::TestParamInfo<std::tuple<int, bool, bool>>& info) {
  std::string name = "N";
  name += std::to_string(std::get<0>(info.param));
  if (std::get<1>(info.param)) name += "_streaming";
  if (std::get<2>(info.param)) name += "_pulled";
  return name;
}

INSTANTIATE_TEST_SUITE_P(RankCounts, SlotCollectives,
                         ::testing::Combine(::testing::Values(2, 3, 5, 8), ::testing::Bool(),
                                            ::testing::Bool()),
                         matrixName);

// The matrix's pulled runs take the pulled path for its large all-to-alls,
// and with 2 ranks its large all-gathers (and for nothing else), so they do
// test it.
TEST(SlotCollectives, TheMatrixPullsItsLargeAllToAllsAndTwoRankAllGathers) {
  for (int n : {2, 3}) {
    size_t allToAlls = 0, allGathers = 0;
    for (const Case& c : everyCase(n)) {
      if (pathOf(c, n, kPulls) != SlotPath::kPulled) continue;
      allToAlls += c.collective == Collective::kAllToAll;
      allGathers += c.collective == Collective::kAllGather;
      EXPECT_EQ(pathOf(c, n), SlotPath::kChunked) << "without pulls it goes in chunks";
    }
    EXPECT_EQ(allToAlls, static_cast<size_t>(kNumDataTypes)) << "one 3000-element all-to-all per type";
    EXPECT_EQ(allGathers, n == 2 ? static_cast<size_t>(kNumDataTypes) : 0u) << n << " ranks";
  }
}

// Every pulled case with each rank's input in braidMemAlloc memory
// (base/shareable_memory.h), freed as soon as its call returns: every peer
// is read through a mapping of the region instead of process_vm_readv, and
// exactly. A mapping of a freed region is let go at the next mapping made,
// so each rank ends holding one per peer.
TEST(SlotCollectives, PulledInputsInShareableMemoryAreReadThroughMappings) {
  for (int n : {2, 3}) {
    std::vector<Case> cases;
    for (const Case& c : everyCase(n))
      if (pathOf(c, n, kPulls) == SlotPath::kPulled) cases.push_back(c);
    ASSERT_FALSE(cases.empty());
    SlotGroup group(n, 20000, false, kPulls);
    const auto inputs = makeInputs(cases, n, 99 + n);
    std::vector<std::string> failures(n);
    std::vector<size_t> mapsMade(n);
    group.parallel([&](int r) {
      for (size_t i = 0; i < cases.size() && failures[r].empty(); ++i) {
        const Case& c = cases[i];
        void* in = nullptr;
        ASSERT_TRUE(allocateShareable(inputs[i][r].size(), &in).isOk());
        std::memcpy(in, inputs[i][r].data(), inputs[i][r].size());
        std::vector<char> out(outputBytes(c, n), 0x5a);
        const size_t before = group.rank(r).slots->peerRegions()->mapped();
        Status st = group.call(r, c, in, out.data());
        mapsMade[r] += group.rank(r).slots->peerRegions()->mapped() > before;
        EXPECT_TRUE(freeShareable(in).isOk());
        if (!st.isOk())
          failures[r] = "case " + std::to_string(i) + ": " + st.message();
        else if (out != reference(c, n, r, inputs[i]))
          failures[r] = "case " + std::to_string(i) + ": wrong output";
      }
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(failures[r], "") << n << " ranks, rank " << r;
      EXPECT_GT(mapsMade[r], 0u) << n << " ranks, rank " << r << " mapped no peer's input";
      EXPECT_LE(group.rank(r).slots->peerRegions()->mapped(), static_cast<size_t>(n - 1))
          << n << " ranks, rank " << r << ": mappings of freed regions were kept";
    }
  }
}

// Whether a chunked call of `c` on n ranks moves more than its first op's
// piece (slot_collectives.cc's chunk sizes on slots of kSlotBytes).
bool movesMoreThanOnePiece(const Case& c, int n) {
  const size_t es = dataTypeSize(c.dtype), block = c.count * es;
  auto lines = [](size_t bytes) { return bytes / 64 * 64; };
  switch (c.collective) {
    case Collective::kAllReduce:
      return c.count > kSlotBytes / es;
    case Collective::kReduceScatter:
      return block > lines(kSlotBytes / n);
    case Collective::kAllToAll:
      return block > lines(kSlotBytes / (n - 1));
    default:
      return block > lines(kSlotBytes);
  }
}

constexpr HostSlots::PullWindow kMapsOnly{1024, 4096};

// Runs `cases` on n ranks whose buffers all come from braidMemAlloc but for
// rank plainRank's, for each of plainRanks (-1: none plain; -2: none plain,
// but no mapping takes writes; -3: rank 1's take none), out of place and in place (where rank 2 on
// folds onto an input block that a later fold still reads). Checks every
// output byte for byte and how many peers' buffers each rank mapped: where
// the call reads the rest of its buffers directly, every rank maps the
// n-1 it reads (a broadcast's others the root's alone; a reduce whose root
// is plain has its root read the others' alone from 4 ranks on); where it
// runs in chunks, none.
// (kMapsOnly turns pulls on but pulls no call: its outputs are too large.)
void checkMappedCalls(int n, const std::vector<Case>& cases, std::initializer_list<int> plainRanks) {
  for (int plainRank : plainRanks)
    for (bool inPlace : {false, true}) {
      SlotGroup group(n, 20000, false, kMapsOnly);
      if (plainRank == -2)
        for (int r = 0; r < n; ++r) group.rank(r).slots->peerRegions()->refuseWritesForTests();
      if (plainRank == -3) group.rank(1).slots->peerRegions()->refuseWritesForTests();
      const auto inputs = makeInputs(cases, n, 7 + n);
      std::vector<std::string> failures(n);
      group.parallel([&](int r) {
        for (size_t i = 0; i < cases.size() && failures[r].empty(); ++i) {
          const Case& c = cases[i];
          const bool hasInPlace =
              c.collective != Collective::kAllToAll && c.collective != Collective::kBroadcast;
          if (inPlace && !hasInPlace) continue;
          const std::string which = "case " + std::to_string(i) + " (" + algo::collectiveName(c.collective) +
                                    (c.preMultiply ? " premulsum" : "") + ", root " + std::to_string(c.root) +
                                    ", plain rank " + std::to_string(plainRank) +
                                    (inPlace ? ", in place" : "") + ")";
          // One buffer for input and output, as the in-place forms lay
          // them out (an all-gather's input is block r of its output, a
          // reduce-scatter's output block r of its input), or one after
          // the other.
          const size_t es = dataTypeSize(c.dtype), outBytes = outputBytes(c, n),
                       inBytes = inputs[i][r].size(), myBlock = r * c.count * es;
          size_t inAt = outBytes, outAt = 0;
          if (inPlace && c.collective == Collective::kAllGather)
            inAt = myBlock;
          else if (inPlace && c.collective == Collective::kReduceScatter)
            inAt = 0, outAt = myBlock;
          else if (inPlace)
            inAt = 0;
          const size_t total = std::max(outAt + outBytes, inAt + inBytes) + 1;
          void* shared = nullptr;
          std::vector<char> plain;
          char* buf = nullptr;
          if (r == plainRank) {
            plain.resize(total);
            buf = plain.data();
          } else {
            ASSERT_TRUE(allocateShareable(total, &shared).isOk());
            buf = static_cast<char*>(shared);
          }
          std::memset(buf + outAt, 0x5a, outBytes);
          if (inBytes > 0) std::memcpy(buf + inAt, inputs[i][r].data(), inBytes);
          const size_t before = group.rank(r).slots->peerRegions()->made();
          Status st = group.call(r, c, buf + inAt, buf + outAt);
          const size_t made = group.rank(r).slots->peerRegions()->made() - before;
          const std::vector<char> out(buf + outAt, buf + outAt + outBytes);
          if (shared != nullptr) {
            EXPECT_TRUE(freeShareable(shared).isOk());
          }
          // A broadcast's root is read by the others, and only they map.
          // A reduce's ranks read each other's inputs and write into
          // the root's output, unless the root's buffers are plain:
          // then with more than 3 ranks the root alone reads the rest.
          // Where no mapping takes writes, the others leave their blocks
          // to the root, which then reads everything.
          const bool broadcast = c.collective == Collective::kBroadcast,
                     reduce = c.collective == Collective::kReduce;
          const bool direct = broadcast                       ? c.root != plainRank && r != c.root
                              : reduce && plainRank == c.root ? n > 3 && r == c.root
                              : reduce && plainRank == -2     ? r == c.root
                              : reduce && plainRank == -3     ? r == c.root || r != 1
                                                              : plainRank < 0;
          const size_t expected = !direct ? 0 : broadcast ? 1 : n - 1;
          if (!st.isOk())
            failures[r] = which + ": " + st.message();
          else if ((!reduce || r == c.root) && out != reference(c, n, r, inputs[i]))  // (no output elsewhere)
            failures[r] = which + ": wrong output";
          else if (movesMoreThanOnePiece(c, n) && made != expected)
            failures[r] =
                which + ": mapped " + std::to_string(made) + " buffers, expected " + std::to_string(expected);
        }
      });
      for (int r = 0; r < n; ++r) EXPECT_EQ(failures[r], "") << n << " ranks, rank " << r;
    }
}

// Sums and PreMulSums of `collective` large enough that a rank's share of
// the rest spans several of the direct folds' staged pieces (64 KiB, or
// half that scaled), rooted at 0 and at n-1.
std::vector<Case> largeSums(Collective collective, int n) {
  std::vector<Case> cases;
  for (bool preMultiply : {false, true})
    for (int root : {0, n - 1})
      cases.push_back({collective, DataType::kFloat64, RedOp::kSum, 20000, root, preMultiply});
  return cases;
}

// Runs checkMappedCalls over every chunked case of `collectives` (at least
// `perType` a dtype) on 2, 3 and 5 ranks, and the large sums of those that
// reduce, with every rank's buffers braidMemAlloc memory, rank 0's plain and
// rank n-1's plain.
void checkChunkedCallsThroughMappings(std::initializer_list<Collective> collectives, size_t perType) {
  for (int n : {2, 3, 5}) {
    std::vector<Case> cases;
    for (const Case& c : everyCase(n))
      if (std::find(collectives.begin(), collectives.end(), c.collective) != collectives.end() &&
          pathOf(c, n, kMapsOnly) == SlotPath::kChunked)
        cases.push_back(c);
    for (Collective c : collectives)
      if (c == Collective::kAllReduce || c == Collective::kReduceScatter)
        for (const Case& large : largeSums(c, n)) cases.push_back(large);
    ASSERT_GE(cases.size(), perType * kNumDataTypes) << n << " ranks";
    checkMappedCalls(n, cases, {-1, 0, n - 1});
  }
}

// Chunked all-gathers, all-to-alls, broadcasts and all-reduces whose every
// buffer read by peers (the root's input, for a broadcast; inputs and
// outputs, for an all-reduce) is braidMemAlloc memory read all but their
// first piece straight from those buffers through mappings; PreMulSums scale
// each input by the scalar its rank announced. With one rank's buffers
// plain, they run in chunks (a broadcast only when that is the root's).
// Reduce-scatters are a test of their own, so that each stays well inside
// core_test's limit under TSan.
TEST(SlotCollectives, ChunkedCallsReadTheRestOfShareableBuffersThroughMappings) {
  checkChunkedCallsThroughMappings(
      {Collective::kAllGather, Collective::kAllToAll, Collective::kBroadcast, Collective::kAllReduce}, 4);
}

// The same for chunked reduce-scatters.
TEST(SlotCollectives, ChunkedReduceScattersReadTheRestOfShareableBuffersThroughMappings) {
  checkChunkedCallsThroughMappings({Collective::kReduceScatter}, 1);
}

// Chunked reduces whose inputs and root's output are braidMemAlloc memory
// fold all but their first piece straight from the inputs into the root's
// output: the others write there through a writable mapping, or, where
// none is writable (on every rank, or on rank 1 alone), leave their blocks
// to the root. With a plain root, from 4 ranks on the root alone folds the
// rest from the others' inputs; with other plain buffers they run in
// chunks. PreMulSums alike.
TEST(SlotCollectives, ChunkedReducesFoldTheRestIntoTheRootsOutputThroughMappings) {
  for (int n : {2, 3, 5}) {
    std::vector<Case> cases;
    for (const Case& c : everyCase(n)) {
      if (c.collective != Collective::kReduce || pathOf(c, n, kMapsOnly) != SlotPath::kChunked) continue;
      cases.push_back(c);
      // everyCase's chunked reduces are all rooted at 0; sums at n-1 (from
      // 2 on: its in-place output is a source past the second) too.
      if (c.op == RedOp::kSum) {
        Case last = c;
        last.root = n - 1;
        cases.push_back(last);
      }
    }
    for (const Case& large : largeSums(Collective::kReduce, n)) cases.push_back(large);
    ASSERT_GE(cases.size(), static_cast<size_t>(2 * kNumDataTypes)) << n << " ranks";
    checkMappedCalls(n, cases, {-1, -2, -3, 0, n - 1});
  }
}

// The same buffers called again are read through the mappings already made.
TEST(SlotCollectives, AShareableInputIsMappedOnceForEveryCall) {
  const int n = 3;
  const Case c{Collective::kAllToAll, DataType::kInt32, RedOp::kSum, 1000, 0};
  ASSERT_EQ(pathOf(c, n, kPulls), SlotPath::kPulled);
  SlotGroup group(n, 20000, false, kPulls);
  std::vector<int32_t*> in(n);
  for (int r = 0; r < n; ++r) {
    void* p = nullptr;
    ASSERT_TRUE(allocateShareable(n * c.count * sizeof(int32_t), &p).isOk());
    in[r] = static_cast<int32_t*>(p);
  }
  std::vector<size_t> wrong(n);
  for (int call = 0; call < 4; ++call)
    group.parallel([&](int r) {
      for (size_t i = 0; i < n * c.count; ++i) in[r][i] = static_cast<int32_t>(r * 100000 + i + call);
      std::vector<int32_t> out(n * c.count, -1);
      ASSERT_TRUE(group.call(r, c, in[r], out.data()).isOk());
      for (int p = 0; p < n; ++p)
        for (size_t i = 0; i < c.count; ++i)
          wrong[r] += out[p * c.count + i] != static_cast<int32_t>(p * 100000 + r * c.count + i + call);
    });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(wrong[r], 0u) << "rank " << r;
    EXPECT_EQ(group.rank(r).slots->peerRegions()->mapped(), static_cast<size_t>(n - 1)) << "rank " << r;
  }
  for (int r = 0; r < n; ++r) EXPECT_TRUE(freeShareable(in[r]).isOk());
}

// Rank 1's input is unreadable where rank 0's block lies (a PROT_NONE page):
// rank 0's pull fails naming rank 1, and the others, which read what they
// could, fail too, at once, saying rank 0 gave up, instead of waiting for it
// until their deadline.
TEST(SlotCollectives, AFailedPullFailsTheOpForEveryRank) {
  const int n = 3;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), count = page / 4;
  const Case c{Collective::kAllToAll, DataType::kInt32, RedOp::kSum, count, 0};
  const HostSlots::PullWindow pulls{page, SIZE_MAX};
  SlotGroup group(n, 20000, false, pulls);
  ASSERT_EQ(pathOf(c, n, pulls), SlotPath::kPulled);
  void* guarded = mmap(nullptr, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(guarded, MAP_FAILED);
  std::memset(guarded, 1, n * page);
  ASSERT_EQ(mprotect(guarded, page, PROT_NONE), 0);  // block 0 of rank 1's input
  Status st[n];
  std::vector<std::vector<int32_t>> out(n, std::vector<int32_t>(n * count, -1));
  const auto start = Clock::now();
  group.parallel([&](int r) {
    std::vector<int32_t> in(n * count, r);
    st[r] = group.call(r, c, r == 1 ? guarded : in.data(), out[r].data());
  });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10)) << "at once, not at the deadline";
  munmap(guarded, n * page);
  EXPECT_EQ(st[0].code(), Code::kSystemError) << st[0].message();
  EXPECT_NE(st[0].message().find("of rank 1's input"), std::string::npos) << st[0].message();
  EXPECT_EQ(group.rank(0).ctx.suspect, 1);
  for (int r : {1, 2}) {
    EXPECT_EQ(st[r].code(), Code::kRemoteError) << st[r].message();
    EXPECT_NE(st[r].message().find("rank 0 gave up on this op"), std::string::npos) << st[r].message();
    EXPECT_EQ(group.rank(r).ctx.suspect, 0);
  }
}

TEST(SlotCollectives, InPlaceAllReduceAndAllGather) {
  const int n = 3;
  SlotGroup group(n);
  std::vector<std::vector<int32_t>> data(n);
  group.parallel([&](int r) {
    std::vector<int32_t> v = {r + 1, 10 * (r + 1)};
    ASSERT_TRUE(
        group.call(r, {Collective::kAllReduce, DataType::kInt32, RedOp::kSum, 2, 0}, v.data(), v.data())
            .isOk());
    std::vector<int32_t> all(n, 0);
    all[r] = v[0] + r;  // in place: the own block sits at rank * count
    ASSERT_TRUE(
        group.call(r, {Collective::kAllGather, DataType::kInt32, RedOp::kSum, 1, 0}, &all[r], all.data())
            .isOk());
    data[r] = {v[0], v[1], all[0], all[1], all[2]};
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(data[r], (std::vector<int32_t>{6, 60, 6, 7, 8})) << "rank " << r;
}

// An in-place all-gather of 1000 int32 a rank, which must take `path`: the
// own block stays where it is, and the others land around it.
void expectInPlaceAllGather(int n, SlotPath path, HostSlots::PullWindow pulls) {
  const size_t count = 1000;  // 4000 B a block: 2 chunks of a 2 KiB slot
  const Case c{Collective::kAllGather, DataType::kInt32, RedOp::kSum, count, 0};
  ASSERT_EQ(pathOf(c, n, pulls), path);
  SlotGroup group(n, 20000, false, pulls);
  std::vector<std::string> failures(n);
  group.parallel([&](int r) {
    std::vector<int32_t> all(n * count, -1);
    for (size_t i = 0; i < count; ++i) all[r * count + i] = static_cast<int32_t>(r * 100000 + i);
    if (Status st = group.call(r, c, &all[r * count], all.data()); !st.isOk()) {
      failures[r] = st.message();
      return;
    }
    for (int q = 0; q < n && failures[r].empty(); ++q)
      for (size_t i = 0; i < count; ++i)
        if (all[q * count + i] != static_cast<int32_t>(q * 100000 + i)) {
          failures[r] = "block " + std::to_string(q) + " element " + std::to_string(i);
          break;
        }
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
}

// In place over several chunks (the matrix above runs out of place).
TEST(SlotCollectives, InPlaceChunkedAllGather) { expectInPlaceAllGather(3, SlotPath::kChunked, kNoPulls); }

// With 2 ranks, pulled.
TEST(SlotCollectives, InPlacePulledAllGather) { expectInPlaceAllGather(2, SlotPath::kPulled, kPulls); }

// In place over several pieces: rank r's output is its own block r, which
// it folds last but reads too (ranks 1 and 2 fold their own input after the
// output was first written).
TEST(SlotCollectives, InPlaceChunkedReduceScatter) {
  const int n = 3;
  const size_t count = 1000;  // 4000 B a block: 7 pieces of 640 B
  const Case c{Collective::kReduceScatter, DataType::kInt32, RedOp::kSum, count, 0};
  ASSERT_EQ(pathOf(c, n), SlotPath::kChunked);
  SlotGroup group(n);
  std::vector<std::string> failures(n);
  group.parallel([&](int r) {
    std::vector<int32_t> v(n * count);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>((r + 1) * 1000000 + i);
    if (Status st = group.call(r, c, v.data(), &v[r * count]); !st.isOk()) {
      failures[r] = st.message();
      return;
    }
    for (size_t i = 0; i < count; ++i)  // (1 + 2 + 3) * 1000000 + 3 * (r * count + i)
      if (v[r * count + i] != static_cast<int32_t>(6000000 + 3 * (r * count + i))) {
        failures[r] = "element " + std::to_string(i);
        break;
      }
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
}

// An in-place reduce folds onto the root's input: at every root of 2 to 5
// ranks (the root folding every chunk itself, and the split fold), the
// root's input is read before the fold writes over it.
TEST(SlotCollectives, InPlaceChunkedReduceAtEveryRoot) {
  const size_t count = 3000;  // 12000 B: several chunks
  for (int n = 2; n <= 5; ++n)
    for (int root = 0; root < n; ++root) {
      const Case c{Collective::kReduce, DataType::kInt32, RedOp::kSum, count, root};
      ASSERT_EQ(pathOf(c, n), SlotPath::kChunked);
      SlotGroup group(n);
      std::vector<std::string> failures(n);
      group.parallel([&](int r) {
        std::vector<int32_t> v(count);
        for (size_t i = 0; i < count; ++i) v[i] = static_cast<int32_t>((r + 1) * 1000000 + i);
        if (Status st = group.call(r, c, v.data(), r == root ? v.data() : nullptr); !st.isOk()) {
          failures[r] = st.message();
          return;
        }
        for (size_t i = 0; r == root && i < count; ++i)  // sum of (q + 1) * 1000000 + i over the n ranks
          if (v[i] != static_cast<int32_t>(n * (n + 1) / 2 * 1000000 + n * i)) {
            failures[r] = "element " + std::to_string(i) + " is " + std::to_string(v[i]);
            break;
          }
      });
      for (int r = 0; r < n; ++r)
        EXPECT_EQ(failures[r], "") << n << " ranks, root " << root << ", rank " << r;
    }
}

TEST(SlotCollectives, RanksThatCallDifferentCollectivesAreToldWhich) {
  SlotGroup group(2, 5000);
  Status st[2];
  group.parallel([&](int r) {
    float x[4] = {1, 2, 3, 4}, y[4];
    Case c{r == 0 ? Collective::kAllReduce : Collective::kBroadcast, DataType::kFloat32, RedOp::kSum, 4, 0};
    st[r] = group.call(r, c, x, y);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(st[r].code(), Code::kRemoteError) << st[r].message();
    EXPECT_NE(st[r].message().find("different collectives"), std::string::npos) << st[r].message();
    EXPECT_EQ(group.rank(r).ctx.suspect, 1 - r);
  }
  EXPECT_NE(st[0].message().find("rank 1 called broadcast of 4 x"), std::string::npos) << st[0].message();
  EXPECT_NE(st[1].message().find("rank 0 called allreduce of 4 x"), std::string::npos) << st[1].message();
}

// Rank 1 is in a call the executor runs (it announces it and never touches
// the slots): rank 0, waiting on the slots, says so at once, and names the
// call with its whole count (a signature keeps only 24 bits of it).
TEST(SlotCollectives, APeerInAnotherCallAtTheSameTicketIsAMismatch) {
  SlotGroup group(2, 20000);
  const size_t bigCount = size_t{3} << 24;
  group.rank(1).slots->announce(
      0,
      slotSignature({Collective::kAllGather, DataType::kFloat32, RedOp::kSum, bigCount, 0, nullptr, nullptr}),
      bigCount);
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  const auto start = Clock::now();
  Status st = group.call(0, {Collective::kAllReduce, DataType::kFloat32, RedOp::kSum, 4, 0}, x, y);
  EXPECT_EQ(st.code(), Code::kRemoteError) << st.message();
  EXPECT_NE(st.message().find("rank 1 called allgather of 50331648 x float as op 1 of the communicator while "
                              "this rank called allreduce of 4 x float (sum)"),
            std::string::npos)
      << st.message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << "found at once, not at the deadline";
  EXPECT_EQ(group.rank(0).ctx.suspect, 1);
}

TEST(SlotCollectives, AHaltedOpStopsNamingTheRankItWaitedFor) {
  SlotGroup group(3);
  group.rank(0).halted = true;
  int32_t x = 1, y = 0;
  Status st = group.call(0, {Collective::kAllReduce, DataType::kInt32, RedOp::kSum, 1, 0}, &x, &y);
  EXPECT_EQ(st.code(), Code::kAborted) << st.message();
  EXPECT_NE(st.message().find("halted by the test while waiting for rank 1"), std::string::npos)
      << st.message();
  EXPECT_EQ(group.rank(0).ctx.suspect, 1);
  EXPECT_EQ(y, 0) << "a failed op leaves the output alone";
}

// A rank that published its input and then gave up (halted) marks its op
// failed: a peer that comes later must not complete the op with that input,
// and says which rank gave up. Sequential calls, so no timing is involved:
// rank 0 fails while rank 2 has not come; rank 2 then finds everyone's input
// published, and rank 0's marked failed.
TEST(SlotCollectives, APeerThatGaveUpAfterPublishingFailsTheOpForLaterRanks) {
  SlotGroup group(3);
  group.rank(0).halted = true;
  int32_t x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
  const Case c{Collective::kAllReduce, DataType::kInt32, RedOp::kSum, 1, 0};
  EXPECT_EQ(group.call(0, c, &x[0], &y[0]).code(), Code::kAborted);
  group.rank(1).halted = true;  // rank 1 publishes, then gives up waiting for rank 2
  EXPECT_EQ(group.call(1, c, &x[1], &y[1]).code(), Code::kAborted);
  Status late = group.call(2, c, &x[2], &y[2]);
  EXPECT_EQ(late.code(), Code::kRemoteError) << late.message();
  EXPECT_NE(late.message().find("rank 0 gave up on this op"), std::string::npos) << late.message();
  EXPECT_EQ(group.rank(2).ctx.suspect, 0);
  EXPECT_EQ(y[2], 0) << "a failed op leaves the output alone";
}

// A rank that waits for nobody in an op whose data fits a cell (a reduce's
// non-root, a broadcast's root) returns once it has published, and runs up to
// kCells - 1 ops ahead of the ranks that read it, and no further: its next op
// would overwrite a cell not yet read. The readers then find every one of
// those inputs intact. One thread, so no timing is involved but the last
// op's deadline.
TEST(SlotCollectives, ARankThatWaitsForNobodyRunsAheadByOneOpLessThanTheCells) {
  constexpr int32_t kAhead = HostSlots::kCells - 1;
  struct Shape {
    Collective collective;
    int ahead;  // the rank that runs ahead
  };
  for (const Shape shape : {Shape{Collective::kReduce, 1}, Shape{Collective::kBroadcast, 0}}) {
    SCOPED_TRACE(algo::collectiveName(shape.collective));
    SlotGroup group(2, 300);
    const Case c{shape.collective, DataType::kInt32, RedOp::kSum, 1, 0};
    const int behind = 1 - shape.ahead;
    int32_t unused = -1;
    for (int32_t i = 0; i < kAhead; ++i) {
      int32_t x = 100 + i;
      ASSERT_TRUE(group.call(shape.ahead, c, &x, &unused).isOk()) << "op " << i;
    }
    int32_t x = 0;
    Status held = group.call(shape.ahead, c, &x, &unused);
    EXPECT_EQ(held.code(), Code::kTimeout) << held.message();
    EXPECT_NE(
        held.message().find("waiting for rank " + std::to_string(behind) + " to finish its previous op"),
        std::string::npos)
        << held.message();
    for (int32_t i = 0; i < kAhead; ++i) {
      int32_t mine = i, y = -1;
      ASSERT_TRUE(group.call(behind, c, &mine, &y).isOk()) << "op " << i;
      EXPECT_EQ(y, shape.collective == Collective::kReduce ? 100 + 2 * i : 100 + i) << "op " << i;
    }
  }
}

// A rank a window ahead would rather wait until its readers are half a window
// behind, but not longer than a spin where the cell it needs is free: here
// its root stops after 10 ops (held elsewhere, say), and the non-root still
// gets exactly as far as the cells allow, 63 ops past the root's last.
TEST(SlotCollectives, ARankAWindowAheadGoesOnWhereItsCellIsFree) {
  constexpr int32_t kCells = HostSlots::kCells, kRootCalls = 10;
  SlotGroup group(2, 300);
  for (int r = 0; r < 2; ++r) group.rank(r).ctx.spinNs = 100000;  // 0.1 ms a brief wait
  const Case c{Collective::kReduce, DataType::kInt32, RedOp::kSum, 1, 0};
  int32_t x = 1, y = -1;
  for (int32_t i = 0; i < kRootCalls; ++i) ASSERT_TRUE(group.call(1, c, &x, nullptr).isOk()) << "op " << i;
  for (int32_t i = 0; i < kRootCalls; ++i) {
    ASSERT_TRUE(group.call(0, c, &x, &y).isOk()) << "root op " << i;
    EXPECT_EQ(y, 2);
  }
  int32_t made = kRootCalls;
  while (made < kRootCalls + kCells && group.call(1, c, &x, nullptr).isOk()) ++made;
  EXPECT_EQ(made, kRootCalls + kCells - 1);
}

// Past a cell, the data goes through the slots, which alternate: a rank that
// waits for nobody is then at most one op ahead.
TEST(SlotCollectives, OpsPastACellRunAheadByOneOp) {
  SlotGroup group(2, 300);
  const size_t count = kCellBytes / sizeof(int32_t) + 1;
  const Case c{Collective::kReduce, DataType::kInt32, RedOp::kSum, count, 0};
  ASSERT_EQ(pathOf(c, 2), SlotPath::kWhole);
  std::vector<int32_t> x(count, 1);
  ASSERT_TRUE(group.call(1, c, x.data(), nullptr).isOk());
  Status held = group.call(1, c, x.data(), nullptr);
  EXPECT_EQ(held.code(), Code::kTimeout) << held.message();
  std::vector<int32_t> y(count, -1);
  ASSERT_TRUE(group.call(0, c, x.data(), y.data()).isOk());
  EXPECT_EQ(y, std::vector<int32_t>(count, 2));
}

TEST(SlotCollectives, ARankThatNeverComesTimesOutNamingIt) {
  SlotGroup group(3, 100);
  Status st[3];
  // Ranks 0 and 1 call; rank 2 never does.
  group.parallel([&](int r) {
    if (r == 2) return;
    int32_t x = r, y = -1;
    st[r] = group.call(r, {Collective::kAllReduce, DataType::kInt32, RedOp::kSum, 1, 0}, &x, &y);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(st[r].code(), Code::kTimeout) << st[r].message();
    EXPECT_NE(st[r].message().find("waiting for rank 2"), std::string::npos) << st[r].message();
    EXPECT_EQ(group.rank(r).ctx.suspect, 2);
  }
}

TEST(SlotCollectives, ThePathDependsOnlyOnTheCallsShape) {
  constexpr SlotPath kNone = SlotPath::kNone, kWhole = SlotPath::kWhole, kChunked = SlotPath::kChunked;
  algo::CollectiveArgs a;
  a.nranks = 4;
  a.dtype = DataType::kFloat32;
  a.collective = Collective::kAllReduce;
  a.count = 256;  // 1 KiB
  EXPECT_EQ(slotPath(a, 1024), kWhole);
  EXPECT_EQ(slotPath(a, 1023), kChunked) << "an all-reduce larger than a slot goes in chunks";
  EXPECT_EQ(slotPath(a, 0), kNone) << "0 turns slots off";
  a.count = kWholeMaxBytes / 4 + 1;
  EXPECT_EQ(slotPath(a, 1 << 20), kChunked) << "whole only up to kWholeMaxBytes";
  a.count = SIZE_MAX / 8;
  EXPECT_EQ(slotPath(a, 1 << 20), kChunked) << "any size";
  a.count = 256;
  EXPECT_EQ(slotPath(a, 15), kNone) << "a chunk needs an element per rank";
  a.collective = Collective::kReduce;  // the all-reduce's chunks, copied out by the root only
  for (int rank = 0; rank < 4; ++rank) {
    a.rank = rank;
    EXPECT_EQ(slotPath(a, 1024), kWhole);
    EXPECT_EQ(slotPath(a, 1023), kChunked);
    EXPECT_EQ(slotPath(a, 15), kNone);
  }
  a.rank = 0;
  a.collective = Collective::kBroadcast;  // every rank judges by the root's input
  for (int rank = 0; rank < 4; ++rank) {
    a.rank = rank;
    EXPECT_EQ(slotPath(a, 1023), kChunked);
    EXPECT_EQ(slotPath(a, 1024), kWhole);
  }
  a.collective = Collective::kAllToAll;  // n blocks per rank
  a.count = 64;
  EXPECT_EQ(slotPath(a, 1024), kWhole);
  EXPECT_EQ(slotPath(a, 1023), kChunked) << "a line of every other rank's block fits";
  EXPECT_EQ(slotPath(a, 192), kChunked) << "its own block takes no room";
  EXPECT_EQ(slotPath(a, 191), kNone) << "a piece of every other rank's block needs a cache line";
  // Pulled from the window's block size on and below its output size,
  // whatever the slots' size; whole first. (4 blocks of 256 B: 1 KiB out.)
  constexpr SlotPath kPulled = SlotPath::kPulled;
  EXPECT_EQ(slotPath(a, 1023, {256, 1025}), kPulled);
  EXPECT_EQ(slotPath(a, 191, {256, SIZE_MAX}), kPulled) << "a pull needs no room in the slot";
  EXPECT_EQ(slotPath(a, 1023, {257, SIZE_MAX}), kChunked) << "a block below the window";
  EXPECT_EQ(slotPath(a, 1023, {256, 1024}), kChunked) << "an output past the window";
  EXPECT_EQ(slotPath(a, 1024, {256, SIZE_MAX}), kWhole) << "small calls run whole";
  EXPECT_EQ(slotPath(a, 0, {256, SIZE_MAX}), kNone) << "no slots, no pulls";
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kBroadcast,
                       Collective::kReduceScatter, Collective::kGather, Collective::kScatter}) {
    a.collective = c;
    EXPECT_NE(slotPath(a, 255, {64, SIZE_MAX}), kPulled)
        << "with 4 ranks only all-to-alls pull: " << algo::collectiveName(c);
  }
  a.nranks = 2;  // then all-gathers pull too: 2 blocks of 256 B
  a.collective = Collective::kAllGather;
  EXPECT_EQ(slotPath(a, 255, {256, 513}), kPulled);
  EXPECT_EQ(slotPath(a, 255, {256, 512}), kChunked) << "an output past the window";
  a.collective = Collective::kBroadcast;
  EXPECT_EQ(slotPath(a, 255, {64, SIZE_MAX}), kChunked) << "a broadcast's chunks pipeline: never pulled";
  a.nranks = 4;
  a.collective = Collective::kAllGather;
  a.count = 256;
  EXPECT_EQ(slotPath(a, 1024), kWhole);
  EXPECT_EQ(slotPath(a, 1023), kChunked);
  EXPECT_EQ(slotPath(a, 63), kNone) << "a chunk is at least a cache line";
  a.count = 64;
  a.collective = Collective::kReduceScatter;
  EXPECT_EQ(slotPath(a, 1024), kWhole);
  EXPECT_EQ(slotPath(a, 1023), kChunked) << "a line of every block fits";
  EXPECT_EQ(slotPath(a, 255), kNone) << "a piece of every block needs a cache line";
  a.collective = Collective::kAllToAllv;
  EXPECT_EQ(slotPath(a, 1 << 20), kNone);
  a.collective = Collective::kSendRecv;
  EXPECT_EQ(slotPath(a, 1 << 20), kNone);
  a.collective = Collective::kAllGather;
  a.quantized = true;
  EXPECT_EQ(slotPath(a, 1 << 20), kNone) << "quantized calls keep their wire format";
  a.quantized = false;
  a.count = SIZE_MAX / 2;
  EXPECT_EQ(slotPath(a, 1 << 20), kNone) << "overflow";
}

// What decides whether a call's output is written streaming (the
// communicator compares it with BRAID_SHM_STREAM_BYTES).
TEST(SlotCollectives, OutputBytesCountEveryBlockARankReceives) {
  SlotCall call;
  call.dtype = DataType::kFloat64;
  call.count = 1000;
  for (Collective c : {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduceScatter,
                       Collective::kReduce, Collective::kScatter}) {
    call.collective = c;
    EXPECT_EQ(slotOutputBytes(call, 4), 8000u) << algo::collectiveName(c);
  }
  for (Collective c : {Collective::kAllGather, Collective::kAllToAll, Collective::kGather}) {
    call.collective = c;
    EXPECT_EQ(slotOutputBytes(call, 4), 32000u) << algo::collectiveName(c);
  }
  call.count = SIZE_MAX / 16;
  EXPECT_EQ(slotOutputBytes(call, 4), SIZE_MAX) << "overflow";
}

TEST(SlotCollectives, SignaturesDescribeTheCall) {
  EXPECT_EQ(describeSlotSignature(slotSignature(
                {Collective::kReduce, DataType::kBfloat16, RedOp::kMax, 12, 3, nullptr, nullptr})),
            "reduce of 12 x bfloat16 (max) with root 3");
  EXPECT_EQ(describeSlotSignature(
                slotSignature({Collective::kBarrier, DataType::kUint8, RedOp::kSum, 0, 0, nullptr, nullptr})),
            "barrier");
  EXPECT_NE(slotSignature({Collective::kAllReduce, DataType::kFloat32, RedOp::kSum, 4, 0, nullptr, nullptr}),
            slotSignature({Collective::kAllReduce, DataType::kFloat32, RedOp::kSum, 5, 0, nullptr, nullptr}));
  EXPECT_EQ(describeSlotSignature(0xff), "an unknown collective (signature 255)");
  // A whole count where the caller knows it (a signature keeps 24 bits).
  const size_t big = (size_t{1} << 30) + 5;
  EXPECT_EQ(describeSlotSignature(slotSignature({Collective::kAllGather, DataType::kInt8, RedOp::kSum, big, 0,
                                                 nullptr, nullptr}),
                                  big),
            "allgather of 1073741829 x int8");
  // Calls only the executor runs, as a peer announces them: no count to speak of.
  EXPECT_EQ(
      describeSlotSignature(
          slotSignature({Collective::kSendRecv, DataType::kUint8, RedOp::kSum, 0, 0, nullptr, nullptr}), 0),
      "a send or receive (or a group of them)");
  EXPECT_EQ(describeSlotSignature(slotSignature({Collective::kAllToAllv, DataType::kFloat16, RedOp::kSum, 9,
                                                 0, nullptr, nullptr}),
                                  9),
            "alltoallv of half");
}

}  // namespace
}  // namespace braid::core
