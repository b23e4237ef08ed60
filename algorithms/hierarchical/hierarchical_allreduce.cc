// Hierarchical all-reduce, driven by the host each rank reports
// (CollectiveArgs::hostOf): reduce inside each host to its leader (its lowest
// rank), all-reduce across the leaders only, broadcast inside each host.
// Only one rank per host crosses the network, with the whole vector once in
// each direction: a host sends 2 (H-1)/H of the vector over its link, where a
// flat ring over all N ranks sends 2 (N-1)/N, so with several ranks a host
// its busbw can exceed the link's rate, which no flat algorithm can.
//
// Phase 1, per chunk: the leader copies its input chunk into the output and
// folds in each local rank's chunk as it lands (receive-reduce, in rank
// order); the others send their chunks. Phase 2: the leaders run a flat
// all-reduce among themselves, in place on the output: recursive doubling for
// small vectors, the ring for large ones (the schedule of that algorithm for
// H ranks, its peers mapped onto the leaders). Phase 3, per chunk: the leader
// sends the result to each local rank.
//
// The phases overlap chunk by chunk: a step of phase 2 waits only for the
// phase-1 chunks whose bytes it touches, and a chunk goes back to the host as
// soon as phase 2 has written it for the last time. Phase 1 folds the chunks
// in the order phase 2 first needs them, and phase 3 hands them back in the
// order phase 2 finishes them (the ring's leader i starts on its own segment
// and finishes segment i+1 first), so the network, the bottleneck, is busy
// from the first chunk on. Joined phase after phase, on 4 hosts x 2 ranks at
// 1 Gbit/s, phases 1 and 3 ate the gain over the flat ring (16 MiB: 247 ms,
// the ring's 246).
//
// Every rank derives both orders from its leader's phase-2 schedule, so the
// sends of a local rank and its leader's receives (and back) appear in the
// same order on each channel (schedule.h's matching contract).
//
// Avg sums in every phase and divides once per chunk, at the leader, before
// phase 3. Every rank ends with the leader's bytes, so the result is
// identical on all.
#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "algorithms/hierarchical/host_layout.h"
#include "algorithms/registry.h"

namespace braid::algo {
namespace {

// Vectors up to this size use recursive doubling among the leaders.
constexpr size_t kLeaderRdMaxBytes = 64 << 10;

// The vector in chunks of whole elements, the unit of phases 1 and 3.
struct Chunks {
  size_t bytes = 0, chunk = 1, count = 0;

  Region at(int buffer, size_t c) const { return {buffer, c * chunk, std::min(chunk, bytes - c * chunk)}; }
  // Calls f(c) for every chunk the caller's-buffer region g overlaps.
  template <typename F>
  void overlapping(const Region& g, F f) const {
    if (isScratch(g.buffer) || g.bytes == 0) return;
    for (size_t c = g.offset / chunk; c * chunk < g.offset + g.bytes && c < count; ++c) f(c);
  }
};

// The leaders' all-reduce (built for H ranks) for the leader of this host,
// in place on the output: the caller's buffers all name kOutput, scratch ids
// are shifted past `scratchShift`, and peers are ranks of the communicator.
Status buildLeaderAllReduce(const CollectiveArgs& a, const HostLayout& h, int scratchShift, Schedule* inner) {
  CollectiveArgs sub = a;
  sub.nranks = static_cast<int>(h.leaders.size());
  sub.rank = h.leaderIndex;
  sub.hostOf.clear();
  if (sub.op == RedOp::kAvg) sub.op = RedOp::kSum;
  const size_t bytes = a.count * a.elemSize();
  const Algorithm* algo = findAlgorithm(Collective::kAllReduce, bytes <= kLeaderRdMaxBytes ? "rd" : "ring");
  if (algo == nullptr) return internalError("hierarchical all-reduce: the leaders' algorithm is not registered");
  BRAID_RETURN_IF_ERROR(algo->build(sub, inner));
  auto remap = [&](Region& g) {
    g.buffer = isScratch(g.buffer) ? scratchId(scratchIndex(g.buffer) + scratchShift) : kOutput;
  };
  for (Step& s : inner->steps) {
    remap(s.src);
    remap(s.dst);
    if (s.peer >= 0) s.peer = h.leaders[s.peer];
  }
  return Status::ok();
}

// Chunks in the order phase 2 first touches them (phase 1's order) and in
// the order it last writes them (phase 3's); untouched chunks keep their place.
void phaseOrders(const Schedule& inner, const Chunks& k, std::vector<size_t>* fold,
                 std::vector<size_t>* handBack) {
  std::vector<size_t> firstTouch(k.count, SIZE_MAX), lastWrite(k.count, 0);
  for (size_t i = 0; i < inner.steps.size(); ++i) {
    const Step& s = inner.steps[i];
    auto touch = [&](size_t c) { firstTouch[c] = std::min(firstTouch[c], i); };
    k.overlapping(s.src, touch);
    k.overlapping(s.dst, touch);
    if (s.kind != StepKind::kSend) k.overlapping(s.dst, [&](size_t c) { lastWrite[c] = i + 1; });
  }
  fold->resize(k.count);
  std::iota(fold->begin(), fold->end(), size_t{0});
  *handBack = *fold;
  std::stable_sort(fold->begin(), fold->end(),
                   [&](size_t x, size_t y) { return firstTouch[x] < firstTouch[y]; });
  std::stable_sort(handBack->begin(), handBack->end(),
                   [&](size_t x, size_t y) { return lastWrite[x] < lastWrite[y]; });
}

Status buildHierarchicalAllReduce(const CollectiveArgs& a, Schedule* out) {
  if (!a.hostOf.empty() && a.hostOf.size() != static_cast<size_t>(a.nranks))
    return internalError("hierarchical all-reduce: hostOf has the wrong size");
  const HostLayout h = layoutOf(a);
  const int r = a.rank, leader = h.local[0];
  const size_t es = a.elemSize();
  Chunks k;
  k.bytes = a.count * es;
  k.chunk = std::max<size_t>(es, a.chunkBytes / es * es);
  k.count = k.bytes == 0 ? 0 : (k.bytes + k.chunk - 1) / k.chunk;
  const uint8_t tag = static_cast<uint8_t>(Collective::kAllReduce);
  const RedOp localOp = a.op == RedOp::kAvg ? RedOp::kSum : a.op;

  Schedule inner;
  const bool across = h.leaders.size() > 1;
  if (across)
    BRAID_RETURN_IF_ERROR(buildLeaderAllReduce(a, h, static_cast<int>(out->scratchBytes.size()), &inner));
  std::vector<size_t> fold, handBack;
  phaseOrders(inner, k, &fold, &handBack);

  if (r != leader) {
    std::vector<StepId> sent(k.count, kNoStep);
    for (size_t c : fold) sent[c] = out->add(sendStep(leader, k.at(kInput, c), tag));
    // In place: a chunk is overwritten only after it has left.
    for (size_t c : handBack) out->add(recvStep(leader, k.at(kOutput, c), tag), {sent[c]});
    return Status::ok();
  }
  // Phase 1: fold the host's vectors into the output.
  std::vector<StepId> reduced(k.count, kNoStep);
  for (size_t c : fold) {
    StepId last = out->add(copyStep(k.at(kInput, c), k.at(kOutput, c)));
    for (size_t q = 1; q < h.local.size(); ++q)
      last = out->add(recvReduceStep(h.local[q], k.at(kOutput, c), k.at(kOutput, c), a.dtype, localOp, tag),
                      {last});
    reduced[c] = last;
  }
  // Phase 2: across hosts, each step after the phase-1 chunks it touches.
  // Per chunk: the steps that leave it as it ends (phase 3 waits for them),
  // and every step that reads or writes it (Avg's division waits for those,
  // or a leader could send a divided chunk for another to divide again).
  std::vector<std::vector<StepId>> written(k.count), touched(k.count);
  for (size_t c = 0; c < k.count; ++c) written[c].push_back(reduced[c]), touched[c].push_back(reduced[c]);
  for (size_t b : inner.scratchBytes) out->addScratch(b);
  std::vector<StepId> id(inner.steps.size(), kNoStep);
  for (size_t i = 0; i < inner.steps.size(); ++i) {
    const Step& s = inner.steps[i];
    std::vector<StepId> deps;
    for (uint32_t d = 0; d < s.depCount; ++d) deps.push_back(id[inner.deps[s.depBegin + d]]);
    auto after = [&](size_t c) { deps.push_back(reduced[c]); };
    k.overlapping(s.src, after);
    k.overlapping(s.dst, after);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    id[i] = out->add(s, deps, true);
    if (s.kind != StepKind::kSend) k.overlapping(s.dst, [&](size_t c) { written[c].push_back(id[i]); });
    if (a.op == RedOp::kAvg) {
      k.overlapping(s.src, [&](size_t c) { touched[c].push_back(id[i]); });
      k.overlapping(s.dst, [&](size_t c) { touched[c].push_back(id[i]); });
    }
  }
  if (a.op == RedOp::kAvg)
    for (size_t c = 0; c < k.count; ++c)
      written[c] = {out->add(divideStep(k.at(kOutput, c), a.dtype, a.nranks), touched[c])};
  // Phase 3: hand each chunk to the host once phase 2 is done with it.
  for (size_t c : handBack)
    for (size_t q = 1; q < h.local.size(); ++q)
      out->add(sendStep(h.local[q], k.at(kOutput, c), tag), written[c]);
  return Status::ok();
}

}  // namespace

BRAID_REGISTER_SHARED_HOSTS_ALGORITHM(allreduce_hierarchical, Collective::kAllReduce, "hierarchical",
                                      buildHierarchicalAllReduce);

}  // namespace braid::algo
