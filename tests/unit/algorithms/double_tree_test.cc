// Shapes behind the tree algorithms: the double binary tree is two trees of at
// most two children each with logarithmic depth, and (the point of having two)
// almost no rank is interior in both; the binomial tree reaches every rank
// from any root in ceil(log2 N) hops.
#include <gtest/gtest.h>

#include "algorithms/binomial/binomial.h"
#include "algorithms/tree/tree.h"

namespace braid::algo {
namespace {

int ceilLog2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

TEST(DoubleBinaryTree, TwoShallowBinaryTreesSharingFewInteriorRanks) {
  for (int n = 1; n <= 300; ++n) {
    SCOPED_TRACE("n=" + std::to_string(n));
    DoubleBinaryTree trees(n);
    int interiorInBoth = 0;
    for (int r = 0; r < n; ++r) {
      bool interior[2];
      for (int t = 0; t < 2; ++t) {
        const std::vector<int> kids = trees.children(t, r);
        ASSERT_LE(kids.size(), 2u);
        for (int k : kids) ASSERT_EQ(trees.parent(t, k), r);
        interior[t] = !kids.empty();
        // Every rank reaches the root; depth is what the schedule's slots assume.
        int hops = 0, x = r;
        while (trees.parent(t, x) >= 0) x = trees.parent(t, x), ++hops;
        ASSERT_EQ(x, trees.root(t));
        ASSERT_EQ(hops, trees.depth(t, r));
        ASSERT_LE(trees.depth(t, r), trees.maxDepth(t));
      }
      if (interior[0] && interior[1]) ++interiorInBoth;
    }
    for (int t = 0; t < 2; ++t) EXPECT_LE(trees.maxDepth(t), ceilLog2(n) + 1);
    EXPECT_LE(interiorInBoth, 1) << "each tree's interior ranks should be the other's leaves";
  }
}

TEST(BinomialTree, EveryRankReachedFromAnyRoot) {
  for (int n = 1; n <= 70; ++n) {
    for (int root = 0; root < n; ++root) {
      SCOPED_TRACE("n=" + std::to_string(n) + " root=" + std::to_string(root));
      std::vector<int> parentOf(n, -2);
      for (int r = 0; r < n; ++r) {
        BinomialTree t(n, r, root);
        EXPECT_EQ(t.isRoot(), r == root);
        for (int kid : t.childrenLargestFirst()) {
          ASSERT_EQ(parentOf[kid], -2) << "rank " << kid << " has two parents";
          parentOf[kid] = r;
          EXPECT_EQ(BinomialTree(n, kid, root).parent(), r);
        }
      }
      for (int r = 0; r < n; ++r) {
        int hops = 0, x = r;
        while (x != root) {
          ASSERT_NE(parentOf[x], -2) << "rank " << x << " is not reached";
          x = parentOf[x];
          ++hops;
        }
        EXPECT_LE(hops, ceilLog2(n));
      }
    }
  }
}

}  // namespace
}  // namespace braid::algo
