// Recursive halving-doubling all-reduce (Rabenseifner): a reduce-scatter by
// recursive halving (log2 p steps, each swapping half of the rank's current
// range with a partner and reducing the half it keeps) followed by an
// all-gather by recursive doubling (the same partners in reverse, each step
// doubling the range a rank holds). Ring-optimal bandwidth, 2 log2 p messages
// instead of the ring's 2(N-1), and each step waits on one partner only, which
// matters when ranks share cores. Every step is cut into chunks so the
// reduction of one chunk overlaps the arrival of the next.
//
// Non-powers of two fold first, as in rd_allreduce.cc: of the first 2e ranks
// (e = N - p) each even one hands its vector to its odd neighbour and gets the
// result back at the end.
#include <algorithm>

#include "algorithms/registry.h"

namespace braid::algo {
namespace {

struct Range {
  size_t begin, end;  // elements
};

class Builder {
 public:
  Builder(const CollectiveArgs& a, Schedule* out)
      : a_(a), out_(out), es_(a.elemSize()), tag_(static_cast<uint8_t>(Collective::kAllReduce)),
        chunkElems_(std::max<size_t>(1, a.chunkBytes / a.elemSize())) {}

  // Calls f(region) for each chunk of range r in buffer b.
  template <typename F>
  void chunks(int b, Range r, F f) {
    for (size_t begin = r.begin; begin < r.end; begin += chunkElems_) {
      size_t end = std::min(r.end, begin + chunkElems_);
      f(Region{b, begin * es_, (end - begin) * es_});
    }
  }
  std::vector<StepId> sendRange(int peer, int b, Range r, const std::vector<StepId>& after) {
    std::vector<StepId> ids;
    chunks(b, r, [&](Region g) { ids.push_back(out_->add(sendStep(peer, g, tag_), after)); });
    return ids;
  }
  // dst[r] = src[r] op received, chunk by chunk.
  std::vector<StepId> recvReduceRange(int peer, int src, Range r, const std::vector<StepId>& after) {
    std::vector<StepId> ids;
    chunks(src, r, [&](Region g) {
      ids.push_back(out_->add(recvReduceStep(peer, g, {kOutput, g.offset, g.bytes}, a_.dtype, a_.op, tag_), after));
    });
    return ids;
  }
  std::vector<StepId> recvRange(int peer, Range r, const std::vector<StepId>& after) {
    std::vector<StepId> ids;
    chunks(kOutput, r, [&](Region g) { ids.push_back(out_->add(recvStep(peer, g, tag_), after)); });
    return ids;
  }

  Status build() {
    const int n = a_.nranks, r = a_.rank;
    const Range all{0, a_.count};
    int p = 1;
    while (p * 2 <= n) p *= 2;
    const int extra = n - p;
    if (n == 1) {
      out_->add(copyStep({kInput, 0, a_.count * es_}, {kOutput, 0, a_.count * es_}));
      return Status::ok();
    }
    if (r < 2 * extra && r % 2 == 0) {  // folded away
      std::vector<StepId> sent = sendRange(r + 1, kInput, all, {});
      recvRange(r + 1, all, sent);  // in place the result overwrites what was sent
      return Status::ok();
    }
    int source = kInput;  // where the not-yet-reduced values of this rank live
    std::vector<StepId> last;
    if (r < 2 * extra) {
      last = recvReduceRange(r - 1, kInput, all, {});
      source = kOutput;
    }
    const int v = r < 2 * extra ? r / 2 : r - extra;
    auto real = [&](int vr) { return vr < extra ? 2 * vr + 1 : vr + extra; };

    // Reduce-scatter by recursive halving.
    Range mine = all;
    std::vector<std::pair<int, Range>> sentAway;  // (mask, range handed away), for the way back
    for (int mask = p / 2; mask >= 1; mask /= 2) {
      const int peer = real(v ^ mask);
      const size_t mid = mine.begin + (mine.end - mine.begin) / 2;
      const bool lower = (v & mask) == 0;
      const Range keep = lower ? Range{mine.begin, mid} : Range{mid, mine.end};
      const Range give = lower ? Range{mid, mine.end} : Range{mine.begin, mid};
      std::vector<StepId> sent = sendRange(peer, source, give, last);
      std::vector<StepId> reduced = recvReduceRange(peer, source, keep, last);
      // The next step reads `keep` (written by `reduced`); waiting for `sent`
      // as well keeps every earlier read done before any later write, which
      // the all-gather relies on when it lands data where `give` was read.
      last = reduced;
      last.insert(last.end(), sent.begin(), sent.end());
      sentAway.push_back({mask, give});
      mine = keep;
      source = kOutput;
    }
    if (a_.op == RedOp::kAvg) {
      std::vector<StepId> divided;
      chunks(kOutput, mine, [&](Region g) { divided.push_back(out_->add(divideStep(g, a_.dtype, n), last)); });
      last = divided;
    }
    // All-gather by recursive doubling: undo the halving steps in reverse.
    for (auto it = sentAway.rbegin(); it != sentAway.rend(); ++it) {
      const int peer = real(v ^ it->first);
      std::vector<StepId> sent = sendRange(peer, kOutput, mine, last);
      std::vector<StepId> got = recvRange(peer, it->second, last);
      last = got;
      last.insert(last.end(), sent.begin(), sent.end());
      mine = {std::min(mine.begin, it->second.begin), std::max(mine.end, it->second.end)};
    }
    if (r < 2 * extra) sendRange(r - 1, kOutput, all, last);
    return Status::ok();
  }

 private:
  const CollectiveArgs& a_;
  Schedule* out_;
  const size_t es_;
  const uint8_t tag_;
  const size_t chunkElems_;
};

Status buildRhdAllReduce(const CollectiveArgs& a, Schedule* out) { return Builder(a, out).build(); }

}  // namespace

BRAID_REGISTER_ALGORITHM(allreduce_rhd, Collective::kAllReduce, "rhd", buildRhdAllReduce);

}  // namespace braid::algo
