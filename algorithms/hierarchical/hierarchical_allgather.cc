// Hierarchical all-gather, driven by the host each rank reports
// (CollectiveArgs::hostOf): each host's ranks hand their blocks to its leader
// (its lowest rank), the leaders run a ring all-gather of whole hosts' blocks,
// and each leader hands every block to its host's other ranks.
//
// Why: a flat ring over N ranks passes N - 1 blocks through every host's link
// (the blocks of the host's own ranks go all the way round and come back in),
// where a host only needs the N - h blocks of the other hosts. Here only the
// leaders cross, with exactly those, so with several ranks a host the busbw
// can pass the link's rate by (N - 1) / (N - h): 7/6 on 4 hosts x 2, 31/24
// on 4 x 8. The hand-offs inside a host go over shared memory.
//
// Every block moves in chunks, and nothing waits for a whole phase: the ring
// forwards a chunk once it has landed (a host's own blocks once gathered),
// and the leader passes each chunk on to its host's ranks once it has it, in
// the order the chunks arrive (its own host's blocks, then one host per ring
// step), which every rank of the host derives from its leader's ring position
// (schedule.h's matching contract).
#include <algorithm>
#include <vector>

#include "algorithms/hierarchical/host_layout.h"
#include "algorithms/registry.h"

namespace braid::algo {
namespace {

Status buildHierarchicalAllGather(const CollectiveArgs& a, Schedule* out) {
  const int r = a.rank;
  const size_t es = a.elemSize(), blockBytes = a.count * es;
  const uint8_t tag = static_cast<uint8_t>(Collective::kAllGather);
  const StepId own = out->add(copyStep({kInput, 0, blockBytes}, {kOutput, r * blockBytes, blockBytes}));
  if (a.nranks == 1 || blockBytes == 0) return Status::ok();

  const HostLayout h = layoutOf(a);
  const int hosts = static_cast<int>(h.leaders.size()), li = h.leaderIndex, leader = h.local[0];
  const size_t chunk = std::max<size_t>(1, a.chunkBytes / es) * es;
  const size_t chunks = (blockBytes + chunk - 1) / chunk;
  auto piece = [&](int buffer, size_t base, size_t c) {
    return Region{buffer, base + c * chunk, std::min(chunk, blockBytes - c * chunk)};
  };
  auto inOutput = [&](int block, size_t c) { return piece(kOutput, block * blockBytes, c); };
  // The hosts in the order their blocks reach the leader: its own, then the
  // one the ring brings at each step.
  std::vector<int> arrival = {li};
  for (int k = 0; k + 1 < hosts; ++k) arrival.push_back((li - k - 1 + hosts) % hosts);

  if (r != leader) {
    for (size_t c = 0; c < chunks; ++c) out->add(sendStep(leader, piece(kInput, 0, c), tag));
    for (int host : arrival)
      for (int block : h.ranksOf[host])
        if (block != r)
          for (size_t c = 0; c < chunks; ++c) out->add(recvStep(leader, inOutput(block, c), tag));
    return Status::ok();
  }

  // ready[block][c]: the step after which chunk c of that block is in the output.
  std::vector<std::vector<StepId>> ready(a.nranks, std::vector<StepId>(chunks, kNoStep));
  for (size_t c = 0; c < chunks; ++c) ready[r][c] = own;
  for (size_t i = 1; i < h.local.size(); ++i)
    for (size_t c = 0; c < chunks; ++c)
      ready[h.local[i]][c] = out->add(recvStep(h.local[i], inOutput(h.local[i], c), tag));

  const int right = h.leaders[(li + 1) % hosts], left = h.leaders[(li - 1 + hosts) % hosts];
  for (int k = 0; k + 1 < hosts; ++k) {
    for (int block : h.ranksOf[(li - k + hosts) % hosts])
      for (size_t c = 0; c < chunks; ++c)
        out->add(sendStep(right, inOutput(block, c), tag), {ready[block][c]});
    for (int block : h.ranksOf[(li - k - 1 + hosts) % hosts])
      for (size_t c = 0; c < chunks; ++c) ready[block][c] = out->add(recvStep(left, inOutput(block, c), tag));
  }

  for (size_t i = 1; i < h.local.size(); ++i)
    for (int host : arrival)
      for (int block : h.ranksOf[host])
        if (block != h.local[i])
          for (size_t c = 0; c < chunks; ++c)
            out->add(sendStep(h.local[i], inOutput(block, c), tag), {ready[block][c]});
  return Status::ok();
}

}  // namespace

BRAID_REGISTER_SHARED_HOSTS_ALGORITHM(allgather_hierarchical, Collective::kAllGather, "hierarchical",
                                      buildHierarchicalAllGather);

}  // namespace braid::algo
