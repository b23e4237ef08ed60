// Bruck all-to-all: ceil(log2 N) messages per rank instead of N-1, for small
// blocks where per-message cost dominates (each block travels up to log2 N
// hops, so it loses once bandwidth matters). Any N.
//
// Index blocks by distance: block i of rank r is the one for rank r+i (mod N).
// In the round of distance d = 2^k, every rank sends all blocks whose index has
// bit k set to rank r+d, packed into one message, and receives from r-d the
// blocks with the same indices. A block for distance i thus moves by the set
// bits of i and arrives in the round of i's highest bit, at rank r+i, where it
// is the block from rank (receiver - i).
//
// Packing and unpacking are copy steps through scratch: a send buffer and a
// receive buffer of one round's blocks, and a block array `tmp` for blocks
// that have more hops to go. A block is packed from the input until it has
// first moved, later from tmp; on its last hop it is unpacked straight into
// its place in the output, so no final rotation is needed. Dependencies, per
// round: packing waits for the previous send (it reuses the send buffer) and
// for the unpacking that last wrote each tmp block it reads; the receive waits
// for the previous unpacking (it reuses the receive buffer); unpacking into
// tmp waits for the receive and for this round's packing of the same run,
// which read the tmp blocks it overwrites. Per-block tracking keeps the
// dependency count O(N log N), not O(N^2).
// all-to-all has no in-place form, so input and output never alias.
#include <algorithm>

#include "algorithms/registry.h"

namespace braid::algo {

static Status buildBruckAllToAll(const CollectiveArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const size_t bb = a.count * a.elemSize();  // block bytes
  const uint8_t tag = static_cast<uint8_t>(Collective::kAllToAll);
  auto inBlock = [&](int i) { return Region{kInput, ((r + i) % n) * bb, bb}; };     // block for distance i
  auto outBlock = [&](int i) { return Region{kOutput, ((r - i + n) % n) * bb, bb}; };  // block from distance i
  out->add(copyStep(inBlock(0), outBlock(0)));
  if (n == 1) return Status::ok();

  size_t roundBlocks = 0;
  for (int d = 1; d < n; d *= 2) {
    size_t k = 0;
    for (int j = d; j < n; j += 2 * d) k += std::min(j + d, n) - j;
    roundBlocks = std::max(roundBlocks, k);
  }
  const int sendBuf = out->addScratch(roundBlocks * bb), recvBuf = out->addScratch(roundBlocks * bb);
  const int tmp = n >= 4 ? out->addScratch(n * bb) : 0;  // below 4 no index has two bits set
  auto tmpBlocks = [&](int first, int end) { return Region{tmp, first * bb, (end - first) * bb}; };

  StepId prevSend = kNoStep;
  std::vector<StepId> prevUnpack;         // the previous round's unpacking (read the receive buffer)
  std::vector<StepId> wrote(n, kNoStep);  // wrote[i]: the unpacking that last wrote tmp block i
  for (int d = 1; d < n; d *= 2) {
    // Runs of indices with bit d set: [j, j + d) for j = d, 3d, 5d, ...
    std::vector<StepId> packed;       // all of this round's packing (what the send reads)
    std::vector<StepId> packedRun;    // per run, its last packing copy
    size_t pos = 0;  // blocks packed so far
    for (int j = d; j < n; j += 2 * d) {
      const int end = std::min(j + d, n);
      // Index j has no bits below d: it has not moved yet. The rest of the run has.
      const StepId fromInput = out->add(copyStep(inBlock(j), {sendBuf, pos * bb, bb}), {prevSend});
      std::vector<StepId> after(wrote.begin() + j + 1, wrote.begin() + end);
      std::sort(after.begin(), after.end());
      after.erase(std::unique(after.begin(), after.end()), after.end());
      after.push_back(prevSend);
      const StepId fromTmp =
          out->add(copyStep(tmpBlocks(j + 1, end), {sendBuf, (pos + 1) * bb, (end - j - 1) * bb}), after);
      packed.push_back(fromInput);
      packed.push_back(fromTmp);
      packedRun.push_back(fromTmp);
      pos += end - j;
    }
    prevSend = out->add(sendStep((r + d) % n, {sendBuf, 0, pos * bb}, tag), packed);
    const StepId got = out->add(recvStep((r - d + n) % n, {recvBuf, 0, pos * bb}, tag), prevUnpack);
    prevUnpack.clear();
    pos = 0;
    size_t run = 0;
    for (int j = d; j < n; j += 2 * d, ++run) {
      const int end = std::min(j + d, n);
      if (j == d) {  // indices below 2d: this was their last hop
        for (int i = j; i < end; ++i)
          prevUnpack.push_back(out->add(copyStep({recvBuf, (pos + i - j) * bb, bb}, outBlock(i)), {got}));
      } else {  // overwrites tmp blocks this round's packing of the run read
        const StepId s = out->add(copyStep({recvBuf, pos * bb, (end - j) * bb}, tmpBlocks(j, end)),
                                  {got, packedRun[run]});
        std::fill(wrote.begin() + j, wrote.begin() + end, s);
        prevUnpack.push_back(s);
      }
      pos += end - j;
    }
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(alltoall_bruck, Collective::kAllToAll, "bruck", buildBruckAllToAll);

}  // namespace braid::algo
