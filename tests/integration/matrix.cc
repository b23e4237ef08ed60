#include "matrix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "case_run.h"
#include "data.h"

namespace braid::itest {
namespace {

const char* collName(Coll c) {
  static const char* const kNames[] = {
      "AllReduce", "Broadcast", "Reduce",       "AllGather",         "ReduceScatter", "AllToAll", "AllToAllv",
      "Gather",    "Scatter",   "SendRecvRing", "GroupSendRecvRing", "GroupAllToAll", "Barrier"};
  return kNames[static_cast<int>(c)];
}

bool reduces(Coll c) { return c == Coll::kAllReduce || c == Coll::kReduce || c == Coll::kReduceScatter; }
bool rooted(Coll c) {
  return c == Coll::kBroadcast || c == Coll::kReduce || c == Coll::kGather || c == Coll::kScatter;
}
bool hasInPlace(Coll c, const MatrixOptions& o) {
  return c == Coll::kAllReduce || c == Coll::kBroadcast || c == Coll::kReduce || c == Coll::kAllGather ||
         c == Coll::kReduceScatter || c == Coll::kGather || c == Coll::kScatter ||
         (c == Coll::kAllToAll && o.allToAllInPlace);
}
bool perPeerBlocks(Coll c) {
  return c == Coll::kAllGather || c == Coll::kReduceScatter || c == Coll::kAllToAll ||
         c == Coll::kAllToAllv || c == Coll::kGroupAllToAll || c == Coll::kGather || c == Coll::kScatter;
}

}  // namespace

std::string describe(const Case& c) {
  std::ostringstream s;
  s << collName(c.coll);
  if (c.coll == Coll::kBarrier) {
    s << " #" << c.barrierRound;
    return s.str();
  }
  s << " " << typeName(c.type);
  if (reduces(c.coll)) s << " " << opName(c.op);
  s << " count=" << c.count << (c.inPlace ? " in-place" : " out-of-place");
  if (rooted(c.coll)) s << " root=" << c.root;
  if (c.shareableRanks) s << " braidMemAlloc-ranks=0x" << std::hex << c.shareableRanks;
  return s.str();
}

std::vector<Case> buildMatrix(int n, const MatrixOptions& o) {
  std::vector<Case> cases;
  std::vector<size_t> counts = o.counts;
  if (o.bigCount) counts.push_back(o.bigCount);
  int barriers = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const size_t count = counts[k];
    const bool big = o.bigCount && k + 1 == counts.size();  // appended last
    std::vector<braidDataType_t> types = o.bigTypes;
    if (!big) {
      types.clear();
      for (int t = 0; t < braidNumTypes; ++t) types.push_back(static_cast<braidDataType_t>(t));
    }
    for (int ci = 0; ci <= static_cast<int>(Coll::kBarrier); ++ci) {
      const Coll coll = static_cast<Coll>(ci);
      if (coll == Coll::kRing && n == 1) continue;  // a blocking send to oneself cannot complete
      if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), coll) == o.only.end()) continue;
      if (coll == Coll::kBarrier) {
        cases.push_back({coll, braidInt8, braidSum, 0, false, 0, barriers++, 0});
        continue;
      }
      // Gather and scatter take the big count only where named (the forced
      // algorithm runs): at that size each is one message a rank, the
      // transports' large-message path the other collectives' big cases
      // cover; in every matrix it cost CI's sanitizer tier its room.
      if (big && (coll == Coll::kGather || coll == Coll::kScatter) && o.only.empty()) continue;
      const size_t cnt = big && perPeerBlocks(coll) ? count / n : count;
      std::vector<int> roots{0};
      if (rooted(coll)) {
        roots.clear();
        for (int r = 0; r < n; ++r)
          if (count <= o.smallRootCount || r == 0 || r == n - 1) roots.push_back(r);
      }
      // + PreMulSum (data.h's kPreMulSum), at the small counts only: its
      // scaling is one step in front of the sum, the same at every count.
      const int nops = reduces(coll) ? braidNumOps + (big ? 0 : 1) : 1;
      for (braidDataType_t t : types)
        for (int op = 0; op < nops; ++op)
          for (int inPlace = 0; inPlace <= (hasInPlace(coll, o) ? 1 : 0); ++inPlace)
            for (int root : roots)
              cases.push_back({coll, t, static_cast<braidRedOp_t>(op), cnt, inPlace == 1, root, 0, 0});
    }
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    cases[i].seed = mix(0x6d6174726978ull + i);
    cases[i].shareableRanks = o.shareableRanks;
  }
  return cases;
}

std::vector<Case> buildRandomSequence(int n, uint64_t seed, const SequenceOptions& o) {
  uint64_t state = seed;
  auto next = [&state](uint64_t below) { return below == 0 ? 0 : mix(state++) % below; };
  std::vector<Case> cases;
  int barriers = 0;
  while (cases.size() < o.cases) {
    const auto coll = static_cast<Coll>(next(static_cast<uint64_t>(Coll::kBarrier) + 1));
    if (coll == Coll::kRing && n == 1) continue;  // a blocking send to oneself cannot complete
    if (coll == Coll::kBarrier) {
      cases.push_back({coll, braidInt8, braidSum, 0, false, 0, barriers++, 0});
      continue;
    }
    const auto type = static_cast<braidDataType_t>(next(braidNumTypes));
    const auto op = static_cast<braidRedOp_t>(reduces(coll) ? next(braidNumOps + 1) : 0);  // + PreMulSum
    const size_t es = typeSize(type);
    size_t bytes = 0;
    const uint64_t kind = next(10);
    if (kind == 0) {
      bytes = 0;
    } else if (kind <= 3) {
      const size_t edge = kSequenceEdges[next(std::size(kSequenceEdges))];
      bytes = edge - es + next(3) * es;  // an element under, at or over it
    } else {
      // Log-uniform: a power of two up to maxBytes, then anything below the next.
      const int bits = std::max(1, 64 - __builtin_clzll(o.maxBytes));
      const size_t low = size_t{1} << next(static_cast<uint64_t>(bits));
      bytes = std::min(o.maxBytes, low + next(low));
    }
    size_t count = bytes / es;
    if (count == 0 && kind != 0) count = 1;
    if (perPeerBlocks(coll))
      count = count / static_cast<size_t>(n) + (count > 0 && count < static_cast<size_t>(n));
    const bool inPlace = hasInPlace(coll, MatrixOptions{}) && next(2) == 1;
    const int root = rooted(coll) ? static_cast<int>(next(static_cast<uint64_t>(n))) : 0;
    cases.push_back({coll, type, op, count, inPlace, root, 0, 0});
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    cases[i].seed = mix(seed ^ (0x736f616bull + i));
    // Drawn apart from the sequence, so that a seed gives the same calls
    // with or without them.
    if (o.shareableBuffers) cases[i].shareableRanks = mix(cases[i].seed ^ 0x7368617265ull);
  }
  return cases;
}

namespace {

bool launchOrReport(CaseRun& run, braidComm_t comm, braidStream_t stream) {
  std::string call;
  braidResult_t r = run.launch(comm, stream, &call);
  if (r == braidSuccess) return true;
  ADD_FAILURE() << describe(run.spec()) << ": " << call << " returned " << braidGetErrorString(r) << ": "
                << braidGetLastError(comm);
  return false;
}

void verifyOrReport(CaseRun& run) {
  std::string error;
  if (!run.verify(&error)) ADD_FAILURE() << error;
}

}  // namespace

bool runInline(const std::vector<Case>& cases, braidComm_t comm, int rank, int nranks, void* shared,
               const DeviceMemory* device) {
  for (const Case& c : cases) {
    CaseRun run(c, rank, nranks, shared);
    run.useDevice(device);
    if (!launchOrReport(run, comm, nullptr)) return false;
    run.collect();
    verifyOrReport(run);
  }
  return true;
}

bool runOnStream(const std::vector<Case>& cases, braidComm_t comm, int rank, int nranks, void* shared,
                 size_t batch, const DeviceMemory* device, braidStream_t given) {
  braidStream_t stream = given;
  braidEvent_t half = nullptr;
  braidResult_t r = braidSuccess;
  if (!stream) {
    r = braidStreamCreate(&stream);
    EXPECT_EQ(r, braidSuccess) << "braidStreamCreate: " << braidGetLastError(nullptr);
    if (r != braidSuccess) return false;
  }
  r = braidEventCreate(&half);
  EXPECT_EQ(r, braidSuccess) << "braidEventCreate: " << braidGetLastError(nullptr);
  if (r != braidSuccess) return false;
  EXPECT_EQ(braidEventQuery(half), braidSuccess) << "an event never recorded counts as reached";
  bool ok = true;
  for (size_t start = 0; ok && start < cases.size(); start += batch) {
    const size_t end = std::min(cases.size(), start + batch), mid = start + (end - start + 1) / 2;
    std::vector<std::unique_ptr<CaseRun>> runs;
    for (size_t i = start; ok && i < end; ++i) {
      runs.push_back(std::make_unique<CaseRun>(cases[i], rank, nranks, shared));
      runs.back()->useDevice(device);
      ok = launchOrReport(*runs.back(), comm, stream);
      if (ok && i + 1 == mid) {
        r = braidEventRecord(half, stream);
        EXPECT_EQ(r, braidSuccess) << "braidEventRecord: " << braidGetLastError(comm);
        ok = r == braidSuccess;
      }
    }
    if (!ok) {
      // Queued ops may still touch these buffers; the process ends soon after
      // a failure, so leaking them is the safe choice.
      for (auto& run : runs) (void)run.release();
      break;
    }
    r = braidEventQuery(half);
    EXPECT_TRUE(r == braidSuccess || r == braidInProgress) << "braidEventQuery: " << braidGetErrorString(r);
    r = braidEventSynchronize(half);
    EXPECT_EQ(r, braidSuccess) << "braidEventSynchronize: " << braidGetLastError(comm);
    ok = r == braidSuccess;
    // Everything enqueued before the event must be complete now, the rest may run.
    for (size_t i = 0; ok && i < mid - start; ++i) {
      runs[i]->collect();
      verifyOrReport(*runs[i]);
    }
    r = braidStreamSynchronize(stream);
    EXPECT_EQ(r, braidSuccess) << "braidStreamSynchronize: " << braidGetLastError(comm);
    ok = ok && r == braidSuccess;
    for (size_t i = mid - start; ok && i < runs.size(); ++i) {
      runs[i]->collect();
      verifyOrReport(*runs[i]);
    }
    EXPECT_EQ(braidStreamQuery(stream), braidSuccess) << "an idle stream";
    EXPECT_EQ(braidEventQuery(half), braidSuccess) << "an event behind a synchronized stream";
  }
  EXPECT_EQ(braidEventDestroy(half), braidSuccess);
  if (!given) {
    EXPECT_EQ(braidStreamDestroy(stream), braidSuccess);
  }
  return ok;
}

}  // namespace braid::itest
