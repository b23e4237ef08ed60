// Recursive doubling all-gather: ceil(log2 N) rounds, the set of blocks a rank
// holds doubling every round; N-1 blocks received per rank in total, as the
// ring, but in log2 N messages instead of N-1, so it wins for small blocks.
//
// Power of two N: in the round of distance d, rank r swaps the d blocks it
// holds (the aligned group r & ~(d-1)) with partner r ^ d.
// Any other N: the Bruck scheme: in the round of distance d, r sends the
// blocks r .. r+k-1 (mod N) it holds to r - d and receives r+d .. r+d+k-1
// from r + d, with k = min(d, N - d). Same rounds and bytes as above; it sends
// to one neighbour and receives from another instead of swapping with one.
// Blocks are received straight into their final place in the output (a range
// that wraps past block N-1 travels as two messages), so the local rotation of
// the textbook Bruck algorithm is not needed.
#include <algorithm>

#include "algorithms/registry.h"

namespace braid::algo {

static Status buildRecursiveDoublingAllGather(const CollectiveArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const size_t blockBytes = a.count * a.elemSize();
  const uint8_t tag = static_cast<uint8_t>(Collective::kAllGather);
  // Blocks [first, first + k) of the output, in up to two regions (wrapping at N).
  auto blocks = [&](int first, int k) {
    std::vector<Region> regions;
    const int head = std::min(k, n - first);
    regions.push_back({kOutput, first * blockBytes, head * blockBytes});
    if (head < k) regions.push_back({kOutput, 0, (k - head) * blockBytes});
    return regions;
  };
  // Everything received so far (and the own block): what the next send reads.
  std::vector<StepId> held{out->add(copyStep({kInput, 0, blockBytes}, {kOutput, r * blockBytes, blockBytes}))};
  const bool pow2 = (n & (n - 1)) == 0;
  for (int d = 1; d < n; d *= 2) {
    const int to = pow2 ? r ^ d : (r - d + n) % n, from = pow2 ? r ^ d : (r + d) % n;
    const int k = pow2 ? d : std::min(d, n - d);
    const int sendFirst = pow2 ? r & ~(d - 1) : r, recvFirst = pow2 ? from & ~(d - 1) : from;
    if (d == 1) {
      out->add(sendStep(to, {kInput, 0, blockBytes}, tag));  // the own block, from where it is
    } else {
      for (const Region& g : blocks(sendFirst, k)) out->add(sendStep(to, g, tag), held);
    }
    std::vector<StepId> got;
    for (const Region& g : blocks(recvFirst, k)) got.push_back(out->add(recvStep(from, g, tag)));
    held.insert(held.end(), got.begin(), got.end());
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(allgather_rd, Collective::kAllGather, "rd", buildRecursiveDoublingAllGather);

}  // namespace braid::algo
