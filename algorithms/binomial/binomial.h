// Geometry of binomial trees rooted at any rank, and of chunked messages.
//
// With v = (rank - root) mod n, the parent of v != 0 is v minus its lowest set
// bit, and the children of v are v + m for the powers of two m below v's
// lowest set bit (any m for the root) with v + m < n. The child v + m roots a
// subtree of at most m ranks, so the largest subtree hangs off the largest m.
// Depth ceil(log2 n) for any n.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "algorithms/schedule.h"

namespace braid::algo {

class BinomialTree {
 public:
  BinomialTree(int nranks, int rank, int root) : n_(nranks), root_(root), v_((rank - root + nranks) % nranks) {}
  bool isRoot() const { return v_ == 0; }
  int relative() const { return v_; }
  int relativeOf(int rank) const { return (rank - root_ + n_) % n_; }
  int rankOf(int v) const { return real(v); }
  // The subtree of relative rank v is relative ranks [v, v + subtreeSize(v)).
  int subtreeSize(int v) const { return v == 0 ? n_ : std::min(v & -v, n_ - v); }
  // Relative ranks [v, v + count) as runs that are consecutive real ranks:
  // one run, or two where real ranks wrap from N - 1 to 0. Each run is
  // (first relative rank, length).
  std::vector<std::pair<int, int>> rankOrderedRuns(int v, int count) const {
    const int wrap = n_ - root_;  // relative rank of real rank 0
    if (root_ == 0 || wrap <= v || wrap >= v + count) return {{v, count}};
    return {{v, wrap - v}, {wrap, v + count - wrap}};
  }
  int parent() const { return v_ == 0 ? -1 : real(v_ - (v_ & -v_)); }
  // Largest subtree first (what a broadcast wants to start early).
  std::vector<int> childrenLargestFirst() const {
    std::vector<int> kids;
    const int limit = v_ == 0 ? n_ : (v_ & -v_);
    int m = 1;
    while (m * 2 < limit) m *= 2;
    for (; m >= 1; m /= 2)
      if (m < limit && v_ + m < n_) kids.push_back(real(v_ + m));
    return kids;
  }

 private:
  int real(int v) const { return (v + root_) % n_; }
  int n_, root_, v_;
};

// `bytes` of `elemSize`-byte elements cut into near-equal, element-aligned
// chunks of at most about `chunkBytes`.
class Chunking {
 public:
  Chunking(size_t bytes, size_t elemSize, size_t chunkBytes) : elems_(bytes / elemSize), es_(elemSize) {
    const size_t chunkElems = std::max<size_t>(1, chunkBytes / elemSize);
    chunks_ = std::max<size_t>(1, (elems_ + chunkElems - 1) / chunkElems);
  }
  size_t chunks() const { return chunks_; }
  size_t offset(size_t c) const { return partBegin(elems_, chunks_, c) * es_; }
  size_t bytes(size_t c) const { return partSize(elems_, chunks_, c) * es_; }
  Region in(int buffer, size_t c) const { return {buffer, offset(c), bytes(c)}; }

 private:
  size_t elems_, es_, chunks_;
};

}  // namespace braid::algo
