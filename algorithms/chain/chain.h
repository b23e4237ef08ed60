// Geometry of pipelined chains (broadcast, reduce): where this rank sits in the
// line of ranks rooted at `root`, and how a message is cut into chunks.
#pragma once

#include <algorithm>

#include "algorithms/schedule.h"

namespace braid::algo {

class ChainPosition {
 public:
  // rootFirst: data flows away from the root (broadcast); otherwise towards it
  // (reduce), the root being the last link.
  ChainPosition(int nranks, int rank, int root, bool rootFirst)
      : n_(nranks), rank_(rank), rootFirst_(rootFirst) {
    // Broadcast: position 0 is the root. Reduce: position n-1 is the root.
    pos_ = rootFirst ? (rank - root + n_) % n_ : (rank - root - 1 + 2 * n_) % n_;
  }
  bool isRoot() const { return rootFirst_ ? pos_ == 0 : pos_ == n_ - 1; }
  bool isFirst() const { return pos_ == 0; }
  bool hasNext() const { return pos_ < n_ - 1; }
  int next() const { return (rank_ + 1) % n_; }
  int prev() const { return (rank_ - 1 + n_) % n_; }

 private:
  int n_, rank_, pos_;
  bool rootFirst_;
};

inline size_t chainChunks(size_t bytes, size_t elemSize, size_t chunkBytes) {
  size_t elems = bytes / elemSize;
  size_t chunkElems = std::max<size_t>(1, chunkBytes / elemSize);
  return std::max<size_t>(1, (elems + chunkElems - 1) / chunkElems);
}

// Chunk c of `chunks` near-equal, element-aligned chunks (buffer left to the caller).
inline Region chainChunk(size_t bytes, size_t elemSize, size_t chunks, size_t c) {
  size_t elems = bytes / elemSize;
  return {kInput, partBegin(elems, chunks, c) * elemSize, partSize(elems, chunks, c) * elemSize};
}

}  // namespace braid::algo
