// The check's inputs are exact whatever the reduction order: fold every
// element's inputs in several orders and groupings and require every partial
// result to be exactly representable (so no rounding could have happened on
// the way, through fp32 or not) and the result to equal reducedValue.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "codec.h"
#include "types.h"
#include "values.h"

namespace braid::perf {
namespace {

int64_t combine(braidRedOp_t op, int64_t a, int64_t b) {
  switch (op) {
    case braidProd:
      return a * b;
    case braidMax:
      return std::max(a, b);
    case braidMin:
      return std::min(a, b);
    default:
      return a + b;  // sum (premulsum: of the products), and avg before its final division
  }
}

// Folds v in the given order, checking every partial result.
::testing::AssertionResult foldExactly(braidDataType_t t, braidRedOp_t op, const std::vector<int64_t>& v,
                                       const std::vector<int>& order, int64_t* out) {
  int64_t acc = v[order[0]];
  for (size_t k = 1; k < order.size(); ++k) {
    acc = combine(op, acc, v[order[k]]);
    if (!isRepresentable(t, acc)) return ::testing::AssertionFailure() << "partial " << acc;
  }
  *out = acc;
  return ::testing::AssertionSuccess();
}

// Pairwise tree (as recursive halving does): every node must be exact.
::testing::AssertionResult treeExactly(braidDataType_t t, braidRedOp_t op, std::vector<int64_t> v,
                                       int64_t* out) {
  while (v.size() > 1) {
    std::vector<int64_t> next;
    for (size_t i = 0; i + 1 < v.size(); i += 2) {
      next.push_back(combine(op, v[i], v[i + 1]));
      if (!isRepresentable(t, next.back())) return ::testing::AssertionFailure() << "node " << next.back();
    }
    if (v.size() % 2) next.push_back(v.back());
    v.swap(next);
  }
  *out = v[0];
  return ::testing::AssertionSuccess();
}

class PerfValues : public ::testing::TestWithParam<int> {};

TEST_P(PerfValues, ReductionsAreExactInAnyOrder) {
  const int n = GetParam();
  std::mt19937 rng(1234 + n);
  for (braidDataType_t t : allTypes()) {
    for (braidRedOp_t op : allOps()) {
      const ValuePlan plan = makePlan(t, op, n);
      std::vector<int> forward(n);
      std::iota(forward.begin(), forward.end(), 0);
      std::vector<int> backward(forward.rbegin(), forward.rend());
      for (uint64_t i = 0; i < 300; ++i) {
        SCOPED_TRACE(::testing::Message()
                     << typeInfo(t).name << " " << opName(op) << " n=" << n << " index " << i);
        std::vector<int64_t> v(n);
        for (int r = 0; r < n; ++r) {
          v[r] = inputValue(plan, r, i);
          ASSERT_TRUE(isRepresentable(t, v[r])) << v[r];
          if (op == kPreMulSumOp) {  // what the sum adds: the products, each exact too
            ASSERT_TRUE(isRepresentable(t, preMulScalar(plan, r)));
            v[r] *= preMulScalar(plan, r);
            ASSERT_TRUE(isRepresentable(t, v[r])) << v[r];
          }
        }
        std::vector<int> shuffled = forward;
        std::shuffle(shuffled.begin(), shuffled.end(), rng);
        int64_t a = 0, b = 0, c = 0, d = 0;
        ASSERT_TRUE(foldExactly(t, op, v, forward, &a));
        ASSERT_TRUE(foldExactly(t, op, v, backward, &b));
        ASSERT_TRUE(foldExactly(t, op, v, shuffled, &c));
        ASSERT_TRUE(treeExactly(t, op, v, &d));
        ASSERT_TRUE(a == b && b == c && c == d);
        int64_t want = a;
        if (op == braidAvg) {
          // Floats divide once in fp32 / fp64: exact only when n divides the sum.
          if (typeInfo(t).isFloat) {
            ASSERT_EQ(a % n, 0) << a;
          }
          want = a / n;
        }
        ASSERT_EQ(reducedValue(plan, i), want);
        ASSERT_TRUE(isRepresentable(t, want));
      }
    }
  }
}

TEST_P(PerfValues, InputsVaryWithRankAndIndex) {
  const int n = GetParam();
  for (braidDataType_t t : allTypes()) {
    const ValuePlan data = makePlan(t, std::nullopt, n);
    std::set<int64_t> seen;
    for (uint64_t i = 0; i < 200; ++i) seen.insert(inputValue(data, n - 1, i));
    EXPECT_GT(seen.size(), 5u) << typeInfo(t).name;
    // A block taken from the wrong rank shows: ranks differ somewhere early.
    if (n > 1) {
      int differ = 0;
      for (uint64_t i = 0; i < 64; ++i) differ += inputValue(data, 0, i) != inputValue(data, 1, i);
      EXPECT_GT(differ, 32) << typeInfo(t).name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RankCounts, PerfValues, ::testing::Values(1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 100));

TEST(PerfValuesLimits, GenLimitStaysWithinTheExactRangeAndBelowPoison) {
  EXPECT_EQ(genLimit(braidInt8), 127);
  EXPECT_EQ(genLimit(braidUint8), 254);
  EXPECT_EQ(genLimit(braidFloat16), 2048);
  EXPECT_EQ(genLimit(braidBfloat16), 256);
  EXPECT_EQ(genLimit(braidFloat8e4m3), 16);
  EXPECT_EQ(genLimit(braidFloat8e5m2), 8);
  EXPECT_EQ(genLimit(braidFloat32), 1 << 20);
  EXPECT_EQ(genLimit(braidUint64), 1 << 20);
}

}  // namespace
}  // namespace braid::perf
