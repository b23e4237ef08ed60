// Hierarchical all-reduce, driven by the host each rank reports
// (CollectiveArgs::hostOf): reduce inside each host to its leader (its lowest
// rank), all-reduce across the leaders only, broadcast inside each host.
// Only one rank per host crosses the network, with the whole vector once in
// each direction, and the traffic inside a host stays on shared memory.
//
// Phase 1, per chunk: the leader copies its input chunk into the output and
// folds in each local rank's chunk as it lands (receive-reduce, in rank
// order); the others send their chunks. Phase 2: the leaders run a flat
// all-reduce among themselves, in place on the output: recursive doubling for
// small vectors, the ring for large ones (the schedule of that algorithm for
// H ranks, its peers mapped onto the leaders). Phase 3, per chunk: the leader
// sends the result to each local rank. Phases are joined by empty steps, so a
// phase starts once the one before has finished on this rank.
//
// Avg sums in every phase and divides once, at the leader, before phase 3.
// Every rank ends with the leader's bytes, so the result is identical on all.
//
// Picked only through BRAID_ALGO (allreduce:hierarchical) for now: the
// tuner's model has one kind of link and cannot weigh shared memory against
// the network.
#include <algorithm>
#include <map>
#include <vector>

#include "algorithms/registry.h"

namespace braid::algo {
namespace {

// Vectors up to this size use recursive doubling among the leaders.
constexpr size_t kLeaderRdMaxBytes = 64 << 10;

struct HostLayout {
  std::vector<int> local;  // this rank's host, ascending; local[0] is the leader
  std::vector<int> leaders;  // one per host, ascending
  int leaderIndex = -1;      // this host's position in leaders
};

HostLayout layoutOf(const CollectiveArgs& a) {
  HostLayout h;
  auto hostOf = [&](int r) { return a.hostOf.empty() ? r : a.hostOf[r]; };
  std::map<int, int> leaderOfHost;  // host -> lowest rank
  for (int r = 0; r < a.nranks; ++r) leaderOfHost.emplace(hostOf(r), r);
  for (auto& [host, leader] : leaderOfHost) h.leaders.push_back(leader);
  std::sort(h.leaders.begin(), h.leaders.end());
  for (int r = 0; r < a.nranks; ++r)
    if (hostOf(r) == hostOf(a.rank)) h.local.push_back(r);
  h.leaderIndex = static_cast<int>(std::find(h.leaders.begin(), h.leaders.end(), h.local[0]) - h.leaders.begin());
  return h;
}

Step joinStep() { return copyStep({kOutput, 0, 0}, {kOutput, 0, 0}); }

// Appends the leaders' all-reduce (built for H ranks) in place on the output,
// its first steps after `after`; *joined: the join of all its steps.
Status appendLeaderAllReduce(const CollectiveArgs& a, const HostLayout& h, StepId after, Schedule* out,
                             StepId* joined) {
  CollectiveArgs sub = a;
  sub.nranks = static_cast<int>(h.leaders.size());
  sub.rank = h.leaderIndex;
  sub.hostOf.clear();
  if (sub.op == RedOp::kAvg) sub.op = RedOp::kSum;
  const size_t bytes = a.count * a.elemSize();
  const Algorithm* algo = findAlgorithm(Collective::kAllReduce, bytes <= kLeaderRdMaxBytes ? "rd" : "ring");
  if (algo == nullptr) return internalError("hierarchical all-reduce: the leaders' algorithm is not registered");
  Schedule inner;
  BRAID_RETURN_IF_ERROR(algo->build(sub, &inner));
  const int scratchShift = static_cast<int>(out->scratchBytes.size());
  for (size_t b : inner.scratchBytes) out->addScratch(b);
  auto remap = [&](Region g) {
    if (isScratch(g.buffer)) g.buffer = scratchId(scratchIndex(g.buffer) + scratchShift);
    else g.buffer = kOutput;  // in place: the leaders' input is phase 1's output
    return g;
  };
  std::vector<StepId> id(inner.steps.size(), kNoStep), all;
  for (size_t i = 0; i < inner.steps.size(); ++i) {
    Step s = inner.steps[i];
    s.src = remap(s.src);
    s.dst = remap(s.dst);
    if (s.peer >= 0) s.peer = h.leaders[s.peer];
    std::vector<StepId> deps;
    for (uint32_t k = 0; k < s.depCount; ++k) deps.push_back(id[inner.deps[s.depBegin + k]]);
    if (deps.empty()) deps.push_back(after);
    id[i] = out->add(s, deps, true);
    all.push_back(id[i]);
  }
  *joined = out->add(joinStep(), all, true);
  return Status::ok();
}

Status buildHierarchicalAllReduce(const CollectiveArgs& a, Schedule* out) {
  if (!a.hostOf.empty() && a.hostOf.size() != static_cast<size_t>(a.nranks))
    return internalError("hierarchical all-reduce: hostOf has the wrong size");
  const HostLayout h = layoutOf(a);
  const int r = a.rank, leader = h.local[0];
  const size_t es = a.elemSize(), bytes = a.count * es;
  const size_t chunk = std::max<size_t>(es, a.chunkBytes / es * es);
  const size_t chunks = bytes == 0 ? 0 : (bytes + chunk - 1) / chunk;
  const uint8_t tag = static_cast<uint8_t>(Collective::kAllReduce);
  const RedOp localOp = a.op == RedOp::kAvg ? RedOp::kSum : a.op;
  auto in = [&](size_t c) { return Region{kInput, c * chunk, std::min(chunk, bytes - c * chunk)}; };
  auto res = [&](size_t c) { return Region{kOutput, c * chunk, std::min(chunk, bytes - c * chunk)}; };

  if (r != leader) {
    for (size_t c = 0; c < chunks; ++c) {
      StepId sent = out->add(sendStep(leader, in(c), tag));
      out->add(recvStep(leader, res(c), tag), {sent});  // in place: not before the chunk has left
    }
    return Status::ok();
  }
  // Phase 1: fold the host's vectors into the output.
  std::vector<StepId> reduced;
  for (size_t c = 0; c < chunks; ++c) {
    StepId last = out->add(copyStep(in(c), res(c)));
    for (size_t q = 1; q < h.local.size(); ++q)
      last = out->add(recvReduceStep(h.local[q], res(c), res(c), a.dtype, localOp, tag), {last});
    reduced.push_back(last);
  }
  StepId done = out->add(joinStep(), reduced, true);
  // Phase 2: across hosts.
  if (h.leaders.size() > 1) {
    BRAID_RETURN_IF_ERROR(appendLeaderAllReduce(a, h, done, out, &done));
  }
  if (a.op == RedOp::kAvg) done = out->add(divideStep({kOutput, 0, bytes}, a.dtype, a.nranks), {done});
  // Phase 3: hand the result to the host.
  for (size_t c = 0; c < chunks; ++c)
    for (size_t q = 1; q < h.local.size(); ++q) out->add(sendStep(h.local[q], res(c), tag), {done});
  return Status::ok();
}

}  // namespace

BRAID_REGISTER_OVERRIDE_ONLY_ALGORITHM(allreduce_hierarchical, Collective::kAllReduce, "hierarchical", buildHierarchicalAllReduce);

}  // namespace braid::algo
