#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report.h"

namespace braid::perf {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

TEST(PerfReport, TableHeaderIsNcclTests) {
  const std::vector<std::string> l = lines(tableHeader());
  ASSERT_EQ(l.size(), 3u);
  EXPECT_NE(l[0].find("out-of-place"), std::string::npos);
  EXPECT_NE(l[0].find("in-place"), std::string::npos);
  EXPECT_EQ(l[1],
            "#       size         count      type   redop    root     time   algbw   busbw #wrong"
            "     time   algbw   busbw #wrong");
  EXPECT_EQ(l[2],
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
            "            (us)  (GB/s)  (GB/s)");
}

TEST(PerfReport, RowsLineUpWithTheHeader) {
  Result r;
  r.timeUs = 27.234;
  r.algBw = 0.0012;
  r.busBw = 123.456;
  r.wrong = 0;
  const std::string row = rowPrefix(8, 2, "float", "sum", -1) + resultCells(r) + resultCells(r);
  EXPECT_EQ(row,
            "           8             2     float     sum      -1    27.23    0.00  123.46      0"
            "    27.23    0.00  123.46      0");
  // Each column ends where its header name ends.
  const std::string header = lines(tableHeader())[1];
  EXPECT_EQ(row.size(), header.size());
  for (const char* name : {"size", "count", "type", "redop", "root", "time", "algbw", "busbw"}) {
    const size_t end = header.find(name) + std::string(name).size();
    EXPECT_NE(row[end - 1], ' ') << name;
    EXPECT_TRUE(end == row.size() || row[end] == ' ') << name;
  }
}

TEST(PerfReport, UncheckedAndSkippedCells) {
  Result unchecked;
  unchecked.timeUs = 1;
  EXPECT_EQ(resultCells(unchecked), "     1.00    0.00    0.00    N/A");
  Result skipped;
  skipped.skipped = true;
  EXPECT_EQ(resultCells(skipped), "      N/A     N/A     N/A    N/A");
}

TEST(PerfReport, FloatCellsKeepTheirWidth) {
  EXPECT_EQ(floatCell(27.234, 7), "  27.23");
  EXPECT_EQ(floatCell(1234.56, 7), "1234.56");
  EXPECT_EQ(floatCell(12345.67, 7), "12345.7");
  EXPECT_EQ(floatCell(123456.7, 7), " 123457");
  EXPECT_EQ(floatCell(1234567.8, 7), "1234568");
  EXPECT_EQ(floatCell(12345678.0, 7), "1.2e+07");
  EXPECT_EQ(floatCell(0.004, 6), "  0.00");
  EXPECT_EQ(floatCell(999.999, 6), "1000.0");
}

TEST(PerfReport, FooterAndRankLines) {
  EXPECT_EQ(footer(0, 1.5), "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.5 \n");
  EXPECT_EQ(footer(2, 0), "# Out of bounds values : 2 FAILED\n# Avg bus bandwidth    : 0 \n");
  EXPECT_EQ(rankLine(3, 4242, "node1"), "#  Rank  3 Group  0 Pid   4242 on      node1 device cpu");
  EXPECT_EQ(rankLine(0, 7, "gpu1", "cuda:0 NVIDIA H100 80GB HBM3"),
            "#  Rank  0 Group  0 Pid      7 on       gpu1 device cuda:0 NVIDIA H100 80GB HBM3");
}

}  // namespace
}  // namespace braid::perf
