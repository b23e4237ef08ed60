// Geometry of NCCL's double binary tree (the "Btree"/"Dtree" of NCCL's
// trees.cc), as a pure function of (nranks, rank).
//
// Tree 0 over ranks 0..n-1 has root 0, whose only child is the largest power
// of two below n; a rank r != 0 whose lowest set bit is b hangs below
// (r ^ b) | 2b, or below r ^ b when that is out of range. The lowest set bit
// strictly grows towards the root, so it is a tree, and every node has at most
// two children. Odd ranks are its leaves.
// Tree 1 is tree 0 mirrored (r -> n-1-r) when n is even and shifted by one
// (r -> r+1 mod n) when n is odd, so that its leaves are the even ranks: each
// rank is interior in at most one tree (rank 0 aside for odd n), which is what
// lets the two trees, each carrying half of the data, share every rank's links
// evenly.
#pragma once

#include <vector>

namespace braid::algo {

class DoubleBinaryTree {
 public:
  explicit DoubleBinaryTree(int nranks) : n_(nranks) {
    for (int t = 0; t < 2; ++t) {
      parent_[t].resize(n_);
      depth_[t].assign(n_, 0);
      for (int r = 0; r < n_; ++r) parent_[t][r] = computeParent(t, r);
      maxDepth_[t] = 0;
      for (int r = 0; r < n_; ++r) {
        int d = 0;
        for (int x = r; parent_[t][x] >= 0; x = parent_[t][x]) ++d;
        depth_[t][r] = d;
        if (d > maxDepth_[t]) maxDepth_[t] = d;
      }
    }
  }
  int root(int t) const { return t == 0 ? 0 : fromTree0(t, 0); }
  int parent(int t, int r) const { return parent_[t][r]; }  // -1 at the root
  int depth(int t, int r) const { return depth_[t][r]; }
  int maxDepth(int t) const { return maxDepth_[t]; }
  // At most two, in increasing rank order.
  std::vector<int> children(int t, int r) const {
    std::vector<int> kids;
    for (int x = 0; x < n_; ++x)
      if (parent_[t][x] == r) kids.push_back(x);
    return kids;
  }

 private:
  static int btreeParent(int n, int r) {
    if (r == 0) return -1;
    const int bit = r & -r;
    const int up = (r ^ bit) | (bit << 1);
    return up >= n ? (r ^ bit) : up;
  }
  // Tree 1's rank for tree 0's position x, and back.
  int fromTree0(int t, int x) const {
    if (t == 0) return x;
    return n_ % 2 == 0 ? n_ - 1 - x : (x + 1) % n_;
  }
  int toTree0(int t, int r) const {
    if (t == 0) return r;
    return n_ % 2 == 0 ? n_ - 1 - r : (r - 1 + n_) % n_;
  }
  int computeParent(int t, int r) const {
    const int p = btreeParent(n_, toTree0(t, r));
    return p < 0 ? -1 : fromTree0(t, p);
  }

  int n_;
  std::vector<int> parent_[2], depth_[2];
  int maxDepth_[2];
};

}  // namespace braid::algo
