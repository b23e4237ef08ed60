// Dissemination barrier: in round i rank r signals r + 2^i and waits for
// r - 2^i; after ceil(log2 N) rounds every rank has (transitively) heard from
// every other, for any N. The signal of round i vouches for everything this
// rank heard in rounds 0..i-1, so it waits for all of them, not only the last:
// messages of different rounds come from different peers and may land in any
// order.
#include "algorithms/registry.h"

namespace braid::algo {

static Status buildDisseminationBarrier(const CollectiveArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const uint8_t tag = static_cast<uint8_t>(Collective::kBarrier);
  std::vector<StepId> heard;
  for (int d = 1; d < n; d *= 2) {
    out->add(sendStep((r + d) % n, {kInput, 0, 0}, tag), heard, /*keepEmpty=*/true);
    heard.push_back(out->add(recvStep((r - d + n) % n, {kOutput, 0, 0}, tag), {}, /*keepEmpty=*/true));
  }
  return Status::ok();
}

BRAID_REGISTER_ALGORITHM(barrier_dissemination, Collective::kBarrier, "dissemination",
                         buildDisseminationBarrier);

}  // namespace braid::algo
