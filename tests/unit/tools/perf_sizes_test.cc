#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "sizes.h"

namespace braid::perf {
namespace {

TEST(PerfSizes, ParsesPlainAndSuffixedSizes) {
  EXPECT_EQ(parseSize("0"), 0u);
  EXPECT_EQ(parseSize("8"), 8u);
  EXPECT_EQ(parseSize("1K"), 1024u);
  EXPECT_EQ(parseSize("64k"), 65536u);
  EXPECT_EQ(parseSize("128M"), size_t{128} << 20);
  EXPECT_EQ(parseSize("2g"), size_t{2} << 30);
  EXPECT_EQ(parseSize("1T"), size_t{1} << 40);
  EXPECT_EQ(parseSize("4KB"), 4096u);
  EXPECT_EQ(parseSize("4KiB"), 4096u);
  EXPECT_EQ(parseSize("16B"), 16u);
}

TEST(PerfSizes, RejectsMalformedOrOverflowingSizes) {
  for (const char* bad :
       {"", "K", "-1", "1X", "1KK", "1.5M", " 8", "8 ", "8iB", "99999999999999999999", "17179869184G"}) {
    EXPECT_FALSE(parseSize(bad).has_value()) << bad;
  }
}

TEST(PerfSizes, SweepsByFactor) {
  EXPECT_EQ(sizeSweep(8, 128, 2, 0), (std::vector<size_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(sizeSweep(8, 100, 2, 0), (std::vector<size_t>{8, 16, 32, 64}));
  EXPECT_EQ(sizeSweep(8, 8, 2, 0), (std::vector<size_t>{8}));
  EXPECT_EQ(sizeSweep(0, 100, 2, 0), (std::vector<size_t>{0}));  // 0 never grows
}

TEST(PerfSizes, SweepsByIncrementWhenFactorIsOne) {
  EXPECT_EQ(sizeSweep(0, 3, 1, 1), (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(sizeSweep(10, 35, 1, 10), (std::vector<size_t>{10, 20, 30}));
  EXPECT_EQ(sizeSweep(10, 35, 1, 0), (std::vector<size_t>{10}));
  EXPECT_TRUE(sizeSweep(9, 8, 2, 1).empty());
}

TEST(PerfSizes, SweepNeverOverflows) {
  const size_t max = std::numeric_limits<size_t>::max();
  EXPECT_EQ(sizeSweep(max - 1, max, 2, 0).size(), 1u);
  EXPECT_EQ(sizeSweep(max - 1, max, 1, 4).size(), 1u);
  EXPECT_EQ(sizeSweep(size_t{1} << 62, max, 2, 0).size(), 2u);
}

}  // namespace
}  // namespace braid::perf
