// Recursive halving reduce-scatter: log2 p rounds; in each a rank swaps half
// of the range of blocks it is still responsible for with the partner whose
// virtual rank differs in one bit, and reduces the half it keeps. It moves
// (p-1)/p of the vector per rank, as the ring, in log2 p messages instead of
// N-1, each waiting on one partner only.
//
// Any N, by folding (as rhd_allreduce.cc and MPICH do): with p the largest
// power of two <= N and e = N - p, each even rank among the first 2e hands its
// whole input to its odd neighbour and gets its reduced block back at the
// end; the odd one takes part as virtual rank r/2 on behalf of both. The p
// virtual ranks split the N blocks into p contiguous groups (two blocks for a
// folded pair, one otherwise), and the halving runs over groups. The fold costs
// one extra full-vector message on 2e ranks; pairwise exchange would avoid it
// but takes N-1 messages, which is what this algorithm is for avoiding.
//
// Partial sums live in scratch (the output holds one block only): the whole
// vector for a folding rank, else the half kept in the first round. The
// result is copied into the output at the end, which in place (output = block
// r of the input) is after every read of the input. Avg divides once, on the
// rank that finishes a group, before handing a folded neighbour its block.
#include <algorithm>

#include "algorithms/registry.h"

namespace braid::algo {
namespace {

struct Range {
  size_t begin, end;  // elements
  size_t size() const { return end - begin; }
};

class HalvingBuilder {
 public:
  HalvingBuilder(const CollectiveArgs& a, Schedule* out)
      : a_(a), out_(out), es_(a.elemSize()), tag_(static_cast<uint8_t>(Collective::kReduceScatter)),
        chunkElems_(std::max<size_t>(1, a.chunkBytes / a.elemSize())) {}

  Status build() {
    const int n = a_.nranks, r = a_.rank;
    const size_t count = a_.count;
    if (n == 1) {
      out_->add(copyStep({kInput, 0, count * es_}, {kOutput, 0, count * es_}));
      return Status::ok();
    }
    int p = 1;
    while (p * 2 <= n) p *= 2;
    const int e = n - p;
    const Range all{0, n * count};
    if (r < 2 * e && r % 2 == 0) {  // folded away: hand over, wait for the own block
      const Chunked sent = send(r + 1, {kInput, 0}, all, {});
      // In place the output is block r of the input: written after the sends that read it.
      chunks({r * count, (r + 1) * count}, [&](Range g) {
        out_->add(recvStep(r + 1, region({kOutput, r * count}, g), tag_), over(sent, g));
      });
      return Status::ok();
    }
    const bool folds = r < 2 * e;
    const int v = folds ? r / 2 : r - e;
    auto real = [&](int vr) { return vr < e ? 2 * vr + 1 : vr + e; };
    auto groupStart = [&](int g) { return static_cast<size_t>(g < e ? 2 * g : g + e) * count; };
    auto groups = [&](int g0, int g1) { return Range{groupStart(g0), groupStart(g1)}; };

    // Working buffer: covers `all` when folding, else the first round's kept half.
    Range work = all;
    if (!folds) work = (v & (p / 2)) == 0 ? groups(0, p / 2) : groups(p / 2, p);
    work_ = {out_->addScratch(work.size() * es_), work.begin};

    // Each chunk depends on the chunks of the previous round's reduction that
    // wrote the elements it reads (never on the whole round: that would be
    // quadratic in the number of chunks). Every element thus has a chain of
    // reductions back to the one that read it from the input, which is what
    // lets the final copy into the output (in place: block r of the input)
    // depend only on the last round.
    Place source{kInput, 0};
    Chunked reduced;
    if (folds) {
      reduced = recvReduce(r - 1, source, all, {});
      source = work_;
    }
    int lo = 0, hi = p;
    for (int mask = p / 2; mask >= 1; mask /= 2) {
      const int peer = real(v ^ mask), mid = (lo + hi) / 2;
      const bool lower = (v & mask) == 0;
      const Range keep = lower ? groups(lo, mid) : groups(mid, hi);
      const Range give = lower ? groups(mid, hi) : groups(lo, mid);
      send(peer, source, give, reduced);
      reduced = recvReduce(peer, source, keep, reduced);
      source = work_;
      (lower ? hi : lo) = mid;
    }
    const Range mine = groups(v, v + 1);
    std::vector<StepId> last = reduced.ids;
    if (a_.op == RedOp::kAvg) {
      StepId d = out_->add(divideStep(region(work_, mine), a_.dtype, n), last);
      if (d != kNoStep) last = {d};
    }
    if (folds) {
      chunks({(r - 1) * count, r * count},
             [&](Range g) { out_->add(sendStep(r - 1, region(work_, g), tag_), last); });
    }
    out_->add(copyStep(region(work_, {r * count, (r + 1) * count}), {kOutput, 0, count * es_}), last);
    return Status::ok();
  }

 private:
  struct Place {  // a buffer whose first byte holds element `base` of the vector
    int buffer;
    size_t base;
  };
  Region region(Place at, Range r) const { return {at.buffer, (r.begin - at.base) * es_, r.size() * es_}; }

  template <typename F>
  void chunks(Range r, F f) const {
    for (size_t b = r.begin; b < r.end; b += chunkElems_) f(Range{b, std::min(r.end, b + chunkElems_)});
  }
  // Steps over consecutive chunks of a range (as chunks() cuts it), one each.
  struct Chunked {
    Range range{0, 0};
    std::vector<StepId> ids;
  };
  // The steps of `c` whose chunks overlap g.
  std::vector<StepId> over(const Chunked& c, Range g) const {
    const size_t b = std::max(g.begin, c.range.begin), e = std::min(g.end, c.range.end);
    if (b >= e || c.ids.empty()) return {};
    return {c.ids.begin() + (b - c.range.begin) / chunkElems_, c.ids.begin() + (e - 1 - c.range.begin) / chunkElems_ + 1};
  }
  Chunked send(int peer, Place src, Range r, const Chunked& after) {
    Chunked done{r, {}};
    chunks(r, [&](Range g) { done.ids.push_back(out_->add(sendStep(peer, region(src, g), tag_), over(after, g))); });
    return done;
  }
  // work[r] = src[r] op received, chunk by chunk.
  Chunked recvReduce(int peer, Place src, Range r, const Chunked& after) {
    Chunked done{r, {}};
    chunks(r, [&](Range g) {
      done.ids.push_back(out_->add(recvReduceStep(peer, region(src, g), region(work_, g), a_.dtype, a_.op, tag_),
                                   over(after, g)));
    });
    return done;
  }

  const CollectiveArgs& a_;
  Schedule* out_;
  const size_t es_;
  const uint8_t tag_;
  const size_t chunkElems_;
  Place work_{0, 0};
};

}  // namespace

static Status buildRecursiveHalvingReduceScatter(const CollectiveArgs& a, Schedule* out) {
  return HalvingBuilder(a, out).build();
}

BRAID_REGISTER_ALGORITHM(reducescatter_rh, Collective::kReduceScatter, "rh", buildRecursiveHalvingReduceScatter);

}  // namespace braid::algo
