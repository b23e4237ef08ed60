#include <gtest/gtest.h>

#include "topo/cpulist.h"

namespace braid::topo {
namespace {

TEST(CpuList, ParsesAndFormatsCanonically) {
  CpuList l;
  ASSERT_TRUE(CpuList::parse("8,0-3,10-11,2\n", &l).isOk());
  EXPECT_EQ(l.cpus(), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(l.toString(), "0-3,8,10-11");
  ASSERT_TRUE(CpuList::parse("", &l).isOk());
  EXPECT_TRUE(l.empty());
  EXPECT_EQ(l.toString(), "");
}

TEST(CpuList, RefusesMalformedLists) {
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "1,", " 1", "1 ", "0-70000", "99999999999", "1;2"}) {
    CpuList l;
    Status st = CpuList::parse(bad, &l);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("cpu list"), std::string::npos) << st.message();
  }
}

TEST(CpuList, BoundsWorkOfOverlappingRanges) {
  std::string many = "0-65535";
  for (int i = 0; i < 3; ++i) many.append(",0-65535");
  CpuList l;
  EXPECT_EQ(CpuList::parse(many, &l).code(), Code::kInvalidArgument);
}

TEST(CpuList, SetOperations) {
  CpuList a({0, 1, 2, 3}), b({2, 3, 4});
  EXPECT_EQ(a.intersect(b).toString(), "2-3");
  EXPECT_EQ(a.unite(b).toString(), "0-4");
  EXPECT_TRUE(a.containsAll(CpuList({1, 3})));
  EXPECT_FALSE(a.containsAll(b));
  EXPECT_TRUE(b.contains(4));
  EXPECT_FALSE(b.contains(0));
}

}  // namespace
}  // namespace braid::topo
