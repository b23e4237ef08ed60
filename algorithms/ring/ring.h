// Shared geometry of ring algorithms: the vector is cut into N segments (one
// per rank, near-equal, in elements) and every segment into the same number of
// chunks, so that step k of every segment has the same chunk structure on all
// ranks.
#pragma once

#include <algorithm>

#include "algorithms/schedule.h"

namespace braid::algo {

inline int mod(int x, int n) { return ((x % n) + n) % n; }

class RingLayout {
 public:
  // `count` elements of `elemSize` bytes, cut into `segments` segments whose
  // start is segmentBase(i) (default: near-equal parts of count).
  RingLayout(size_t count, int segments, size_t elemSize, size_t chunkBytes)
      : count_(count), segments_(segments), elemSize_(elemSize) {
    size_t maxSeg = (count + segments - 1) / segments;
    size_t chunkElems = std::max<size_t>(1, chunkBytes / elemSize);
    chunks_ = std::max<size_t>(1, (maxSeg + chunkElems - 1) / chunkElems);
  }
  size_t chunks() const { return chunks_; }
  size_t segmentBegin(int seg) const { return partBegin(count_, segments_, seg); }
  size_t segmentSize(int seg) const { return partSize(count_, segments_, seg); }
  // Chunk c of segment seg in buffer `buffer`, whose segment 0 starts at `base` elements.
  Region region(int buffer, int seg, size_t c, size_t base = 0) const {
    size_t segSize = segmentSize(seg);
    size_t begin = base + segmentBegin(seg) + partBegin(segSize, chunks_, c);
    return {buffer, begin * elemSize_, partSize(segSize, chunks_, c) * elemSize_};
  }

 private:
  size_t count_;
  int segments_;
  size_t elemSize_;
  size_t chunks_;
};

}  // namespace braid::algo
